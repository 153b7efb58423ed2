//! Streamable HTTP, sans-IO: an HTTP request's method, headers and body in,
//! status, headers and body out — in buffers the caller owns.
//!
//! This module has no HTTP dependency, no clock, no randomness and no heap.
//! An HTTP server (hyper, axum, picoserve, a hand-written loop) reads a
//! request, calls [`Http::handle`], and writes back the [`Response`]: its
//! status, its [`headers`](Response::headers) and `out[..response.body_len]`.
//!
//! ```
//! use picomcp::http::{Http, Request, Sessions};
//! use picomcp::{Server, ServerInfo};
//!
//! static SERVER: Server<'static, ()> = Server::new(ServerInfo::new("demo", "1.0.0"), ());
//! let http = Http::new(&SERVER);
//! let mut sessions = Sessions::<8>::new();
//! let mut random = |id: &mut [u8; 16]| *id = [7; 16]; // use a real random source
//! let mut body = *br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
//! let headers = [
//!     ("Host", "127.0.0.1:8080"),
//!     ("Accept", "application/json, text/event-stream"),
//!     ("Content-Type", "application/json"),
//! ];
//! let mut out = [0u8; 1024];
//! let r = http.handle(&mut sessions, &mut random, Request::post(&headers[..], &mut body, 0), &mut out);
//! assert_eq!(r.status, 200);
//! assert_eq!(r.session_id.unwrap().as_str(), "07070707070707070707070707070707");
//! assert!(out[..r.body_len].starts_with(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"));
//! ```
//!
//! # Handshake era (2024-11-05 … 2025-11-25)
//!
//! * `POST` only with `Accept` covering both `application/json` and
//!   `text/event-stream` (wildcards count) → else `406`; with
//!   `Content-Type: application/json` → else `415`.
//! * A body of only notifications or responses → `202 Accepted`, no body.
//! * A request → `200` with one JSON response (`application/json`), or, when
//!   the handler sent progress or log notifications before its answer, a
//!   request-scoped `text/event-stream`: one `event: message` / `data:` event
//!   per message, notifications first, the response last. A body that is
//!   not JSON → `400` with the `-32700` answer; other JSON-RPC errors are
//!   `200`.
//! * A successful `initialize` creates a session: its id (128 bits from the
//!   application's [`Random`] source, 32 lowercase hex digits) is sent in
//!   `Mcp-Session-Id`. Every later request must carry it: missing → `400`,
//!   unknown (never issued, deleted, or evicted) → `404`, after which the
//!   client initializes again. `DELETE` with the id ends the session
//!   (`200`).
//! * `MCP-Protocol-Version`, when sent, must be a handshake version this
//!   crate speaks → else `400`. (It is not compared with the negotiated
//!   version; absent means `2025-03-26` per the spec.)
//! * `GET`: with [`Http::handle`] and [`Http::handle_waiting`] → `405` with
//!   `Allow: POST, DELETE` (nothing is sent outside the answer to a
//!   request). With [`Http::handle_streams`] it is the session's
//!   notification stream (see [Subscriptions](#subscriptions-and-notification-streams)).
//!
//! # 2026-07-28 (stateless)
//!
//! A request whose body carries the modern `_meta` envelope
//! (`io.modelcontextprotocol/protocolVersion`) and is not `initialize`, or
//! that says `MCP-Protocol-Version: 2026-07-28`, is served on its own with
//! [`Connection::modern`] (and the request's [`Request::subject`], if
//! any): no session (`Mcp-Session-Id` is ignored),
//! `POST` only (`405`, `Allow: POST` otherwise). The header decides for
//! `initialize` too: 2026-07-28 has no `initialize`, so an enveloped one
//! is answered `-32601` (`404`), and one without the envelope (a handshake
//! `initialize` under a 2026-07-28 header) `-32022` with the supported
//! versions (`400`). Before the core runs, the
//! headers are checked against the body: `MCP-Protocol-Version` against
//! `_meta`, `Mcp-Method` against `method`, and `Mcp-Name` against
//! `params.name` (`tools/call`, `prompts/get`) or `params.uri`
//! (`resources/read`), where a value `=?base64?…?=` is compared after
//! base64 decoding. Missing or different → `-32020` (HeaderMismatch), `400`.
//!
//! For `tools/call`, every argument whose schema sets `x-mcp-header: NAME`
//! ([`Schema::header`](crate::schema::Schema::header)), reached from the
//! root through `properties` only, is checked against its `Mcp-Param-NAME`
//! header: a value in the body needs the header and a header needs a value
//! (absent or `null` expects none); a `=?base64?…?=` value must be padded
//! standard base64 and is compared decoded, any other value is literal and
//! may hold only field-value characters; strings compare as text, integers
//! numerically (`42.0` is `42`), booleans as `true`/`false`. A refusal is
//! `-32020`, `400`, naming the header. Names longer than 118 bytes are not
//! looked up (refused).
//! The status of every other answer comes from the error code the core
//! answered with (handed over, not read back from the bytes): `-32700`,
//! `-32600`, `-32602`, `-32020`, `-32021`, `-32022` → `400`; `-32601` →
//! `404`; anything else (results included) → `200` ([`status_for`]).
//!
//! # One validation
//!
//! The body is validated once, under the server's
//! [`Limits`] ([`Server::limits`]); the era, the
//! header checks and the core all read it through the outline recorded by
//! that one pass. A body that is not acceptable JSON is `400` with the
//! core's `-32700` answer, whatever the era.
//!
//! # DNS-rebinding protection
//!
//! Every request's `Host` and `Origin` (when present) must name an allowed
//! host → else `403`. Default: `localhost`, `127.0.0.1` and `[::1]`, any
//! port. Set your own list with [`Http::allowed_hosts`], allow extra exact
//! origins with [`Http::allowed_origins`], or switch the check off with
//! [`Http::any_host`] (behind a proxy that validates them).
//!
//! # Sessions
//!
//! Session state lives in a [`SessionStore`]; [`Sessions<N>`] is a
//! fixed-capacity table of `N` slots, each a [`Connection`] (a few bytes),
//! the 16-byte id and the tick of its last use. Time is the caller's: pass
//! any monotonic `now` (seconds, milliseconds, a request counter) in
//! [`Request::now`]. **A new session never evicts a live one**: when every
//! slot holds a session used within the idle time
//! ([`Sessions::idle_timeout`]), `initialize` is answered `503` with
//! `Retry-After` and the client tries again later. A session idle for
//! longer has expired: its next request gets `404` (the client initializes
//! again) and its slot is free for a new session.
//!
//! The store is called three times per request at most — `load` (copy the
//! `Connection` out), then the handler runs, then `save` (write it back) —
//! so a multi-threaded server can keep the table behind a mutex held only
//! inside those calls, never across a handler (`impl SessionStore for
//! &Mutex<Sessions<N>>` in the application). Two concurrent requests on one
//! session both run; the later `save` wins (only `initialize` and
//! `logging/setLevel` change a session).
//!
//! # Subscriptions and notification streams
//!
//! [`Http::handle_streams`] serves the server's
//! [`Changes`](crate::changes::Changes) through a [`Streams`] table the
//! caller owns (capabilities then say `resources.subscribe: true`, and
//! `listChanged` for the lists the registry announces):
//!
//! * Handshake era: `resources/subscribe` / `resources/unsubscribe` in a
//!   session keep its URIs in the session's slot of the table. A `GET`
//!   with the session's `Mcp-Session-Id` and `Accept: text/event-stream`
//!   opens the session's one notification stream: `200`
//!   `text/event-stream`, the notifications already due as its first
//!   events, and [`Response::stream`] set: keep it open and call
//!   [`Http::poll_stream`] when the registry wakes you
//!   ([`Changes::on_change`](crate::changes::Changes::on_change)). A second
//!   `GET` while one is open → `409`; no `text/event-stream` in `Accept` →
//!   `406`; no session id → `400`; unknown session → `404`; no free slot →
//!   `503` with `Retry-After`. **`Last-Event-ID` resumption is not
//!   offered**: events carry no ids (a replay buffer per session would cost
//!   memory the table does not bound); a client that reconnects is sent
//!   what changed while it was away, once per URI, on its new stream.
//! * 2026-07-28: a `subscriptions/listen` POST is answered with an SSE
//!   stream: the acknowledgment first, then the notifications its filter
//!   asks for, tagged with the listen request's id. It ends when the
//!   client closes it ([`Streams::close`]) or sends `notifications/cancelled`
//!   naming it in another POST (`202`, [`Response::poll_streams`]: the
//!   listen's result is the stream's last event). `GET` → `405`.
//! * Changes made outside any request (another client's call, a timer)
//!   reach every stream the same way; several changes of one URI between
//!   two polls are one notification.
//!
//! # Output buffer
//!
//! `out` bounds one answer like [`Server::handle`]'s. SSE framing adds 22
//! bytes per message in place; if that does not fit, the notifications are
//! dropped and the response alone is sent as JSON.
//!
//! # Async tools
//!
//! With feature `async-handlers`, a request is answered in two steps so
//! that no lock the caller holds around the mapping (sessions, waiting
//! calls, streams) is held while a handler awaits: `Http::begin` (or
//! `Http::begin_streams`, in [`call`]) routes and checks the request under the locks and
//! either answers it or stops before an async tool's handler with a
//! `PendingCall` (a plain value); the caller drops its locks and awaits
//! `Http::finish` with the same body and output buffer. The response is the
//! one [`Http::handle`] gives for a sync handler doing the same. Each call
//! in flight has its own body and output buffer; see `examples/http/serve.rs`
//! (`--delay-ms`) for many at once on one runtime.

