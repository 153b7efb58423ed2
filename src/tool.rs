//! Tools: descriptors, handlers, and the reply a handler writes.
//!
//! A tool is a [`ToolDescriptor`] (static data: name, schemas, annotations)
//! plus a handler function:
//!
//! ```
//! use picomcp::schema::{Property, Schema};
//! use picomcp::tool::{Arguments, Reply, Tool, ToolDescriptor, ToolError, ToolOutcome};
//!
//! struct Shop;
//!
//! fn author(title: &str) -> Result<&'static str, ToolError<'static>> {
//!     match title {
//!         "Dune" => Ok("Frank Herbert"),
//!         _ => Err(ToolError::format(format_args!("No book titled '{title}' in the catalog."))),
//!     }
//! }
//!
//! fn get_author<'a>(_: &'a Shop, args: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
//!     #[derive(serde::Deserialize)]
//!     struct Args<'x> { title: &'x str }
//!     let Args { title } = args.parse()?;
//!     let name = author(title)?; // `?` on a ToolError: the model sees the message
//!     reply.text(name)
//! }
//!
//! const GET_AUTHOR: Tool<Shop> = Tool::new(
//!     ToolDescriptor::new(
//!         "get_author",
//!         &Schema::object(&[Property::new("title", Schema::string())]).required(&["title"]),
//!     )
//!     .description("Look up the author of a book in the catalog."),
//!     get_author,
//! );
//! ```
//!
//! # Choosing the failure channel
//!
//! A handler returns a [`ToolOutcome`]: `Ok(Done)` (the reply was written),
//! or `Err(ToolFailure)` which is *either* a [`ToolError`] (a result with
//! `isError: true`, shown to the model) *or* a [`ProtocolError`] (a JSON-RPC
//! error, shown to the host). `?` converts only a `ToolError`; the protocol
//! channel takes an explicit [`ToolFailure::protocol`], so it is never picked
//! by accident:
//!
//! ```compile_fail,E0277
//! use picomcp::error::ProtocolError;
//! use picomcp::tool::{Arguments, Reply, ToolOutcome};
//! fn lookup() -> Result<&'static str, ProtocolError<'static>> { Ok("x") }
//! fn handler<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
//!     let x = lookup()?; // error: `?` cannot turn a ProtocolError into a ToolFailure
//!     reply.text(x)
//! }
//! ```
//!
//! ```
//! use picomcp::error::ProtocolError;
//! use picomcp::tool::{Arguments, Reply, ToolFailure, ToolOutcome};
//! fn lookup() -> Result<&'static str, ProtocolError<'static>> { Ok("x") }
//! fn handler<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
//!     let x = lookup().map_err(ToolFailure::protocol)?; // deliberate
//!     reply.text(x)
//! }
//! ```
//!
//! A request is answered exactly once: the [`Reply`] is consumed by the
//! method that finishes it, and [`Done`] can only be obtained that way.
//!
//! ```compile_fail,E0382
//! use picomcp::tool::{Arguments, Reply, ToolOutcome};
//! fn handler<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
//!     let _ = reply.text("one");
//!     reply.text("two") // error: use of moved value `reply`
//! }
//! ```
//!
//! ```compile_fail,E0423
//! use picomcp::tool::{Arguments, Done, Reply, ToolOutcome};
//! fn handler<'a>(_: &'a (), _: Arguments<'a>, _reply: Reply<'_>) -> ToolOutcome<'a> {
//!     Ok(Done(())) // error: `Done` cannot be built outside picomcp
//! }
//! ```

use core::fmt;

use serde::Deserialize;

use crate::content::Block;
pub use crate::content::ResourceLink;
use crate::context::Ctx;
pub use crate::context::Done;
pub use crate::error::{ProtocolError, ToolError};
pub use crate::mcp::tool::{ToolAnnotations, ToolDescriptor};
use crate::mrtr::InputRequired;
use crate::schema::Schema;
use crate::schema::derived::Spans;
use crate::wire::emit::{TextWriter, ValueWriter};
use crate::wire::json::Value;

