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
//! A 2025-03-26 batch is answered by `begin` whole: an async tool's call
//! in it is `-32603` saying the tool is async (going on with the batch
//! after its handler would take the session again). [`Server::handle_async`]
//! and the async serve loops await such calls.
//!
//! [`Server::handle_async`]: crate::Server::handle_async
//!
//! Many calls can be in flight at once: each has its own body and output
//! buffer, and a [`PendingCall`] is a plain value (no borrows), so it can be
//! moved to wherever the handler's future is polled.
//!
//! # Asking the client, handshake era
//!
//! An async handler that asks for input on a handshake-era session waits
//! as a sync one does (its requests go out on its POST's stream, which is
//! held; the client's answers come in later POSTs; the call is run again
//! with them), when the caller follows [`Http::begin_streams`] with
//! [`Http::keep`] (under the same locks: it copies
//! [`PendingCall::kept_len`] bytes out of the waiting-call store) and
//! finishes the call with [`Http::finish_waiting`], which takes the store's
//! lock again only after the handler, through the caller's `lock`. No slot
//! is held while a handler runs for the first time: a free one is taken if
//! it asks (none free: `-32603` naming the limit, as for a sync handler). A
//! call run again keeps its slot while its handler runs; the round's time
//! limit ([`Http::expire_waiting`]) counts until it is over. Its output
//! goes to the stream of the request that made it, not to the request
//! that brought the last answer ([`PendingCall::runs_again`]: an adapter
//! may answer that one `202` at once and run the call apart), and a
//! `notifications/cancelled` of it names it in [`Response::cancels`] so the
//! adapter drops its handler's future. With
//! [`Http::finish`] instead, such a handler is answered as a call that
//! cannot wait (`-32603`).

use super::{
    CallId, Headers, Http, Random, Request, Response, SessionStore, Status, Streams, Waiting,
    respond, respond_waiting,
};
use crate::asynch::AsyncHandlers;
use crate::context::Mrtr;
use crate::server::invoke::Deferred;
use crate::server::{CallEvent, NoRoom, Server, WaitingView, Wrote, call_key};
use crate::wire::emit::Writer;
use crate::wire::json::Value;

/// An async tool's call that [`Http::begin`] stopped before its handler:
/// finish it with [`Http::finish`].
pub struct PendingCall {
    core: Deferred,
    status: Status,
    /// Bytes [`Http::keep`] copies out of the store for it (0: none): a
    /// [`Kept`] header, then the request (and, run again, state and
    /// answers). Only a length here: the call stays as small as it was.
    kept: u32,
}

/// Bytes of the header [`Http::keep`] writes in front of what it copies.
const HEADER: usize = 44;

/// What a handshake-era call that may ask for input keeps of the
/// waiting-call store across its handler (copied out by [`Http::keep`]).
#[derive(Clone, Copy, Debug)]
struct Kept {
    /// The session whose call it is.
    owner: [u8; 16],
    /// Bytes kept: a first run's request as received; a retry's request,
    /// state and answers.
    len: usize,
    run: Run,
}

impl Kept {
    /// Into the [`HEADER`] bytes in front of the kept bytes.
    fn write(&self, header: &mut [u8]) {
        let (kind, a, b, c, d, e) = match self.run {
            Run::First { slot, id } => (1, slot, 0, id.0, id.1, 0),
            Run::Retry {
                slot,
                generation,
                call,
                request_len,
                state_len,
            } => (
                2,
                slot,
                generation as usize,
                request_len,
                state_len.map_or(0, |n| n + 1),
                call as usize,
            ),
        };
        let words = [kind, self.len, a, b, c, d, e];
        for (dst, w) in header.chunks_exact_mut(4).zip(words) {
            dst.copy_from_slice(&(w as u32).to_le_bytes());
        }
        if let Some(owner) = header.get_mut(28..44) {
            owner.copy_from_slice(&self.owner);
        }
    }

