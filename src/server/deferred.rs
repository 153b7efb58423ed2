//! Async tools ([`crate::asynch`], feature `async-handlers`): the
//! synchronous core routes and checks the call as for any tool and stops
//! before the handler, leaving a `Deferred` record;
//! [`Server::handle_async`] takes the answer up from there, awaits the
//! handler and closes the result with the sync code.

use super::Connection;
use super::Server;
use super::WaitingView;
use super::invoke::{BatchAt, Deferral, Deferred, Ran, RequestInfo};
use super::out::{Answer, Out, Wrote, answer_writer};
use super::params::split_spans;
use super::route::Walk;
use crate::asynch::AsyncHandlers;
use crate::changes::Subscriber;
use crate::completion::Completions;
use crate::context::Mrtr;
use crate::context::{Notify, Track};
use crate::prompt::Messages;
use crate::resource::{Contents, ReadRequest, Vars};
use crate::tool::{Arguments, Reply, ReplyState};
use crate::wire::emit::Writer;
use crate::wire::json::Value;

/// Where an async handler's call that may ask the client for input
/// (handshake era) keeps its waiting-call slot between its two phases: a
/// serve loop's store, left to the call until it is over (it runs one call
/// at a time), or, over HTTP, a store behind the caller's lock, taken only
/// after the handler (`http::call`).
pub(crate) trait Keeper {
    /// A call run again with the client's answers (in `slot`): its request
    /// (in place of `frame`, the frame that brought the last answer) and
    /// the answers. `None` if they cannot be read.
    fn retry_parts<'f>(
        &'f mut self,
        slot: usize,
        frame: &'f mut [u8],
    ) -> Option<(&'f mut [u8], Mrtr<'f>)>;

    /// What the handler did, with the store: it asked (the call waits), or
    /// is over (a retry's slot is freed); see [`Server::after_run`].
    fn after_run<S>(
        &mut self,
        server: &Server<'_, S>,
        w: &mut Writer<'_>,
        retried: Option<usize>,
        wrote: Wrote,
    ) -> Wrote;
}

impl Keeper for &mut WaitingView<'_> {
    #[inline]
    fn retry_parts<'f>(
        &'f mut self,
        slot: usize,
        _frame: &'f mut [u8],
    ) -> Option<(&'f mut [u8], Mrtr<'f>)> {
        WaitingView::retry_parts(self, slot)
    }

    #[inline]
    fn after_run<S>(
        &mut self,
        server: &Server<'_, S>,
        w: &mut Writer<'_>,
        retried: Option<usize>,
        wrote: Wrote,
    ) -> Wrote {
        server.after_run(self, w, retried, wrote)
    }
}