/// Why a tool call did not succeed: exactly one of the two channels.
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolFailure<'a> {
    /// Sent as a result with `isError: true`; the model reads the message.
    Tool(ToolError<'a>),
    /// Sent as a JSON-RPC error object; only the host sees it.
    Protocol(ProtocolError<'a>),
}

impl<'a> ToolFailure<'a> {
    /// Pick the protocol channel, deliberately.
    pub fn protocol(error: ProtocolError<'a>) -> Self {
        ToolFailure::Protocol(error)
    }
}

impl<'a> From<ToolError<'a>> for ToolFailure<'a> {
    fn from(e: ToolError<'a>) -> Self {
        ToolFailure::Tool(e)
    }
}

/// What a tool handler returns.
pub type ToolOutcome<'a> = Result<Done, ToolFailure<'a>>;

/// A tool handler. `S` is the server's application state.
pub type ToolFn<S> = for<'a, 'r> fn(&'a S, Arguments<'a>, Reply<'r>) -> ToolOutcome<'a>;

crate::context::registration!(
    /// A registered tool: descriptor plus handler.
    Tool(ToolDescriptor, ToolFn, awaits)
);

#[cfg(feature = "async-handlers")]
impl<S> Tool<S> {
    /// An async tool: its handler is the one at `index` of the server's
    /// [`AsyncHandlers`](crate::asynch::AsyncHandlers), run by
    /// [`Server::handle_async`](crate::Server::handle_async).
    /// [`async_tools!`](crate::async_tools) writes these constants (and
    /// numbers them); a plain [`Server::handle`](crate::Server::handle)
    /// answers a call of it with `-32603`.
    pub const fn awaiting(descriptor: ToolDescriptor<'static>, index: u16) -> Self {
        Self {
            descriptor,
            handler: needs_async,
            awaits: Some(index),
        }
    }

    /// The tool's index among the server's async handlers, if it is async.
    pub const fn async_index(&self) -> Option<u16> {
        self.awaits
    }
}

/// The `handler` of an async tool, for a caller that invokes it directly:
/// it cannot run the handler.
#[cfg(feature = "async-handlers")]
fn needs_async<'a, S>(_: &'a S, _: Arguments<'a>, _: Reply<'_>) -> ToolOutcome<'a> {
    Err(ToolFailure::protocol(ProtocolError::internal(
        "this tool is async: serve it with Server::handle_async",
    )))
}

/// The arguments of a call, already checked against the input schema.
#[derive(Debug)]
pub struct Arguments<'a> {
    raw: &'a mut [u8],
    /// The derived schema whose argument check said "surely valid" for
    /// these bytes (`derive_support::args`), if one did, and where it found
    /// the values. 64-bit targets only, the ones with derived checks
    /// (`FAST_ARGS`): small ones pass no larger `Arguments` around.
    #[cfg(target_pointer_width = "64")]
    vouched: Option<(&'static Schema<'static>, Spans)>,
}

impl<'a> Arguments<'a> {
    #[cfg_attr(not(target_pointer_width = "64"), allow(unused_variables))]
    pub(crate) fn new(
        raw: &'a mut [u8],
        vouched: Option<(&'static Schema<'static>, Spans)>,
    ) -> Self {
        Self {
            raw,
            #[cfg(target_pointer_width = "64")]
            vouched,
        }
    }

    /// The arguments' bytes, read-only, and where their values are, when
    /// the argument check derived with `schema` (that very `static`,
    /// compared by address) said they surely match it; else `self` back.
    /// What `#[mcp(parse)]`'s derived parse builds from
    /// (`derive_support::args::DerivedParse`).
    #[doc(hidden)]
    pub fn vouched_by(self, schema: &'static Schema<'static>) -> Result<(&'a [u8], Spans), Self> {
        #[cfg(target_pointer_width = "64")]
        if let Some((s, spans)) = self.vouched
            && core::ptr::eq(s, schema)
        {
            return Ok((self.raw, spans));
        }
        let _ = schema;
        Err(self)
    }

    /// A read-only view of the arguments object.
    pub fn value(&self) -> Value<'_> {
        // The server validated these bytes before building `Arguments`.
        Value::trusted(self.raw)
    }

    /// Deserialize the arguments into `T`, borrowing `&str` fields from the
    /// request (escaped strings are decoded in place). A mismatch between `T`
    /// and the input schema surfaces here as a tool error naming the problem.
    #[inline(never)]
    pub fn parse<T: Deserialize<'a>>(self) -> Result<T, ToolError<'static>> {
        // The server validated the frame (depth included) before building
        // `Arguments`: no second validation pass.
        crate::wire::de::from_validated_in_place(self.raw).map_err(shape_error)
    }
}