    /// What [`write`](Self::write) wrote.
    fn read(header: &[u8]) -> Option<Kept> {
        let word = |i: usize| -> Option<usize> {
            let b = header.get(i * 4..i * 4 + 4)?;
            Some(u32::from_le_bytes(b.try_into().ok()?) as usize)
        };
        let (len, a, b, c, d) = (word(1)?, word(2)?, word(3)?, word(4)?, word(5)?);
        let e = word(6)?;
        let run = match word(0)? {
            1 => Run::First {
                slot: a,
                id: (c, d),
            },
            2 => Run::Retry {
                slot: a,
                generation: b as u32,
                call: e as u32,
                request_len: c,
                state_len: d.checked_sub(1),
            },
            _ => return None,
        };
        Some(Kept {
            owner: header.get(28..44)?.try_into().ok()?,
            len,
            run,
        })
    }
}

#[derive(Clone, Copy, Debug)]
enum Run {
    /// A first run: its request (as received, before any unescaping) is
    /// kept, with its id at `id`; a slot is taken only if the handler asks.
    First { slot: usize, id: (usize, usize) },
    /// A call run again with the client's answers: it keeps its `slot`
    /// (this round's `generation`; `call` names it across rounds, as in
    /// its [`CallId`]); its request is the first
    /// `request_len` bytes kept, its state (if any) the next `state_len`,
    /// then the answers.
    Retry {
        slot: usize,
        generation: u32,
        call: u32,
        request_len: usize,
        state_len: Option<usize>,
    },
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

    /// A handshake-era call run again with the client's answers to its
    /// requests: its output goes to the stream of the request that made it
    /// ([`Response::deliver`]), the request that brought the last answer is
    /// only accepted (`202`). An adapter may run it apart from that request.
    pub fn runs_again(&self) -> bool {
        self.core.waits().is_some_and(|(_, again)| again)
    }

    /// Bytes of the waiting-call store this call keeps across its handler
    /// (a handshake-era call that may ask the client for input; 0 for any
    /// other): [`Http::keep`] copies them into a buffer this long, which
    /// [`Http::finish_waiting`] then reads.
    pub fn kept_len(&self) -> usize {
        self.kept as usize
    }

