//! Error types: JSON-RPC codes, protocol errors, tool errors and encoder errors.
//!
//! picomcp keeps the two MCP failure channels apart by type:
//!
//! * [`ToolError`]: the call *succeeded* at the protocol level and the model reads
//!   the message (`isError: true` in a `tools/call` result). "Could a smarter model
//!   have avoided this?" — yes.
//! * [`ProtocolError`]: the request *failed*; the host sees a JSON-RPC `error`
//!   object with a [`ErrorCode`], a message and optional data. — no.
//!
//! Neither converts into the other. See [`crate::tool::ToolFailure`] for how a
//! handler picks a channel.

use core::fmt;

use crate::codec::Decimal;

// Defined with the emitter that reports it; the path is kept.
pub use crate::wire::emit::EncodeError;

/// A JSON-RPC error code.
///
/// Use the named constants ([`PARSE_ERROR`], [`INVALID_PARAMS`], …) or
/// [`ErrorCode::application`] for your own codes, so no code is a bare number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ErrorCode(i32);

impl ErrorCode {
    /// An application-defined code. JSON-RPC reserves `-32768..=-32000`; MCP
    /// 2026-07-28 asks applications to stay outside it.
    pub const fn application(code: i32) -> Self {
        Self(code)
    }

    /// The numeric value written on the wire.
    pub const fn get(self) -> i32 {
        self.0
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Decimal::from(self.0).fmt(f)
    }
}

/// `-32700`: the message is not valid JSON.
pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
/// `-32600`: valid JSON, but not a valid JSON-RPC request (or not acceptable now).
pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
/// `-32601`: the method does not exist or is not offered.
pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
/// `-32602`: the params are invalid (unknown tool, missing resource, bad cursor…).
pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
/// `-32603`: the server failed.
pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
/// `-32020`: MCP 2026-07-28 HTTP headers disagree with the body.
pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
/// `-32021`: MCP 2026-07-28, a client capability the request needs was not declared.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
/// `-32022`: MCP 2026-07-28, the requested protocol version is not served.
pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);

/// Bytes a [`Message`] can hold when it is formatted rather than borrowed.
pub const MESSAGE_CAPACITY: usize = 160;

/// A human-readable error message: borrowed, or formatted into a fixed inline
/// buffer of [`MESSAGE_CAPACITY`] bytes (longer text is cut at a character
/// boundary and ends in `...`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Message<'a>(Repr<'a>);

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
enum Repr<'a> {
    Borrowed(&'a str),
    Inline(heapless::String<MESSAGE_CAPACITY>),
}

impl<'a> Message<'a> {
    /// A message that borrows its text.
    pub const fn new(text: &'a str) -> Self {
        Self(Repr::Borrowed(text))
    }

    /// A message formatted now into the inline buffer, e.g.
    /// `Message::format(format_args!("No book titled '{title}'"))`.
    pub fn format(args: fmt::Arguments<'_>) -> Message<'static> {
        let mut w = Truncating::<MESSAGE_CAPACITY>::new();
        // `Truncating` never reports an error; a user `Display` impl that fails
        // just leaves what was written so far.
        let _ = fmt::write(&mut w, args);
        Message(Repr::Inline(w.finish()))
    }

    /// A message joined from `parts` into the inline buffer (cut as
    /// [`format`](Self::format) cuts), without `core::fmt`: e.g.
    /// `Message::concat(&["No book titled '", title, "'"])`. The same text
    /// as `format_args!` with `{}` of each `&str`, without the formatter
    /// and its `Display` calls: the bookshop's "No book titled" tool error
    /// costs about 210 instructions less a request (`scripts/list_cost.sh`,
    /// `tools/call-miss`: 4,980 against 5,192 with `format` at `55b6ecf`,
    /// 4,960 at `709d16f`; the firmware's flash
    /// is 120 B more, as picomcp's own messages keep `core::fmt` linked).
    pub fn concat(parts: &[&str]) -> Message<'static> {
        let mut w = Truncating::<MESSAGE_CAPACITY>::new();
        for part in parts {
            w.push(part);
        }
        Message(Repr::Inline(w.finish()))
    }