mod body;
#[cfg(feature = "async-handlers")]
pub mod call;
mod headers;
mod params;
mod response;
mod session;
mod stream;

use core::fmt;

use body::Body;
#[cfg(any(test, fuzzing))]
#[doc(hidden)]
pub use headers::ByName;
pub use headers::Headers;
use headers::{Seen, accepts_both, check_modern_headers, host_allowed, is_json, origin_allowed};
use params::{Message, check_params};
pub use response::{CallId, Delivery, EVENT_STREAM, JSON, Response, status_for, status_for_error};
use response::{Refusal, Status, error, refuse, respond, respond_as};
pub use session::{Random, SessionHex, SessionId, SessionStore, Sessions};
pub use stream::Streams;

use crate::changes::{Subscriber, Subscriptions};
use crate::error::{HEADER_MISMATCH, INTERNAL_ERROR};
use crate::mcp::envelope;
use crate::mcp::{Era, ProtocolVersion};
use crate::schema::Schema;
use crate::server::invoke::Deferred;
use crate::server::{Answer, CallEvent, Connection, Origin, Server, Subject, Waiting};
use crate::wire::json::{self, Limits, Outline};

/// One HTTP request, as [`Http::handle`] needs it.
#[derive(Debug)]
pub struct Request<'r, H: ?Sized> {
    /// The method, e.g. `"POST"` (case-sensitive, as HTTP says).
    pub method: &'r str,
    /// The headers.
    pub headers: &'r H,
    /// The body (modified: strings are unescaped in place).
    pub body: &'r mut [u8],
    /// The caller's clock for session last-use (any monotonic unit).
    pub now: u64,
    /// Whom the caller's authentication layer says the request comes from
    /// (see [`Request::subject`]).
    pub subject: Option<&'r [u8]>,
}

