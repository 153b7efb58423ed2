//! Short sequences of HTTP requests through `picomcp::http::Http` (the
//! sans-IO Streamable HTTP mapping) with the bookshop server.
//!
//! Input: one configuration byte, then up to four requests separated by
//! `\xfe\xfe`. The configuration picks the entry point (`handle`,
//! `handle_waiting`, `handle_streams`), the output buffer (16384, 4096,
//! 1024 or 512 bytes), whether sessions expire, the `Host`/`Origin` policy
//! and whether requests carry a subject. Each request is:
//!
//! * a flags byte: method (`POST`, `GET`, `DELETE`, another token), add the
//!   usual `Host`/`Accept`/`Content-Type`, add the `Mcp-Session-Id` issued
//!   last in this sequence, add 2026-07-28 headers derived from the body,
//!   pass the headers by name (`Headers::get`) rather than listed, and how
//!   far the clock moves;
//! * a byte: how many header specs follow (low nibble), and the other
//!   method's token or (for `POST`/`GET`/`DELETE`) whether to close an open
//!   stream / expire waiting calls first (high nibble);
//! * the header specs, two bytes each (a name from the ones the mapping
//!   reads or another, in some case; a plausible value, padded, upper-cased
//!   or with a non-ASCII tail, or arbitrary bytes that follow the spec);
//! * the body: the rest, with `@RQ@` replaced by the id of the last request
//!   the server sent the client (to answer an elicitation).
//!
//! Checked for every request (and every `poll_stream` / `expire_waiting`),
//! each sequence run on a thread with a small fixed stack (`worker`):
//!
//! * no panic, no stack overflow, and zero heap allocations while the
//!   mapping runs (a counting global allocator armed only around the call);
//! * the status is one the module docs name; `Allow` exactly on `405`
//!   (`POST` / `POST, DELETE` / `GET, POST, DELETE`), `Retry-After` exactly
//!   on `503`; no body without a `Content-Type`;
//! * an `application/json` body is one JSON-RPC response (or a batch
//!   answer), without a trailing newline; a `text/event-stream` body is
//!   `event: message` / `data:` events whose data is one JSON-RPC message;
//! * refusals (`403`, `406`, `409`, `415`, `503`) are one JSON error with
//!   `id: null`; `404` is `-32601` or the `id: null` `Session not found`;
//!   `400` is empty or an error whose code maps to `400`; under
//!   `MCP-Protocol-Version: 2026-07-28` the status of an answer is the one
//!   its error code maps to (`status_for`), and only `POST` is served;
//! * a request with an id answered `200` gets exactly one response, the
//!   last message, carrying that id byte for byte (or `null` with `-32600`
//!   or `-32603` when the id is too long to echo in the output buffer); no
//!   answer carries an id the body did not; a body of notifications and
//!   responses gets `202` with no body (or an error status);
//! * a session id comes only with `200` to a handshake `POST`, is the id the
//!   `Random` source drew, and comes with every successful `initialize`;
//!   `DELETE` is `200` only for a live session issued in this sequence;
//!   `GET` is `200` only as a session's notification stream;
//! * `deliver` names a call held open earlier and not ended;
//! * listed headers and headers asked for by name give the same answer
//!   (`handle`, same state: the `Headers` contract).
#![no_main]

mod counting;
mod model;
#[path = "../../examples/bookshop/src/shop.rs"]
#[allow(dead_code)]
mod shop;
mod util;
mod worker;

use std::sync::{Mutex, OnceLock};

use counting::no_alloc;
use libfuzzer_sys::fuzz_target;
use model::{Envelope, Expect, check_response, classify, present};
use picomcp::Server;
use picomcp::http::{
    ByName, EVENT_STREAM, Headers, Http, JSON, Request, Response, SessionId, Sessions, Streams,
    status_for_error,
};
use picomcp::server::Waiting;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use worker::Worker;

static SERVER: Server<'static, shop::Shop> = shop::server();

/// Longer inputs are skipped (run with `-max_len=4096`).
const MAX_INPUT: usize = 4096;
/// Between two requests of the input.
const SEP: &[u8] = b"\xfe\xfe";
const MAX_REQUESTS: usize = 4;
const OUT_CAPS: [usize; 4] = [16384, 4096, 1024, 512];
/// Session slots: a third `initialize` finds the table full (`503`).
const SESSION_SLOTS: usize = 2;
/// Idle time (in ticks of `Request::now`) when sessions expire.
const IDLE: u64 = 4;
/// Waiting calls for `handle_waiting` / `handle_streams`.
type Wait = Waiting<2, 1024>;
/// Stream slots, URIs per slot, URI bytes.
type Strm = Streams<3, 2, 64>;
/// `expire_waiting`'s limit (ticks).
const WAIT_LIMIT: u64 = 5;
/// Replaced in a body by the id of the server's last request to the client.
const REQUEST_ID: &[u8] = b"@RQ@";
/// The statuses the module docs name.
const STATUSES: [u16; 10] = [200, 202, 400, 403, 404, 405, 406, 409, 415, 503];
const SSE_PREFIX: &str = "event: message\ndata: ";