    /// The message text.
    #[inline(never)]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Borrowed(s) => s,
            Repr::Inline(s) => s.as_str(),
        }
    }
}

impl fmt::Display for Message<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<'a> From<&'a str> for Message<'a> {
    fn from(text: &'a str) -> Self {
        Self::new(text)
    }
}

/// A `fmt::Write` into a `heapless::String<N>` that keeps what fits and marks a cut.
pub(crate) struct Truncating<const N: usize> {
    buf: heapless::String<N>,
    cut: bool,
}

impl<const N: usize> Truncating<N> {
    pub(crate) const fn new() -> Self {
        Self {
            buf: heapless::String::new(),
            cut: false,
        }
    }

    pub(crate) fn finish(mut self) -> heapless::String<N> {
        if self.cut {
            const MARK: &str = "...";
            // The longest whole-character prefix that leaves room for the
            // mark (a boundary search rather than popping characters:
            // less code on small targets).
            let mut end = N.saturating_sub(MARK.len()).min(self.buf.len());
            while !self.buf.is_char_boundary(end) {
                end -= 1;
            }
            self.buf.truncate(end);
            let _ = self.buf.push_str(MARK);
        }
        self.buf
    }
}

impl<const N: usize> Truncating<N> {
    /// Append what fits of `s` (cut at a character boundary).
    fn push(&mut self, s: &str) {
        if self.cut || self.buf.push_str(s).is_ok() {
            return;
        }
        // The longest prefix that fits, cut at a character boundary.
        let mut end = N.saturating_sub(self.buf.len()).min(s.len());
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        let _ = self.buf.push_str(s.get(..end).unwrap_or_default());
        self.cut = true;
    }
}

impl<const N: usize> fmt::Write for Truncating<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push(s);
        Ok(())
    }
}

/// A client capability a handler can require.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ClientCapability {
    /// `elicitation`
    Elicitation,
    /// `sampling`
    Sampling,
    /// `roots`
    Roots,
}

/// The optional `data` member of a JSON-RPC error object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ErrorData<'a> {
    /// A JSON string (escaped on output).
    String(&'a str),
    /// Raw JSON text, written as is after being checked to be one valid JSON
    /// value; invalid text is a server bug and is answered `-32603`.
    Json(&'a str),
}

/// A JSON-RPC error: the request failed, only the host sees it.
///
/// Built from a named [`ErrorCode`]; a tool handler returns it through
/// [`ToolFailure::protocol`](crate::tool::ToolFailure::protocol), never by `?`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[error("protocol error {code}: {message}")]
pub struct ProtocolError<'a> {
    code: ErrorCode,
    message: Message<'a>,
    data: Option<ErrorData<'a>>,
}

impl<'a> ProtocolError<'a> {
    /// An error with a code and a message, without data.
    pub const fn new(code: ErrorCode, message: &'a str) -> Self {
        Self {
            code,
            message: Message::new(message),
            data: None,
        }
    }

    /// An error whose message is formatted into a fixed inline buffer.
    pub fn format(code: ErrorCode, args: fmt::Arguments<'_>) -> ProtocolError<'static> {
        ProtocolError {
            code,
            message: Message::format(args),
            data: None,
        }
    }

    /// An error whose message is joined from `parts` ([`Message::concat`]:
    /// no `core::fmt`).
    pub fn concat(code: ErrorCode, parts: &[&str]) -> ProtocolError<'static> {
        ProtocolError::with_message(code, Message::concat(parts))
    }

    /// An error with a ready-made [`Message`].
    pub const fn with_message(code: ErrorCode, message: Message<'a>) -> Self {
        Self {
            code,
            message,
            data: None,
        }
    }