impl<'r, H: ?Sized> Request<'r, H> {
    /// A request.
    pub fn new(method: &'r str, headers: &'r H, body: &'r mut [u8], now: u64) -> Self {
        Self {
            method,
            headers,
            body,
            now,
            subject: None,
        }
    }

    /// The subject the caller authenticated this request as (a principal,
    /// an API key's owner, a client certificate's name): 2026-07-28 request
    /// state the server seals for it is taken back only with the same
    /// subject ([`crate::server::Subject`]). picomcp does no
    /// authentication itself; without a subject, state is bound to the
    /// key, method, name, arguments and (with a TTL) time alone. Handshake-era
    /// sessions are already their own subject: a session id.
    pub fn subject(mut self, subject: &'r [u8]) -> Self {
        self.subject = Some(subject);
        self
    }

    /// A `POST`.
    pub fn post(headers: &'r H, body: &'r mut [u8], now: u64) -> Self {
        Self::new("POST", headers, body, now)
    }
}

const DEFAULT_HOSTS: &[&str] = &["localhost", "127.0.0.1", "[::1]"];
/// `Retry-After` (seconds) of every `503` the mapping answers (a full
/// session or stream table). An adapter that refuses a request for a bound
/// of its own (picomcp-tower's `max_calls`) answers with the same value, so
/// a client sees one back-off policy.
pub const RETRY_AFTER: &str = "1";

/// The Streamable HTTP endpoint of a [`Server`]: configuration only (cheap,
/// `Copy`, `const`-constructible); sessions are passed to each call.
pub struct Http<'a, S> {
    server: &'a Server<'a, S>,
    hosts: Option<&'a [&'a str]>,
    origins: &'a [&'a str],
    /// A tool's input schema has an `x-mcp-header` property (found when
    /// built): else a 2026-07-28 call's `Mcp-Param-*` check, which could
    /// only pass, is skipped with the look-up of its tool (`Http::handle`
    /// 8,259 → 8,006 instructions, `scripts/http_cost.sh`'s mapping line).
    param_headers: bool,
}

impl<S> Clone for Http<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for Http<'_, S> {}

impl<S> fmt::Debug for Http<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Http")
            .field("hosts", &self.hosts)
            .field("origins", &self.origins)
            .finish_non_exhaustive()
    }
}

impl<'a, S> Http<'a, S> {
    /// An endpoint for `server`, allowing `localhost`, `127.0.0.1` and
    /// `[::1]` (any port) as `Host` and `Origin`.
    pub const fn new(server: &'a Server<'a, S>) -> Self {
        let mut param_headers = false;
        let mut tools = server.registered_tools();
        while let [tool, rest @ ..] = tools {
            if params::has_header(tool.descriptor.input_schema, 0) {
                param_headers = true;
                break;
            }
            tools = rest;
        }
        Self {
            server,
            hosts: Some(DEFAULT_HOSTS),
            origins: &[],
            param_headers,
        }
    }

