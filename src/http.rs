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
//! * `GET` → `405` with `Allow: POST, DELETE`: there is **no standalone SSE
//!   stream** (picomcp sends nothing outside the answer to a request), and no
//!   resumability (`Last-Event-ID` is ignored).
//!
//! # 2026-07-28 (stateless)
//!
//! A request whose body carries the modern `_meta` envelope
//! (`io.modelcontextprotocol/protocolVersion`) and is not `initialize`, or
//! that says `MCP-Protocol-Version: 2026-07-28`, is served on its own with
//! [`Connection::modern`]: no session (`Mcp-Session-Id` is ignored),
//! `POST` only (`405`, `Allow: POST` otherwise). Before the core runs, the
//! headers are checked against the body: `MCP-Protocol-Version` against
//! `_meta`, `Mcp-Method` against `method`, and `Mcp-Name` against
//! `params.name` (`tools/call`, `prompts/get`) or `params.uri`
//! (`resources/read`), where a value `=?base64?…?=` is compared after
//! base64 decoding. Missing or different → `-32020` (HeaderMismatch), `400`.
//! The status of every other answer is read back from the error code the
//! core wrote: `-32700`, `-32600`, `-32602`, `-32020`, `-32021`, `-32022` →
//! `400`; `-32601` → `404`; anything else (results included) → `200`
//! ([`status_for_error`]).
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
//! [`Request::now`]. **When the table is full, a new session evicts the
//! least recently used one**; that client's next request gets `404` and it
//! initializes again. [`Sessions::evict_idle`] drops sessions idle for too
//! long.
//!
//! The store is called three times per request at most — `load` (copy the
//! `Connection` out), then the handler runs, then `save` (write it back) —
//! so a multi-threaded server can keep the table behind a mutex held only
//! inside those calls, never across a handler (`impl SessionStore for
//! &Mutex<Sessions<N>>` in the application). Two concurrent requests on one
//! session both run; the later `save` wins (only `initialize` and
//! `logging/setLevel` change a session).
//!
//! # Output buffer
//!
//! `out` bounds one answer like [`Server::handle`]'s. SSE framing adds 22
//! bytes per message in place; if that does not fit, the notifications are
//! dropped and the response alone is sent as JSON.

use core::fmt::{self, Write as _};

use crate::mcp::{Era, ProtocolVersion};
use crate::server::{Connection, Server};
use crate::wire::json::{JsonStr, Kind, Limits, Value};

/// Request headers, looked up by name, case-insensitively.
pub trait Headers {
    /// The value of the first header called `name` (any ASCII case), if any.
    fn get(&self, name: &str) -> Option<&str>;
}

impl Headers for [(&str, &str)] {
    fn get(&self, name: &str) -> Option<&str> {
        self.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    }
}

impl<const N: usize> Headers for [(&str, &str); N] {
    fn get(&self, name: &str) -> Option<&str> {
        Headers::get(&self[..], name)
    }
}

impl<H: Headers + ?Sized> Headers for &H {
    fn get(&self, name: &str) -> Option<&str> {
        (**self).get(name)
    }
}

/// A source of random bytes for session ids (use a cryptographic one: the
/// id is the only thing that ties a request to a session).
pub trait Random {
    /// Fill `bytes` with random data.
    fn fill(&mut self, bytes: &mut [u8; 16]);
}

impl<F: FnMut(&mut [u8; 16])> Random for F {
    fn fill(&mut self, bytes: &mut [u8; 16]) {
        self(bytes)
    }
}

/// A 128-bit session id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SessionId(pub [u8; 16]);

impl SessionId {
    /// Parse the 32-hex-digit form (either case); `None` for anything else.
    pub fn parse(text: &str) -> Option<SessionId> {
        let b = text.as_bytes();
        if b.len() != 32 {
            return None;
        }
        let mut id = [0u8; 16];
        for (byte, pair) in id.iter_mut().zip(b.chunks_exact(2)) {
            let [hi, lo] = *pair else { return None };
            *byte = (hex_val(hi)? << 4) | hex_val(lo)?;
        }
        Some(SessionId(id))
    }

