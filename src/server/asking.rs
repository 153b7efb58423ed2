//! The handshake era's input requests: a handler's `input_required` body
//! turned into requests to the client, the client's answers collected, the
//! call run again when they are all in, cancellation. The calls wait in a
//! caller-owned [`Waiting`](super::Waiting) store ([`WaitingView`]).

use super::Connection;
use super::Origin;
use super::Server;
use super::invoke::Deferred;
use super::out::{Data, Out, Wrote};
use super::waiting::{MAX_INPUT_REQUESTS, MAX_KEY, MAX_ROUNDS, WaitingView, write_request_id};
use crate::context::Notify;
use crate::error::INTERNAL_ERROR;
use crate::seal::MAX_STATE;
use crate::wire::emit::{Decimal, Writer};
use crate::wire::json::{Limits, Value};

/// Longest base64url text of a state.
const STATE_TEXT: usize = (MAX_STATE * 4).div_ceil(3);

/// The methods an input request may carry, as the server writes them.
const METHODS: [&str; 3] = ["elicitation/create", "sampling/createMessage", "roots/list"];

impl<S> Server<'_, S> {
    /// A client's answer (`result` or `error`) to input request `id`; with
    /// `defer`, a call it completes that is an async handler's is run again
    /// up to its handler (see `retry`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn client_answer(
        &self,
        conn: &mut Connection,
        frame: &[u8],
        id: &[u8],
        view: &mut WaitingView<'_>,
        w: &mut Writer<'_>,
        notify: Option<&mut dyn Notify>,
        defer: Option<&mut Option<Deferred>>,
    ) -> Wrote {
        let Some((slot, k)) = view.find_answer(id) else {
            return Wrote::Nothing; // not ours, stale, or answered already
        };
        let message = Value::trusted(frame);
        if let Some(error) = message.get("error") {
            let method = view
                .meta
                .get(slot)
                .and_then(|m| m.methods.get(k))
                .and_then(|&i| METHODS.get(usize::from(i)))
                .copied()
                .unwrap_or("");
            let reason = error
                .get("message")
                .and_then(|m| m.as_str())
                .filter(|m| m.raw().len() <= 200);
            let mut key = [0u8; MAX_KEY];
            let key_len = view.meta.get(slot).map_or(0, |m| {
                let text = m.key(k);
                key.get_mut(..text.len()).map_or(0, |d| {
                    d.copy_from_slice(text);
                    text.len()
                })
            });
            let key = core::str::from_utf8(key.get(..key_len).unwrap_or(&[])).unwrap_or("");
            let wrote = Self::fail_waiting(view, slot, w, |resp| {
                let why = match &reason {
                    Some(reason) => format_args!(": {}", *reason),
                    None => format_args!(""),
                };
                resp.error(
                    INTERNAL_ERROR,
                    format_args!("the client refused input request {key} ({method}){why}"),
                    Data::None,
                )
            });
            return wrote;
        }
        let result = message.get("result").map_or(&b"null"[..], |r| r.raw());
        match view.record(slot, k, result) {
            Ok(false) => Wrote::Nothing,
            Ok(true) => self.retry(conn, view, slot, w, notify, defer),
            Err(no_room) => Self::fail_waiting(view, slot, w, |resp| no_room.answer(resp)),
        }
    }

    /// `notifications/cancelled` for a waiting call: drop it.
    pub(super) fn cancel_waiting(view: &mut WaitingView<'_>, id: &[u8]) {
        if let Some(slot) = view.find_call(id) {
            view.cancel(slot);
        }
    }

    /// Every answer is in: run the original request again with them. With
    /// `defer`, an async handler's call stops before its handler, as any
    /// (`Wrote::Deferred`: the call keeps its slot; the caller finishes it
    /// over the slot's request and answers, `WaitingView::retry_parts`).
    fn retry(
        &self,
        conn: &mut Connection,
        view: &mut WaitingView<'_>,
        slot: usize,
        w: &mut Writer<'_>,
        notify: Option<&mut dyn Notify>,
        defer: Option<&mut Option<Deferred>>,
    ) -> Wrote {
        if view.prepare_retry(slot).is_none() {
            return Wrote::Nothing;
        }
        let wrote = {
            let Some((frame, answers)) = view.retry_parts(slot) else {
                return Wrote::Nothing;
            };
            // Validated when it came in; again here for its outline.
            let mut outline = crate::wire::json::Outline::new(&crate::mcp::envelope::OUTLINE_KEYS);
            if crate::wire::json::validate_outlined(frame, &self.limits, &mut outline).is_err() {
                return Wrote::Nothing;
            }
            self.message(
                conn,
                frame,
                &outline,
                w,
                notify,
                Origin::Alone,
                None,
                None,
                Some((slot, answers)),
                None,
                defer,
            )
        };
        self.after_run(view, w, Some(slot), wrote)
    }

    /// What a call that may wait did, run (`retried: None`) or run again
    /// (its slot): it asked (it waits in its slot), was deferred (a retry
    /// keeps its slot until it is finished), or is over (a retry's slot is
    /// freed).
    pub(crate) fn after_run(
        &self,
        view: &mut WaitingView<'_>,
        w: &mut Writer<'_>,
        retried: Option<usize>,
        wrote: Wrote,
    ) -> Wrote {
        match (wrote, retried) {
            (
                Wrote::Asked {
                    slot,
                    start,
                    body_start,
                },
                _,
            ) => self.park(view, w, slot, start, body_start),
            (Wrote::Deferred, _) | (_, None) => wrote,
            (wrote, Some(slot)) => {
                view.release(slot);
                wrote
            }
        }
    }

    /// Turn the open `input_required` body at `body_start` into requests to
    /// the client, written from `start` on, and let the call wait in `slot`.
    pub(super) fn park(
        &self,
        view: &mut WaitingView<'_>,
        w: &mut Writer<'_>,
        slot: usize,
        start: usize,
        body_start: usize,
    ) -> Wrote {
        // The body lies after `,"result":{`: close it to read it back.
        let end = w.len();
        w.raw(b"}");
        let read = read_requests(w.as_bytes(), body_start.saturating_sub(1), end);
        let (requests, count, state, state_len) = match read {
            Ok(read) => read,
            Err(what) => return Self::drop_call(view, slot, w, start, what),
        };
        if view.meta.get(slot).is_some_and(|m| m.round >= MAX_ROUNDS) {
            let wrote = {
                w.truncate(start);
                Self::original_error(view, slot, w, |resp| {
                    resp.error(
                        INTERNAL_ERROR,
                        format_args!(
                            "the handler asked for input more than {} times",
                            Decimal::from(MAX_ROUNDS)
                        ),
                        Data::None,
                    )
                })
            };
            view.release(slot);
            return wrote;
        }
        let mut keys: [(&[u8], u8); MAX_INPUT_REQUESTS] = [(&[], 0); MAX_INPUT_REQUESTS];
        let written = w.as_bytes();
        for (dst, &(k, k_len, method, _, _)) in keys.iter_mut().zip(&requests).take(count) {
            *dst = (written.get(k..k + k_len).unwrap_or(&[]), method);
        }
        let state = state_len.and_then(|n| state.get(..n));
        let generation = match view.park(slot, keys.get(..count).unwrap_or(&[]), state) {
            Ok(generation) => generation,
            Err(no_room) => {
                w.truncate(start);
                let wrote = Self::original_error(view, slot, w, |resp| no_room.answer(resp));
                view.release(slot);
                return wrote;
            }
        };
        // The requests, after what is written; then moved down to `start`.
        let requests_start = w.len();
        for (k, &(_, _, method, p, p_len)) in requests.iter().take(count).enumerate() {
            if k > 0 {
                w.raw(b"\n");
            }
            w.raw(b"{\"jsonrpc\":\"2.0\",\"id\":");
            write_request_id(w, slot, generation, k);
            w.raw(b",\"method\":");
            w.string(METHODS.get(usize::from(method)).copied().unwrap_or(""));
            w.raw(b",\"params\":");
            w.copy_from(p, p + p_len);
            w.raw(b"}");
        }
        if w.is_overflowed() {
            w.truncate(start);
            let first = view.meta.get(slot).is_some_and(|m| m.round == 1);
            let wrote = Self::original_error(view, slot, w, |resp| {
                resp.exceeds("the input requests exceed")
            });
            view.release(slot);
            if first {
                // Answered in place, to its own request: not a waiting call's.
                view.event = None;
            }
            return wrote;
        }
        w.cut(start, requests_start);
        Wrote::Requests
    }

    /// Over HTTP an async handler's call takes its slot only once its
    /// handler has asked (`http::call`): with none free (or the request
    /// too large for one), its open answer (from `start`) becomes `-32603`
    /// naming the limit, to the request whose id is `id`.
    #[cfg(feature = "async-handlers")]
    pub(crate) fn cannot_wait(
        w: &mut Writer<'_>,
        start: usize,
        id: &[u8],
        no_room: super::waiting::NoRoom,
    ) -> Wrote {
        w.truncate(start);
        no_room.answer(Out::begin(w, Some(id)))
    }

    /// The call in `slot` cannot go on: answer its original request with
    /// `-32603` naming why (`what` the handler did), and free the slot.
    fn drop_call(
        view: &mut WaitingView<'_>,
        slot: usize,
        w: &mut Writer<'_>,
        start: usize,
        what: &str,
    ) -> Wrote {
        w.truncate(start);
        let wrote = Self::original_error(view, slot, w, |resp| {
            resp.error(
                INTERNAL_ERROR,
                format_args!("cannot ask the client for input: {what}"),
                Data::None,
            )
        });
        view.release(slot);
        wrote
    }

    /// Answer the waiting call in `slot` with an error, then free it.
    fn fail_waiting(
        view: &mut WaitingView<'_>,
        slot: usize,
        w: &mut Writer<'_>,
        error: impl FnOnce(Out<'_, '_>) -> Wrote,
    ) -> Wrote {
        let wrote = Self::original_error(view, slot, w, error);
        view.release(slot);
        wrote
    }

    /// An error answer with the id of the original request in `slot`.
    fn original_error(
        view: &WaitingView<'_>,
        slot: usize,
        w: &mut Writer<'_>,
        error: impl FnOnce(Out<'_, '_>) -> Wrote,
    ) -> Wrote {
        let id = view
            .meta
            .get(slot)
            .and_then(|m| view.slot(slot).get(m.id.0..m.id.1));
        error(Out::begin(w, id))
    }
}