    /// For a call [`runs_again`](Self::runs_again), the waiting call whose
    /// held stream its output goes to (the [`CallId`] of the response that
    /// held it, and of the [`Delivery`](super::Delivery) that will name
    /// it), read from `kept`, the bytes [`Http::keep`] copied for it
    /// (`None` for any other call, or when nothing was kept). An adapter
    /// that sees that stream's client go may drop the call's handler: no
    /// one would read its output. (Its slot is then given back as a
    /// waiting call's whose client went: at the wait limit.)
    pub fn held(&self, kept: &[u8]) -> Option<CallId> {
        if self.kept == 0 {
            return None;
        }
        match Kept::read(kept.get(..HEADER)?)?.run {
            Run::Retry { slot, call, .. } => Some(CallId(call_key(slot, call))),
            Run::First { .. } => None,
        }
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
    /// tool's handler. A handshake-era call whose handler may ask the
    /// client for input waits as a sync one's does when the caller, still
    /// holding `waiting`, calls [`keep`](Self::keep) and finishes it with
    /// [`finish_waiting`](Self::finish_waiting) (see [asking the
    /// client](self#asking-the-client-handshake-era)); finished with
    /// [`finish`](Self::finish), it is answered as a call that cannot wait.
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
            Some(&mut *waiting),
            Some(streams),
            req,
            out,
            Some(&mut call),
        );
        match call {
            Some((core, status)) => {
                let kept = kept_of(&core, &waiting.view()).map_or(0, |k| k.len + HEADER);
                Begun::Call(PendingCall {
                    core,
                    status,
                    kept: u32::try_from(kept).unwrap_or(0),
                })
            }
            None => Begun::Response(r),
        }
    }

    /// Copy what `call` keeps of `waiting` into `buf`
    /// ([`PendingCall::kept_len`] bytes): the caller's store, still locked
    /// since the [`begin_streams`](Self::begin_streams) that stopped
    /// before `call`'s handler. `false` (and the call then answered as one
    /// that cannot wait, if it asks) when `buf` is too short or the call
    /// keeps nothing.
    pub fn keep<const N: usize, const B: usize>(
        &self,
        call: &mut PendingCall,
        waiting: &mut Waiting<N, B>,
        buf: &mut [u8],
    ) -> bool {
        let view = waiting.view();
        let copied = call.kept_len() > 0
            && kept_of(&call.core, &view).is_some_and(|kept| {
                let Some((header, rest)) = buf
                    .get_mut(..call.kept_len())
                    .and_then(|b| b.split_at_mut_checked(HEADER))
                else {
                    return false;
                };
                kept.write(header);
                match kept.run {
                    // Phase 1 copied the request, as received, into the
                    // slot it chose (not taken): it is still there.
                    Run::First { slot, .. } => {
                        match (rest.get_mut(..kept.len), view.slot(slot).get(..kept.len)) {
                            (Some(dst), Some(src)) => {
                                dst.copy_from_slice(src);
                                true
                            }
                            _ => false,
                        }
                    }
                    Run::Retry { slot, .. } => view.copy_retry(slot, rest).is_some(),
                }
            });
        if !copied {
            call.kept = 0;
        }
        copied
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
        let PendingCall { core, status, .. } = call;
        let answer = self
            .server
            .finish_deferred::<false, _, &mut WaitingView<'_>>(core, body, out, None, tools, None)
            .await
            .answer(out);
        respond(out, answer, status)
    }

    /// [`finish`](Self::finish) for a call [`begin_streams`](Self::begin_streams)
    /// stopped and [`keep`](Self::keep) copied `kept` for: a handshake-era
    /// handler that asks for input waits as a sync one's does (see [asking
    /// the client](self#asking-the-client-handshake-era)). `lock` is how
    /// the store is reached after the handler: it calls its argument with
    /// the store, locked, and the clock's time (as in [`Request::new`]).
    /// The response holds the call's stream open
    /// ([`hold`](Response::hold)) when it waits, and, for a call run again,
    /// is `202` with the output for the waiting call's stream
    /// ([`deliver`](Response::deliver)), as the responses of
    /// [`handle_streams`](Self::handle_streams) are.
    pub async fn finish_waiting<A, L, const N: usize, const B: usize>(
        &self,
        call: PendingCall,
        body: &mut [u8],
        kept: &mut [u8],
        out: &mut [u8],
        tools: &A,
        lock: &mut L,
    ) -> Response
    where
        A: AsyncHandlers<S>,
        L: FnMut(&mut dyn FnMut(&mut Waiting<N, B>, u64)),
    {
        let what = match kept.split_at_mut_checked(HEADER) {
            Some((header, rest)) if call.kept_len() > 0 => Kept::read(header).map(|k| (k, rest)),
            _ => None,
        };
        let Some((what, bytes)) = what else {
            return self.finish(call, body, out, tools).await;
        };
        let PendingCall { core, .. } = call;
        let mut keep = Keep {
            what,
            bytes,
            lock,
            event: None,
        };
        let answer = self
            .server
            .finish_deferred::<true, _, _>(core, body, out, None, tools, Some(&mut keep))
            .await
            .answer(out);
        respond_waiting(out, answer, keep.event)
    }
}

/// What a call phase 1 deferred keeps of the store (`view`).
fn kept_of(core: &Deferred, view: &WaitingView<'_>) -> Option<Kept> {
    let (slot, retried) = core.waits()?;
    let m = view.meta_of(slot)?;
    let run = if retried {
        Run::Retry {
            slot,
            generation: m.generation,
            call: m.call,
            request_len: m.request_len,
            state_len: m.state_len,
        }
    } else {
        Run::First { slot, id: m.id }
    };
    Some(Kept {
        owner: m.owner,
        len: if retried {
            m.answers_end() + 1
        } else {
            m.request_len
        },
        run,
    })
}