    /// The id as 32 lowercase hex digits (what `Mcp-Session-Id` carries).
    pub fn hex(&self) -> SessionHex {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut text = [0u8; 32];
        for (pair, byte) in text.chunks_exact_mut(2).zip(self.0) {
            let digit = |v: u8| DIGITS.get(usize::from(v)).copied().unwrap_or(b'0');
            pair.copy_from_slice(&[digit(byte >> 4), digit(byte & 15)]);
        }
        SessionHex(text)
    }
}

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// A session id as text: 32 lowercase hex digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SessionHex([u8; 32]);

impl SessionHex {
    /// The text.
    pub fn as_str(&self) -> &str {
        // Only ASCII hex digits are ever stored.
        core::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// Where handshake-era sessions live. See the [module docs](self#sessions).
pub trait SessionStore {
    /// The session's connection state (a copy), marking it used at `now`;
    /// `None` if there is no such session.
    fn load(&mut self, id: &SessionId, now: u64) -> Option<Connection>;
    /// Write a session's state back after a request, if it still exists.
    fn save(&mut self, id: &SessionId, conn: Connection, now: u64);
    /// Add a session (evicting one if the store is full).
    fn insert(&mut self, id: SessionId, conn: Connection, now: u64);
    /// End a session; `false` if there was none.
    fn remove(&mut self, id: &SessionId) -> bool;
}

/// One slot of [`Sessions`].
#[derive(Clone, Copy, Debug)]
struct Slot {
    id: SessionId,
    conn: Connection,
    last_used: u64,
}

/// A fixed-capacity session table of `N` slots (about 40 bytes each); when
/// full, a new session evicts the least recently used one.
#[derive(Clone, Debug)]
pub struct Sessions<const N: usize> {
    slots: [Option<Slot>; N],
}

impl<const N: usize> Sessions<N> {
    /// An empty table.
    pub const fn new() -> Self {
        Self { slots: [None; N] }
    }

    /// Sessions in use.
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }

    /// No session in use.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drop every session last used before `now - max_idle`; returns how
    /// many were dropped.
    pub fn evict_idle(&mut self, now: u64, max_idle: u64) -> usize {
        let mut n = 0;
        for slot in &mut self.slots {
            if slot.is_some_and(|s| now.saturating_sub(s.last_used) > max_idle) {
                *slot = None;
                n += 1;
            }
        }
        n
    }

    fn find(&mut self, id: &SessionId) -> Option<&mut Slot> {
        self.slots.iter_mut().flatten().find(|s| s.id == *id)
    }
}

impl<const N: usize> Default for Sessions<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> SessionStore for Sessions<N> {
    fn load(&mut self, id: &SessionId, now: u64) -> Option<Connection> {
        let slot = self.find(id)?;
        slot.last_used = now;
        Some(slot.conn)
    }

    fn save(&mut self, id: &SessionId, conn: Connection, now: u64) {
        if let Some(slot) = self.find(id) {
            slot.conn = conn;
            slot.last_used = slot.last_used.max(now);
        }
    }

    fn insert(&mut self, id: SessionId, conn: Connection, now: u64) {
        let new = Some(Slot {
            id,
            conn,
            last_used: now,
        });
        if let Some(free) = self.slots.iter_mut().find(|s| s.is_none()) {
            *free = new;
        } else if let Some(lru) = self
            .slots
            .iter_mut()
            .min_by_key(|s| s.map_or(0, |s| s.last_used))
        {
            *lru = new;
        }
    }

    fn remove(&mut self, id: &SessionId) -> bool {
        for slot in &mut self.slots {
            if slot.is_some_and(|s| s.id == *id) {
                *slot = None;
                return true;
            }
        }
        false
    }
}

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
}

impl<'r, H: ?Sized> Request<'r, H> {
    /// A request.
    pub fn new(method: &'r str, headers: &'r H, body: &'r mut [u8], now: u64) -> Self {
        Self {
            method,
            headers,
            body,
            now,
        }
    }

    /// A `POST`.
    pub fn post(headers: &'r H, body: &'r mut [u8], now: u64) -> Self {
        Self::new("POST", headers, body, now)
    }
}

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
    /// Body length in `out`.
    pub body_len: usize,
}

impl Response {
    const fn empty(status: u16) -> Self {
        Self {
            status,
            content_type: None,
            session_id: None,
            allow: None,
            body_len: 0,
        }
    }