// ---------------------------------------------------------------------------
// Decoding the input
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Plain,
    Waiting,
    Streams,
}

const HOSTS: &[&str] = &["example.com", "localhost"];
const ORIGINS: &[&str] = &["https://app.example.com", "null"];

const NAMES: [&str; 14] = [
    "Host",
    "Origin",
    "Accept",
    "Content-Type",
    "MCP-Protocol-Version",
    "Mcp-Method",
    "Mcp-Name",
    "Mcp-Session-Id",
    "Mcp-Param-title",
    "Last-Event-ID",
    "Hosts",
    "Mcp-Session-Id ",
    "",
    "X-Forwarded-Host",
];

/// Stand-ins for session ids issued earlier in the sequence.
const LAST_SID: &str = "$LAST";
const FIRST_SID: &str = "$FIRST";

fn plausible(name: usize) -> &'static [&'static str] {
    match name {
        0 | 13 => &[
            "localhost",
            "localhost:8080",
            "127.0.0.1",
            "127.0.0.1:3000",
            "[::1]",
            "[::1]:80",
            "evil.example.com",
            "example.com",
            "LOCALHOST:1",
            "localhost:",
            "[::1]x",
            "localhost:80:80",
            "",
            "l\u{f6}calhost",
            "localhost:8x",
            "[::1",
        ],
        1 => &[
            "http://localhost",
            "http://localhost:8080",
            "https://app.example.com",
            "https://evil.example",
            "null",
            "http://[::1]:3000/path",
            "http://127.0.0.1",
            "localhost",
            "",
            "http://example.com:1/x",
            "https://app.example.com.evil",
        ],
        2 => &[
            "application/json, text/event-stream",
            "*/*",
            "application/json",
            "text/event-stream",
            "text/event-stream;q=0.9,application/json",
            "application/json, text/event-stream;q=0",
            "application/*, text/*",
            "application/json;q=0, text/event-stream",
            "",
            "APPLICATION/JSON, TEXT/EVENT-STREAM",
            "application/json,text/event-stream;q=0.0",
            "text/event-stream; q=1, application/json; q=0.",
        ],
        3 => &[
            "application/json",
            "application/json; charset=utf-8",
            "Application/JSON",
            "text/plain",
            "application/jsonx",
            "",
            " application/json ;",
            "application/json-seq",
        ],
        4 => &[
            "2025-11-25",
            "2026-07-28",
            "2025-06-18",
            "2025-03-26",
            "2024-11-05",
            "2099-01-01",
            "",
            "2026-07-28, 2025-11-25",
        ],
        5 => &[
            "tools/call",
            "tools/list",
            "resources/read",
            "prompts/get",
            "server/discover",
            "initialize",
            "ping",
            "subscriptions/listen",
            "resources/list",
            "completion/complete",
            "notifications/cancelled",
        ],
        6 => &[
            "get_author",
            "top",
            "count",
            "recommend",
            "books://Dune",
            "books://catalog",
            "=?base64?Z2V0X2F1dGhvcg==?=",
            "=?base64?dG9w?=",
            "=?base64?Z2V0X2F1dGhvcg?=",
            "=?base64?a!?=",
            "buy",
            "=?base64??=",
        ],
        7 | 11 => &[
            LAST_SID,
            FIRST_SID,
            "00000000000000000000000000000001",
            "00000000000000000000000000000002",
            "not-hex",
            "",
            "0000000000000000000000000000000g",
            "000000000000000000000000000000001",
        ],
        _ => &["x", "", "1", "Dune", "=?base64?RHVuZQ==?="],
    }
}

const OTHER_METHODS: [&str; 16] = [
    "PUT", "post", "HEAD", "OPTIONS", "PATCH", "", "POST ", "GET", "DELETE", "Post", "CONNECT",
    "TRACE", "\u{e9}", "POSTX", "delete", "get",
];

/// How far the clock moves before a request.
const ADVANCE: [u64; 4] = [1, 0, 3, 10];

struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        head
    }
}

/// One decoded request.
#[derive(Debug)]
struct Req {
    method: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    by_name: bool,
    advance: u64,
    close_stream: bool,
    expire: bool,
}