/// Where each input request's key, method and params lie in `written`.
type Requests = [(usize, usize, u8, usize, usize); MAX_INPUT_REQUESTS];

/// Read the `input_required` object at `written[object..=end]`: its input
/// requests (positions in `written`), how many, and its decoded state.
#[allow(clippy::type_complexity)]
fn read_requests(
    written: &[u8],
    object: usize,
    end: usize,
) -> Result<(Requests, usize, [u8; STATE_TEXT], Option<usize>), &'static str> {
    let Some(body) = written
        .get(object..=end)
        .and_then(|b| Value::parse(b, &Limits::DEFAULT).ok())
    else {
        return Err("its input requests did not fit the output buffer");
    };
    let pos = |part: &[u8]| (part.as_ptr() as usize).wrapping_sub(written.as_ptr() as usize);
    let mut requests: Requests = [(0, 0, 0, 0, 0); MAX_INPUT_REQUESTS];
    let mut count = 0;
    for (key, request) in body
        .get("inputRequests")
        .map(|r| r.members())
        .into_iter()
        .flatten()
    {
        let method = request
            .get("method")
            .and_then(|m| m.as_str())
            .and_then(|m| METHODS.iter().position(|known| m.eq_str(known)))
            .map(|i| i as u8);
        let (Some(method), Some(params)) = (method, request.get("params")) else {
            continue;
        };
        let Some(entry) = requests.get_mut(count) else {
            return Err("it asked for more than 4 inputs at once");
        };
        if key.raw().len() > MAX_KEY {
            return Err("an input request's key is longer than 32 bytes");
        }
        let p = params.raw();
        *entry = (pos(key.raw()), key.raw().len(), method, pos(p), p.len());
        count += 1;
    }
    if count == 0 {
        return Err("it asked for input without an input request");
    }
    // The state went out unsealed (it stays with the call): decode it.
    let mut state = [0u8; STATE_TEXT];
    let state_len = match body.get("requestState").and_then(|s| s.as_str()) {
        None => None,
        Some(text) => {
            let raw = text.raw();
            let Some(buf) = state.get_mut(..raw.len()) else {
                return Err("its state is too long");
            };
            buf.copy_from_slice(raw);
            crate::seal::decode_b64url(buf)
        }
    };
    Ok((requests, count, state, state_len))
}