    /// The headers to send, in a fixed order: `Content-Type`,
    /// `Mcp-Session-Id`, `Allow`.
    pub fn headers(&self) -> impl Iterator<Item = (&'static str, &str)> {
        let ct = self.content_type.map(|v| ("Content-Type", v));
        let sid = self
            .session_id
            .as_ref()
            .map(|v| ("Mcp-Session-Id", v.as_str()));
        let allow = self.allow.map(|v| ("Allow", v));
        ct.into_iter().chain(sid).chain(allow)
    }
}

/// The HTTP status for a JSON-RPC error code on 2026-07-28 (spec table plus
/// the SDK's): `-32700`, `-32600`, `-32602`, `-32020`, `-32021`, `-32022` →
/// `400`; `-32601` → `404`; anything else → `200`.
pub const fn status_for_error(code: i64) -> u16 {
    match code {
        -32700 | -32600 | -32602 | -32020 | -32021 | -32022 => 400,
        -32601 => 404,
        _ => 200,
    }
}

const DEFAULT_HOSTS: &[&str] = &["localhost", "127.0.0.1", "[::1]"];
const SSE_PREFIX: &[u8] = b"event: message\ndata: ";
const ENVELOPE_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const ENVELOPE_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// The Streamable HTTP endpoint of a [`Server`]: configuration only (cheap,
/// `Copy`, `const`-constructible); sessions are passed to each call.
pub struct Http<'a, S> {
    server: &'a Server<'a, S>,
    hosts: Option<&'a [&'a str]>,
    origins: &'a [&'a str],
    limits: Limits,
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

enum Era2 {
    Handshake,
    Modern,
}

