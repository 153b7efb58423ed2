//! Routing one frame: batches, the envelope of a message, the era of a
//! connection, the lifecycle gate, and dispatch to the method's room.

use core::ops::Range;

use super::invoke::Deferred;
use super::invoke::{Asking, RequestFacts, RequestInfo};
use super::list::List;
use super::out::Answer;
use super::out::{Data, Out, Wrote, answer_writer};
use super::params::{NamedSpans, progress_token, span};
use super::waiting::{NoRoom, WaitingView};
use super::{Connection, Origin, Server, Session, Subject};
use crate::changes::Subscriber;
use crate::context::{Mrtr, Notify};
use crate::error::{INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR};
use crate::mcp::envelope;
use crate::mcp::{Era, LogLevel, Method, ProtocolVersion};
use crate::wire::emit::Writer;
use crate::wire::envelope::{self as jsonrpc, Envelope};
use crate::wire::json::{self, Kind, Value};

impl<S> Server<'_, S> {
    /// Validate one frame (once, under the server's [`Limits`](json::Limits),
    /// recording its [`Outline`](json::Outline)) and answer it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn handle_inner(
        &self,
        conn: &mut Connection,
        frame: &mut [u8],
        out: &mut [u8],
        notify: Option<&mut dyn Notify>,
        waiting: Option<&mut WaitingView<'_>>,
        subs: Option<&mut Subscriber<'_>>,
        subject: Option<&Subject>,
        defer: Option<&mut Option<Deferred>>,
    ) -> Answer {
        if frame
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        {
            return Answer::NOTHING;
        }
        let mut outline = json::Outline::new(&envelope::OUTLINE_KEYS);
        match json::validate_outlined(frame, &self.limits, &mut outline) {
            Ok(()) => self.handle_outlined(
                conn,
                frame,
                &outline,
                out,
                notify,
                waiting,
                subs,
                Origin::Alone,
                subject,
                defer,
            ),
            Err(e) => Self::parse_error(e, out),
        }
    }

    /// The `-32700` answer to a frame that is not acceptable JSON.
    pub(crate) fn parse_error(e: json::JsonError, out: &mut [u8]) -> Answer {
        let mut w = answer_writer(out);
        let wrote = Out::begin(&mut w, None).error(
            PARSE_ERROR,
            format_args!("Parse error"),
            Data::Fmt(format_args!("{e}")),
        );
        Answer::of(wrote, w)
    }

    /// Answer a frame already validated under the server's limits, whose
    /// outline is `outline` (the HTTP mapping validates a body once and
    /// comes in here).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn handle_outlined(
        &self,
        conn: &mut Connection,
        frame: &mut [u8],
        outline: &json::Outline,
        out: &mut [u8],
        notify: Option<&mut dyn Notify>,
        waiting: Option<&mut WaitingView<'_>>,
        mut subs: Option<&mut Subscriber<'_>>,
        origin: Origin,
        subject: Option<&Subject>,
        defer: Option<&mut Option<Deferred>>,
    ) -> Answer {
        if let (Some(changes), Some(s)) = (self.changes, subs.as_deref_mut()) {
            s.start(changes);
        }
        let mut w = answer_writer(out);
        let wrote = if Value::trusted(frame).kind() == Kind::Array {
            self.batch(conn, frame, &mut w, notify, waiting, subs, defer)
        } else {
            self.message(
                conn, frame, outline, &mut w, notify, origin, waiting, subs, None, subject, defer,
            )
        };
        if matches!(wrote, Wrote::Deferred) {
            // Open in `out`, for the caller to finish (`handle_async`).
            return Answer::NOTHING;
        }
        Answer::of(wrote, w)
    }

    /// A JSON array: a batch (2025-03-26 sessions only). With `defer`, an
    /// element that is an async handler's call stops the batch there
    /// (`Wrote::Deferred`, the record in `defer` says where it goes on:
    /// [`after_deferred`](Self::after_deferred)); without, it is `-32603`.
    #[allow(clippy::too_many_arguments)]
    fn batch(
        &self,
        conn: &mut Connection,
        frame: &mut [u8],
        w: &mut Writer<'_>,
        notify: Option<&mut dyn Notify>,
        waiting: Option<&mut WaitingView<'_>>,
        subs: Option<&mut Subscriber<'_>>,
        defer: Option<&mut Option<Deferred>>,
    ) -> Wrote {
        let version = conn.version();
        if !version.is_some_and(|v| v.fields().batches) {
            match version {
                Some(v) => Out::begin(w, None).error(
                    INVALID_REQUEST,
                    format_args!("batches are not supported by protocol version {v}"),
                    Data::None,
                ),
                None => Out::begin(w, None).error(
                    INVALID_REQUEST,
                    format_args!("batches are not supported before initialization"),
                    Data::None,
                ),
            };
            return Wrote::Answer;
        }
        if Value::trusted(frame).is_empty() {
            Out::begin(w, None).invalid_request(Data::Str("empty batch"));
            return Wrote::Answer;
        }
        let start = w.len();
        w.raw(b"[");
        let first = frame
            .iter()
            .position(|&b| b == b'[')
            .map_or(frame.len(), |i| i + 1);
        let walk = Walk {
            start,
            next: Some(first),
            answers: 0,
            settle: None,
        };
        self.batch_walk(conn, frame, w, walk, notify, waiting, subs, defer)
    }

    /// A batch's elements from `walk.next` on, each answered in turn, and
    /// its closing `]` (or `Wrote::Deferred` at an async handler's call,
    /// when `defer` is given).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn batch_walk(
        &self,
        conn: &mut Connection,
        frame: &mut [u8],
        w: &mut Writer<'_>,
        walk: Walk,
        mut notify: Option<&mut dyn Notify>,
        mut waiting: Option<&mut WaitingView<'_>>,
        mut subs: Option<&mut Subscriber<'_>>,
        mut defer: Option<&mut Option<Deferred>>,
    ) -> Wrote {
        let Walk {
            start,
            next,
            mut answers,
            mut settle,
        } = walk;
        let mut failed = false;
        // Walk the elements by position: each is handled (and unescaped in
        // place) in turn, so the bytes after it are still intact.
        let mut at = next;
        loop {
            // The last element's answer counted (or cut: it wrote nothing).
            if let Some((wrote, before)) = settle.take() {
                match wrote {
                    Wrote::Answer | Wrote::Error(_) | Wrote::Requests | Wrote::Listening => {
                        answers += 1
                    }
                    Wrote::Nothing => w.truncate(before),
                    // Not in a batch: a call there cannot wait.
                    _ => {
                        failed = true;
                        break;
                    }
                }
            }
            let Some(pos) = at else {
                break;
            };
            let pos = json::skip_ws(frame, pos);
            let Some(len) = frame.get(pos..).and_then(json::value_len) else {
                break;
            };
            let before = w.len();
            if answers > 0 {
                w.raw(b",");
            }
            // The element after this one, read before this one is handled
            // (the bytes after it stay as they are).
            let end = json::skip_ws(frame, pos + len);
            at = (frame.get(end) == Some(&b',')).then_some(end + 1);
            let element = frame.get_mut(pos..pos + len).unwrap_or(&mut []);
            let sink: Option<&mut dyn Notify> = match notify.as_mut() {
                Some(n) => Some(&mut **n),
                None => None,
            };
            // The element's own outline: validated again (it is part of a
            // valid frame, so this cannot fail), which keeps one reading of
            // a message, from an outline, for every path in. Were it to
            // fail, the element still gets its one answer and the batch
            // goes on.
            let mut outline = json::Outline::new(&envelope::OUTLINE_KEYS);
            let wrote = if json::validate_outlined(element, &self.limits, &mut outline).is_err() {
                Out::begin(w, None).invalid_request(Data::None)
            } else {
                self.message(
                    conn,
                    element,
                    &outline,
                    w,
                    sink,
                    Origin::Batch,
                    waiting.as_deref_mut(),
                    subs.as_deref_mut(),
                    None,
                    None,
                    defer.as_deref_mut(),
                )
            };
            // An async handler's call, recorded: the batch goes on after
            // its answer (`Server::after_deferred`).
            #[cfg(feature = "async-handlers")]
            if wrote == Wrote::Deferred
                && let Some(Some(call)) = defer
            {
                call.batch = Some(super::invoke::BatchAt {
                    start,
                    before,
                    answers,
                    element: pos..pos + len,
                    next: at,
                });
                return Wrote::Deferred;
            }
            settle = Some((wrote, before));
        }
        // The closing `]`: all of it replaced by one `-32603` if an answer
        // could not be written whole, or nothing at all if it held only
        // notifications.
        w.raw(b"]");
        if failed || w.is_overflowed() {
            w.truncate(start);
            Out::begin(w, None).exceeds("batch response exceeds");
        } else if answers == 0 {
            w.truncate(start); // all notifications: no output at all
        }
        Wrote::Answer
    }

    /// One JSON-RPC message (top level or a batch element). `outline` is
    /// the [`json::Outline`] of exactly `frame`. `waiting`: where
    /// calls that ask the client for input wait (handshake era); `retry`: this
    /// frame is such a call's original request, run again with the answers
    /// (then an `Asked` result is the caller's to park).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn message(
        &self,
        conn: &mut Connection,
        frame: &mut [u8],
        outline: &json::Outline,
        w: &mut Writer<'_>,
        notify: Option<&mut dyn Notify>,
        origin: Origin,
        mut waiting: Option<&mut WaitingView<'_>>,
        subs: Option<&mut Subscriber<'_>>,
        retry: Option<(usize, Mrtr<'_>)>,
        subject: Option<&Subject>,
        defer: Option<&mut Option<Deferred>>,
    ) -> Wrote {
        let in_batch = origin == Origin::Batch;
        let value = Value::trusted(frame);
        let request = match jsonrpc::parse_outlined(value, frame, outline) {
            Ok(Envelope::Request(r)) => r,
            // A client's answer to one of our requests: it may complete a
            // waiting call (unknown ids are ignored).
            Ok(Envelope::Response { id }) => {
                return match (waiting, id) {
                    (Some(view), Some(id)) => {
                        self.client_answer(conn, frame, id.raw(), view, w, notify, defer)
                    }
                    _ => Wrote::Nothing,
                };
            }
            // Cancelling a waiting call drops it: no answer, ever.
            Ok(Envelope::Notification(n)) => {
                let Some(request) = crate::mcp::cancelled_request(&n) else {
                    return Wrote::Nothing;
                };
                if let Some(view) = waiting {
                    Self::cancel_waiting(view, request);
                }
                // Cancelling the open listen request ends it with its result.
                return match subs {
                    Some(s) if matches!(conn, Connection::Modern) => self.end_listen(s, request, w),
                    _ => Wrote::Nothing,
                };
            }
            Err(invalid) => {
                crate::log::debug!("picomcp: invalid request: {}", invalid.reason);
                return Out::begin(w, invalid.id.map(|i| i.raw()))
                    .invalid_request(Data::Str(invalid.reason));
            }
        };
        let method = Method::from_json(request.method);
        let method_span = span(frame, request.method.raw());
        let params = request.params;
        let keys = match params {
            None => envelope::MetaKeys::default(),
            Some(_) => envelope::MetaKeys::outlined(frame, outline),
        };
        // Shortens the sink's trait-object lifetime to this request's scope
        // (so it can share one with a retry's answers).
        #[allow(clippy::needless_match)]
        let notify: Option<&mut dyn Notify> = match notify {
            Some(n) => Some(n),
            None => None,
        };
        let facts = RequestFacts {
            progress: progress_token(keys.progress),
            notify,
            named: match params {
                None => NamedSpans::default(),
                Some(_) => NamedSpans::outlined(
                    outline,
                    matches!(
                        method,
                        Method::ResourcesRead | Method::Subscribe | Method::Unsubscribe
                    ),
                ),
            },
        };
        let enveloped = keys.is_enveloped();
        let is_initialize = method == Method::Initialize;
        // The first request decides the connection's era, once.
        if matches!(conn, Connection::Fresh) {
            *conn = match envelope::era_of(is_initialize, enveloped, false) {
                Era::Modern => Connection::Modern,
                _ => Connection::Uninitialized(Session::new()),
            };
        }
        let id_span = {
            let r = span(frame, request.id.raw());
            (r.start, r.end)
        };
        let mut resp = Out::begin(w, Some(request.id.raw()));
        if resp.id_refused() {
            // Exactly one answer, always: an id that could not be echoed
            // with its answer is refused before anything runs.
            return resp.error(
                INVALID_REQUEST,
                format_args!("Invalid Request"),
                Data::Str("the id is too long to be echoed within the output buffer"),
            );
        }
        let params_span = params.map(|p| span(frame, p.raw()));
        // Both eras end in the one call of `dispatch` below (one inlined
        // copy of it, and no request facts copied for a call to it).
        let (mut info, retry_slot) = match conn {
            Connection::Modern => {
                resp.stamp = Some(&self.id);
                let claimed = origin == Origin::ClaimedModern;
                let mut info = match envelope::check(is_initialize, params, &keys, claimed) {
                    Ok(modern) => RequestInfo::modern(modern, self.logging, facts, subject),
                    Err(fault) => return resp.fault(fault),
                };
                info.defer_into(defer);
                match method {
                    Method::Discover => {
                        let fields = ProtocolVersion::V2026_07_28.fields();
                        return resp.result_cached(
                            |w| {
                                w.raw(b"{\"supportedVersions\":");
                                envelope::write_supported_versions(w);
                                w.raw(b",\"capabilities\":");
                                self.write_capabilities(w, fields, subs.is_some());
                                if let Some(text) = self.instructions {
                                    w.raw(b",\"instructions\":");
                                    w.string(text);
                                }
                                w.raw(b"}");
                            },
                            Some(self.cache),
                        );
                    }
                    // Removed in 2026-07-28.
                    Method::Ping
                    | Method::SetLevel
                    | Method::Initialize
                    | Method::Subscribe
                    | Method::Unsubscribe => return self.not_found(frame, method_span, resp),
                    // Served where the connection keeps subscriptions (the
                    // capabilities say so), never inside a batch.
                    Method::Listen if !in_batch => {
                        return match (self.changes, subs) {
                            (Some(_), Some(s)) => {
                                self.listen(s, frame, id_span.0..id_span.1, params_span, resp)
                            }
                            _ => self.not_found(frame, method_span, resp),
                        };
                    }
                    // No call waits on this era (it answers input_required).
                    _ => (info, None),
                }
            }
            _ if enveloped => {
                return resp.error(
                    INVALID_REQUEST,
                    format_args!(
                        "this connection serves the handshake protocol era; requests carrying the 2026-07-28 envelope are not accepted on it"
                    ),
                    Data::None,
                );
            }
            Connection::Uninitialized(_) | Connection::Fresh => {
                return match method {
                    Method::Ping => resp.result(|w| w.raw(b"{}")),
                    Method::Initialize if !in_batch => {
                        let (wrote, negotiated) = self.initialize(params, resp, subs.is_some());
                        // Only an answered initialize opens the session.
                        if let (Wrote::Answer, Some((version, client))) = (wrote, negotiated) {
                            *conn = Connection::Ready(Session::new().initialize(version, client));
                        }
                        wrote
                    }
                    _ => resp.error(
                        INVALID_REQUEST,
                        format_args!("session not initialized: send initialize first"),
                        Data::None,
                    ),
                };
            }
            Connection::Ready(session) => {
                let (retry_slot, answers) = match &retry {
                    Some((slot, answers)) => (Some(*slot), Some(answers)),
                    None => (None, None),
                };
                let asking = match (retry_slot, waiting.as_deref_mut()) {
                    (Some(slot), _) => Asking::Slot(slot),
                    _ if in_batch => Asking::NoRoom(NoRoom::Batch),
                    // Only a call that may ask, from a client that can answer, is
                    // copied aside before it runs (unescaping changes the frame).
                    (None, Some(view))
                        if matches!(
                            method,
                            Method::ToolsCall | Method::PromptsGet | Method::ResourcesRead
                        ) && session.client_capabilities().any() =>
                    {
                        match view.reserve(frame, id_span) {
                            Ok(slot) => Asking::Slot(slot),
                            Err(no_room) => Asking::NoRoom(no_room),
                        }
                    }
                    (None, view) => Asking::NoRoom(NoRoom::Full {
                        slots: view.map_or(0, |v| v.meta.len()),
                    }),
                };
                let mut info =
                    RequestInfo::handshake(session, self.logging, facts, asking, answers);
                info.defer_into(defer);
                match method {
                    Method::Ping => return resp.result(|w| w.raw(b"{}")),
                    Method::Initialize if in_batch => {
                        return resp.error(
                            INVALID_REQUEST,
                            format_args!("initialize must not be part of a batch"),
                            Data::None,
                        );
                    }
                    Method::Initialize => {
                        let (wrote, renegotiated) = self.initialize(params, resp, subs.is_some());
                        if let (Wrote::Answer, Some((version, client))) = (wrote, renegotiated) {
                            *session = session.reinitialize(version, client);
                        }
                        return wrote;
                    }
                    Method::SetLevel if self.logging => {
                        let Some(level) =
                            params.and_then(|p| p.get("level")).and_then(|l| l.as_str())
                        else {
                            return resp.invalid_params();
                        };
                        let Some(level) = LogLevel::from_json(level) else {
                            return resp.error(
                                INVALID_PARAMS,
                                format_args!("Invalid log level: {level}"),
                                Data::None,
                            );
                        };
                        session.set_log_level(level);
                        return resp.result(|w| w.raw(b"{}"));
                    }
                    Method::Discover | Method::Listen => {
                        return self.not_found(frame, method_span, resp);
                    }
                    // Served where the connection keeps subscriptions for a server
                    // with a registry and resources (the capabilities say so).
                    Method::Subscribe | Method::Unsubscribe => {
                        return match (self.changes, subs) {
                            (Some(_), Some(s)) if self.has_resources() => self.subscribe(
                                s,
                                method == Method::Subscribe,
                                frame,
                                info.named().name,
                                resp,
                            ),
                            _ => self.not_found(frame, method_span, resp),
                        };
                    }
                    _ => (info, retry_slot),
                }
            }
        };
        match self.dispatch(method, method_span, &mut info, frame, params_span, resp) {
            // The call waits for the client (a retry's caller parks it).
            Wrote::Asked {
                slot,
                start,
                body_start,
            } if retry_slot.is_none() => match waiting {
                Some(view) => self.park(view, w, slot, start, body_start),
                None => Wrote::Failed,
            },
            wrote => wrote,
        }
    }

    fn not_found(&self, frame: &[u8], method: Range<usize>, resp: Out<'_, '_>) -> Wrote {
        let name = frame
            .get(method)
            .and_then(|raw| crate::wire::json::JsonStr::new(raw).ok());
        match name {
            Some(name) => resp.error(
                METHOD_NOT_FOUND,
                format_args!("Method not found"),
                Data::Json(name),
            ),
            None => resp.error(
                METHOD_NOT_FOUND,
                format_args!("Method not found"),
                Data::None,
            ),
        }
    }

    /// The methods both eras share.
    fn dispatch(
        &self,
        method: Method,
        method_span: Range<usize>,
        info: &mut RequestInfo<'_>,
        frame: &mut [u8],
        params_span: Option<Range<usize>>,
        resp: Out<'_, '_>,
    ) -> Wrote {
        let version = info.version();
        let fields = version.fields();
        let cache = info.is_modern().then_some(self.cache);
        let params = params_span
            .clone()
            .and_then(|r| frame.get(r))
            .map(Value::trusted);
        let cursor = || params.and_then(|p| p.get("cursor"));
        match method {
            Method::ToolsList if !self.tools.is_empty() => self.list(
                resp,
                cursor(),
                "tools",
                self.tools,
                List::Tools,
                cache,
                version,
                |t| t.descriptor.offered_to(version),
                |w, t| t.descriptor.write(w, fields),
            ),
            Method::ResourcesList if self.has_resources() => self.list(
                resp,
                cursor(),
                "resources",
                self.resources,
                List::Resources,
                cache,
                version,
                |_| true,
                |w, r| r.descriptor.write(w, fields),
            ),
            Method::ResourceTemplatesList if self.has_resources() => self.list(
                resp,
                cursor(),
                "resourceTemplates",
                self.templates,
                List::Templates,
                cache,
                version,
                |_| true,
                |w, t| t.descriptor.write(w, fields),
            ),
            Method::PromptsList if !self.prompts.is_empty() => self.list(
                resp,
                cursor(),
                "prompts",
                self.prompts,
                List::Prompts,
                cache,
                version,
                |_| true,
                |w, p| p.descriptor.write(w, fields),
            ),
            Method::ToolsCall if !self.tools.is_empty() => {
                self.call_tool(info, frame, params_span, resp)
            }
            Method::ResourcesRead if self.has_resources() => {
                self.read_resource(info, frame, params_span, resp)
            }
            Method::PromptsGet if !self.prompts.is_empty() => {
                self.get_prompt(info, frame, params_span, resp)
            }
            Method::Complete if self.completion.is_some() => {
                self.complete(info, frame, params_span, resp)
            }
            _ => self.not_found(frame, method_span, resp),
        }
    }
}

/// Where a batch's walk goes on: its `[` in the output, the offset of the
/// next element in the frame (`None`: no more), the answers written, and
/// what the element before wrote, if it is still to be counted (with the
/// output's length before it).
pub(super) struct Walk {
    pub(super) start: usize,
    pub(super) next: Option<usize>,
    pub(super) answers: usize,
    pub(super) settle: Option<(Wrote, usize)>,
}