fn recase(s: &str, how: u8) -> String {
    match how {
        1 => s.to_ascii_lowercase(),
        2 => s.to_ascii_uppercase(),
        3 => s
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if i % 2 == 0 {
                    c.to_ascii_uppercase()
                } else {
                    c.to_ascii_lowercase()
                }
            })
            .collect(),
        _ => s.to_owned(),
    }
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                s.push(char::from(A[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// A header value carrying `s`: as is when it is plain visible ASCII, else
/// the `=?base64?…?=` sentinel.
fn header_text(s: &str) -> String {
    if !s.is_empty() && s.bytes().all(|b| (0x21..0x7f).contains(&b)) {
        s.to_owned()
    } else {
        format!("=?base64?{}?=", base64(s.as_bytes()))
    }
}

/// The 2026-07-28 headers that agree with `body` (a JSON object). A body
/// nested deeper than the server accepts (a parse error whatever its
/// headers) is sent without them: `serde_json::Value`'s recursive parse of
/// it would need more than the serving thread's small stack, which is
/// there to catch recursion in picomcp, not in this oracle.
fn modern_headers(body: &[u8]) -> Vec<(String, String)> {
    if util::max_depth_outside_strings(body) > model::SERVER_DEPTH {
        return Vec::new();
    }
    let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(body) else {
        return Vec::new();
    };
    let params = o.get("params");
    let version = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
        .and_then(Value::as_str)
        .unwrap_or("2026-07-28");
    let mut h = vec![("MCP-Protocol-Version".to_owned(), version.to_owned())];
    if let Some(method) = o.get("method").and_then(Value::as_str) {
        h.push(("Mcp-Method".to_owned(), method.to_owned()));
        let key = match method {
            "tools/call" | "prompts/get" => Some("name"),
            "resources/read" => Some("uri"),
            _ => None,
        };
        if let Some(name) = key
            .and_then(|k| params.and_then(|p| p.get(k)))
            .and_then(Value::as_str)
        {
            h.push(("Mcp-Name".to_owned(), header_text(name)));
        }
    }
    h
}

fn replace_all(body: &[u8], what: &[u8], with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        if body[i..].starts_with(what) {
            out.extend_from_slice(with);
            i += what.len();
        } else {
            out.push(body[i]);
            i += 1;
        }
    }
    out
}

/// What the sequence has seen so far that a request may refer to.
struct Refs<'a> {
    first_sid: Option<&'a str>,
    last_sid: Option<&'a str>,
    server_request: Option<&'a str>,
}

fn decode(chunk: &[u8], refs: &Refs<'_>) -> Req {
    let mut c = Cursor(chunk);
    let flags = c.byte();
    let spec = c.byte();
    let method = match flags & 3 {
        0 => "POST",
        1 => "GET",
        2 => "DELETE",
        _ => OTHER_METHODS[usize::from(spec >> 4)],
    };
    let other = flags & 3 == 3;
    let mut headers = Vec::new();
    for _ in 0..(spec & 0x0f).min(12) {
        let n = c.byte();
        let v = c.byte();
        let idx = usize::from(n & 0x0f);
        let name = if idx < NAMES.len() {
            recase(NAMES[idx], (n >> 4) & 3)
        } else {
            String::from_utf8_lossy(c.take(usize::from(n >> 4))).into_owned()
        };
        let value = if v >= 0xc0 {
            String::from_utf8_lossy(c.take(usize::from(v & 0x3f))).into_owned()
        } else {
            let list = plausible(idx);
            let s = list[usize::from(v & 0x1f) % list.len()];
            let s = match s {
                LAST_SID => refs.last_sid.unwrap_or(""),
                FIRST_SID => refs.first_sid.unwrap_or(""),
                s => s,
            };
            match v >> 5 {
                2 => format!(" {s} "),
                3 => format!("\t{s}"),
                4 => s.to_ascii_uppercase(),
                5 => format!("{s}\u{a0}"),
                _ => s.to_owned(),
            }
        };
        headers.push((name, value));
    }
    let mut body = c.0.to_vec();
    if let Some(id) = refs.server_request {
        body = replace_all(&body, REQUEST_ID, id.as_bytes());
    }
    if flags & 4 != 0 {
        headers.push(("Host".into(), "localhost:8080".into()));
        headers.push((
            "Accept".into(),
            "application/json, text/event-stream".into(),
        ));
        headers.push(("Content-Type".into(), "application/json".into()));
    }
    if flags & 8 != 0
        && let Some(sid) = refs.last_sid
    {
        headers.push(("Mcp-Session-Id".into(), sid.to_owned()));
    }
    if flags & 16 != 0 {
        headers.extend(modern_headers(&body));
    }
    Req {
        method: method.to_owned(),
        headers,
        body,
        by_name: flags & 32 != 0,
        advance: ADVANCE[usize::from(flags >> 6)],
        close_stream: !other && spec & 0x80 != 0,
        expire: !other && spec & 0x40 != 0,
    }
}

/// What the oracles need to know of one request.
struct Sent<'a> {
    req: &'a Req,
    expect: Expect,
    /// The top-level `id` token of an object body (`None`: the body is no
    /// object, or one serde_json refuses, e.g. for a duplicate member).
    top_id: Option<Option<String>>,
    /// The body is an `initialize` request with a valid id.
    initialize: bool,
    /// `MCP-Protocol-Version` (its first value, trimmed) is `2026-07-28`.
    modern: bool,
}