impl<'a, S> Http<'a, S> {
    /// An endpoint for `server`, allowing `localhost`, `127.0.0.1` and
    /// `[::1]` (any port) as `Host` and `Origin`.
    pub const fn new(server: &'a Server<'a, S>) -> Self {
        Self {
            server,
            hosts: Some(DEFAULT_HOSTS),
            origins: &[],
            limits: Limits::DEFAULT,
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

    /// JSON limits for reading the body before dispatch (default
    /// [`Limits::DEFAULT`]; the server applies its own again).
    pub const fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Serve one HTTP request; the body of the answer is written to `out`.
    /// Never panics. See the [module docs](self) for the rules.
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
        let headers = req.headers;
        if !self.host_allowed(headers.get("host")) || !self.origin_allowed(headers.get("origin")) {
            return error(
                out,
                403,
                None,
                -32600,
                "Forbidden: Host or Origin not allowed",
            );
        }
        let header_version = headers.get("mcp-protocol-version").map(str::trim);
        let modern_header = header_version
            .and_then(ProtocolVersion::parse)
            .is_some_and(|v| v.era() == Era::Modern);
        match req.method {
            "POST" => {}
            "DELETE" if !modern_header => {
                return delete(sessions, headers, out);
            }
            _ => {
                let mut r = Response::empty(405);
                r.allow = Some(if modern_header {
                    "POST"
                } else {
                    "POST, DELETE"
                });
                return r;
            }
        }
        if !accepts_both(headers.get("accept")) {
            return error(
                out,
                406,
                None,
                -32600,
                "Not Acceptable: Accept must include application/json and text/event-stream",
            );
        }
        if !is_json(headers.get("content-type")) {
            return error(
                out,
                415,
                None,
                -32600,
                "Unsupported Media Type: Content-Type must be application/json",
            );
        }
        let body = req.body;
        let era = match Value::parse(body, &self.limits) {
            Err(_) => {
                // The core writes the -32700 answer.
                let n = self.server.handle(&mut Connection::new(), body, out);
                let mut r = self.respond(out, n, Era2::Handshake);
                r.status = 400;
                return r;
            }
            Ok(v) => {
                let method = v.get("method").and_then(|m| m.as_str());
                let is_init = method.is_some_and(|m| m.eq_str("initialize"));
                let enveloped = v
                    .get("params")
                    .and_then(|p| p.get("_meta"))
                    .and_then(|m| m.get(ENVELOPE_VERSION))
                    .is_some();
                if v.kind() == Kind::Object && !is_init && (enveloped || modern_header) {
                    if let Err(msg) = check_modern_headers(v, headers) {
                        return error(out, 400, id_of(v), -32020, msg);
                    }
                    Era2::Modern
                } else {
                    Era2::Handshake
                }
            }
        };
        match era {
            Era2::Modern => {
                let n = self.server.handle(&mut Connection::modern(), body, out);
                self.respond(out, n, Era2::Modern)
            }
            Era2::Handshake => self.handshake(sessions, random, headers, body, req.now, out),
        }
    }

    fn handshake<St, R, H>(
        &self,
        sessions: &mut St,
        random: &mut R,
        headers: &H,
        body: &mut [u8],
        now: u64,
        out: &mut [u8],
    ) -> Response
    where
        St: SessionStore + ?Sized,
        R: Random + ?Sized,
        H: Headers + ?Sized,
    {
        if let Some(v) = headers.get("mcp-protocol-version").map(str::trim)
            && !ProtocolVersion::parse(v).is_some_and(|v| v.era() == Era::Handshake)
        {
            return error(
                out,
                400,
                None,
                -32600,
                "Bad Request: Unsupported MCP-Protocol-Version",
            );
        }
        let parsed = Value::trusted(body);
        let is_init = parsed.kind() == Kind::Object
            && parsed
                .get("method")
                .and_then(|m| m.as_str())
                .is_some_and(|m| m.eq_str("initialize"))
            && parsed.get("id").is_some();
        if is_init {
            let mut conn = Connection::new();
            let n = self.server.handle(&mut conn, body, out);
            let mut r = self.respond(out, n, Era2::Handshake);
            if matches!(conn, Connection::Ready(_)) {
                let mut id = SessionId([0; 16]);
                random.fill(&mut id.0);
                sessions.insert(id, conn, now);
                r.session_id = Some(id.hex());
            }
            return r;
        }
        let Some(text) = headers.get("mcp-session-id") else {
            return error(
                out,
                400,
                None,
                -32600,
                "Bad Request: Mcp-Session-Id header is required",
            );
        };
        let Some((id, mut conn)) =
            SessionId::parse(text.trim()).and_then(|id| Some((id, sessions.load(&id, now)?)))
        else {
            return error(out, 404, None, -32600, "Session not found");
        };
        let n = self.server.handle(&mut conn, body, out);
        sessions.save(&id, conn, now);
        self.respond(out, n, Era2::Handshake)
    }

    /// Turn the core's output (`n` bytes of newline-terminated messages)
    /// into a response: 202, JSON, or SSE.
    fn respond(&self, out: &mut [u8], n: usize, era: Era2) -> Response {
        let mut n = n.min(out.len());
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
        let lines = written.iter().filter(|&&b| b == b'\n').count();
        // The response is the last line.
        let last_start = written
            .get(..n - 1)
            .and_then(|w| w.iter().rposition(|&b| b == b'\n'))
            .map_or(0, |p| p + 1);
        let status = match era {
            Era2::Handshake => 200,
            Era2::Modern => Value::parse(
                written.get(last_start..).unwrap_or_default(),
                &Limits::DEFAULT,
            )
            .ok()
            .and_then(|v| v.get("error"))
            .and_then(|e| e.get("code"))
            .and_then(|c| c.as_number())
            .and_then(|c| c.as_i64())
            .map_or(200, status_for_error),
        };
        if lines > 1 {
            if let Some(len) = frame_sse(out, n) {
                return Response {
                    status,
                    content_type: Some(EVENT_STREAM),
                    session_id: None,
                    allow: None,
                    body_len: len,
                };
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
        Response {
            status,
            content_type: Some(JSON),
            session_id: None,
            allow: None,
            body_len: len,
        }
    }

    fn host_allowed(&self, host: Option<&str>) -> bool {
        let Some(hosts) = self.hosts else {
            return true;
        };
        // A missing Host (HTTP/1.0, or HTTP/2 where the adapter did not map
        // :authority) is not a browser: let it through.
        host.is_none_or(|h| {
            hosts
                .iter()
                .any(|a| a.eq_ignore_ascii_case(hostname(h.trim())))
        })
    }

    fn origin_allowed(&self, origin: Option<&str>) -> bool {
        let Some(origin) = origin.map(str::trim) else {
            return true;
        };
        if self.origins.iter().any(|o| o.eq_ignore_ascii_case(origin)) {
            return true;
        }
        let Some(hosts) = self.hosts else {
            return true;
        };
        let Some((_, authority)) = origin.split_once("://") else {
            return false;
        };
        let authority = authority.split('/').next().unwrap_or_default();
        hosts
            .iter()
            .any(|a| a.eq_ignore_ascii_case(hostname(authority)))
    }
}

/// `host[:port]` → `host` (`[v6]:port` → `[v6]`).
fn hostname(authority: &str) -> &str {
    if authority.starts_with('[') {
        return match authority.find(']') {
            Some(end) => &authority[..=end],
            None => authority,
        };
    }
    match authority.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => authority,
    }
}

fn delete<St, H>(sessions: &mut St, headers: &H, out: &mut [u8]) -> Response
where
    St: SessionStore + ?Sized,
    H: Headers + ?Sized,
{
    let Some(text) = headers.get("mcp-session-id") else {
        return error(
            out,
            400,
            None,
            -32600,
            "Bad Request: Mcp-Session-Id header is required",
        );
    };
    match SessionId::parse(text.trim()) {
        Some(id) if sessions.remove(&id) => Response::empty(200),
        _ => error(out, 404, None, -32600, "Session not found"),
    }
}

/// Media ranges of an `Accept` header cover both JSON and SSE.
fn accepts_both(accept: Option<&str>) -> bool {
    let Some(accept) = accept else {
        return false;
    };
    let (mut json, mut sse) = (false, false);
    for range in accept.split(',') {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or_default().trim();
        let refused = parts.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .is_some_and(|q| q.trim().trim_end_matches(['0', '.']).is_empty())
        });
        if refused {
            continue;
        }
        let m = |s: &str| media.eq_ignore_ascii_case(s);
        json |= m(JSON) || m("application/*") || m("*/*");
        sse |= m(EVENT_STREAM) || m("text/*") || m("*/*");
    }
    json && sse
}