    /// `-32602 Invalid params` with this message.
    pub const fn invalid_params(message: &'a str) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    /// `-32603 Internal error` with this message.
    pub const fn internal(message: &'a str) -> Self {
        Self::new(INTERNAL_ERROR, message)
    }

    /// `-32021`: the request needs a client capability it did not declare
    /// (2026-07-28), with `data.requiredCapabilities`.
    pub const fn missing_capability(capability: ClientCapability) -> ProtocolError<'static> {
        let (message, data) = match capability {
            ClientCapability::Elicitation => (
                "Missing required client capability: elicitation",
                r#"{"requiredCapabilities":{"elicitation":{}}}"#,
            ),
            ClientCapability::Sampling => (
                "Missing required client capability: sampling",
                r#"{"requiredCapabilities":{"sampling":{}}}"#,
            ),
            ClientCapability::Roots => (
                "Missing required client capability: roots",
                r#"{"requiredCapabilities":{"roots":{}}}"#,
            ),
        };
        ProtocolError {
            code: MISSING_REQUIRED_CLIENT_CAPABILITY,
            message: Message::new(message),
            data: Some(ErrorData::Json(data)),
        }
    }

    /// Attach `data`.
    #[must_use]
    pub const fn data(mut self, data: ErrorData<'a>) -> Self {
        self.data = Some(data);
        self
    }

    /// The code.
    pub const fn code(&self) -> ErrorCode {
        self.code
    }

    /// The message.
    pub fn message(&self) -> &str {
        self.message.as_str()
    }

    /// The data, if any.
    pub const fn error_data(&self) -> Option<ErrorData<'a>> {
        self.data
    }
}

/// A tool execution error: sent as a successful `tools/call` result with
/// `isError: true` and the text `Error executing tool NAME: MESSAGE`, which the
/// model reads and can act on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[error("{message}")]
pub struct ToolError<'a> {
    message: Message<'a>,
}

impl<'a> ToolError<'a> {
    /// A tool error with a borrowed message.
    pub const fn new(message: &'a str) -> Self {
        Self {
            message: Message::new(message),
        }
    }

    /// A tool error formatted into a fixed inline buffer, e.g.
    /// `ToolError::format(format_args!("No book titled '{title}' in the catalog."))`.
    pub fn format(args: fmt::Arguments<'_>) -> ToolError<'static> {
        ToolError {
            message: Message::format(args),
        }
    }

    /// A tool error joined from `parts` ([`Message::concat`]: no
    /// `core::fmt`), e.g.
    /// `ToolError::concat(&["No book titled '", title, "' in the catalog."])`.
    pub fn concat(parts: &[&str]) -> ToolError<'static> {
        ToolError {
            message: Message::concat(parts),
        }
    }

    /// The message shown to the model (without the `Error executing tool` prefix).
    pub fn message(&self) -> &str {
        self.message.as_str()
    }
}

/// A resource handler's "no such resource": answered `-32602` with the message
/// and `data: {"uri": URI}`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[error("{message}")]
pub struct ResourceNotFound<'a> {
    message: Message<'a>,
}

impl<'a> ResourceNotFound<'a> {
    /// With a borrowed message.
    pub const fn new(message: &'a str) -> Self {
        Self {
            message: Message::new(message),
        }
    }

    /// With a message formatted into a fixed inline buffer.
    pub fn format(args: fmt::Arguments<'_>) -> ResourceNotFound<'static> {
        ResourceNotFound {
            message: Message::format(args),
        }
    }

    /// With a message joined from `parts` ([`Message::concat`]: no
    /// `core::fmt`).
    pub fn concat(parts: &[&str]) -> ResourceNotFound<'static> {
        ResourceNotFound {
            message: Message::concat(parts),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        self.message.as_str()
    }
}

/// A transport failed while serving.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Error<E> {
    /// Reading from the transport failed.
    #[error("read failed")]
    Read(E),
    /// Writing to the transport failed.
    #[error("write failed")]
    Write(E),
    /// The transport's `write` accepted none of a non-empty buffer (`Ok(0)`)
    /// or claimed more bytes than it was given; embedded-io's `write_all`
    /// would panic there, the serve loops stop with this instead.
    #[error("transport accepted no bytes")]
    WriteZero,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_jsonrpc() {
        assert_eq!(PARSE_ERROR.get(), -32700);
        assert_eq!(INVALID_REQUEST.get(), -32600);
        assert_eq!(METHOD_NOT_FOUND.get(), -32601);
        assert_eq!(INVALID_PARAMS.get(), -32602);
        assert_eq!(INTERNAL_ERROR.get(), -32603);
    }

