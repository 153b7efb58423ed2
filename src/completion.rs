//! Argument completion (`completion/complete`).
//!
//! One handler per server serves completions for prompt arguments and
//! resource-template variables. The server checks the reference first: a
//! prompt that does not exist, or a URI that is not one of the registered
//! templates, is `-32602`. The `completions` capability is advertised only
//! when a handler is set (and the version has it: 2025-03-26+). The
//! request's optional `context.arguments` are not passed to the handler.

use core::fmt;

use crate::context::{Ctx, Done};
use crate::error::ProtocolError;

/// Most values one completion result may carry (the MCP limit).
pub const MAX_COMPLETIONS: u32 = 100;

/// What is being completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompletionRef<'a> {
    /// An argument of the prompt with this name.
    Prompt(&'a str),
    /// A variable of the resource template with this URI template.
    ResourceTemplate(&'a str),
}

/// A `completion/complete` request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompleteRequest<'a> {
    /// The prompt or template.
    pub reference: CompletionRef<'a>,
    /// The argument (or template variable) name.
    pub argument: &'a str,
    /// What the user typed so far.
    pub value: &'a str,
}

/// What a completion handler returns.
pub type CompleteOutcome<'a> = Result<Done, ProtocolError<'a>>;

/// A completion handler. `S` is the server's application state.
pub type CompleteFn<S> =
    for<'a, 'r> fn(&'a S, CompleteRequest<'a>, Completions<'r>) -> CompleteOutcome<'a>;

/// The completion handler of a server that completes asynchronously, for
/// a caller that invokes it directly: it cannot complete.
#[cfg(feature = "async-handlers")]
pub(crate) fn needs_async<'a, S>(
    _: &'a S,
    _: CompleteRequest<'a>,
    _: Completions<'_>,
) -> CompleteOutcome<'a> {
    Err(crate::error::ProtocolError::internal(
        "completion is async: serve it with Server::handle_async",
    ))
}

/// Where a completion handler writes its values. Consumed by
/// [`finish`](Self::finish).
pub struct Completions<'r> {
    ctx: Ctx<'r>,
    count: u32,
    total: Option<u64>,
    has_more: bool,
}

impl<'r> Completions<'r> {
    pub(crate) fn new(mut ctx: Ctx<'r>) -> Self {
        ctx.w.raw(b"\"completion\":{\"values\":[");
        Self {
            ctx,
            count: 0,
            total: None,
            has_more: false,
        }
    }

    crate::context::notify_methods!(ctx);

    /// Add a value. Past [`MAX_COMPLETIONS`] values nothing is added,
    /// `hasMore` is set and `false` is returned.
    pub fn value(&mut self, value: &str) -> bool {
        if self.count >= MAX_COMPLETIONS {
            self.has_more = true;
            return false;
        }
        if self.count > 0 {
            self.ctx.w.raw(b",");
        }
        self.count += 1;
        self.ctx.w.string(value);
        true
    }

    /// Set `total`: how many values exist in all.
    pub fn total(&mut self, total: u64) -> &mut Self {
        self.total = Some(total);
        self
    }

    /// Set `hasMore`.
    pub fn has_more(&mut self, more: bool) -> &mut Self {
        self.has_more = more;
        self
    }

    /// Finish the result.
    pub fn finish<'a>(mut self) -> CompleteOutcome<'a> {
        let w = &mut self.ctx.w;
        w.raw(b"]");
        if let Some(t) = self.total {
            w.raw(b",\"total\":");
            w.u64(t);
        }
        w.raw(b",\"hasMore\":");
        w.bool(self.has_more);
        w.raw(b"}");
        Ok(self.ctx.finish())
    }
}

impl fmt::Debug for Completions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Completions")
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}