fn is_json(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|ct| {
        ct.split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .eq_ignore_ascii_case(JSON)
    })
}

/// The request's id, if it is a string or a number (echoed verbatim).
fn id_of(v: Value<'_>) -> Option<&[u8]> {
    v.get("id")
        .filter(|id| matches!(id.kind(), Kind::String | Kind::Number))
        .map(|id| id.raw())
}

/// The 2026-07-28 header checks (run only when the envelope is complete, so
/// a missing envelope key is the core's `-32602` first, as the spec's ladder
/// says).
fn check_modern_headers<H: Headers + ?Sized>(
    v: Value<'_>,
    headers: &H,
) -> Result<(), &'static str> {
    let params = v.get("params");
    let meta = params.and_then(|p| p.get("_meta"));
    let version = meta.and_then(|m| m.get(ENVELOPE_VERSION));
    let complete = meta.is_some_and(|m| m.get(ENVELOPE_CAPABILITIES).is_some());
    let (Some(version), true) = (version.and_then(|v| v.as_str()), complete) else {
        return Ok(());
    };
    match headers.get("mcp-protocol-version").map(str::trim) {
        None => return Err("Header mismatch: MCP-Protocol-Version header is required"),
        Some(h) if !version.eq_str(h) => {
            return Err("Header mismatch: MCP-Protocol-Version does not match params._meta");
        }
        Some(_) => {}
    }
    let Some(method) = v.get("method").and_then(|m| m.as_str()) else {
        return Ok(());
    };
    match headers.get("mcp-method").map(str::trim) {
        None => return Err("Header mismatch: Mcp-Method header is required"),
        Some(h) if !method.eq_str(h) => {
            return Err("Header mismatch: Mcp-Method does not match the body's method");
        }
        Some(_) => {}
    }
    let key = if method.eq_str("tools/call") || method.eq_str("prompts/get") {
        "name"
    } else if method.eq_str("resources/read") {
        "uri"
    } else {
        return Ok(());
    };
    let Some(name) = params.and_then(|p| p.get(key)).and_then(|n| n.as_str()) else {
        return Ok(()); // the core answers -32602
    };
    match headers.get("mcp-name").map(str::trim) {
        None => Err("Header mismatch: Mcp-Name header is required"),
        Some(h) if !name_matches(name, h) => {
            Err("Header mismatch: Mcp-Name does not match the body's name or uri")
        }
        Some(_) => Ok(()),
    }
}