    /// The host names (no port; IPv6 in brackets) accepted in `Host` and in
    /// `Origin`, compared case-insensitively, any port.
    pub const fn allowed_hosts(mut self, hosts: &'a [&'a str]) -> Self {
        self.hosts = Some(hosts);
        self
    }

    /// Exact `Origin` values accepted besides those on an allowed host, e.g.
    /// `"https://app.example.com"`.
    pub const fn allowed_origins(mut self, origins: &'a [&'a str]) -> Self {
        self.origins = origins;
        self
    }

    /// Accept any `Host` and `Origin` (only behind a proxy that checks them).
    pub const fn any_host(mut self) -> Self {
        self.hosts = None;
        self
    }

    /// Formerly: JSON limits for a first reading of the body. The body is
    /// now validated once, under the server's limits
    /// ([`Server::limits`]); this setting is ignored.
    #[deprecated(
        note = "the body is validated once, under the server's limits: set Server::limits"
    )]
    pub const fn limits(self, _limits: Limits) -> Self {
        self
    }

    /// Serve one HTTP request; the body of the answer is written to `out`.
    /// Never panics. See the [module docs](self) for the rules.
    #[must_use = "send the response: its status, headers and out[..body_len]"]
    pub fn handle<St, R, H>(
        &self,
        sessions: &mut St,
        random: &mut R,
        req: Request<'_, H>,
        out: &mut [u8],
    ) -> Response
    where
        St: SessionStore + ?Sized,
        R: Random + ?Sized,
        H: Headers + ?Sized,
    {
        self.handle_in(
            sessions,
            random,
            None::<&mut Waiting<0, 0>>,
            None::<&mut Streams<0, 0, 0>>,
            req,
            out,
            None,
        )
    }

    /// [`handle`](Self::handle), where handshake-era calls that ask the
    /// client for input ([`crate::mrtr`]) wait in `waiting` (one store for
    /// every session; a call is answered and cancelled only from its own
    /// session). The request that makes such a call gets an SSE stream
    /// holding its requests to the client, to keep open
    /// ([`Response::hold`]); the client's answers arrive in later POSTs,
    /// each answered `202`, whose output belongs on that held stream
    /// ([`Response::deliver`]): more requests, or the call's final answer
    /// (then the stream ends).
    #[must_use = "send the response: its status, headers and out[..body_len]"]
    pub fn handle_waiting<St, R, H, const N: usize, const B: usize>(
        &self,
        sessions: &mut St,
        random: &mut R,
        waiting: &mut Waiting<N, B>,
        req: Request<'_, H>,
        out: &mut [u8],
    ) -> Response
    where
        St: SessionStore + ?Sized,
        R: Random + ?Sized,
        H: Headers + ?Sized,
    {
        self.handle_in(
            sessions,
            random,
            Some(waiting),
            None::<&mut Streams<0, 0, 0>>,
            req,
            out,
            None,
        )
    }

    /// [`handle_waiting`](Self::handle_waiting), serving subscriptions and
    /// change notifications from the server's
    /// [`Changes`](crate::changes::Changes) through `streams`: handshake
    /// sessions' `resources/subscribe` / `unsubscribe` and their `GET` SSE
    /// stream, and 2026-07-28 `subscriptions/listen` streams. A response
    /// with [`Response::stream`] stays open: see
    /// [`poll_stream`](Self::poll_stream).
    #[must_use = "send the response: its status, headers and out[..body_len]"]
    pub fn handle_streams<
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
    ) -> Response
    where
        St: SessionStore + ?Sized,
        R: Random + ?Sized,
        H: Headers + ?Sized,
    {
        self.handle_in(
            sessions,
            random,
            Some(waiting),
            Some(streams),
            req,
            out,
            None,
        )
    }

    /// End a handshake-era call that has waited `limit` or more (in the unit
    /// of [`Request::now`]) for its client's answers in this round: its
    /// request is answered `-32603` (the client did not answer in time) and
    /// its slot is free for another call. `Some(response)`:
    /// `out[..body_len]` is that answer as an SSE event for the call's held
    /// stream ([`Response::deliver`], `last`: end the stream after it); call
    /// again until `None`. An adapter calls it before serving a request
    /// (then a full store makes room) or on a timer: a client that never
    /// answers does not keep a slot from other sessions for longer than
    /// `limit`. Each answer the client sends starts the next round's clock.
    pub fn expire_waiting<const N: usize, const B: usize>(
        &self,
        waiting: &mut Waiting<N, B>,
        now: u64,
        limit: u64,
        out: &mut [u8],
    ) -> Option<Response> {
        let slot = waiting.expired(now, limit)?;
        let mut view = waiting.view_for([0; 16], now);
        let call = view.call_key(slot);
        let id = view
            .meta
            .get(slot)
            .and_then(|m| view.slot(slot).get(m.id.0..m.id.1));
        let len = crate::server::write_error(out, id, INTERNAL_ERROR, WAITED_TOO_LONG);
        view.release(slot);
        let answer = crate::server::Answer {
            len,
            code: Some(INTERNAL_ERROR),
            listening: false,
            alone: true,
        };
        let mut r = respond_as(out, answer, Status::Handshake, true);
        r.deliver = Some(Delivery {
            call: CallId(call),
            last: true,
        });
        Some(r)
    }

    /// The notifications due on stream `id` (a [`Response::stream`]) as SSE
    /// events in `out`: `Some((len, last))`, where `last` says the stream
    /// ends after these bytes (a listen answered after its
    /// `notifications/cancelled`); `None` when the stream is gone (its
    /// session deleted or its slot reclaimed): end it. Call it when the
    /// server's [`Changes`](crate::changes::Changes) wake you
    /// ([`Changes::on_change`](crate::changes::Changes::on_change)).
    pub fn poll_stream<const M: usize, const K: usize, const U: usize>(
        &self,
        streams: &mut Streams<M, K, U>,
        id: &SessionId,
        out: &mut [u8],
    ) -> Option<(usize, bool)> {
        let (at, listen, ending) = streams.stream(id)?;
        let mut subs = streams.subscriber(at)?;
        let mut n = self.server.pending_era(Some(listen), &mut subs, out);
        if ending {
            let rest = out.get_mut(n..).unwrap_or_default();
            n += self.server.end_open_listen(&mut subs, rest);
        }
        if ending {
            streams.release(at);
        }
        let len = if n == 0 {
            0
        } else {
            response::frame_sse(out, n).unwrap_or(0)
        };
        Some((len, ending))
    }

    #[allow(clippy::too_many_arguments)]
    fn handle_in<
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
        waiting: Option<&mut Waiting<N, B>>,
        mut streams: Option<&mut Streams<M, K, U>>,
        req: Request<'_, H>,
        out: &mut [u8],
        defer: Option<&mut Option<(Deferred, Status)>>,
    ) -> Response
    where
        St: SessionStore + ?Sized,
        R: Random + ?Sized,
        H: Headers + ?Sized,
    {
        let headers = req.headers;
        // Every header read here, in one pass where the adapter lists them.
        let seen = Seen::read(headers);
        // Two Hosts (or Origins) are ambiguous (RFC 9112: 400); one that
        // cannot be read is no allowed host (403), never "absent".
        match seen.single_host_and_origin() {
            Ok(()) => {}
            Err(true) => return refuse(out, Refusal::DuplicateHost),
            Err(false) => return refuse(out, Refusal::Forbidden),
        }
        if !host_allowed(self.hosts, seen.host())
            || !origin_allowed(self.hosts, self.origins, seen.origin())
        {
            return refuse(out, Refusal::Forbidden);
        }
        let header_version = seen.version();
        let modern_header = header_version
            .and_then(ProtocolVersion::parse)
            .is_some_and(|v| v.era() == Era::Modern);
        match req.method {
            "POST" => {}
            "DELETE" if !modern_header => {
                // The session's waiting calls and streams end with it.
                let id = seen.session_id().and_then(|t| SessionId::parse(t.trim()));
                if let (Some(waiting), Some(id)) = (waiting, id) {
                    waiting.forget(&id.0);
                }
                if let (Some(streams), Some(id)) = (streams, id) {
                    streams.forget(&id);
                }
                return delete(sessions, &seen, out);
            }
            "GET" if !modern_header && streams.is_some() => {
                if let Some(streams) = streams {
                    return self.open_stream(sessions, streams, &seen, req.now, out);
                }
            }
            _ => {}
        }
        if req.method != "POST" {
            let mut r = Response::empty(405);
            r.allow = Some(match (modern_header, streams.is_some()) {
                (true, _) => "POST",
                (false, true) => "GET, POST, DELETE",
                (false, false) => "POST, DELETE",
            });
            return r;
        }
        if !accepts_both(seen.accept()) {
            return refuse(out, Refusal::NotAcceptable);
        }
        if !is_json(seen.content_type()) {
            return refuse(out, Refusal::UnsupportedMediaType);
        }
        let body = req.body;
        if body
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        {
            return Response::empty(400);
        }
        // The one validation of the body, under the server's limits.
        let mut outline = Outline::new(&crate::mcp::envelope::OUTLINE_KEYS);
        if let Err(e) = json::validate_outlined(body, self.server.json_limits(), &mut outline) {
            let answer = Server::<S>::parse_error(e, out);
            return respond(out, answer, Status::Fixed(400));
        }
        let view = Body::read(body, &outline);
        // An `initialize` request (not a notification) opens a session.
        let opens_session = view.object && view.is_initialize() && view.id.is_some();
        // A 2026-07-28 `MCP-Protocol-Version` header claims that era for the
        // request, `initialize` included: it goes to the modern ladder, which
        // answers a missing envelope, and a 2026-07-28 `initialize` with
        // `-32601` (404).
        let enveloped = view.enveloped();
        let era = envelope::era_of(view.is_initialize(), enveloped, modern_header);
        if !view.object || era == Era::Handshake {
            let subscribing = view.method.is_some_and(|m| {
                m.eq_str("resources/subscribe") || m.eq_str("resources/unsubscribe")
            });
            // A batch's async calls are not deferred: going on after one
            // would take the session again after its handler. They are
            // answered `-32603`, as where no one awaits handlers.
            let defer = if view.object { defer } else { None };
            return self.handshake(
                sessions,
                random,
                waiting,
                streams,
                subscribing,
                &seen,
                body,
                &outline,
                opens_session,
                req.now,
                out,
                defer,
            );
        }
        if let Err(message) = check_modern_headers(&view, &seen) {
            return error(out, 400, view.id(), HEADER_MISMATCH, message);
        }
        if self.param_headers
            && let Some(schema) = self.param_schema(&view)
        {
            let mut message = Message::new();
            let get = |name: &str| headers.get(name);
            if check_params(schema, view.arguments, &get, &mut message).is_err() {
                return error(out, 400, view.id(), HEADER_MISMATCH, message.as_str());
            }
        }
        let origin = if modern_header {
            Origin::ClaimedModern
        } else {
            Origin::Alone
        };
        let method = view.method;
        let listen = method.is_some_and(|m| m.eq_str("subscriptions/listen"));
        let mut listen_slot = None;
        if let Some(streams) = streams.as_deref_mut() {
            // A notification (no id) may be a cancellation: one that
            // names a listen of this endpoint ends it, its result there.
            if view.id.is_none()
                && let Some(at) = cancelled_in(body).and_then(|id| streams.listen_with_request(id))
            {
                streams.mark_ending(at);
                let mut r = Response::empty(202);
                r.poll_streams = true;
                return r;
            }
            if listen {
                let mut id = SessionId([0; 16]);
                random.fill(&mut id.0);
                let Some(at) = streams.listen_slot(id, sessions, req.now) else {
                    return error(
                        out,
                        200,
                        view.id(),
                        INTERNAL_ERROR,
                        "cannot listen: every notification stream of this server is in use",
                    );
                };
                listen_slot = Some((at, id));
            }
        }
        // With streams, subscriptions are served (the capabilities say so);
        // only a listen keeps anything.
        let mut none = Subscriptions::<0, 0>::new();
        let mut subs = match (streams.as_deref_mut(), listen_slot) {
            (Some(streams), Some((at, _))) => streams.subscriber(at),
            (Some(_), None) => Some(none.subscriber()),
            (None, _) => None,
        };
        let mut slot = None;
        let answer = self.server.handle_outlined(
            &mut Connection::modern(),
            body,
            &outline,
            out,
            None,
            None,
            subs.as_mut(),
            origin,
            req.subject.map(Subject::of).as_ref(),
            defer.is_some().then_some(&mut slot),
        );
        if let (Some(call), Some(defer)) = (slot, defer) {
            *defer = Some((call, Status::Modern));
            return Response::empty(202);
        }
        match (streams, listen_slot) {
            (Some(_), Some((_, id))) if answer.listening => {
                let mut r = respond_as(out, answer, Status::Modern, true);
                r.stream = Some(id);
                r
            }
            (Some(streams), Some((at, _))) => {
                streams.release(at);
                respond(out, answer, Status::Modern)
            }
            _ => respond(out, answer, Status::Modern),
        }
    }

    /// A handshake session's `GET`: its notification stream.
    fn open_stream<St, const M: usize, const K: usize, const U: usize>(
        &self,
        sessions: &mut St,
        streams: &mut Streams<M, K, U>,
        headers: &Seen<'_>,
        now: u64,
        out: &mut [u8],
    ) -> Response
    where
        St: SessionStore + ?Sized,
    {
        if !headers::accepts_event_stream(headers.accept()) {
            return refuse(out, Refusal::NotAcceptableStream);
        }
        if let Some(v) = headers.version()
            && !ProtocolVersion::parse(v).is_some_and(|v| v.era() == Era::Handshake)
        {
            return refuse(out, Refusal::UnsupportedVersionHeader);
        }
        let Some(text) = headers.session_id() else {
            return refuse(out, Refusal::SessionRequired);
        };
        let Some(id) = SessionId::parse(text.trim()).filter(|id| sessions.load(id, now).is_some())
        else {
            return refuse(out, Refusal::SessionNotFound);
        };
        let Some(at) = streams.session_slot(&id, sessions, now) else {
            let mut full = refuse(out, Refusal::StreamsFull);
            full.retry_after = Some(RETRY_AFTER);
            return full;
        };
        if !streams.open(at) {
            return refuse(out, Refusal::StreamOpen);
        }
        let mut r = match self.poll_stream(streams, &id, out) {
            Some((len, _)) => Response::sse(len),
            None => Response::sse(0),
        };
        r.stream = Some(id);
        r
    }

    /// The input schema whose `x-mcp-header` annotations a 2026-07-28
    /// `tools/call` must agree with (checked after the standard headers, so
    /// only with a complete envelope; an unknown tool has none, and the
    /// core answers it).
    fn param_schema(&self, view: &Body<'_>) -> Option<&'a Schema<'a>> {
        view.complete_envelope()?;
        if !view.method?.eq_str("tools/call") {
            return None;
        }
        let name = view.name?.as_str()?;
        let tool = self.server.find_tool(name, ProtocolVersion::V2026_07_28)?;
        Some(tool.descriptor.input_schema)
    }

    #[allow(clippy::too_many_arguments)]
    fn handshake<
        St,
        R,
        const N: usize,
        const B: usize,
        const M: usize,
        const K: usize,
        const U: usize,
    >(
        &self,
        sessions: &mut St,
        random: &mut R,
        waiting: Option<&mut Waiting<N, B>>,
        streams: Option<&mut Streams<M, K, U>>,
        subscribing: bool,
        headers: &Seen<'_>,
        body: &mut [u8],
        outline: &Outline,
        opens_session: bool,
        now: u64,
        out: &mut [u8],
        defer: Option<&mut Option<(Deferred, Status)>>,
    ) -> Response
    where
        St: SessionStore + ?Sized,
        R: Random + ?Sized,
    {
        if let Some(v) = headers.version()
            && !ProtocolVersion::parse(v).is_some_and(|v| v.era() == Era::Handshake)
        {
            return refuse(out, Refusal::UnsupportedVersionHeader);
        }
        if opens_session {
            let mut conn = Connection::new();
            // With streams, subscriptions are served: the capabilities say so.
            let mut none = Subscriptions::<0, 0>::new();
            let mut none = none.subscriber();
            let answer = self.server.handle_outlined(
                &mut conn,
                body,
                outline,
                out,
                None,
                None,
                streams.is_some().then_some(&mut none),
                Origin::Alone,
                None,
                None,
            );
            let mut r = respond(out, answer, Status::Handshake);
            if matches!(conn, Connection::Ready(_)) {
                let mut id = SessionId([0; 16]);
                random.fill(&mut id.0);
                if !sessions.try_insert(id, conn, now) {
                    // Full of live sessions: none is evicted for this one.
                    let mut full = refuse(out, Refusal::SessionsFull);
                    full.retry_after = Some(RETRY_AFTER);
                    return full;
                }
                r.session_id = Some(id.hex());
            }
            return r;
        }
        let Some(text) = headers.session_id() else {
            return refuse(out, Refusal::SessionRequired);
        };
        let Some((id, mut conn)) =
            SessionId::parse(text.trim()).and_then(|id| Some((id, sessions.load(&id, now)?)))
        else {
            return refuse(out, Refusal::SessionNotFound);
        };
        // No stream slot for this session: a subscription set of no room,
        // which the core refuses, naming the server's bound.
        let mut no_room = Subscriptions::<0, 0>::new();
        let mut subs: Option<Subscriber<'_>> = None;
        if let Some(streams) = streams
            && subscribing
        {
            subs = match streams.session_slot(&id, sessions, now) {
                Some(at) => streams.subscriber(at),
                None => Some(no_room.subscriber()),
            };
        }
        let mut waiting_view = waiting.map(|w| w.view_for(id.0, now));
        let mut slot = None;
        let answer = self.server.handle_outlined(
            &mut conn,
            body,
            outline,
            out,
            None,
            waiting_view.as_mut(),
            subs.as_mut(),
            Origin::Alone,
            None,
            defer.is_some().then_some(&mut slot),
        );
        sessions.save(&id, conn, now);
        if let (Some(call), Some(defer)) = (slot, defer) {
            *defer = Some((call, Status::Handshake));
            return Response::empty(202);
        }
        match waiting_view.and_then(|v| v.event) {
            // Nothing answered and no waiting call's: a cancellation may
            // name an async call the adapter runs.
            None if answer.len == 0 => {
                let mut r = respond(out, answer, Status::Handshake);
                r.cancels = cancelled_span(body);
                r
            }
            // A waiting call cancelled: it may also be running again,
            // awaited, where the adapter runs async calls (its handler's
            // future is dropped too).
            event @ Some(CallEvent::Dropped(_)) => {
                let mut r = respond_waiting(out, answer, event);
                r.cancels = cancelled_span(body);
                r
            }
            event => respond_waiting(out, answer, event),
        }
    }
}