impl<'a> Sent<'a> {
    fn new(req: &'a Req, body: &[u8]) -> Self {
        let expect = classify(body);
        let env = serde_json::from_slice::<Envelope<'_>>(body).ok();
        let top_id = env.as_ref().map(|e| e.id.map(|r| r.get().to_owned()));
        let initialize = matches!(expect, Expect::Answer(Some(_)))
            && env
                .as_ref()
                .and_then(|e| e.method)
                .and_then(|m| serde_json::from_str::<String>(m.get()).ok())
                .is_some_and(|m| m == "initialize");
        let modern = req
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("mcp-protocol-version"))
            .is_some_and(|(_, v)| v.trim() == "2026-07-28");
        Self {
            req,
            expect,
            top_id,
            initialize,
            modern,
        }
    }
}

// ---------------------------------------------------------------------------
// Checking what came back
// ---------------------------------------------------------------------------

/// One JSON-RPC message of a body, with its raw id.
struct Msg {
    value: Value,
    raw_id: Option<String>,
    text: String,
}

impl Msg {
    fn is_response(&self) -> bool {
        self.value.get("method").is_none()
    }

    fn code(&self) -> Option<i64> {
        self.value
            .get("error")
            .and_then(|e| e.get("code"))
            .and_then(Value::as_i64)
    }
}

#[derive(Deserialize)]
struct RawId<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
}

/// A JSON-RPC message: a response, a notification or a request.
fn message(text: &str, ctx: &str) -> Msg {
    let value: Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text:?}\n{ctx}"));
    let raw_id = serde_json::from_str::<RawId<'_>>(text)
        .unwrap_or_else(|e| panic!("{e}: {text}\n{ctx}"))
        .id
        .map(|r| r.get().to_owned());
    let o = value
        .as_object()
        .unwrap_or_else(|| panic!("a message is an object: {text}\n{ctx}"));
    if let Some(m) = o.get("method") {
        assert_eq!(
            o.get("jsonrpc").and_then(Value::as_str),
            Some("2.0"),
            "{text}\n{ctx}"
        );
        assert!(m.is_string(), "{text}\n{ctx}");
        assert!(
            !o.contains_key("result") && !o.contains_key("error"),
            "{text}\n{ctx}"
        );
        if let Some(id) = o.get("id") {
            assert!(id.is_string() || id.is_number(), "{text}\n{ctx}");
        }
    } else {
        check_response(&value, &format!("{text}\n{ctx}"));
    }
    Msg {
        value,
        raw_id,
        text: text.to_owned(),
    }
}

/// The data of each `event: message` event.
fn sse_events<'b>(body: &'b str, ctx: &str) -> Vec<&'b str> {
    let mut rest = body;
    let mut events = Vec::new();
    while !rest.is_empty() {
        let r = rest
            .strip_prefix(SSE_PREFIX)
            .unwrap_or_else(|| panic!("not an SSE message event: {rest:?}\n{ctx}"));
        let end = r
            .find("\n\n")
            .unwrap_or_else(|| panic!("an unterminated SSE event: {r:?}\n{ctx}"));
        let data = &r[..end];
        assert!(
            !data.contains('\n'),
            "a multi-line data field: {data:?}\n{ctx}"
        );
        events.push(data);
        rest = &r[end + 2..];
    }
    events
}

/// The messages of a body of `content_type`; `batch`: a JSON array.
fn messages(r: &Response, body: &[u8], ctx: &str) -> (Vec<Msg>, bool) {
    let text = std::str::from_utf8(body).unwrap_or_else(|e| panic!("body not UTF-8 ({e})\n{ctx}"));
    match r.content_type {
        None => {
            assert!(body.is_empty(), "a body without a Content-Type\n{ctx}");
            (Vec::new(), false)
        }
        Some(JSON) => {
            assert!(
                !text.ends_with('\n'),
                "a JSON body ends with a newline\n{ctx}"
            );
            if text.trim_start().starts_with('[') {
                let items: Vec<Value> = serde_json::from_str(text)
                    .unwrap_or_else(|e| panic!("a JSON body is not JSON ({e})\n{ctx}"));
                assert!(!items.is_empty(), "an empty batch answer\n{ctx}");
                for item in &items {
                    check_response(item, ctx);
                }
                (Vec::new(), true)
            } else {
                (vec![message(text, ctx)], false)
            }
        }
        Some(EVENT_STREAM) => (
            sse_events(text, ctx)
                .into_iter()
                .map(|d| message(d, ctx))
                .collect(),
            false,
        ),
        Some(other) => panic!("Content-Type {other:?}\n{ctx}"),
    }
}