/// `Mcp-Name` against the decoded JSON string: plain text, or the
/// `=?base64?…?=` sentinel (standard or URL-safe alphabet, padding optional).
fn name_matches(name: JsonStr<'_>, header: &str) -> bool {
    let Some(b64) = header
        .strip_prefix("=?base64?")
        .and_then(|s| s.strip_suffix("?="))
    else {
        return name.eq_str(header);
    };
    let mut decoded = Base64::new(b64.as_bytes());
    let mut utf8 = [0u8; 4];
    for c in name.chars() {
        for &b in c.encode_utf8(&mut utf8).as_bytes() {
            if decoded.next() != Some(Ok(b)) {
                return false;
            }
        }
    }
    decoded.next().is_none()
}

/// A streaming base64 decoder; yields `Err(())` on a bad character.
struct Base64<'a> {
    rest: &'a [u8],
    acc: u32,
    bits: u8,
}

impl<'a> Base64<'a> {
    fn new(text: &'a [u8]) -> Self {
        let end = text.iter().rposition(|&b| b != b'=').map_or(0, |p| p + 1);
        Self {
            rest: text.get(..end).unwrap_or_default(),
            acc: 0,
            bits: 0,
        }
    }
}

impl Iterator for Base64<'_> {
    type Item = Result<u8, ()>;

    fn next(&mut self) -> Option<Result<u8, ()>> {
        while self.bits < 8 {
            let (&c, rest) = self.rest.split_first()?;
            self.rest = rest;
            let v = match c {
                b'A'..=b'Z' => c - b'A',
                b'a'..=b'z' => c - b'a' + 26,
                b'0'..=b'9' => c - b'0' + 52,
                b'+' | b'-' => 62,
                b'/' | b'_' => 63,
                _ => {
                    self.rest = &[];
                    return Some(Err(()));
                }
            };
            self.acc = (self.acc << 6) | u32::from(v);
            self.bits += 6;
        }
        self.bits -= 8;
        Some(Ok((self.acc >> self.bits) as u8))
    }
}

/// Reframe `out[..n]` (newline-terminated JSON messages) in place as SSE
/// `event: message` events; `None` if `out` is too small.
fn frame_sse(out: &mut [u8], n: usize) -> Option<usize> {
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

/// A JSON-RPC error body for an HTTP-level refusal.
fn error(out: &mut [u8], status: u16, id: Option<&[u8]>, code: i32, message: &str) -> Response {
    let mut w = SliceWriter { out, len: 0 };
    let ok = w.bytes(b"{\"jsonrpc\":\"2.0\",\"id\":")
        && w.bytes(id.unwrap_or(b"null"))
        && write!(
            w,
            ",\"error\":{{\"code\":{code},\"message\":\"{message}\"}}}}"
        )
        .is_ok();
    let mut r = Response::empty(status);
    if ok {
        r.content_type = Some(JSON);
        r.body_len = w.len;
    }
    r
}

struct SliceWriter<'o> {
    out: &'o mut [u8],
    len: usize,
}

impl SliceWriter<'_> {
    fn bytes(&mut self, b: &[u8]) -> bool {
        match self.out.get_mut(self.len..self.len + b.len()) {
            Some(dst) => {
                dst.copy_from_slice(b);
                self.len += b.len();
                true
            }
            None => false,
        }
    }
}

impl fmt::Write for SliceWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.bytes(s.as_bytes()) {
            Ok(())
        } else {
            Err(fmt::Error)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn sessions_evict_least_recently_used() {
        let mut s = Sessions::<2>::new();
        let (a, b, c) = (SessionId([1; 16]), SessionId([2; 16]), SessionId([3; 16]));
        s.insert(a, Connection::new(), 1);
        s.insert(b, Connection::new(), 2);
        assert!(s.load(&a, 3).is_some()); // a is now the most recent
        s.insert(c, Connection::new(), 4); // evicts b
        assert!(s.load(&b, 5).is_none());
        assert!(s.load(&a, 5).is_some());
        assert!(s.load(&c, 5).is_some());
        assert_eq!(s.len(), 2);
        assert!(s.remove(&a));
        assert!(!s.remove(&a));
        assert_eq!(s.evict_idle(100, 10), 1);
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
    fn status_table() {
        for c in [-32700, -32600, -32602, -32020, -32021, -32022] {
            assert_eq!(status_for_error(c), 400);
        }
        assert_eq!(status_for_error(-32601), 404);
        assert_eq!(status_for_error(-32603), 200);
        assert_eq!(status_for_error(-32002), 200);
    }
}