    #[test]
    fn formatted_message_fits_or_is_cut() {
        let m = Message::format(format_args!("No book titled '{}'", "Dune"));
        assert_eq!(m.as_str(), "No book titled 'Dune'");
        let long = "é".repeat(200);
        let m = Message::format(format_args!("{long}"));
        assert!(m.as_str().len() <= MESSAGE_CAPACITY);
        assert!(m.as_str().ends_with("..."));
    }

    /// `concat` is `format` of the parts' `{}`, to the byte, cut included:
    /// parts of every length around the capacity, with multi-byte
    /// characters at the cut.
    #[test]
    fn concat_is_format_of_the_parts() {
        let all = ["", "a", "é", "No book titled '", "€uro", "'", "x"];
        // Under Miri, a few parts and the lengths around the cut only (a
        // format there takes about 0.1 s).
        let pieces = if cfg!(miri) { &all[..3] } else { &all[..] };
        let lengths: std::vec::Vec<usize> = if cfg!(miri) {
            std::vec![0, 154, 155, 156, 157, 160]
        } else {
            (0..=MESSAGE_CAPACITY + 4).collect()
        };
        for n in lengths {
            let fill = "z".repeat(n);
            for &a in pieces {
                for &b in pieces {
                    let parts = [a, fill.as_str(), b, "é€"];
                    let by_format = Message::format(format_args!(
                        "{}{}{}{}",
                        parts[0], parts[1], parts[2], parts[3]
                    ));
                    assert_eq!(Message::concat(&parts), by_format, "{parts:?}");
                }
            }
        }
        assert_eq!(Message::concat(&[]).as_str(), "");
        let e = ToolError::concat(&["No book titled '", "Dune", "' in the catalog."]);
        assert_eq!(e.message(), "No book titled 'Dune' in the catalog.");
        assert_eq!(
            ResourceNotFound::concat(&["a", "b"]).message(),
            ProtocolError::concat(INVALID_PARAMS, &["a", "b"]).message()
        );
    }

    #[test]
    fn truncation_keeps_the_longest_whole_character_prefix() {
        use core::fmt::Write;
        // Reference: push one character at a time until one does not fit.
        fn by_chars<const N: usize>(pieces: &[&str]) -> std::string::String {
            let mut out = std::string::String::new();
            for c in pieces.iter().flat_map(|p| p.chars()) {
                if out.len() + c.len_utf8() > N {
                    break;
                }
                out.push(c);
            }
            out
        }
        let pieces: &[&[&str]] = &[
            &["abc", "defgh", "ij"],
            &["é", "éé", "ééé"],
            &["aaaaaaa", "€uro"],
            &["aaaaaaaa", "b"],
            &["", "𝄞𝄞", "x"],
        ];
        for p in pieces {
            let mut t = Truncating::<8>::new();
            for piece in *p {
                t.write_str(piece).unwrap();
            }
            assert_eq!(t.buf.as_str(), by_chars::<8>(p), "{p:?}");
        }
    }

    #[test]
    fn protocol_error_keeps_parts() {
        let e = ProtocolError::invalid_params("x").data(ErrorData::String("d"));
        assert_eq!(e.code(), INVALID_PARAMS);
        assert_eq!(e.message(), "x");
        assert_eq!(e.error_data(), Some(ErrorData::String("d")));
    }
}