/// The response to a handshake-era request after what it did to a waiting
/// call (`event`), if anything.
fn respond_waiting(out: &mut [u8], answer: Answer, event: Option<CallEvent>) -> Response {
    match event {
        None => respond(out, answer, Status::Handshake),
        // This request's call waits: its stream stays open.
        Some(CallEvent::Parked(call)) => {
            let mut r = respond_as(out, answer, Status::Handshake, true);
            r.hold = Some(CallId(call));
            r
        }
        // This request (an answer, a cancellation) is accepted; what it
        // produced belongs on the waiting call's stream.
        Some(
            event @ (CallEvent::Continued(call)
            | CallEvent::Finished(call)
            | CallEvent::Dropped(call)),
        ) => {
            let mut r = match answer.len {
                0 => Response::empty(202),
                _ => respond_as(out, answer, Status::Handshake, true),
            };
            r.status = 202;
            r.deliver = Some(Delivery {
                call: CallId(call),
                last: !matches!(event, CallEvent::Continued(_)),
            });
            r
        }
    }
}

/// The answer to a call whose client did not answer its requests in time
/// ([`Http::expire_waiting`]).
const WAITED_TOO_LONG: &str =
    "cannot wait for the client's input: no answer within the waiting-call time limit";

/// Where, in `body`, the id a `notifications/cancelled` names is.
fn cancelled_span(body: &[u8]) -> Option<(usize, usize)> {
    let id = cancelled_in(body)?;
    let start = (id.as_ptr() as usize).checked_sub(body.as_ptr() as usize)?;
    Some((start, start + id.len()))
}

