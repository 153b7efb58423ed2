//! What goes back: the [`Response`], the status table, the HTTP-level
//! refusals (answered through the core's one JSON-RPC answer writer), and
//! the in-place SSE framing.

use crate::error::{
    ErrorCode, HEADER_MISMATCH, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY, PARSE_ERROR, UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::server::Answer;

use super::session::{SessionHex, SessionId};

/// `Content-Type: application/json`.
pub const JSON: &str = "application/json";
/// `Content-Type: text/event-stream`.
pub const EVENT_STREAM: &str = "text/event-stream";

/// What to send back: status, headers, and `out[..body_len]` as the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Response {
    /// The HTTP status.
    pub status: u16,
    /// `Content-Type`, when there is a body.
    pub content_type: Option<&'static str>,
    /// `Mcp-Session-Id` (on a successful `initialize`).
    pub session_id: Option<SessionHex>,
    /// `Allow` (on `405`).
    pub allow: Option<&'static str>,
    /// `Retry-After` in seconds (on `503`: the session table is full).
    pub retry_after: Option<&'static str>,
    /// Body length in `out`.
    pub body_len: usize,
    /// A handshake-era call waits for the client: keep this response's SSE
    /// stream open after `out[..body_len]` (the requests to the client);
    /// later requests deliver the rest of the call to it ([`deliver`](Self::deliver)).
    pub hold: Option<CallId>,
    /// `out[..body_len]` is not this request's body (that is an empty `202`)
    /// but SSE events for the stream held for this call; `last`: close that
    /// stream after them (the call is over, answered or cancelled).
    pub deliver: Option<Delivery>,
    /// Keep this response open as an SSE stream of notifications (a
    /// session's `GET` stream, a `subscriptions/listen`): after
    /// `out[..body_len]`, call `Http::poll_stream`
    /// with this id whenever the server's
    /// [`Changes`](crate::changes::Changes) announce something (and after a
    /// response with [`poll_streams`](Self::poll_streams)), and
    /// `Streams::close` when the client goes away.
    pub stream: Option<SessionId>,
    /// A listen stream has something to send (its end, after a
    /// `notifications/cancelled`): poll the open streams now.
    pub poll_streams: bool,
    /// A handshake-era `notifications/cancelled` (this response is its
    /// `202`) named a request of this session that is not waiting for the
    /// client here, or one that was (then [`deliver`](Self::deliver) ends
    /// its stream; it may be running again, awaited, meanwhile):
    /// `body[start..end]` is that request's id as written. An adapter that
    /// awaits async tools' calls (`PendingCall`) drops the session's call
    /// whose `PendingCall::id` this is: cancelled, it is not answered.
    pub cancels: Option<(usize, usize)>,
}

/// Names a waiting call whose stream an adapter holds open.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CallId(pub u64);

/// Output for a held stream (see [`Response::deliver`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Delivery {
    /// The call.
    pub call: CallId,
    /// Close the stream after these events.
    pub last: bool,
}

impl Response {
    pub(super) const fn empty(status: u16) -> Self {
        Self {
            status,
            content_type: None,
            session_id: None,
            allow: None,
            retry_after: None,
            body_len: 0,
            hold: None,
            deliver: None,
            stream: None,
            poll_streams: false,
            cancels: None,
        }
    }

    /// `200` opening an SSE stream with `body_len` bytes of events.
    pub(super) const fn sse(body_len: usize) -> Self {
        Self::body(200, EVENT_STREAM, body_len)
    }

    /// `status` with `body_len` bytes of `content_type`, no other header.
    const fn body(status: u16, content_type: &'static str, body_len: usize) -> Self {
        let mut r = Self::empty(status);
        r.content_type = Some(content_type);
        r.body_len = body_len;
        r
    }

    /// The headers to send, in a fixed order: `Content-Type`,
    /// `Mcp-Session-Id`, `Allow`, `Retry-After`.
    pub fn headers(&self) -> impl Iterator<Item = (&'static str, &str)> {
        let ct = self.content_type.map(|v| ("Content-Type", v));
        let sid = self
            .session_id
            .as_ref()
            .map(|v| ("Mcp-Session-Id", v.as_str()));
        let allow = self.allow.map(|v| ("Allow", v));
        let retry = self.retry_after.map(|v| ("Retry-After", v));
        ct.into_iter().chain(sid).chain(allow).chain(retry)
    }
}