/// The caller's way to the store after a handler: it calls its argument
/// with the store, locked, and the time.
type Lock<'k, const N: usize, const B: usize> =
    &'k mut dyn FnMut(&mut dyn FnMut(&mut Waiting<N, B>, u64));

/// [`Http::finish_waiting`]'s hold on the store: the kept bytes, and the
/// caller's lock, taken after the handler.
struct Keep<'k, const N: usize, const B: usize> {
    what: Kept,
    bytes: &'k mut [u8],
    lock: Lock<'k, N, B>,
    /// What the call's end did to its waiting call.
    event: Option<CallEvent>,
}

impl<const N: usize, const B: usize> crate::server::deferred::Keeper for &mut Keep<'_, N, B> {
    fn retry_parts<'f>(
        &'f mut self,
        _slot: usize,
        _frame: &'f mut [u8],
    ) -> Option<(&'f mut [u8], Mrtr<'f>)> {
        let Run::Retry {
            request_len,
            state_len,
            ..
        } = self.what.run
        else {
            return None;
        };
        let (request, rest) = self
            .bytes
            .get_mut(..self.what.len)?
            .split_at_mut_checked(request_len)?;
        let rest: &[u8] = rest;
        let answers = Mrtr {
            binding: None,
            state: state_len.and_then(|n| rest.get(..n)),
            responses: rest.get(state_len.unwrap_or(0)..).map(Value::trusted),
        };
        Some((request, answers))
    }

    fn after_run<S>(
        &mut self,
        server: &Server<'_, S>,
        w: &mut Writer<'_>,
        retried: Option<usize>,
        wrote: Wrote,
    ) -> Wrote {
        let what = self.what;
        if matches!(what.run, Run::First { .. }) && !matches!(wrote, Wrote::Asked { .. }) {
            return wrote; // answered: nothing of the store is needed
        }
        let kept: &[u8] = self.bytes;
        let mut settled = None;
        let mut event = None;
        (self.lock)(&mut |store, now| {
            let mut view = store.view_for(what.owner, now);
            settled = Some(match (what.run, wrote) {
                // It asked: it waits in a free slot, from now.
                (
                    Run::First { id, .. },
                    Wrote::Asked {
                        start, body_start, ..
                    },
                ) => {
                    let request = kept.get(..what.len).unwrap_or_default();
                    match view.reserve(request, id) {
                        Ok(slot) => server.after_run(
                            &mut view,
                            w,
                            None,
                            Wrote::Asked {
                                slot,
                                start,
                                body_start,
                            },
                        ),
                        Err(no_room) => {
                            let id = kept.get(id.0..id.1).unwrap_or_default();
                            Server::<S>::cannot_wait(w, start, id, no_room)
                        }
                    }
                }
                (Run::First { .. }, wrote) => wrote,
                (
                    Run::Retry {
                        slot, generation, ..
                    },
                    wrote,
                ) if view.owns(slot, generation) => server.after_run(&mut view, w, retried, wrote),
                // Cancelled, or its session ended, while its handler ran:
                // no one waits for its answer.
                (Run::Retry { .. }, _) => {
                    w.truncate(0);
                    w.drop_stash();
                    Wrote::Nothing
                }
            });
            event = view.event;
        });
        self.event = event;
        match (settled, what.run, wrote) {
            (Some(settled), ..) => settled,
            // The caller's lock gave no store: a call that asked cannot
            // wait; one run again has no one to answer here.
            (None, Run::First { id, .. }, Wrote::Asked { start, .. }) => {
                let id = kept.get(id.0..id.1).unwrap_or_default();
                Server::<S>::cannot_wait(w, start, id, NoRoom::Async)
            }
            (None, Run::Retry { .. }, _) => {
                w.truncate(0);
                w.drop_stash();
                Wrote::Nothing
            }
            (None, _, wrote) => wrote,
        }
    }
}

fn begun(r: Response, call: Option<(Deferred, Status)>) -> Begun {
    match call {
        Some((core, status)) => Begun::Call(PendingCall {
            core,
            status,
            kept: 0,
        }),
        None => Begun::Response(r),
    }
}
