//! The wire layer: framing, JSON scanning, JSON-RPC envelopes, output.
//!
//! Parsing never panics on any input; emitting never writes past the buffer
//! it was given (overflow is reported, never a partial message sent).

pub mod de;
pub mod emit;
pub mod envelope;
pub mod frame;
pub mod json;
