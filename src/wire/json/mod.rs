//! Validating JSON scanner and zero-copy borrowed views.
//!
//! [`validate`](fn@validate) checks that a byte slice is exactly one strict RFC 8259 JSON
//! value, iteratively (no recursion on input depth), in O(n), without
//! allocating and without panicking, while enforcing [`Limits`].
//!
//! Once a frame is validated, [`Value`] gives cheap, copyable, borrowed views
//! into it: [`Value::get`], [`Value::members`], [`Value::items`] navigate
//! objects and arrays, [`JsonStr`] exposes string contents (still escaped) with
//! decoding helpers, and [`Number`] keeps number tokens as text with exact
//! integer accessors.
//!
//! [`unescape_in_place`] / [`unescape_str_in_place`] decode the raw contents of
//! a JSON string inside its own buffer; the serde deserializer in
//! `wire::de` uses them to borrow every `&str` from the frame.

mod lex;
mod limits;
mod number;
mod outline;
mod string;
mod validate;
mod value;

pub(crate) use lex::skip_ws;
pub use lex::value_len;
pub use limits::{JsonError, Limits, MAX_DEPTH};
pub use number::Number;
pub(crate) use number::integer_literal;
pub(crate) use outline::{Level, Name, Outline, OutlineKeys, slot_of};
pub use string::{Chars, JsonStr, unescape_in_place, unescape_str_in_place};
pub use validate::validate;
pub(crate) use validate::validate_outlined;
pub use value::{Items, Kind, Members, Value};

#[cfg(test)]
mod tests {
    extern crate std;

    use std::string::String;

    pub(super) fn nested(depth: usize, open: &str, close: &str, inner: &str) -> String {
        let mut s = String::new();
        for _ in 0..depth {
            s.push_str(open);
        }
        s.push_str(inner);
        for _ in 0..depth {
            s.push_str(close);
        }
        s
    }
}