/// Whether a response with an id that could not be echoed may say `null`.
fn too_long_to_echo(id: &str, out_cap: usize) -> bool {
    id.len() + 256 > out_cap
}

// ---------------------------------------------------------------------------
// One sequence
// ---------------------------------------------------------------------------

struct Run {
    mode: Mode,
    http: Http<'static, shop::Shop>,
    out_cap: usize,
    subject: bool,
    sessions: Sessions<SESSION_SLOTS>,
    waiting: Box<Wait>,
    streams: Box<Strm>,
    /// The last byte the `Random` source drew (ids are 0…0N).
    random: u8,
    now: u64,
    first_sid: Option<String>,
    last_sid: Option<String>,
    /// Issued in this sequence and not deleted.
    live: Vec<String>,
    /// The raw id of the last request the server sent the client.
    server_request: Option<String>,
    /// Calls held open and not ended.
    held: Vec<u64>,
    /// Notification streams open.
    open: Vec<SessionId>,
    out: Vec<u8>,
    other_out: Vec<u8>,
}

/// Where a request goes: the endpoint, its state, the clock.
struct Target<'s> {
    http: &'s Http<'static, shop::Shop>,
    mode: Mode,
    subject: bool,
    now: u64,
    sessions: &'s mut Sessions<SESSION_SLOTS>,
    waiting: &'s mut Wait,
    streams: &'s mut Strm,
    random: &'s mut u8,
}

/// Serve `req` with the listed or the by-name headers adapter into `out`,
/// with allocation counting armed.
fn call(t: Target<'_>, req: &Req, by_name: bool, body: &mut [u8], out: &mut [u8]) -> Response {
    let pairs: Vec<(&str, &str)> = req
        .headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let named = ByName(&pairs);
    let listed: &[(&str, &str)] = &pairs;
    no_alloc("Http::handle*", || {
        if by_name {
            let mut r = Request::new(&req.method, &named, body, t.now);
            if t.subject {
                r = r.subject(b"alice");
            }
            serve(t, r, out)
        } else {
            let mut r = Request::new(&req.method, listed, body, t.now);
            if t.subject {
                r = r.subject(b"alice");
            }
            serve(t, r, out)
        }
    })
}

fn serve<H: Headers + ?Sized>(t: Target<'_>, req: Request<'_, H>, out: &mut [u8]) -> Response {
    let random = t.random;
    let mut draw = |id: &mut [u8; 16]| {
        *random = random.wrapping_add(1);
        *id = [0; 16];
        id[15] = *random;
    };
    match t.mode {
        Mode::Plain => t.http.handle(t.sessions, &mut draw, req, out),
        Mode::Waiting => t
            .http
            .handle_waiting(t.sessions, &mut draw, t.waiting, req, out),
        Mode::Streams => t
            .http
            .handle_streams(t.sessions, &mut draw, t.waiting, t.streams, req, out),
    }
}

impl Run {
    fn new(config: u8) -> Self {
        let mode = match config & 3 {
            2 => Mode::Waiting,
            3 => Mode::Streams,
            _ => Mode::Plain,
        };
        let base = Http::new(&SERVER);
        let http = match (config >> 5) & 3 {
            1 => base.any_host(),
            2 => base.allowed_hosts(HOSTS).allowed_origins(ORIGINS),
            3 => base.allowed_origins(ORIGINS),
            _ => base,
        };
        let out_cap = OUT_CAPS[usize::from((config >> 2) & 3)];
        let idle = if config & 0x10 != 0 { IDLE } else { u64::MAX };
        Run {
            mode,
            http,
            out_cap,
            subject: config & 0x80 != 0,
            sessions: Sessions::new().idle_timeout(idle),
            waiting: Box::new(Waiting::new()),
            streams: Box::new(Streams::new()),
            random: 0,
            now: 0,
            first_sid: None,
            last_sid: None,
            live: Vec::new(),
            server_request: None,
            held: Vec::new(),
            open: Vec::new(),
            out: vec![0; out_cap],
            other_out: vec![0; out_cap],
        }
    }

