//! Multi-round-trip requests (MRTR, MCP 2026-07-28).
//!
//! A tool, prompt or resource handler that needs input from the user answers
//! `resultType: "input_required"` with `inputRequests` (e.g. an elicitation
//! form) and an opaque `requestState`. The client asks the user, then retries
//! the same request with `inputResponses` and the `requestState` echoed. The
//! handler then sees both ([`Reply::request_state`](crate::tool::Reply::request_state),
//! [`Reply::input_response`](crate::tool::Reply::input_response)).
//!
//! `requestState` is attacker-controlled, so picomcp seals it: the wire form
//! is base64url of `1 ‖ payload ‖ tag`, where the tag is the first 16 bytes of
//! HMAC-SHA256 under the application's key (see
//! [`Server::request_state_key`](crate::Server::request_state_key)) over the
//! method, the tool/prompt/resource name, a SHA-256 of the request's
//! arguments (JSON whitespace outside strings ignored) and the payload. A
//! state that was edited, issued under another key, or replayed onto another
//! method, tool or set of arguments is refused with `-32602` before the
//! handler runs. The payload (at most [`MAX_STATE`] bytes) is the handler's.

use core::fmt;

use crate::context::{Ctx, Done};
pub use crate::context::{ElicitAction, InputResponse};
use crate::schema::Schema;
pub use crate::seal::MAX_STATE;
use crate::seal::seal;
use crate::wire::emit::Writer;

/// Writes an `input_required` result. Consumed by [`finish`](Self::finish).
pub struct InputRequired<'r> {
    ctx: Ctx<'r>,
    requests: u32,
    state: bool,
}

impl<'r> InputRequired<'r> {
    pub(crate) fn new(mut ctx: Ctx<'r>) -> Self {
        ctx.w.truncate(ctx.body_start);
        ctx.w.raw(b"\"resultType\":\"input_required\"");
        ctx.input_required = true;
        Self {
            ctx,
            requests: 0,
            state: false,
        }
    }

    fn next_request(&mut self, key: &str) -> &mut Writer<'r> {
        let w = &mut self.ctx.w;
        w.raw(if self.requests == 0 {
            b",\"inputRequests\":{"
        } else {
            b","
        });
        self.requests += 1;
        w.string(key);
        w.raw(b":");
        w
    }

    /// Ask the user to fill in a form (`elicitation/create`, mode `form`):
    /// `schema` is the requested schema (flat object of primitive
    /// properties).
    pub fn elicit(
        &mut self,
        key: &str,
        message: fmt::Arguments<'_>,
        schema: &Schema<'_>,
    ) -> &mut Self {
        if self.state {
            self.ctx.w.set_overflow(); // requests must come before the state
            return self;
        }
        let w = self.next_request(key);
        w.raw(b"{\"method\":\"elicitation/create\",\"params\":{\"mode\":\"form\",\"message\":");
        w.string_fmt(message);
        w.raw(b",\"requestedSchema\":");
        schema.write(w);
        w.raw(b"}}");
        self
    }

    /// Attach sealed state (at most [`MAX_STATE`] bytes) that the retry will
    /// hand back verified. Needs
    /// [`Server::request_state_key`](crate::Server::request_state_key).
    pub fn state(&mut self, payload: &[u8]) -> &mut Self {
        if self.requests > 0 {
            self.ctx.w.raw(b"}");
        }
        self.state = true;
        let binding = self.ctx.mrtr.binding;
        let w = &mut self.ctx.w;
        w.raw(b",\"requestState\":\"");
        match binding {
            Some(b) if payload.len() <= MAX_STATE && seal(w, &b, payload) => {}
            _ => {
                self.ctx.state_error = true;
                w.set_overflow();
            }
        }
        self.ctx.w.raw(b"\"");
        self
    }

    /// Finish the `input_required` result.
    pub fn finish<E>(mut self) -> Result<Done, E> {
        if self.requests > 0 && !self.state {
            self.ctx.w.raw(b"}");
        }
        if self.requests == 0 && !self.state {
            self.ctx.state_error = true; // MCP requires at least one of the two
        }
        Ok(self.ctx.finish())
    }
}

impl fmt::Debug for InputRequired<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InputRequired")
            .field("requests", &self.requests)
            .finish_non_exhaustive()
    }
}
