//! Calling a handler: the request facts a handler context carries (built
//! only from a ready session or a checked 2026-07-28 envelope), the MRTR
//! input of a retry, and the one invocation skeleton every handler family
//! (tools, resources, prompts, completion) runs through.

use core::ops::Range;

use super::Server;
use super::out::{Data, Out, Wrote};
use super::params::{NamedSpans, Span, span};
use super::session::{Ready, Session, Subject};
use super::waiting::NoRoom;
use crate::context::{Ctx, MAX_PROGRESS_TOKEN, Mrtr, Notify, Track};
use crate::error::{INTERNAL_ERROR, INVALID_PARAMS, ProtocolError};
use crate::mcp::envelope::Modern;
use crate::mcp::{Cache, ClientCapabilities, LogLevel, ProtocolVersion};
use crate::seal::Binding;
use crate::wire::json::{Kind, Value};

/// What every request carries whatever its era: found by the one walk over
/// its `params`, plus the caller's notification sink.
pub(super) struct RequestFacts<'n> {
    pub(super) progress: Option<heapless::Vec<u8, MAX_PROGRESS_TOKEN>>,
    pub(super) notify: Option<&'n mut dyn Notify>,
    /// `params.name` and `params.arguments`.
    pub(super) named: NamedSpans,
}

/// How a handler that asks for input is served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Asking {
    /// 2026-07-28: an `input_required` result.
    Modern,
    /// Handshake era: requests to the client; the call waits in this slot.
    Slot(usize),
    /// Handshake era, but the call cannot wait.
    NoRoom(NoRoom),
}

/// Request-wide facts a handler context needs. Made only by
/// [`RequestInfo::handshake`] (from a `Session<Ready>`) or
/// [`RequestInfo::modern`] (from a checked envelope): dispatch cannot be
/// reached any other way.
pub(super) struct RequestInfo<'n> {
    version: ProtocolVersion,
    /// 2026-07-28: stateless, stamped results, MRTR.
    modern: bool,
    log_level: Option<LogLevel>,
    client: ClientCapabilities,
    progress: Option<heapless::Vec<u8, MAX_PROGRESS_TOKEN>>,
    notify: Option<&'n mut dyn Notify>,
    named: NamedSpans,
    asking: Asking,
    /// A handshake-era call run again with the client's answers.
    retry: Option<&'n Mrtr<'n>>,
    /// 2026-07-28: whom the caller authenticated the request as (a copy:
    /// an async tool's call keeps it across its handler).
    subject: Option<Subject>,
    /// Where an async tool's call is recorded for the caller to finish.
    defer: Option<&'n mut Option<Deferred>>,
}

#[cfg(feature = "async-handlers")]
/// Where an async handler's call stopped: plain spans and facts, no
/// borrows, so the frame and the output buffer are free again until it goes
/// on.
pub(crate) struct Deferred {
    pub(super) what: Deferral,
    pub(super) info: Detached,
    /// The open answer (`{"jsonrpc":"2.0","id":…` is written).
    pub(super) out: super::out::OutMark,
    /// The call is an element of a batch (2025-03-26): where the batch
    /// goes on once its answer is written (`Server::after_deferred`).
    pub(crate) batch: Option<BatchAt>,
}

/// Where a batch stopped at an element that is an async handler's call:
/// enough to go on after its answer, with no borrows.
#[cfg(feature = "async-handlers")]
#[derive(Clone, Debug)]
pub(crate) struct BatchAt {
    /// The batch's `[` in the output.
    pub(super) start: usize,
    /// The output before the element (and its comma): a call that ends
    /// with no answer is cut back to here.
    pub(super) before: usize,
    /// Answers written before the element.
    pub(super) answers: usize,
    /// The element's span in the frame: the deferral's spans are within
    /// it, and phase 2 reads it as its frame.
    pub(crate) element: Range<usize>,
    /// The offset of the next element in the frame (after its comma), or
    /// `None`: the element was the last.
    pub(super) next: Option<usize>,
}

/// What a sealed state of a deferred read is bound to, besides the key,
/// method and subject: the arguments' digest and the expiry.
#[cfg(feature = "async-handlers")]
pub(super) type BindingParts = (crate::seal::ArgsDigest, Option<crate::seal::Expiry>);