/// The tool error of arguments that do not fit the handler's type: one
/// copy, whatever the type.
#[inline(never)]
pub(crate) fn shape_error(e: crate::wire::de::DeError) -> ToolError<'static> {
    ToolError::format(format_args!(
        "arguments do not match the expected shape: {e}"
    ))
}

/// What the writer recorded, read by the server after the handler returns.
#[derive(Debug, Default)]
pub(crate) struct ReplyState {
    /// `(value_start, value_end, cut_start, cut_end)` of `structuredContent`,
    /// absolute in the output buffer: the value, and the span to remove for
    /// versions without it.
    pub(crate) structured: Option<(usize, usize, usize, usize)>,
    /// The schema the structured content matches by construction
    /// ([`WriteJson::EXACT_SCHEMA`](crate::derive_support::WriteJson::EXACT_SCHEMA)).
    pub(crate) exact: Option<&'static Schema<'static>>,
}

/// Where a tool handler writes its successful result. Consumed by the method
/// that finishes it, so a request is answered exactly once.
///
/// Before (and while) writing content, a handler can send progress and log
/// notifications; they reach the client ahead of the result.
pub struct Reply<'r> {
    ctx: Ctx<'r>,
    state: &'r mut ReplyState,
}

impl<'r> Reply<'r> {
    pub(crate) fn new(ctx: Ctx<'r>, state: &'r mut ReplyState) -> Self {
        Self { ctx, state }
    }

    crate::context::notify_methods!(ctx);

    /// Succeed with one text block.
    pub fn text<'a>(self, text: &str) -> ToolOutcome<'a> {
        let mut c = self.content();
        c.text(text);
        c.finish()
    }

    /// Succeed with formatted text as one text block.
    pub fn text_fmt<'a>(self, args: fmt::Arguments<'_>) -> ToolOutcome<'a> {
        let mut c = self.content();
        c.text_fmt(args);
        c.finish()
    }

    /// Answer `input_required` (2026-07-28 MRTR): ask the client for input
    /// and to retry. On older protocol versions the server turns this into a
    /// tool error saying the tool needs 2026-07-28.
    pub fn input_required(self) -> InputRequired<'r> {
        InputRequired::new(self.ctx)
    }

    /// Write content blocks (and optionally structured content).
    pub fn content(self) -> Content<'r> {
        Content { reply: self }
    }

    /// Succeed with structured content only; a text block carrying the same
    /// JSON is added for clients that read only `content`.
    pub fn structured<'a>(self, write: impl FnOnce(ValueWriter<'_, 'r>)) -> ToolOutcome<'a> {
        self.content().finish_structured(write)
    }
}

impl fmt::Debug for Reply<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reply")
            .field("version", &self.ctx.version)
            .finish_non_exhaustive()
    }
}

/// Writes content blocks into the result, front to back.
///
/// Writes never fail one by one: if the result outgrows the response buffer,
/// the server replaces it with a tool error saying so.
pub struct Content<'r> {
    // Whether a block was written is the context's (`Ctx::blocks`): a
    // count here would make `Content` a word longer than `Reply`, past
    // what a move copies without a `memcpy` call.
    reply: Reply<'r>,
}

impl<'r> Content<'r> {
    crate::context::notify_methods!(reply.ctx);

    /// Start the next block.
    pub fn block(&mut self) -> Block<'_, 'r> {
        let ctx = &mut self.reply.ctx;
        let first = !core::mem::replace(&mut ctx.blocks, true);
        ctx.w.raw(if first { b"\"content\":[" } else { b"," });
        Block::new(&mut ctx.w, ctx.version)
    }

    /// A text block.
    pub fn text(&mut self, text: &str) -> &mut Self {
        self.block().text(text);
        self
    }

    /// A text block from formatted text.
    pub fn text_fmt(&mut self, args: fmt::Arguments<'_>) -> &mut Self {
        self.block().text_fmt(args);
        self
    }

