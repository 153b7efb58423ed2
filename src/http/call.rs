//! Async tools over HTTP (feature `async-handlers`): the mapping answers a
//! request in two steps, so that nothing the caller shares between requests
//! (the session table, the waiting-call store, the stream table — usually
//! behind a lock) is held while a handler awaits.
//!
//! 1. [`Http::begin`] (or [`Http::begin_streams`]) does everything
//!    [`Http::handle`] does, under the caller's locks, and either answers
//!    ([`Begun::Response`]) or stops before an async tool's handler
//!    ([`Begun::Call`]), having written the start of the answer into `out`.
//! 2. The caller releases its locks and awaits [`Http::finish`] with the
//!    same request body and the same output buffer (or one that starts with
//!    the [`PendingCall::written`] bytes of it): the handler runs, and the
//!    response is exactly the one `handle` would give for a sync handler
//!    doing the same.
//!
//! Many calls can be in flight at once: each has its own body and output
//! buffer, and a [`PendingCall`] is a plain value (no borrows), so it can be
//! moved to wherever the handler's future is polled.

use super::{
    Headers, Http, Random, Request, Response, SessionStore, Status, Streams, Waiting, respond,
};
use crate::asynch::AsyncHandlers;
use crate::server::invoke::Deferred;

/// An async tool's call that [`Http::begin`] stopped before its handler:
/// finish it with [`Http::finish`].
pub struct PendingCall {
    core: Deferred,
    status: Status,
}

impl PendingCall {
    /// How many bytes at the start of the output buffer the open answer
    /// holds; [`Http::finish`] continues after them.
    pub fn written(&self) -> usize {
        self.core.written()
    }

    /// The call's request id as written (raw JSON), in `out`: the output
    /// buffer [`Http::begin`] wrote the open answer to, or the call's copy
    /// of its first [`written`](Self::written) bytes. A handshake-era
    /// `notifications/cancelled` names it in [`Response::cancels`](super::Response::cancels).
    pub fn id<'o>(&self, out: &'o [u8]) -> &'o [u8] {
        self.core.id(out)
    }
}

impl core::fmt::Debug for PendingCall {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PendingCall")
            .field("written", &self.written())
            .finish_non_exhaustive()
    }
}

/// What [`Http::begin`] did with a request.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // a call is a few hundred bytes, by value
#[allow(clippy::exhaustive_enums)] // answered or not: there is no third way
pub enum Begun {
    /// The request is answered: send this response.
    Response(Response),
    /// An async tool's handler is to run: [`Http::finish`] it.
    Call(PendingCall),
}

impl<S> Http<'_, S> {
    /// [`handle`](Self::handle), stopping before an async tool's handler
    /// (see the [two steps](super#async-tools)).
    #[must_use = "send the response, or finish the call"]
    pub fn begin<St, R, H>(
        &self,
        sessions: &mut St,
        random: &mut R,
        req: Request<'_, H>,
        out: &mut [u8],
    ) -> Begun
    where
        St: SessionStore + ?Sized,
        R: Random + ?Sized,
        H: Headers + ?Sized,
    {
        let mut call = None;
        let r = self.handle_in(
            sessions,
            random,
            None::<&mut Waiting<0, 0>>,
            None::<&mut Streams<0, 0, 0>>,
            req,
            out,
            Some(&mut call),
        );
        begun(r, call)
    }

    /// [`handle_streams`](Self::handle_streams), stopping before an async
    /// tool's handler. A handshake-era async handler that asks the client
    /// for input is answered as a call that cannot wait (as with
    /// [`Server::handle_async`](crate::Server::handle_async)).
    #[must_use = "send the response, or finish the call"]
    #[allow(clippy::too_many_arguments)]
    pub fn begin_streams<
        St,
        R,
        H,
        const N: usize,
        const B: usize,
        const M: usize,
        const K: usize,
        const U: usize,
    >(
        &self,
        sessions: &mut St,
        random: &mut R,
        waiting: &mut Waiting<N, B>,
        streams: &mut Streams<M, K, U>,
        req: Request<'_, H>,
        out: &mut [u8],
    ) -> Begun
    where
        St: SessionStore + ?Sized,
        R: Random + ?Sized,
        H: Headers + ?Sized,
    {
        let mut call = None;
        let r = self.handle_in(
            sessions,
            random,
            Some(waiting),
            Some(streams),
            req,
            out,
            Some(&mut call),
        );
        begun(r, call)
    }

    /// Run the handler of `call` and close its answer: `body` is the
    /// request's body as [`begin`](Self::begin) left it, `out` the output
    /// buffer it wrote into (or a copy of its first
    /// [`written`](PendingCall::written) bytes). A handler's notifications
    /// come first in the response (as SSE), as with `handle`.
    pub async fn finish<A: AsyncHandlers<S>>(
        &self,
        call: PendingCall,
        body: &mut [u8],
        out: &mut [u8],
        tools: &A,
    ) -> Response {
        let PendingCall { core, status } = call;
        let answer = self
            .server
            .finish_deferred::<false, _>(core, body, out, None, tools, None)
            .await;
        respond(out, answer, status)
    }
}

fn begun(r: Response, call: Option<(Deferred, Status)>) -> Begun {
    match call {
        Some((core, status)) => Begun::Call(PendingCall { core, status }),
        None => Begun::Response(r),
    }
}
