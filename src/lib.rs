//! picomcp: the protocol core of a Model Context Protocol (MCP) server with no
//! heap, no std and no async runtime.
//!
//! The same code serves tools, resources and prompts to an AI model from a
//! microcontroller's UART, from a desktop stdio process, or from inside an HTTP
//! server. The caller owns every byte: an input buffer bounds one message, an
//! output buffer bounds one answer, and nothing grows.
//!
//! # Layers
//!
//! Data flows top to bottom on the way in and back up on the way out. A
//! module imports only from its own row or rows below it (never from a row
//! above, and never in a cycle); `scripts/layout.py` checks this in CI from
//! the same table.
//!
//! | layer | modules | job |
//! |---|---|---|
//! | adapters | [`http`], [`transport`] | Streamable HTTP as a sans-IO mapping; the blocking and async serve loops (`embedded-io`; stdio under `std`) |
//! | server | [`server`] | routing, lifecycle type-state, lists, the handler families, the one JSON-RPC answer writer |
//! | derive kit | [`derive_support`], `asynch` | what `tool!` and the derives expand to; async tools (`async_tools!`, feature `async-handlers`) |
//! | handlers | [`tool`](mod@tool), [`resource`], [`prompt`] | your code: descriptors, handler functions, reply writers |
//! | handler kit | [`content`], [`mrtr`], [`completion`] | content blocks, `input_required` answers, completions |
//! | context | (private) | the request context every handler writes through, and the `Done` proof |
//! | vocabulary | [`mcp`], [`schema`], (private) seal | versions and the per-version field table, the 2026-07-28 envelope ([`mcp::envelope`]), method names, identity; JSON Schema as `const` data, emitted and checked; the HMAC tags of request state and cursors |
//! | errors | [`error`] | error codes, protocol and tool errors, transport errors |
//! | wire | [`wire::frame`], [`wire::json`], [`wire::envelope`], [`wire::de`], [`wire::emit`] | newline frames (Partial / Complete / Overflow); one validating, depth-bounded JSON pass with borrowed views and in-place unescaping; JSON-RPC views with ids kept verbatim; serde over borrowed frames; JSON written once, front to back |
//! | codecs | [`codec`] | decimal, base64 and hex, importing nothing |
//!
//! # Drive loop
//!
//! ```
//! use picomcp::{Connection, Server, ServerInfo};
//!
//! static SERVER: Server<'static, ()> = Server::new(ServerInfo::new("demo", "1.0.0"), ());
//!
//! let mut conn = Connection::new();
//! let mut out = [0u8; 512];
//! let mut line = *br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
//! let n = SERVER.handle(&mut conn, &mut line, &mut out);
//! assert_eq!(
//!     core::str::from_utf8(&out[..n]).unwrap(),
//!     "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"serverInfo\":{\"name\":\"demo\",\"version\":\"1.0.0\"}}}\n"
//! );
//! ```
//!
//! Feed it lines with [`wire::frame::LineFramer`], or let
//! [`transport::serve`] do the whole loop over any `embedded-io` stream.
//!
//! # Tool errors and protocol errors
//!
//! A tool handler returns a [`tool::ToolOutcome`]: success, a [`ToolError`]
//! (`isError: true`, the model reads it) or a [`ProtocolError`] (a JSON-RPC
//! error for the host). `?` only ever produces a `ToolError`; picking the
//! protocol channel takes [`tool::ToolFailure::protocol`]. Arguments are
//! checked against the tool's input schema before the handler runs.
//!
//! # Non-features
//!
//! No dynamic JSON value type, no allocation, no threads, no clocks, no
//! server-to-client requests in this version. Descriptors are static data.
//!
//! # Features
//!
//! * `std`: the [`transport::Stdio`] adapter and `std` error glue.
//! * `defmt` / `log` (mutually exclusive): internal logging; `defmt::Format`
//!   on public types under `defmt`.
//! * `derive`: `#[derive(ToolArgs)]`, `#[derive(ToolOutput)]` and
//!   `#[derive(PromptArgs)]` (schemas, output writers and prompt arguments
//!   from Rust types; see [`derive_support`] and [`tool!`](crate::tool!)).
//! * `async-handlers`: async tools (`asynch`, `async_tools!`,
//!   `Server::handle_async`), polled by any executor, with no allocation.
//! * `embedded-io-async`: the async serve loops (`transport::serve_async`).
//!
//! MSRV: Rust 1.88.

#![cfg_attr(not(any(test, feature = "std")), no_std)]
#![deny(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::exhaustive_enums)]
// The docs link to items of features that may be off (`transport::Stdio`
// needs `std`, the async pieces `async-handlers`): with them all on (as
// docs.rs and CI build the docs) every link resolves; without them such
// links are plain text instead of a documentation error.
#![cfg_attr(
    not(all(
        feature = "std",
        feature = "async-handlers",
        feature = "embedded-io-async"
    )),
    allow(rustdoc::broken_intra_doc_links)
)]
// No input may panic the core: no unwrap/expect/panic/unchecked indexing in
// non-test code (tests may assert freely).
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented
    )
)]

mod log;

#[cfg(feature = "async-handlers")]
pub mod asynch;
pub mod changes;
pub mod codec;
pub mod completion;
pub mod content;
mod context;
pub mod derive_support;
pub mod error;
pub mod http;
pub mod mcp;
pub mod mrtr;
pub mod prompt;
pub mod resource;
pub mod schema;
mod seal;
pub mod server;
pub mod tool;
pub mod transport;
pub mod wire;

pub use content::Notify;
pub use error::{
    ErrorCode, ErrorData, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
    PARSE_ERROR, ProtocolError, ResourceNotFound, ToolError,
};
pub use mcp::{LogLevel, ProtocolVersion, ServerInfo};
pub use server::{Connection, Server};

/// The derive macros (feature `derive`): `ToolArgs`, `ToolOutput` and
/// `PromptArgs`; see [`derive_support`] and the `picomcp-macros` crate.
#[cfg(feature = "derive")]
pub use picomcp_macros::*;

/// The README's Rust examples, compiled and run as doctests (`cargo test
/// --doc`) so that they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme {}