/// The HTTP status for a JSON-RPC error code on 2026-07-28 (spec table plus
/// the SDK's): parse error, invalid request, invalid params, header
/// mismatch, missing client capability, unsupported version → `400`; method
/// not found → `404`; anything else → `200`.
pub const fn status_for(code: ErrorCode) -> u16 {
    const fn is(code: ErrorCode, other: ErrorCode) -> bool {
        code.get() == other.get()
    }
    if is(code, PARSE_ERROR)
        || is(code, INVALID_REQUEST)
        || is(code, INVALID_PARAMS)
        || is(code, HEADER_MISMATCH)
        || is(code, MISSING_REQUIRED_CLIENT_CAPABILITY)
        || is(code, UNSUPPORTED_PROTOCOL_VERSION)
    {
        400
    } else if is(code, METHOD_NOT_FOUND) {
        404
    } else {
        200
    }
}

/// [`status_for`] for a code given as a number (one outside `i32` is `200`).
pub const fn status_for_error(code: i64) -> u16 {
    if code < i32::MIN as i64 || code > i32::MAX as i64 {
        return 200;
    }
    status_for(ErrorCode::application(code as i32))
}

/// A request refused before the core sees it: status, JSON-RPC code and
/// message, from one table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    /// `Host` or `Origin` not allowed (or not readable).
    Forbidden,
    /// `Host` or `Origin` twice.
    DuplicateHost,
    /// `Accept` lacks JSON or SSE.
    NotAcceptable,
    /// `Content-Type` is not JSON.
    UnsupportedMediaType,
    /// A handshake request with an `MCP-Protocol-Version` we do not speak.
    UnsupportedVersionHeader,
    /// A handshake request without `Mcp-Session-Id`.
    SessionRequired,
    /// An `Mcp-Session-Id` that names no session.
    SessionNotFound,
    /// `initialize` while every session slot holds a live session.
    SessionsFull,
    /// A `GET` without `text/event-stream` in `Accept`.
    NotAcceptableStream,
    /// A second `GET` stream for one session.
    StreamOpen,
    /// A `GET` while every stream slot is in use.
    StreamsFull,
}

impl Refusal {
    const fn parts(self) -> (u16, ErrorCode, &'static str) {
        match self {
            Refusal::Forbidden => (
                403,
                INVALID_REQUEST,
                "Forbidden: Host or Origin not allowed",
            ),
            Refusal::DuplicateHost => (
                400,
                INVALID_REQUEST,
                "Bad Request: more than one Host or Origin header",
            ),
            Refusal::NotAcceptable => (
                406,
                INVALID_REQUEST,
                "Not Acceptable: Accept must include application/json and text/event-stream",
            ),
            Refusal::UnsupportedMediaType => (
                415,
                INVALID_REQUEST,
                "Unsupported Media Type: Content-Type must be application/json",
            ),
            Refusal::UnsupportedVersionHeader => (
                400,
                INVALID_REQUEST,
                "Bad Request: Unsupported MCP-Protocol-Version",
            ),
            Refusal::SessionRequired => (
                400,
                INVALID_REQUEST,
                "Bad Request: Mcp-Session-Id header is required",
            ),
            Refusal::SessionNotFound => (404, INVALID_REQUEST, "Session not found"),
            Refusal::SessionsFull => (
                503,
                INTERNAL_ERROR,
                "Service Unavailable: every session slot is in use; retry later",
            ),
            Refusal::NotAcceptableStream => (
                406,
                INVALID_REQUEST,
                "Not Acceptable: Accept must include text/event-stream",
            ),
            Refusal::StreamOpen => (
                409,
                INVALID_REQUEST,
                "Conflict: this session's GET stream is open already",
            ),
            Refusal::StreamsFull => (
                503,
                INTERNAL_ERROR,
                "Service Unavailable: every stream slot is in use; retry later",
            ),
        }
    }
}