    /// A text block written through [`core::fmt::Write`].
    pub fn text_with(&mut self, write: impl FnOnce(&mut TextWriter<'_, 'r>)) -> &mut Self {
        self.block().text_with(write);
        self
    }

    /// An image block; `data` is base64-encoded as it is written.
    pub fn image(&mut self, mime_type: &str, data: &[u8]) -> &mut Self {
        self.block().image(mime_type, data);
        self
    }

    /// An audio block (2025-03-26+; older clients get a text block saying
    /// audio was left out).
    pub fn audio(&mut self, mime_type: &str, data: &[u8]) -> &mut Self {
        self.block().audio(mime_type, data);
        self
    }

    /// A `resource_link` block (2025-06-18+; older clients get a text block
    /// `NAME: URI`).
    pub fn resource_link(&mut self, link: &ResourceLink<'_>) -> &mut Self {
        self.block().resource_link(link);
        self
    }

    /// An embedded text resource.
    pub fn embedded_text(&mut self, uri: &str, mime_type: Option<&str>, text: &str) -> &mut Self {
        self.block().embedded_text(uri, mime_type, text);
        self
    }

    /// An embedded binary resource (base64 written on the fly).
    pub fn embedded_blob(&mut self, uri: &str, mime_type: Option<&str>, data: &[u8]) -> &mut Self {
        self.block().embedded_blob(uri, mime_type, data);
        self
    }

    fn seal(mut self) -> Done {
        self.reply.ctx.finish()
    }

    /// Finish the result.
    pub fn finish<'a>(mut self) -> ToolOutcome<'a> {
        if !self.reply.ctx.blocks {
            self.reply.ctx.w.raw(b"\"content\":[");
        }
        self.reply.ctx.w.raw(b"]");
        Ok(self.seal())
    }

    /// Finish the result with `structuredContent`, written by `write`. If no
    /// content block was written, a text block carrying the same JSON is
    /// added. The server checks it against the tool's output schema.
    pub fn finish_structured<'a>(self, write: impl FnOnce(ValueWriter<'_, 'r>)) -> ToolOutcome<'a> {
        self.finish_structured_exact(None, write)
    }

    /// [`Self::finish_structured`], where `exact` (if any) is a schema the
    /// written value matches by construction.
    pub(crate) fn finish_structured_exact<'a>(
        mut self,
        exact: Option<&'static Schema<'static>>,
        write: impl FnOnce(ValueWriter<'_, 'r>),
    ) -> ToolOutcome<'a> {
        self.reply.state.exact = exact;
        let (key, start) = self.open_structured();
        write(self.reply.ctx.w.value());
        Ok(self.close_structured(key, start))
    }

    /// `structuredContent`'s key (after blocks, their array closed first:
    /// `],`); where the key and the value start. One copy for every output
    /// type.
    #[inline(never)]
    fn open_structured(&mut self) -> (usize, usize) {
        let w = &mut self.reply.ctx.w;
        let key = w.len();
        let head: &[u8] = b"],\"structuredContent\":";
        let skip = if self.reply.ctx.blocks { 0 } else { 2 };
        w.raw(head.get(skip..).unwrap_or(head));
        (key, w.len())
    }

    /// Record the structured value written since `start` (without blocks,
    /// the text block carrying the same JSON added) and finish.
    #[inline(never)]
    fn close_structured(mut self, key: usize, start: usize) -> Done {
        let w = &mut self.reply.ctx.w;
        let end = w.len();
        let structured = if self.reply.ctx.blocks {
            // Without structuredContent the span becomes just `]`.
            (start, end, key + 1, end)
        } else {
            w.raw(b",\"content\":[{\"type\":\"text\",\"text\":\"");
            w.copy_escaped_from(start, end);
            w.raw(b"\"}]");
            (start, end, key, end + 1)
        };
        self.reply.state.structured = Some(structured);
        self.seal()
    }
}

#[cfg(test)]
mod tests {
    /// A handler's `Reply` and `Content` move by value (into the handler,
    /// into `Content`, into its finishing call): at most 128 bytes on a
    /// 64-bit host, a move is a few vector stores, not a `memcpy` call.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn reply_and_content_move_without_a_memcpy_call() {
        assert!(core::mem::size_of::<super::Reply<'static>>() <= 128);
        assert!(core::mem::size_of::<super::Content<'static>>() <= 128);
    }
}