/// Which handler a deferred call runs, and the spans of the frame it reads.
#[cfg(feature = "async-handlers")]
pub(super) enum Deferral {
    /// A completion: whether of a prompt, and the spans of the reference's
    /// name or URI, the argument's name and its value.
    Complete {
        is_prompt: bool,
        spans: [Option<Range<usize>>; 3],
    },
    /// A prompt: `params` (phase 1 runs again over the unchanged frame for
    /// the prompt and its arguments' spans).
    Prompt { params: Option<Range<usize>> },
    /// A tool: its index in the registry; `params` and `params.arguments`.
    Tool {
        at: usize,
        params: Option<Range<usize>>,
        args: Option<Range<usize>>,
    },
    /// A resource read: the URI (unescaped in place; phase 2 finds what
    /// reads it again); what sealed state is bound to (the arguments'
    /// digest and the expiry); the MRTR spans.
    Read {
        uri: Range<usize>,
        binding: Option<BindingParts>,
        state: Option<Range<usize>>,
        responses: Option<Range<usize>>,
    },
}

#[cfg(feature = "async-handlers")]
impl Deferred {
    /// The record, and the span of the frame phase 2 reads: the batch
    /// element's (its spans are within it), or `None`: the whole frame.
    /// By value: a caller that awaits the call keeps no borrowed record
    /// (an async fn keeps a borrowed local's room across its awaits).
    pub(crate) fn with_span(self) -> (Deferred, Option<Range<usize>>) {
        let span = self.batch.as_ref().map(|at| at.element.clone());
        (self, span)
    }

    /// How many bytes of the output buffer the open answer holds: phase 2
    /// continues after them, in the same buffer or a copy of them.
    pub(crate) fn written(&self) -> usize {
        self.out.written()
    }

    /// The waiting-call slot of a call run again with the client's
    /// answers: its request and answers are there
    /// (`WaitingView::retry_parts`), not in the frame that brought the
    /// last answer.
    pub(crate) fn retried_slot(&self) -> Option<usize> {
        match self.info.asking {
            Asking::Slot(slot) if self.info.retried => Some(slot),
            _ => None,
        }
    }

    /// The waiting-call slot phase 1 chose for a handshake-era call that
    /// may ask for input, and whether the call is run again with the
    /// client's answers (then they are in that slot).
    pub(crate) fn waits(&self) -> Option<(usize, bool)> {
        match self.info.asking {
            Asking::Slot(slot) => Some((slot, self.info.retried)),
            _ => None,
        }
    }

    /// The request's id as received (raw JSON), from the open answer in
    /// `out` (the buffer phase 1 wrote into).
    #[cfg(any(feature = "embedded-io-async", feature = "async-handlers"))]
    pub(crate) fn id<'o>(&self, out: &'o [u8]) -> &'o [u8] {
        self.out.id(out)
    }
}

/// The one decision for an async handler's call: recorded in the caller's
/// slot (then `Wrote::Deferred`: the answer is open for
/// `Server::handle_async` to finish; in a batch, with where the batch goes
/// on), or `-32603` where no one awaits handlers (a plain `handle`, a batch
/// over HTTP). `what` names what is async
/// (`tool get_author`).
#[cfg(feature = "async-handlers")]
pub(super) fn defer(
    info: &mut RequestInfo<'_>,
    call: Deferral,
    resp: Out<'_, '_>,
    what: core::fmt::Arguments<'_>,
) -> Wrote {
    let Some(slot) = info.take_defer() else {
        return resp.error(
            INTERNAL_ERROR,
            format_args!("{what} is async: this server does not await handlers"),
            Data::None,
        );
    };
    *slot = Some(Deferred {
        what: call,
        info: info.detach(),
        out: resp.mark(),
        batch: None,
    });
    Wrote::Deferred
}

/// Without async handlers nothing is ever deferred.
#[cfg(not(feature = "async-handlers"))]
pub(crate) enum Deferred {}