    fn refs(&self) -> Refs<'_> {
        Refs {
            first_sid: self.first_sid.as_deref(),
            last_sid: self.last_sid.as_deref(),
            server_request: self.server_request.as_deref(),
        }
    }

    fn step(&mut self, chunk: &[u8]) {
        let req = decode(chunk, &self.refs());
        self.now += req.advance;
        if req.close_stream
            && let Some(id) = self.open.first().copied()
        {
            self.streams.close(&id);
            self.open.remove(0);
        }
        if req.expire && self.mode != Mode::Plain {
            self.expire();
        }
        let original = req.body.clone();
        let sent = Sent::new(&req, &original);
        let shop = SERVER.state();
        let stock = [shop.copies(0), shop.copies(1)];

        // The other headers adapter first, on a copy of the state (plain
        // `handle` only: its state is the session table).
        let mut twin = None;
        if self.mode == Mode::Plain {
            let mut sessions = self.sessions.clone();
            let mut random = self.random;
            let mut body = req.body.clone();
            let (mut waiting, mut streams) = (Box::new(Wait::new()), Box::new(Strm::new()));
            let t = Target {
                http: &self.http,
                mode: self.mode,
                subject: self.subject,
                now: self.now,
                sessions: &mut sessions,
                waiting: &mut waiting,
                streams: &mut streams,
                random: &mut random,
            };
            let r = call(t, &req, !req.by_name, &mut body, &mut self.other_out);
            twin = Some((r, self.other_out[..r.body_len.min(self.out_cap)].to_vec()));
        }
        let same_stock = stock == [shop.copies(0), shop.copies(1)];

        let mut body = req.body.clone();
        let before = self.random;
        let t = Target {
            http: &self.http,
            mode: self.mode,
            subject: self.subject,
            now: self.now,
            sessions: &mut self.sessions,
            waiting: &mut self.waiting,
            streams: &mut self.streams,
            random: &mut self.random,
        };
        let r = call(t, &req, req.by_name, &mut body, &mut self.out);
        assert!(
            r.body_len <= self.out.len(),
            "body_len past the buffer: {r:?}"
        );
        let answer = self.out[..r.body_len].to_vec();

        let ctx = format!(
            "request: {} {:?} body {:?}\nresponse: {r:?}\nbody: {:?}\nmode {:?}, out {}, now {}",
            req.method,
            req.headers,
            String::from_utf8_lossy(&original),
            String::from_utf8_lossy(&answer),
            self.mode,
            self.out_cap,
            self.now,
        );
        if let Some((tr, tbody)) = twin
            && same_stock
        {
            assert_eq!(
                (tr, &tbody[..]),
                (r, &answer[..]),
                "listed and by-name headers disagree (by_name={})\n{ctx}",
                req.by_name
            );
        }
        self.check(&sent, &r, &answer, before, &body, &ctx);
        if self.mode == Mode::Streams {
            self.poll();
        }
    }

    fn check(
        &mut self,
        sent: &Sent<'_>,
        r: &Response,
        answer: &[u8],
        random_before: u8,
        mutated: &[u8],
        ctx: &str,
    ) {
        let method = sent.req.method.as_str();
        assert!(STATUSES.contains(&r.status), "status {}\n{ctx}", r.status);
        assert_eq!(r.allow.is_some(), r.status == 405, "Allow\n{ctx}");
        assert_eq!(
            r.retry_after.is_some(),
            r.status == 503,
            "Retry-After\n{ctx}"
        );
        if let Some(allow) = r.allow {
            assert_eq!(r.body_len, 0, "a 405 with a body\n{ctx}");
            let want = if sent.modern {
                "POST"
            } else if self.mode == Mode::Streams {
                "GET, POST, DELETE"
            } else {
                "POST, DELETE"
            };
            assert_eq!(allow, want, "Allow\n{ctx}");
        }
        if r.body_len > 0 {
            assert!(
                r.content_type.is_some(),
                "a body without Content-Type\n{ctx}"
            );
        }
        // Only POST is served under 2026-07-28, and other methods are
        // refused before anything else but the Host/Origin checks.
        let served_method = match method {
            "POST" => true,
            "DELETE" => !sent.modern,
            "GET" => !sent.modern && self.mode == Mode::Streams,
            _ => false,
        };
        if !served_method {
            assert!(
                matches!(r.status, 400 | 403 | 405),
                "{method} not refused\n{ctx}"
            );
        }
        if r.status == 409 {
            assert!(method == "GET" && self.mode == Mode::Streams, "409\n{ctx}");
        }

        // Sessions.
        if let Some(sid) = &r.session_id {
            assert!(
                r.status == 200 && method == "POST" && !sent.modern && sent.initialize,
                "a session id outside a handshake initialize\n{ctx}"
            );
            assert_ne!(self.random, random_before, "a session id not drawn\n{ctx}");
            let want = format!("{:032x}", self.random);
            assert_eq!(
                sid.as_str(),
                want,
                "the session id is not the one drawn\n{ctx}"
            );
            self.first_sid.get_or_insert_with(|| want.clone());
            self.last_sid = Some(want.clone());
            self.live.push(want);
        }
        if method == "DELETE" && r.status == 200 {
            assert_eq!(r.body_len, 0, "{ctx}");
            let named = sent
                .req
                .headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id"))
                .map(|(_, v)| v.trim().to_ascii_lowercase())
                .unwrap_or_else(|| panic!("DELETE 200 without a session id\n{ctx}"));
            let at = self
                .live
                .iter()
                .position(|s| *s == named)
                .unwrap_or_else(|| panic!("DELETE 200 for no live session\n{ctx}"));
            self.live.remove(at);
        }

        // Held calls and deliveries.
        if let Some(call) = r.hold {
            assert_eq!(r.status, 200, "{ctx}");
            assert_ne!(self.mode, Mode::Plain, "{ctx}");
            self.held.push(call.0);
        }
        if let Some(d) = r.deliver {
            assert_eq!(r.status, 202, "a delivery's own status\n{ctx}");
            let at = self
                .held
                .iter()
                .position(|&c| c == d.call.0)
                .unwrap_or_else(|| panic!("a delivery to a call not held\n{ctx}"));
            if d.last {
                self.held.remove(at);
            }
        }
        if let Some((start, end)) = r.cancels {
            assert_eq!(r.status, 202, "{ctx}");
            assert!(
                start < end && end <= mutated.len(),
                "cancels {start}..{end}\n{ctx}"
            );
        }
        if r.status == 202 && r.deliver.is_none() {
            assert_eq!(r.body_len, 0, "a 202 with a body\n{ctx}");
            assert_eq!(r.content_type, None, "{ctx}");
        }

        let (msgs, batch) = messages(r, answer, ctx);
        let elsewhere = r.hold.is_some() || r.deliver.is_some() || r.stream.is_some();
        for m in &msgs {
            if m.value.get("method").is_some()
                && let Some(id) = &m.raw_id
            {
                assert!(
                    elsewhere,
                    "a request to the client outside a held stream\n{ctx}"
                );
                self.server_request = Some(id.clone());
            }
        }
        if let Some(stream) = r.stream {
            assert_eq!(r.status, 200, "{ctx}");
            assert_eq!(self.mode, Mode::Streams, "{ctx}");
            if !self.open.contains(&stream) {
                self.open.push(stream);
            }
        }
        if method == "GET" && r.status == 200 {
            assert!(r.stream.is_some(), "a GET 200 that is no stream\n{ctx}");
            assert_eq!(r.content_type, Some(EVENT_STREAM), "{ctx}");
            for m in &msgs {
                assert!(
                    m.value.get("method").is_some() && m.raw_id.is_none(),
                    "a GET stream's event is not a notification: {}\n{ctx}",
                    m.text
                );
            }
            return;
        }
        if method != "POST" || r.deliver.is_some() {
            return;
        }

        // The final message: the request's answer (or, on a held stream,
        // the server's request).
        let last = msgs.last();
        if !elsewhere && !batch {
            for (i, m) in msgs.iter().enumerate() {
                if m.is_response() {
                    assert_eq!(
                        i + 1,
                        msgs.len(),
                        "the response is not the last event\n{ctx}"
                    );
                }
            }
            if let Some(m) = last {
                assert!(m.is_response(), "a POST answered with no response\n{ctx}");
            }
        }

        // Status table of the JSON-RPC answer.
        match r.status {
            403 | 406 | 409 | 415 | 503 => {
                assert_eq!(r.content_type, Some(JSON), "a refusal's body\n{ctx}");
                let m = last.unwrap();
                assert_eq!(m.raw_id.as_deref(), Some("null"), "{ctx}");
                assert!(m.code().is_some(), "{ctx}");
            }
            404 => {
                if let Some(m) = last {
                    let code = m.code();
                    assert!(
                        code == Some(-32601)
                            || (code == Some(-32600) && m.raw_id.as_deref() == Some("null")),
                        "404 with {}\n{ctx}",
                        m.text
                    );
                }
            }
            400 => {
                if let Some(m) = last {
                    let code = m.code();
                    assert!(
                        code.is_some_and(|c| status_for_error(c) == 400),
                        "400 with {}\n{ctx}",
                        m.text
                    );
                }
            }
            _ => {}
        }
        if sent.modern
            && !elsewhere
            && matches!(r.status, 200 | 400 | 404)
            && let Some(m) = last
            && m.is_response()
        {
            let want = m.code().map_or(200, status_for_error);
            assert_eq!(r.status, want, "2026-07-28 status of {}\n{ctx}", m.text);
        }

        // Ids: never invented; the request's own on a 200.
        if !batch
            && !elsewhere
            && let Some(top_id) = &sent.top_id
        {
            for m in msgs.iter().filter(|m| m.is_response()) {
                let id = m.raw_id.as_deref().unwrap_or("null");
                if id != "null" {
                    assert_eq!(
                        Some(id),
                        top_id.as_deref(),
                        "an answer carries an id the body did not\n{ctx}"
                    );
                }
            }
        }
        match &sent.expect {
            Expect::Nothing => {
                assert_ne!(r.status, 200, "a body without requests answered 200\n{ctx}");
            }
            Expect::Answer(id) if r.status == 200 && !elsewhere => {
                assert!(!batch, "one request answered with a batch\n{ctx}");
                let responses: Vec<&Msg> = msgs.iter().filter(|m| m.is_response()).collect();
                assert_eq!(responses.len(), 1, "not exactly one response\n{ctx}");
                let got = responses[0].raw_id.as_deref().unwrap_or("null");
                match id {
                    Some(id) if got == "null" => {
                        assert!(
                            too_long_to_echo(id, self.out_cap)
                                && matches!(responses[0].code(), Some(-32600 | -32603)),
                            "id {id} answered with null\n{ctx}"
                        );
                    }
                    Some(id) => assert_eq!(got, id, "the id is not echoed\n{ctx}"),
                    None => assert_eq!(got, "null", "{ctx}"),
                }
                if sent.initialize && responses[0].value.get("result").is_some() {
                    assert!(
                        r.session_id.is_some(),
                        "a successful initialize without a session\n{ctx}"
                    );
                }
            }
            _ => {}
        }
    }

    /// `expire_waiting` until it has nothing more.
    fn expire(&mut self) {
        loop {
            let mut out = std::mem::take(&mut self.out);
            let (http, now) = (&self.http, self.now);
            let waiting = &mut *self.waiting;
            let r = no_alloc("Http::expire_waiting", || {
                http.expire_waiting(waiting, now, WAIT_LIMIT, &mut out)
            });
            let Some(r) = r else {
                self.out = out;
                return;
            };
            let body = out[..r.body_len].to_vec();
            self.out = out;
            let ctx = format!(
                "expire_waiting at {now}: {r:?} {:?}",
                String::from_utf8_lossy(&body)
            );
            let d = r.deliver.unwrap_or_else(|| panic!("no delivery\n{ctx}"));
            assert!(d.last, "{ctx}");
            let at = self
                .held
                .iter()
                .position(|&c| c == d.call.0)
                .unwrap_or_else(|| panic!("an expired call not held\n{ctx}"));
            self.held.remove(at);
            let (msgs, _) = messages(&r, &body, &ctx);
            let m = msgs.last().unwrap_or_else(|| panic!("no answer\n{ctx}"));
            assert_eq!(m.code(), Some(-32603), "{ctx}");
        }
    }

    /// Poll every open stream once.
    fn poll(&mut self) {
        let mut i = 0;
        while i < self.open.len() {
            let id = self.open[i];
            let mut out = std::mem::take(&mut self.out);
            let http = &self.http;
            let streams = &mut *self.streams;
            let polled = no_alloc("Http::poll_stream", || {
                http.poll_stream(streams, &id, &mut out)
            });
            let body = match polled {
                Some((len, _)) => {
                    assert!(len <= out.len(), "poll_stream past the buffer");
                    out[..len].to_vec()
                }
                None => Vec::new(),
            };
            self.out = out;
            let ctx = format!(
                "poll_stream: {polled:?} {:?}",
                String::from_utf8_lossy(&body)
            );
            let text = std::str::from_utf8(&body).unwrap_or_else(|e| panic!("{e}\n{ctx}"));
            for data in sse_events(text, &ctx) {
                message(data, &ctx);
            }
            match polled {
                None | Some((_, true)) => {
                    self.open.remove(i);
                }
                Some(_) => i += 1,
            }
        }
    }
}