/// The JSON-RPC error body of a refusal.
pub(super) fn refuse(out: &mut [u8], refusal: Refusal) -> Response {
    let (status, code, message) = refusal.parts();
    error(out, status, None, code, message)
}

/// A JSON-RPC error body for an HTTP-level refusal, written by the core's
/// answer writer.
pub(super) fn error(
    out: &mut [u8],
    status: u16,
    id: Option<&[u8]>,
    code: ErrorCode,
    message: &str,
) -> Response {
    let n = crate::server::write_error(out, id, code, message);
    match n {
        0 => Response::empty(status),
        // Without the answer's newline.
        _ => Response::body(status, JSON, n - 1),
    }
}

/// Which table gives the status of an answer the core wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Status {
    /// Handshake era: every JSON-RPC answer is `200`.
    Handshake,
    /// 2026-07-28: by the answer's error code ([`status_for`]).
    Modern,
    /// This status, whatever was answered.
    Fixed(u16),
}

/// Turn the core's output (newline-terminated messages) into a response:
/// 202, JSON, or SSE.
pub(super) fn respond(out: &mut [u8], answer: Answer, status: Status) -> Response {
    respond_as(out, answer, status, false)
}

/// [`respond`], as SSE even for a single message when `sse`.
pub(super) fn respond_as(out: &mut [u8], answer: Answer, status: Status, sse: bool) -> Response {
    let mut n = answer.len.min(out.len());
    if n == 0 {
        return Response::empty(202);
    }
    // Every message ends in a newline (the framing below relies on it).
    if out.get(n - 1) != Some(&b'\n')
        && let Some(b) = out.get_mut(n)
    {
        *b = b'\n';
        n += 1;
    }
    let written = out.get(..n).unwrap_or_default();
    // One message (the usual answer) is found by one memchr; several are
    // counted. The response is the last line.
    let before_last = written.get(..n - 1).unwrap_or_default();
    let (lines, last_start) = if answer.alone {
        // The core says it is one line: nothing to look for.
        (1, 0)
    } else if before_last.contains(&b'\n') {
        (
            written.iter().filter(|&&b| b == b'\n').count(),
            before_last
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1),
        )
    } else {
        (1, 0)
    };
    let status = match status {
        Status::Handshake => 200,
        Status::Modern => answer.code.map_or(200, status_for),
        Status::Fixed(s) => s,
    };
    if lines > 1 || sse {
        if let Some(len) = frame_sse(out, n) {
            return Response::body(status, EVENT_STREAM, len);
        }
        // No room for the framing: the response alone, as JSON.
        out.copy_within(last_start..n, 0);
    }
    let len = if lines > 1 { n - last_start } else { n };
    let len = if out.get(..len).is_some_and(|o| o.ends_with(b"\n")) {
        len - 1
    } else {
        len
    };
    Response::body(status, JSON, len)
}

const SSE_PREFIX: &[u8] = b"event: message\ndata: ";

/// Reframe `out[..n]` (newline-terminated JSON messages) in place as SSE
/// `event: message` events; `None` if `out` is too small.
pub(super) fn frame_sse(out: &mut [u8], n: usize) -> Option<usize> {
    if n == 0 || out.get(n - 1) != Some(&b'\n') {
        return None;
    }
    let lines = out.get(..n)?.iter().filter(|&&b| b == b'\n').count();
    let total = n + lines * (SSE_PREFIX.len() + 1);
    if total > out.len() {
        return None;
    }
    // Back to front, so nothing is overwritten before it has moved. Every
    // step leaves dst_end - src_end >= 22 bytes per line still to move.
    let (mut src_end, mut dst_end) = (n, total);
    while src_end > 0 {
        let start = out
            .get(..src_end - 1)?
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        let len = src_end - start;
        *out.get_mut(dst_end.checked_sub(1)?)? = b'\n';
        let dst = dst_end.checked_sub(1 + len)?;
        out.copy_within(start..src_end, dst);
        let prefix_start = dst.checked_sub(SSE_PREFIX.len())?;
        out.get_mut(prefix_start..dst)?.copy_from_slice(SSE_PREFIX);
        dst_end = prefix_start;
        src_end = start;
    }
    Some(total)
}