/// The request a body that is a `notifications/cancelled` names (its id as
/// written), by the core's one reading of a cancellation
/// ([`crate::mcp::cancelled_request`]).
fn cancelled_in(body: &[u8]) -> Option<&[u8]> {
    match crate::wire::envelope::parse(json::Value::trusted(body)) {
        Ok(crate::wire::envelope::Envelope::Notification(n)) => crate::mcp::cancelled_request(&n),
        _ => None,
    }
}

fn delete<St>(sessions: &mut St, headers: &Seen<'_>, out: &mut [u8]) -> Response
where
    St: SessionStore + ?Sized,
{
    let Some(text) = headers.session_id() else {
        return refuse(out, Refusal::SessionRequired);
    };
    match SessionId::parse(text.trim()) {
        Some(id) if sessions.remove(&id) => Response::empty(200),
        _ => refuse(out, Refusal::SessionNotFound),
    }
}

#[cfg(test)]
mod tests {
    use super::headers::{hostname, name_matches};
    use super::response::frame_sse;
    use super::*;
    use crate::wire::json::Value;

    #[test]
    fn session_id_hex_round_trip() {
        let id = SessionId([0xab; 16]);
        assert_eq!(id.hex().as_str(), "abababababababababababababababab");
        assert_eq!(SessionId::parse(id.hex().as_str()), Some(id));
        assert_eq!(
            SessionId::parse("ABABABABABABABABABABABABABABABAB"),
            Some(id)
        );
        assert_eq!(SessionId::parse("abab"), None);
        assert_eq!(SessionId::parse("zbababababababababababababababab"), None);
    }

    #[test]
    fn sessions_never_evict_a_live_one_and_idle_ones_expire() {
        let mut s = Sessions::<2>::new().idle_timeout(10);
        let (a, b, c) = (SessionId([1; 16]), SessionId([2; 16]), SessionId([3; 16]));
        assert!(s.try_insert(a, Connection::new(), 1));
        assert!(s.try_insert(b, Connection::new(), 2));
        // Full of live sessions: the new one is refused, none evicted,
        // whatever the clock's resolution (all used at the same tick).
        assert!(!s.try_insert(c, Connection::new(), 2));
        assert!(s.load(&a, 11).is_some()); // idle for 10: still live
        assert!(s.load(&b, 11).is_some());
        assert!(!s.try_insert(c, Connection::new(), 11));
        // b is idle past 10 at 23, a is not (used at 20).
        assert!(s.load(&a, 20).is_some());
        assert!(s.try_insert(c, Connection::new(), 23));
        assert!(s.load(&b, 23).is_none());
        assert!(s.load(&c, 24).is_some());
        // An expired session is not found, even before its slot is reused.
        assert!(s.load(&a, 31).is_none());
        assert!(s.remove(&c));
        assert!(!s.remove(&c));
        assert_eq!(s.evict_idle(100, 10), 0);
        assert!(s.is_empty());
    }

    #[test]
    fn sse_framing_in_place() {
        let mut out = [0u8; 128];
        let msgs = b"{\"a\":1}\n{\"b\":2}\n";
        out[..msgs.len()].copy_from_slice(msgs);
        let n = frame_sse(&mut out, msgs.len()).unwrap();
        assert_eq!(
            &out[..n],
            b"event: message\ndata: {\"a\":1}\n\nevent: message\ndata: {\"b\":2}\n\n"
        );
        let mut small = [0u8; 20];
        small[..msgs.len()].copy_from_slice(msgs);
        assert_eq!(frame_sse(&mut small, msgs.len()), None);
    }

    #[test]
    fn accept_header() {
        assert!(accepts_both(Some("application/json, text/event-stream")));
        assert!(accepts_both(Some(
            "text/event-stream;q=0.9,application/json"
        )));
        assert!(accepts_both(Some("*/*")));
        assert!(!accepts_both(Some("application/json")));
        assert!(!accepts_both(Some(
            "application/json, text/event-stream;q=0"
        )));
        assert!(!accepts_both(None));
    }

    #[test]
    fn content_type_header() {
        assert!(is_json(Some("application/json")));
        assert!(is_json(Some("Application/JSON; charset=utf-8")));
        assert!(!is_json(Some("text/plain")));
        assert!(!is_json(None));
    }

    #[test]
    fn host_names() {
        assert_eq!(hostname("localhost:8080"), "localhost");
        assert_eq!(hostname("127.0.0.1"), "127.0.0.1");
        assert_eq!(hostname("[::1]:3000"), "[::1]");
        assert_eq!(hostname("[::1]"), "[::1]");
        assert_eq!(hostname("evil.example.com"), "evil.example.com");
    }

    #[test]
    fn base64_names() {
        let json = br#""h\u00e9llo""#;
        let v = Value::parse(json, &Limits::DEFAULT).unwrap();
        let name = v.as_str().unwrap();
        assert!(name_matches(name, "=?base64?aMOpbGxv?="));
        assert!(!name_matches(name, "=?base64?aMOpbGx?="));
        assert!(!name_matches(name, "=?base64?aMOpbGxvbw==?="));
        assert!(!name_matches(name, "=?base64?a!?="));
        assert!(!name_matches(name, "héllo!"));
        assert!(name_matches(name, "héllo"));
    }

    #[test]
    fn listed_and_named_headers_agree() {
        static SERVER: Server<'static, ()> = Server::new(crate::ServerInfo::new("t", "1"), ());
        let modern = [
            ("HOST", "localhost:1"),
            ("accept", "application/json, text/event-stream"),
            ("Content-Type", "application/json"),
            ("Mcp-Protocol-Version", " 2026-07-28 "),
            ("MCP-METHOD", "tools/list"),
        ];
        let mut cases: std::vec::Vec<std::vec::Vec<(&str, &str)>> = std::vec![modern.to_vec()];
        let variants: [&[(&str, &str)]; 9] = [
            &[("Host", "127.0.0.1")],
            &[
                ("origin", "http://localhost"),
                ("Origin", "http://localhost"),
            ],
            &[("Host", "local\u{7f}host")],
            &[("Origin", "https://evil.example")],
            &[("Accept", "text/event-stream")],
            &[("Mcp-Method", "prompts/list")],
            &[("Host", "localhost:1x")],
            &[("Hosts", "evil"), ("Mcp-Names", "x"), ("Origim", "x")],
            &[("Content-Type", "text/plain")],
        ];
        for extra in variants {
            let mut h = extra.to_vec();
            h.extend(modern.iter().copied());
            cases.push(h);
        }
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let http = Http::new(&SERVER);
        let mut random = |id: &mut [u8; 16]| *id = [7; 16];
        for headers in &cases {
            let mut answers = std::vec::Vec::new();
            for listed in [true, false] {
                let mut sessions = Sessions::<1>::new();
                let (mut b, mut out) = (*body, [0u8; 1024]);
                let r = if listed {
                    let req = Request::post(&headers[..], &mut b, 0);
                    http.handle(&mut sessions, &mut random, req, &mut out)
                } else {
                    let named = ByName(headers);
                    let req = Request::post(&named, &mut b, 0);
                    http.handle(&mut sessions, &mut random, req, &mut out)
                };
                answers.push((r, out[..r.body_len].to_vec()));
            }
            assert_eq!(answers[0], answers[1], "{headers:?}");
        }
    }

    #[test]
    fn status_table() {
        for c in [-32700, -32600, -32602, -32020, -32021, -32022] {
            assert_eq!(status_for_error(c), 400);
        }
        assert_eq!(status_for_error(-32601), 404);
        assert_eq!(status_for_error(-32603), 200);
        assert_eq!(status_for_error(-32002), 200);
    }
}