/// Stack of the serving thread (`worker`): the mapping and the core never
/// recurse on input depth. In the sanitizer build the corpus of
/// 2026-12-06 (11,712 inputs) passed with 32 KiB, and 24 KiB overflowed in
/// `modern_headers`' recursive parse of a body 32 deep; this leaves 4x
/// headroom.
const STACK: usize = 128 << 10;

/// One sequence of requests, on the serving thread.
fn run_sequence(data: &[u8]) {
    // The shop's stock is global: every sequence starts fully stocked.
    while SERVER.state().restock() {}
    let mut run = Run::new(data[0]);
    let rest = &data[1..];
    let mut chunks = Vec::new();
    let mut start = 0;
    while chunks.len() < MAX_REQUESTS {
        match rest[start..].windows(SEP.len()).position(|w| w == SEP) {
            Some(p) => {
                chunks.push(&rest[start..start + p]);
                start += p + SEP.len();
            }
            None => {
                chunks.push(&rest[start..]);
                break;
            }
        }
    }
    for chunk in chunks {
        run.step(chunk);
    }
}

fn worker() -> &'static Mutex<Worker> {
    static WORKER: OnceLock<Mutex<Worker>> = OnceLock::new();
    WORKER.get_or_init(|| Mutex::new(Worker::spawn("http", STACK, run_sequence)))
}

fuzz_target!(|data: &[u8]| {
    if data.len() > MAX_INPUT || data.is_empty() {
        return;
    }
    worker().lock().expect("worker lock").run(data);
});