impl<S> Server<'_, S> {
    /// Handle one frame like [`handle`](Self::handle), awaiting the handler
    /// when the call is of an async tool ([`Tool::awaiting`], declared with
    /// [`async_tools!`](crate::async_tools)) from `tools`. Every other frame
    /// is answered without awaiting anything, by the same code as `handle`;
    /// the answers are byte for byte those of a sync handler doing the same
    /// work. A handler's notifications come first in `out`, as with
    /// `handle`. In a 2025-03-26 batch each async handler's call is awaited
    /// in turn, where it comes, and the batch goes on after its answer.
    ///
    /// The future borrows `frame` and `out` until it completes; dropping it
    /// before then (a cancelled call) leaves nothing to send and the
    /// connection as it was after the request was routed.
    ///
    /// [`Tool::awaiting`]: crate::tool::Tool::awaiting
    #[must_use = "the answer is out[..n]: send it"]
    pub fn handle_async<A: AsyncHandlers<S>>(
        &self,
        conn: &mut Connection,
        frame: &mut [u8],
        out: &mut [u8],
        tools: &A,
    ) -> impl Future<Output = usize> {
        self.handle_async_inner(conn, frame, out, None, tools)
    }

    /// [`handle_async`](Self::handle_async), with each notification a
    /// handler sends passed to `notify` the moment it is written, while the
    /// handler's future is still pending; `out` then holds only the answer.
    #[must_use = "the answer is out[..n]: send it"]
    pub fn handle_async_with<A: AsyncHandlers<S>>(
        &self,
        conn: &mut Connection,
        frame: &mut [u8],
        out: &mut [u8],
        notify: &mut dyn Notify,
        tools: &A,
    ) -> impl Future<Output = usize> {
        self.handle_async_inner(conn, frame, out, Some(notify), tools)
    }

    async fn handle_async_inner<A: AsyncHandlers<S>>(
        &self,
        conn: &mut Connection,
        frame: &mut [u8],
        out: &mut [u8],
        mut notify: Option<&mut dyn Notify>,
        tools: &A,
    ) -> usize {
        // The sync core, up to an async tool's handler.
        let sink: Option<&mut dyn Notify> = match notify.as_mut() {
            Some(n) => Some(&mut **n),
            None => None,
        };
        let mut next = match self.handle_or_defer(conn, frame, out, sink, None, None) {
            Ok(d) => d,
            Err(len) => return len,
        };
        // Each async handler's call in turn: one, or a batch's, each
        // followed by the batch's next elements up to the next.
        loop {
            let (call, span) = next.with_span();
            let done = {
                let element = match span {
                    Some(span) => frame.get_mut(span).unwrap_or(&mut []),
                    None => &mut *frame,
                };
                let sink: Option<&mut dyn Notify> = match notify.as_mut() {
                    Some(n) => Some(&mut **n),
                    None => None,
                };
                // The record goes straight into phase 2's future (scoped:
                // no local of this future keeps a copy across the await).
                let phase2 = self.finish_deferred::<false, _, &mut WaitingView<'_>>(
                    call, element, out, sink, tools, None,
                );
                // Polled in a frame of its own (`asynch::poll_apart`).
                let mut phase2 = core::pin::pin!(phase2);
                core::future::poll_fn(|cx| crate::asynch::poll_apart(phase2.as_mut(), cx)).await
            };
            let sink: Option<&mut dyn Notify> = match notify.as_mut() {
                Some(n) => Some(&mut **n),
                None => None,
            };
            next = match self.after_deferred::<false>(conn, frame, out, done, sink, None, None) {
                Ok(next) => next,
                Err(len) => return len,
            };
        }
    }

    /// Phase 1: answer `frame` into `out` (`Err(n)`: the answer's length),
    /// or stop before an async tool's handler (`Ok`: the record).
    /// With `waiting` and `subs`, a connection's waiting calls and
    /// subscriptions, as the serve loops keep them (a call that asks for
    /// input waits there; an async handler's only where the caller hands
    /// the store on to `finish_deferred`).
    pub(crate) fn handle_or_defer(
        &self,
        conn: &mut Connection,
        frame: &mut [u8],
        out: &mut [u8],
        notify: Option<&mut dyn Notify>,
        waiting: Option<&mut WaitingView<'_>>,
        subs: Option<&mut Subscriber<'_>>,
    ) -> Result<Deferred, usize> {
        let mut slot = None;
        let answer = self.handle_inner(
            conn,
            frame,
            out,
            notify,
            waiting,
            subs,
            None,
            Some(&mut slot),
        );
        slot.ok_or(answer.len)
    }

    /// Phase 2 of an async tool's call recorded in `deferred`: `frame` is
    /// the request's frame as phase 1 left it, `out` holds the open answer
    /// (`out[..deferred.written()]`). The MRTR input, the handler's context
    /// over the open answer, the handler awaited, the result closed by the
    /// sync code.
    ///
    /// With `waiting` (a `Keeper`: a serve loop's store, left untouched
    /// since phase 1 as it runs one call at a time, or the HTTP mapping's
    /// copy of what the call needs and its way back to the store), a
    /// handshake-era handler that asks for input waits there as a sync one
    /// does, and a call run again with the client's answers
    /// (`Deferred::retried_slot`) reads its request and answers from the
    /// keeper, not from `frame`.
    /// `PARKS`: whether `waiting` may be given (a constant, so that a
    /// caller that never gives one links none of the parking code: the
    /// store is read after the handler's await, where the optimiser cannot
    /// see it is `None`).
    pub(crate) fn finish_deferred<const PARKS: bool, A: AsyncHandlers<S>, K: Keeper>(
        &self,
        deferred: Deferred,
        frame: &mut [u8],
        out: &mut [u8],
        notify: Option<&mut dyn Notify>,
        handlers: &A,
        waiting: Option<K>,
    ) -> impl Future<Output = Finished> {
        // Taken apart before the future is made: it keeps the pieces only.
        let retried = if PARKS { deferred.retried_slot() } else { None };
        let Deferred {
            what,
            info,
            out: mark,
            batch,
        } = deferred;
        let waiting = if PARKS { waiting } else { None };
        let mut info = RequestInfo::attach(info, notify, waiting.is_some());
        async move {
            let mut waiting = waiting;
            let mut w = answer_writer(out);
            let wrote = {
                let mut resp = Out::resume(&mut w, mark, &self.id);
                // A call run again: its request and the client's answers
                // (the input, in place of the frame's), from its slot.
                let (frame, answers) = match (retried, waiting.as_mut()) {
                    (Some(slot), Some(keeper)) if PARKS => match keeper.retry_parts(slot, frame) {
                        Some((request, answers)) => (request, Some(answers)),
                        None => (<&mut [u8]>::default(), None),
                    },
                    _ => (frame, None),
                };
                // Without `PARKS`, none as a constant the optimiser sees.
                let answers = if PARKS { answers } else { None };
                match what {
                    Deferral::Tool { at, params, args } => 'call: {
                        let Some(tool) = self.tools.get(at) else {
                            break 'call resp.invalid_params();
                        };
                        let index = tool.awaits.unwrap_or(u16::MAX);
                        let args_span = args;
                        let (args, input) = {
                            let whole: &[u8] = frame;
                            let params = params.and_then(|r| whole.get(r)).map(Value::trusted);
                            let args = match args_span.clone() {
                                Some(r) => whole.get(r).unwrap_or(b"{}"),
                                None => b"{}",
                            };
                            let name = tool.descriptor.name.as_bytes();
                            let mrtr = match params
                                .map(|_| self.mrtr_spans(&info, whole, "tools/call", name, args))
                            {
                                Some(Ok(spans)) => spans,
                                _ => break 'call resp.invalid_params(),
                            };
                            let [args, state, responses] =
                                split_spans(frame, [args_span, mrtr.state, mrtr.responses]);
                            let input = match answers {
                                Some(answers) => answers,
                                None => match Self::mrtr_input(mrtr.binding, state, responses) {
                                    Ok(input) => input,
                                    Err(()) => break 'call Self::bad_state(resp),
                                },
                            };
                            (args, input)
                        };
                        let mut empty = *b"{}";
                        // Checked before the call was deferred; the derived check's
                        // word is not carried here, so a derived parse takes
                        // serde's way.
                        let args = Arguments::new(args.unwrap_or(&mut empty), None);
                        let mut state = ReplyState::default();
                        // `run_handler`, awaiting.
                        let body_start = resp.open_result();
                        let mut track = Track::default();
                        let outcome = {
                            let ctx =
                                self.ctx(&mut resp, &mut info, &mut track, body_start, &input);
                            handlers
                                .call_tool(index, &self.state, args, Reply::new(ctx, &mut state))
                                .await
                        };
                        resp.w.resume(track.len, track.limit, track.overflow);
                        let ran = Ran { body_start, track };
                        self.tool_answer(tool, outcome, &ran, state, &info, resp)
                    }
                    Deferral::Complete { is_prompt, spans } => 'complete: {
                        let Some(request) =
                            super::complete::complete_request(frame, is_prompt, spans)
                        else {
                            break 'complete resp.invalid_params();
                        };
                        let body_start = resp.open_result();
                        let mut track = Track::default();
                        let outcome = {
                            let none = Mrtr::NONE;
                            let ctx = self.ctx(&mut resp, &mut info, &mut track, body_start, &none);
                            handlers
                                .complete(&self.state, request, Completions::new(ctx))
                                .await
                        };
                        resp.w.resume(track.len, track.limit, track.overflow);
                        let ran = Ran { body_start, track };
                        match outcome {
                            Ok(_) => Self::close_handled(resp, &info, &ran, None, "completion"),
                            Err(e) => resp.protocol(&e),
                        }
                    }
                    Deferral::Prompt { params } => 'prompt: {
                        // Phase 1 again over the unchanged frame: the prompt
                        // and the spans.
                        let (at, spans, binding) = match self.prompt_phase1(&info, frame, params) {
                            Ok(found) => found,
                            Err(refusal) => break 'prompt refusal.answer(resp),
                        };
                        let Some(prompt) = self.prompts.get(at) else {
                            break 'prompt resp.invalid_params();
                        };
                        let index = prompt.awaits.unwrap_or(u16::MAX);
                        let Ok((request, input)) =
                            Self::prompt_input(prompt, frame, spans, binding, answers)
                        else {
                            break 'prompt Self::bad_state(resp);
                        };
                        let body_start = resp.open_result();
                        let mut track = Track::default();
                        let outcome = {
                            let ctx =
                                self.ctx(&mut resp, &mut info, &mut track, body_start, &input);
                            handlers
                                .get_prompt(index, &self.state, request, Messages::new(ctx))
                                .await
                        };
                        resp.w.resume(track.len, track.limit, track.overflow);
                        let ran = Ran { body_start, track };
                        match outcome {
                            Ok(_) => Self::close_handled(resp, &info, &ran, None, "prompt"),
                            Err(e) => resp.protocol(&e),
                        }
                    }
                    Deferral::Read {
                        uri,
                        binding,
                        state,
                        responses,
                    } => 'read: {
                        let (uri, cache, (template, index), request, input) = {
                            let binding = binding.and_then(|(args, expiry)| {
                                self.state_key.map(|key| crate::seal::Binding {
                                    key,
                                    method: "resources/read",
                                    name: [b""],
                                    args,
                                    expiry,
                                    subject: info.subject_digest(),
                                })
                            });
                            let [uri, state, responses] =
                                split_spans(frame, [Some(uri), state, responses]);
                            let Some(uri) = uri.and_then(|u| core::str::from_utf8(u).ok()) else {
                                break 'read resp.invalid_params();
                            };
                            // What reads it, found again (the URI is unchanged).
                            // `vars` is moved into the request here: declared
                            // outside this block, it would stay in the future
                            // beside the request (256 B more, `tests/asynch.rs`).
                            let mut vars = Vars::default();
                            let Some(found) = self.find_read(uri, &mut vars) else {
                                break 'read resp.invalid_params();
                            };
                            let Some(awaits) = found.awaits else {
                                break 'read resp.invalid_params();
                            };
                            let input = match answers {
                                Some(answers) => answers,
                                None => match Self::mrtr_input(binding, state, responses) {
                                    Ok(input) => input,
                                    Err(()) => break 'read Self::bad_state(resp),
                                },
                            };
                            let request = ReadRequest::new(uri, vars);
                            (uri, found.cache, awaits, request, input)
                        };
                        let body_start = resp.open_result();
                        let mut track = Track::default();
                        let outcome = {
                            let ctx =
                                self.ctx(&mut resp, &mut info, &mut track, body_start, &input);
                            let contents = Contents::new(ctx);
                            if template {
                                handlers
                                    .read_template(index, &self.state, request, contents)
                                    .await
                            } else {
                                handlers
                                    .read_resource(index, &self.state, request, contents)
                                    .await
                            }
                        };
                        resp.w.resume(track.len, track.limit, track.overflow);
                        let ran = Ran { body_start, track };
                        self.read_answer(outcome, &ran, &info, cache, uri, resp)
                    }
                }
            };
            let wrote = match waiting {
                Some(mut keeper) if PARKS => keeper.after_run(self, &mut w, retried, wrote),
                _ => wrote,
            };
            Finished {
                wrote,
                at: w.position(),
                batch,
            }
        }
    }

    /// After phase 2 of a call (`done`, in `out`): its answer finished
    /// (`Err`: the output's length), or, in a batch (2025-03-26), the
    /// batch's next elements answered in turn up to its `]` (`Err`), or to
    /// its next async handler's call (`Ok`: its record, for phase 2 again). `frame` is the whole frame, as
    /// phase 1 was given it; `notify`, `waiting` and `subs` as phase 1's.
    /// `KEEPS`: whether `waiting` and `subs` may be given (a constant, as
    /// `finish_deferred`'s `PARKS`: a caller that never gives them links
    /// none of the parking and subscription code, which the batch's
    /// elements would otherwise reach; 10 KB of the async firmware).
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    pub(crate) fn after_deferred<const KEEPS: bool>(
        &self,
        conn: &mut Connection,
        frame: &mut [u8],
        out: &mut [u8],
        done: Finished,
        notify: Option<&mut dyn Notify>,
        waiting: Option<&mut WaitingView<'_>>,
        subs: Option<&mut Subscriber<'_>>,
    ) -> Result<Deferred, usize> {
        let Some(at) = done.batch else {
            return Err(done.answer(out).len);
        };
        let (waiting, subs) = if KEEPS { (waiting, subs) } else { (None, None) };
        let mut w = answer_writer(out);
        w.resume(done.at.0, done.at.1, done.at.2);
        // The call's answer counts as a sync element's does.
        let walk = Walk {
            start: at.start,
            next: at.next,
            answers: at.answers,
            settle: Some((done.wrote, at.before)),
        };
        let mut slot = None;
        let wrote = self.batch_walk(
            conn,
            frame,
            &mut w,
            walk,
            notify,
            waiting,
            subs,
            Some(&mut slot),
        );
        if let (Wrote::Deferred, Some(call)) = (wrote, slot) {
            return Ok(call);
        }
        Err(Answer::of(Wrote::Answer, w).len)
    }
}

/// What phase 2 of an async handler's call left in the output: what it
/// wrote and the writer's position. The answer is still open: a batch goes
/// on after it ([`Server::after_deferred`]).
#[derive(Clone, Debug)]
pub(crate) struct Finished {
    wrote: Wrote,
    at: (usize, usize, bool),
    /// The call is a batch's element: where the batch goes on.
    batch: Option<BatchAt>,
}

impl Finished {
    /// The answer of a call alone, finished (`out`: the buffer phase 2
    /// wrote into).
    pub(crate) fn answer(self, out: &mut [u8]) -> Answer {
        let mut w = answer_writer(out);
        w.resume(self.at.0, self.at.1, self.at.2);
        Answer::of(self.wrote, w)
    }
}