/// A request's facts without its borrows (sink, retry, subject, slot): what
/// an async tool's call keeps across its handler.
#[cfg(feature = "async-handlers")]
pub(super) struct Detached {
    version: ProtocolVersion,
    modern: bool,
    log_level: Option<LogLevel>,
    client: ClientCapabilities,
    progress: Option<heapless::Vec<u8, MAX_PROGRESS_TOKEN>>,
    named: NamedSpans,
    asking: Asking,
    /// A handshake-era call run again with the client's answers (they are
    /// in its slot, `asking`'s).
    retried: bool,
    /// Whom the caller authenticated the request as (state is bound to it).
    subject: Option<Subject>,
}

impl<'n> RequestInfo<'n> {
    /// A request on an initialized handshake-era session. `logging`: the
    /// server offers logging (then the session's level filters).
    /// `asking`: where a handler that asks for input waits; `retry`: the
    /// answers, when this is the call run again.
    pub(super) fn handshake(
        session: &Session<Ready>,
        logging: bool,
        facts: RequestFacts<'n>,
        asking: Asking,
        retry: Option<&'n Mrtr<'n>>,
    ) -> Self {
        Self {
            version: session.version(),
            modern: false,
            log_level: logging.then_some(session.log_level()),
            client: session.client_capabilities(),
            progress: facts.progress,
            notify: facts.notify,
            named: facts.named,
            asking,
            retry,
            subject: None,
            defer: None,
        }
    }

    /// A 2026-07-28 request whose envelope passed the ladder. Log
    /// notifications only when the request asked for a level.
    /// `subject`: whom the caller authenticated it as (sealed state is
    /// bound to it).
    pub(super) fn modern(
        envelope: Modern,
        logging: bool,
        facts: RequestFacts<'n>,
        subject: Option<&'n Subject>,
    ) -> Self {
        Self {
            version: ProtocolVersion::V2026_07_28,
            modern: true,
            log_level: envelope.log_level().filter(|_| logging),
            client: envelope.client(),
            progress: facts.progress,
            notify: facts.notify,
            named: facts.named,
            asking: Asking::Modern,
            retry: None,
            subject: subject.copied(),
            defer: None,
        }
    }

    /// Record an async tool's call in `slot` instead of answering it.
    pub(super) fn defer_into(&mut self, slot: Option<&'n mut Option<Deferred>>) {
        self.defer = slot;
    }

    /// The slot an async tool's call is recorded in, if the caller gave one.
    #[cfg(feature = "async-handlers")]
    pub(super) fn take_defer(&mut self) -> Option<&'n mut Option<Deferred>> {
        self.defer.take()
    }

    /// The digest of whom the caller authenticated the request as.
    #[cfg(feature = "async-handlers")]
    pub(super) fn subject_digest(&self) -> Option<[u8; 32]> {
        self.subject.map(|s| s.0)
    }

    /// The request's facts, without its borrows.
    #[cfg(feature = "async-handlers")]
    pub(super) fn detach(&mut self) -> Detached {
        Detached {
            version: self.version,
            modern: self.modern,
            log_level: self.log_level,
            client: self.client,
            progress: self.progress.take(),
            named: core::mem::take(&mut self.named),
            // The slot stays: phase 2 parks the call there if its caller
            // kept the store untouched meanwhile (`attach`).
            asking: self.asking,
            retried: self.retry.is_some(),
            subject: self.subject,
        }
    }

    /// Facts kept by [`detach`](Self::detach), with a sink again (a call
    /// run again takes its answers from its slot, not from here). `parks`:
    /// the call's waiting store was left untouched since phase 1 (a serve
    /// loop that runs one call at a time), so a handler that asks waits in
    /// the slot phase 1 chose; otherwise (other requests may have taken it)
    /// it cannot wait.
    #[cfg(feature = "async-handlers")]
    pub(super) fn attach(d: Detached, notify: Option<&'n mut dyn Notify>, parks: bool) -> Self {
        Self {
            version: d.version,
            modern: d.modern,
            log_level: d.log_level,
            client: d.client,
            progress: d.progress,
            notify,
            named: d.named,
            asking: match d.asking {
                Asking::Slot(_) if !parks => Asking::NoRoom(NoRoom::Async),
                asking => asking,
            },
            retry: None,
            subject: d.subject,
            defer: None,
        }
    }

    /// The answers of a handshake-era retry, by reference (no copy of the
    /// answers; not a borrow of `self`).
    pub(super) fn retry_ref(&self) -> Option<&'n Mrtr<'n>> {
        self.retry
    }

    pub(super) fn version(&self) -> ProtocolVersion {
        self.version
    }

    pub(super) fn is_modern(&self) -> bool {
        self.modern
    }

    pub(super) fn named(&self) -> &NamedSpans {
        &self.named
    }
}

/// The MRTR pieces of a request found in phase 1.
pub(super) struct MrtrSpans<'k> {
    pub(super) binding: Option<Binding<'k>>,
    pub(super) state: Option<Range<usize>>,
    pub(super) responses: Option<Range<usize>>,
}

/// What running a handler left: where its result body starts and what its
/// context recorded.
pub(super) struct Ran {
    pub(super) body_start: usize,
    pub(super) track: Track,
}

impl<'s, S> Server<'s, S> {
    /// Phase-1 MRTR lookups (2026-07-28 only): the binding a `requestState`
    /// must match, and where the state and `inputResponses` are (found by
    /// the request's one walk over its `params`).
    pub(super) fn mrtr_spans<'k>(
        &self,
        info: &RequestInfo<'_>,
        frame: &[u8],
        method: &'static str,
        name: &'k [u8],
        args: &[u8],
    ) -> Result<MrtrSpans<'k>, ()>
    where
        's: 'k,
    {
        if !info.modern {
            return Ok(MrtrSpans {
                binding: None,
                state: None,
                responses: None,
            });
        }
        let binding = self.state_key.map(|key| crate::seal::Binding {
            key,
            method,
            name: [name],
            args: crate::seal::ArgsDigest::of(args),
            expiry: self
                .state_ttl
                .map(|(ttl, clock)| crate::seal::Expiry::Clock(clock, ttl)),
            subject: info.subject.map(|s| s.0),
        });
        let found = |r: &Option<Span>| r.and_then(|r| r.get(frame)).map(Value::trusted);
        let state = match found(&info.named.state) {
            None => None,
            Some(v) => Some(span(frame, v.as_str().ok_or(())?.raw())),
        };
        let responses = match found(&info.named.responses) {
            None => None,
            Some(v) if v.is_null() => None,
            Some(v) if v.kind() == Kind::Object => Some(span(frame, v.raw())),
            Some(_) => return Err(()),
        };
        Ok(MrtrSpans {
            binding,
            state,
            responses,
        })
    }

    /// Phase 2 of MRTR: verify the `requestState` in place and assemble the
    /// retry's input. `Err` when a state is present but does not verify.
    pub(super) fn mrtr_input<'f>(
        binding: Option<Binding<'f>>,
        state: Option<&'f mut [u8]>,
        responses: Option<&'f mut [u8]>,
    ) -> Result<Mrtr<'f>, ()> {
        let state = match (state, binding) {
            (None, _) => None,
            (Some(raw), Some(b)) => Some(crate::seal::open(&b, raw).ok_or(())?),
            (Some(_), None) => return Err(()),
        };
        Ok(Mrtr {
            binding,
            state,
            responses: responses.map(|r| Value::trusted(r)),
        })
    }

    pub(super) fn bad_state(resp: Out<'_, '_>) -> Wrote {
        resp.error(
            INVALID_PARAMS,
            format_args!("Invalid requestState: it was altered, or issued for another request"),
            Data::None,
        )
    }

    /// The one handler-invocation skeleton: open the result object, build
    /// the handler's context over the writer, call the handler, and take the
    /// writer back where the context left it. `extra` is lent to the handler
    /// for exactly as long as the context (a tool's structured-content
    /// record, or `()`).
    pub(super) fn run_handler<E, R>(
        &self,
        resp: &mut Out<'_, '_>,
        info: &mut RequestInfo<'_>,
        mrtr: &Mrtr<'_>,
        extra: &mut E,
        call: impl for<'c> FnOnce(Ctx<'c>, &'c mut E) -> R,
    ) -> (R, Ran) {
        let body_start = resp.open_result();
        let mut track = Track::default();
        let outcome = {
            let ctx = self.ctx(resp, info, &mut track, body_start, mrtr);
            call(ctx, extra)
        };
        resp.w.resume(track.len, track.limit, track.overflow);
        (outcome, Ran { body_start, track })
    }

    /// A handler context. It borrows the request's facts and MRTR input
    /// rather than holding copies, so moving it (into `Reply`, `Content`,
    /// ...) stays cheap.
    pub(super) fn ctx<'c, 'n: 'c>(
        &self,
        resp: &'c mut Out<'_, '_>,
        info: &'c mut RequestInfo<'n>,
        track: &'c mut Track,
        body_start: usize,
        mrtr: &'c Mrtr<'c>,
    ) -> Ctx<'c> {
        let RequestInfo {
            notify, progress, ..
        } = info;
        // Shortens the sink's trait-object lifetime to this request's scope.
        #[allow(clippy::needless_match)]
        let notify: Option<&'c mut dyn Notify> = match notify.take() {
            Some(n) => Some(n),
            None => None,
        };
        track.body_start = body_start;
        Ctx {
            w: resp.w.reborrow(),
            track,
            finished: false,
            input_required: false,
            state_error: false,
            missing: None,
            mrtr,
            client: info.client,
            version: info.version,
            progress_token: progress.as_deref(),
            last_progress: 0,
            progressed: false,
            log_level: info.log_level,
            notify,
            cancelled: false,
            blocks: false,
        }
    }

    /// Close an `input_required` answer (2026-07-28).
    pub(super) fn finish_input_required(
        body_start: usize,
        track: &Track,
        resp: Out<'_, '_>,
    ) -> Wrote {
        if track.state_error {
            return resp.error(
                INTERNAL_ERROR,
                format_args!(
                    "a handler answered input_required without inputRequests or requestState, or its requestState could not be sealed (is a request-state key set? at most 96 bytes)"
                ),
                Data::None,
            );
        }
        resp.close_result(body_start, track, None)
    }

    /// Close what a resource, prompt or completion handler wrote: a finished
    /// result (stamped, with `cache` on 2026-07-28), an answer that asks for
    /// input, or `-32603` if it returned without finishing.
    pub(super) fn close_handled(
        resp: Out<'_, '_>,
        info: &RequestInfo<'_>,
        ran: &Ran,
        cache: Option<Cache>,
        what: &str,
    ) -> Wrote {
        let track = &ran.track;
        if !track.finished {
            return resp.error(
                INTERNAL_ERROR,
                format_args!("{what} handler returned without finishing its answer"),
                Data::None,
            );
        }
        if track.input_required {
            return Self::asked(resp, info, ran);
        }
        resp.close_result(ran.body_start, track, cache)
    }

    /// A handler asked for input: the one decision of how, for every family
    /// and era. A missing client capability is `-32021`; on 2026-07-28 the
    /// `input_required` result is closed; on the handshake era the body is
    /// left for the router to send as requests, or refused when the call
    /// cannot wait.
    pub(super) fn asked(resp: Out<'_, '_>, info: &RequestInfo<'_>, ran: &Ran) -> Wrote {
        if let Some(capability) = ran.track.missing {
            return resp.protocol(&ProtocolError::missing_capability(capability));
        }
        match info.asking {
            Asking::Modern => Self::finish_input_required(ran.body_start, &ran.track, resp),
            Asking::Slot(_) if ran.track.state_error => {
                Self::finish_input_required(ran.body_start, &ran.track, resp)
            }
            Asking::Slot(slot) => resp.asked(slot, ran.body_start),
            Asking::NoRoom(no_room) => no_room.answer(resp),
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::mcp::ServerInfo;
    use crate::wire::emit::Writer;

    static SERVER: Server<'static, u32> = Server::new(ServerInfo::new("t", "1"), 7);
    const NO_ROOM: Asking = Asking::NoRoom(NoRoom::Full { slots: 0 });

    fn ready() -> Session<Ready> {
        let client = ClientCapabilities {
            elicitation: true,
            ..ClientCapabilities::default()
        };
        Session::new().initialize(ProtocolVersion::V2025_06_18, client)
    }

    fn facts() -> RequestFacts<'static> {
        RequestFacts {
            progress: None,
            notify: None,
            named: NamedSpans::default(),
        }
    }

    #[test]
    fn run_handler_opens_the_result_lends_the_context_and_takes_the_writer_back() {
        let mut buf = [0u8; 256];
        let mut w = Writer::new(&mut buf);
        let mut resp = Out::begin(&mut w, Some(b"1"));
        let mut info = RequestInfo::handshake(&ready(), false, facts(), NO_ROOM, None);
        let mut seen = 0u32;
        let (outcome, ran) = SERVER.run_handler(
            &mut resp,
            &mut info,
            &Mrtr::NONE,
            &mut seen,
            |mut ctx, seen| {
                // The context is at the start of the result body, with the
                // request's facts.
                assert_eq!(ctx.w.len(), ctx.track.body_start);
                assert_eq!(ctx.version, ProtocolVersion::V2025_06_18);
                assert!(ctx.client.elicitation && !ctx.client.sampling);
                assert_eq!(ctx.log_level, None);
                *seen = 1;
                ctx.w.raw(b"\"x\":1");
                let _done = ctx.finish();
                "outcome"
            },
        );
        assert_eq!((outcome, seen), ("outcome", 1));
        assert!(ran.track.finished && !ran.track.input_required && !ran.track.state_error);
        // The writer continues where the handler's context left it.
        assert_eq!(resp.w.len(), ran.body_start + 5);
        assert_eq!(
            &resp.w.as_bytes()[..resp.w.len()],
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"x\":1"
        );
    }

    #[test]
    fn run_handler_records_an_unfinished_or_early_return() {
        let mut buf = [0u8; 128];
        let mut w = Writer::new(&mut buf);
        let mut resp = Out::begin(&mut w, Some(b"\"a\""));
        let mut info = RequestInfo::handshake(&ready(), true, facts(), NO_ROOM, None);
        let ((), ran) =
            SERVER.run_handler(&mut resp, &mut info, &Mrtr::NONE, &mut (), |ctx, ()| {
                // Logging is on: the session's default level filters.
                assert!(ctx.log_level.is_some());
            });
        assert!(!ran.track.finished);
        assert_eq!(resp.w.len(), ran.body_start);
        // And the close turns it into -32603.
        let wrote = Server::<u32>::close_handled(resp, &info, &ran, None, "test");
        assert_eq!(wrote, Wrote::Error(INTERNAL_ERROR));
        let text = core::str::from_utf8(&buf).unwrap().trim_end_matches('\0');
        assert!(
            text.contains("test handler returned without finishing its answer"),
            "{text}"
        );
    }

    #[test]
    fn a_modern_request_takes_its_facts_from_the_envelope() {
        let v = Value::trusted(
            br#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/logLevel":"error"}}"#,
        );
        let keys = crate::mcp::envelope::MetaKeys::of(v.get("_meta"));
        let modern = crate::mcp::envelope::check(false, Some(v), &keys, false).unwrap();
        let on = RequestInfo::modern(modern, true, facts(), None);
        assert!(on.is_modern());
        assert_eq!(on.version(), ProtocolVersion::V2026_07_28);
        assert_eq!(on.log_level, Some(LogLevel::Error));
        assert!(on.client.sampling);
        // Without server logging, no log level whatever the envelope says.
        let off = RequestInfo::modern(modern, false, facts(), None);
        assert_eq!(off.log_level, None);
    }

    #[test]
    fn mrtr_input_refuses_a_state_without_a_key_or_that_does_not_verify() {
        let mut raw = *b"AAAA";
        assert!(Server::<u32>::mrtr_input(None, Some(&mut raw), None).is_err());
        let binding = Binding {
            key: b"k",
            method: "tools/call",
            name: [b"t"],
            args: crate::seal::ArgsDigest::of(b"{}"),
            expiry: None,
            subject: None,
        };
        let mut raw = *b"AAAA";
        assert!(Server::<u32>::mrtr_input(Some(binding), Some(&mut raw), None).is_err());
        let mut responses = *br#"{"k":{"action":"accept"}}"#;
        let input = Server::<u32>::mrtr_input(Some(binding), None, Some(&mut responses)).unwrap();
        assert_eq!(input.state, None);
        assert!(input.response("k").is_some() && input.response("x").is_none());
    }
}
