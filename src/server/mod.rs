//! The sans-IO server: bytes of one frame in, bytes of the answer out.
//!
//! # Drive loop
//!
//! A [`Server`] is immutable configuration plus your application state; it can
//! be shared (`&Server`) by any number of connections. Each connection keeps a
//! [`Connection`] (a few bytes of lifecycle state). For every complete frame:
//!
//! 1. call [`Server::handle`] (or [`Server::handle_with`], see below) with the
//!    frame (a mutable slice: strings are unescaped in place) and an output
//!    buffer;
//! 2. send `out[..n]` if `n > 0` — complete JSON-RPC messages, each ending in
//!    `\n`, never a partial one;
//! 3. for a line the framer reported as too long, call
//!    [`Server::handle_overflow`] instead.
//!
//! [`crate::transport::serve`] is this loop over an `embedded-io` stream.
//!
//! # Notifications
//!
//! Progress and log notifications a handler sends are part of the answer:
//! [`Server::handle`] puts them in `out` ahead of the response;
//! [`Server::handle_with`] streams each one through a [`Notify`] sink the
//! moment it is written (the serve loop passes the transport), so a client
//! sees progress while a long handler runs.
//!
//! # Output buffer
//!
//! Everything is written straight into `out`. A list that does not fit ends
//! its page early (`nextCursor`); a tool result that does not fit becomes a
//! tool error saying so (the model can ask for less); any other answer that
//! does not fit is `-32603` naming the buffer size. Error answers need about
//! 160 bytes plus the id.
//!
//! # Per-version shaping
//!
//! Every descriptor and result is written through the one table in
//! [`ProtocolVersion::fields`]: a client never receives a field its version
//! does not define. Audio and resource links become text blocks for versions
//! without them; `structuredContent` is left out before 2025-06-18 (a text
//! block carries the same JSON).

mod list;
mod session;

pub use session::{ClientCapabilities, Connection, Ready, Session, Uninitialized};

use core::fmt;
use core::ops::Range;

use crate::completion::{CompleteFn, CompleteRequest, CompletionRef, Completions};
use crate::content::{Ctx, MAX_PROGRESS_TOKEN, Notify, Track};
use crate::error::{
    ErrorCode, ErrorData, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
    PARSE_ERROR, ProtocolError, UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::mcp::{Fields, LogLevel, Method, ProtocolVersion, ServerInfo};
use crate::prompt::{MAX_PROMPT_ARGUMENTS, Messages, Prompt, PromptRequest};
use crate::resource::{Contents, ReadRequest, Resource, ResourceFailure, ResourceTemplate, Vars};
use crate::tool::{Arguments, Reply, ReplyState, Tool, ToolFailure};
use crate::wire::emit::{Decimal, Writer};
use crate::wire::envelope::{self, Envelope};
use crate::wire::json::{self, JsonStr, Kind, Limits, Value};
use list::List;

/// An MCP server: identity, registries and application state `S`.
///
/// Built with `const fn`s, so it can be a `static`:
///
/// ```
/// use picomcp::{Server, ServerInfo};
/// static SERVER: Server<'static, ()> = Server::new(ServerInfo::new("Bookshop", "0.1.0"), ())
///     .instructions("Ask about books.");
///
/// let mut conn = picomcp::Connection::new();
/// let mut line = *br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
/// let mut out = [0u8; 256];
/// let n = SERVER.handle(&mut conn, &mut line, &mut out);
/// assert_eq!(&out[..n], b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
/// ```
pub struct Server<'s, S> {
    info: ServerInfo<'s>,
    instructions: Option<&'s str>,
    tools: &'s [Tool<S>],
    resources: &'s [Resource<S>],
    templates: &'s [ResourceTemplate<S>],
    prompts: &'s [Prompt<S>],
    completion: Option<CompleteFn<S>>,
    logging: bool,
    page_size: Option<usize>,
    cursor_key: [u64; 2],
    cache: Cache,
    state_key: Option<&'s [u8]>,
    limits: Limits,
    state: S,
}

impl<S> fmt::Debug for Server<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.info)
            .field("tools", &self.tools.len())
            .field("resources", &self.resources.len())
            .field("templates", &self.templates.len())
            .field("prompts", &self.prompts.len())
            .field("page_size", &self.page_size)
            .finish_non_exhaustive()
    }
}

/// `data` of an error answer.
enum Data<'x> {
    None,
    Str(&'x str),
    Json(JsonStr<'x>),
    Uri(&'x str),
    User(Option<ErrorData<'x>>),
    Fmt(fmt::Arguments<'x>),
    /// `{"supported":["2026-07-28"],"requested":...}`
    Versions(Option<JsonStr<'x>>),
}

/// What handling one message wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wrote {
    /// A result.
    Answer,
    /// An error response.
    Error,
    /// Nothing, by design (notification, client response).
    Nothing,
    /// An answer was due but did not fit.
    Failed,
}

/// A response under construction: `{"jsonrpc":"2.0","id":ID` is written.
struct Out<'w, 'o> {
    w: &'w mut Writer<'o>,
    start: usize,
    id_end: usize,
    /// 2026-07-28: results carry `resultType` and the server identity.
    stamp: Option<ServerInfo<'w>>,
}

/// How long a result may be cached, and by whom (2026-07-28 `ttlMs` and
/// `cacheScope`, on `server/discover`, the list methods and `resources/read`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Cache {
    /// Freshness in milliseconds (0: stale at once).
    pub ttl_ms: u64,
    /// Who may cache it.
    pub scope: CacheScope,
}

impl Cache {
    /// `ttlMs: 0`, `cacheScope: "private"` (the default).
    pub const NONE: Cache = Cache {
        ttl_ms: 0,
        scope: CacheScope::Private,
    };

    /// A caching hint.
    pub const fn new(ttl_ms: u64, scope: CacheScope) -> Self {
        Self { ttl_ms, scope }
    }
}

/// `cacheScope`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum CacheScope {
    /// Any client or intermediary may reuse it.
    Public,
    /// Only the requesting client may reuse it.
    Private,
}

/// The `_meta` key carrying the server identity on 2026-07-28 results.
const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// Envelope keys of a 2026-07-28 request's `params._meta`.
const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";

/// Write the 2026-07-28 result fields (`first`: nothing precedes them in the
/// result object).
fn write_stamp(
    w: &mut Writer<'_>,
    info: &ServerInfo<'_>,
    first: bool,
    result_type: bool,
    cache: Option<Cache>,
) {
    let mut sep = !first;
    let mut comma = |w: &mut Writer<'_>| {
        if sep {
            w.raw(b",");
        }
        sep = true;
    };
    if result_type {
        comma(w);
        w.raw(b"\"resultType\":\"complete\"");
    }
    if let Some(c) = cache {
        comma(w);
        w.raw(b"\"ttlMs\":");
        w.u64(c.ttl_ms);
        w.raw(match c.scope {
            CacheScope::Public => b",\"cacheScope\":\"public\"",
            CacheScope::Private => b",\"cacheScope\":\"private\"",
        });
    }
    comma(w);
    w.raw(b"\"_meta\":{");
    w.string(SERVER_INFO_KEY);
    w.raw(b":");
    info.write(w, ProtocolVersion::V2026_07_28.fields());
    w.raw(b"}");
}

const PREFIX: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":";

impl<'w, 'o> Out<'w, 'o> {
    fn begin(w: &'w mut Writer<'o>, id: Option<&[u8]>) -> Self {
        let start = w.len();
        w.raw(PREFIX);
        w.raw(id.unwrap_or(b"null"));
        if w.is_overflowed() {
            // The id alone does not fit: answer with `null` instead.
            w.truncate(start);
            w.raw(PREFIX);
            w.raw(b"null");
        }
        let id_end = w.len();
        Self {
            w,
            start,
            id_end,
            stamp: None,
        }
    }

    fn done(self) -> Wrote {
        self.done_as(Wrote::Answer)
    }

    fn done_as(self, kind: Wrote) -> Wrote {
        if self.w.is_overflowed() {
            self.w.truncate(self.start);
            Wrote::Failed
        } else {
            kind
        }
    }

    fn error(self, code: ErrorCode, message: fmt::Arguments<'_>, data: Data<'_>) -> Wrote {
        self.w.truncate(self.id_end);
        self.w.raw(b",\"error\":{\"code\":");
        self.w.i64(i64::from(code.get()));
        self.w.raw(b",\"message\":");
        self.w.string_fmt(message);
        match data {
            Data::None | Data::User(None) => {}
            Data::Str(s) | Data::User(Some(ErrorData::String(s))) => {
                self.w.raw(b",\"data\":");
                self.w.string(s);
            }
            Data::Json(s) => {
                self.w.raw(b",\"data\":");
                self.w.json_str(s);
            }
            Data::Uri(uri) => {
                self.w.raw(b",\"data\":{\"uri\":");
                self.w.string(uri);
                self.w.raw(b"}");
            }
            Data::User(Some(ErrorData::Json(raw))) => {
                if json::validate(raw.as_bytes(), &Limits::DEFAULT).is_err() {
                    return self.error(
                        INTERNAL_ERROR,
                        format_args!(
                            "Internal error: a handler returned error data that is not valid JSON"
                        ),
                        Data::None,
                    );
                }
                self.w.raw(b",\"data\":");
                self.w.raw_str(raw);
            }
            Data::Fmt(args) => {
                self.w.raw(b",\"data\":");
                self.w.string_fmt(args);
            }
            Data::Versions(requested) => {
                self.w
                    .raw(b",\"data\":{\"supported\":[\"2026-07-28\"],\"requested\":");
                match requested {
                    Some(r) => self.w.json_str(r),
                    None => self.w.null(),
                }
                self.w.raw(b"}");
            }
        }
        self.w.raw(b"}}");
        if self.w.is_overflowed() {
            let cap = self.w.capacity();
            self.w.truncate(self.id_end);
            // The answer matters more than notifications stashed ahead of it.
            self.w.drop_stash();
            self.w
                .raw(b",\"error\":{\"code\":-32603,\"message\":\"response exceeds the ");
            self.w.u64(cap as u64);
            self.w.raw(b"-byte output buffer\"}}");
        }
        self.done_as(Wrote::Error)
    }

    fn protocol(self, e: &ProtocolError<'_>) -> Wrote {
        self.error(
            e.code(),
            format_args!("{}", e.message()),
            Data::User(e.error_data()),
        )
    }

    fn invalid_params(self) -> Wrote {
        self.error(
            INVALID_PARAMS,
            format_args!("Invalid request parameters"),
            Data::Str(""),
        )
    }

    fn too_large(self) -> Wrote {
        let cap = self.w.capacity();
        self.error(
            INTERNAL_ERROR,
            format_args!(
                "response exceeds the {}-byte output buffer",
                Decimal::from(cap)
            ),
            Data::None,
        )
    }

    /// `,"result":` + the body (one JSON object) + `}`; too large → `-32603`.
    fn result(self, body: impl FnOnce(&mut Writer<'o>)) -> Wrote {
        self.result_cached(body, None)
    }

    /// Like [`result`](Self::result), for a cacheable result.
    fn result_cached(self, body: impl FnOnce(&mut Writer<'o>), cache: Option<Cache>) -> Wrote {
        self.w.raw(b",\"result\":");
        body(self.w);
        if let Some(info) = self.stamp {
            // Reopen the body's object to add the 2026-07-28 fields.
            let end = self.w.len();
            let empty = self.w.as_bytes().get(end.saturating_sub(2)..end) == Some(b"{}");
            self.w.truncate(end.saturating_sub(1));
            write_stamp(self.w, &info, empty, true, cache);
            self.w.raw(b"}");
        }
        self.w.raw(b"}");
        if self.w.is_overflowed() {
            return self.too_large();
        }
        self.done()
    }

    /// Open `,"result":{` for a handler and return where its body starts.
    fn open_result(&mut self) -> usize {
        self.w.raw(b",\"result\":{");
        self.w.len()
    }

    /// Close a handler's result (`}` + `}`), stamped for 2026-07-28.
    fn close_result(self, body_start: usize, track: &Track, cache: Option<Cache>) -> Wrote {
        if let Some(info) = self.stamp {
            let first = self.w.len() == body_start;
            let complete = !track.input_required;
            write_stamp(self.w, &info, first, complete, cache.filter(|_| complete));
        }
        self.w.raw(b"}}");
        if self.w.is_overflowed() {
            return self.too_large();
        }
        self.done()
    }
}

/// Where `part` (a sub-slice of `whole`) lies in `whole`.
fn span(whole: &[u8], part: &[u8]) -> Range<usize> {
    let start = (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize);
    start..start + part.len()
}

/// Split `frame` into the disjoint `spans` (in any order) as mutable slices.
fn split_spans<'f, const N: usize>(
    frame: &'f mut [u8],
    spans: [Option<Range<usize>>; N],
) -> [Option<&'f mut [u8]>; N] {
    let mut order: [usize; N] = core::array::from_fn(|i| i);
    order.sort_unstable_by_key(|&i| {
        spans
            .get(i)
            .cloned()
            .flatten()
            .map_or(usize::MAX, |r| r.start)
    });
    let mut out: [Option<&'f mut [u8]>; N] = core::array::from_fn(|_| None);
    let mut rest: &'f mut [u8] = frame;
    let mut offset = 0;
    for i in order {
        let Some(r) = spans.get(i).cloned().flatten() else {
            break;
        };
        let taken = core::mem::take(&mut rest);
        if r.start < offset || r.end < r.start || r.end - offset > taken.len() {
            rest = taken;
            continue;
        }
        let base = offset;
        let (head, tail) = taken.split_at_mut(r.end - base);
        rest = tail;
        offset = r.end;
        if let Some(slot) = out.get_mut(i) {
            *slot = head.get_mut(r.start - base..);
        }
    }
    out
}

/// JSON-decode several disjoint string spans of `frame` in place.
fn decode_spans<const N: usize>(
    frame: &mut [u8],
    spans: [Option<Range<usize>>; N],
) -> [Option<&str>; N] {
    split_spans(frame, spans).map(|region| region.and_then(|r| json::unescape_str_in_place(r).ok()))
}

fn write_tool_error(w: &mut Writer<'_>, tool: &str, message: fmt::Arguments<'_>) {
    open_tool_error(w, tool);
    w.str_fmt_content(message);
    w.raw(TOOL_ERROR_END);
}

/// A tool error's content up to its message: the block and the text's
/// `Error executing tool NAME: ` prefix (written piece by piece, not through
/// `core::fmt`).
fn open_tool_error(w: &mut Writer<'_>, tool: &str) {
    w.raw(b"\"content\":[{\"type\":\"text\",\"text\":\"Error executing tool ");
    w.str_content(tool);
    w.raw(b": ");
}

/// What follows a tool error's message.
const TOOL_ERROR_END: &[u8] = b"\"}],\"isError\":true";

/// The progress token of a request (`params._meta.progressToken`), as written.
fn progress_token(meta: Option<Value<'_>>) -> Option<heapless::Vec<u8, MAX_PROGRESS_TOKEN>> {
    let token = meta?.get("progressToken")?;
    let ok = match token.kind() {
        Kind::String => true,
        Kind::Number => token.as_number().is_some_and(|n| n.is_integer_literal()),
        _ => false,
    };
    if !ok {
        return None;
    }
    heapless::Vec::from_slice(token.raw()).ok()
}

/// `_meta`, `name` and `arguments` of a request's `params` (the first of
/// each, as `Value::get` would find), from one walk over its members.
#[derive(Clone, Copy, Default)]
struct ParamsScan<'a> {
    meta: Option<Value<'a>>,
    name: Option<Value<'a>>,
    arguments: Option<Value<'a>>,
}

impl<'a> ParamsScan<'a> {
    /// From `members`, the members of `params`.
    fn of(members: &mut dyn Iterator<Item = (JsonStr<'a>, Value<'a>)>) -> Self {
        let mut scan = ParamsScan::default();
        for (key, value) in members {
            let slot = if key.eq_str("_meta") {
                &mut scan.meta
            } else if key.eq_str("name") {
                &mut scan.name
            } else if key.eq_str("arguments") {
                &mut scan.arguments
            } else {
                continue;
            };
            if slot.is_none() {
                *slot = Some(value);
            }
        }
        scan
    }
}

/// Where `name` and `arguments` of `params` are in the frame.
#[derive(Clone, Default)]
struct NamedSpans {
    name: Option<Range<usize>>,
    arguments: Option<Range<usize>>,
}

/// The `params` of `tools/call` and `prompts/get`: `name` (a string) and
/// `arguments` (an object, or absent/null); `None` when malformed.
#[allow(clippy::type_complexity)]
fn named_call<'f>(
    frame: &'f [u8],
    params: Option<Range<usize>>,
    named: &NamedSpans,
) -> Option<(Value<'f>, JsonStr<'f>, Option<Value<'f>>)> {
    let params = Value::trusted(frame.get(params?)?);
    let name = Value::trusted(frame.get(named.name.clone()?)?).as_str()?;
    let arguments = match named.arguments.clone() {
        Some(r) => Some(Value::trusted(frame.get(r)?)),
        None => None,
    };
    let args = match arguments {
        None => None,
        Some(a) if a.is_null() => None,
        Some(a) if a.kind() == Kind::Object => Some(a),
        Some(_) => return None,
    };
    Some((params, name, args))
}

/// Request-wide facts a handler context needs.
struct RequestInfo<'n> {
    version: ProtocolVersion,
    /// 2026-07-28: stateless, stamped results, MRTR.
    modern: bool,
    log_level: Option<LogLevel>,
    client: ClientCapabilities,
    progress: Option<heapless::Vec<u8, MAX_PROGRESS_TOKEN>>,
    notify: Option<&'n mut dyn Notify>,
    /// `params.name` and `params.arguments`, found by the one walk.
    named: NamedSpans,
}

/// The MRTR pieces of a request found in phase 1.
struct MrtrSpans<'k> {
    binding: Option<crate::mrtr::Binding<'k>>,
    state: Option<Range<usize>>,
    responses: Option<Range<usize>>,
}

/// Client capabilities declared in an object (`initialize` or the envelope).
fn client_capabilities(caps: Value<'_>) -> ClientCapabilities {
    ClientCapabilities {
        roots: caps.get("roots").is_some(),
        sampling: caps.get("sampling").is_some(),
        elicitation: caps.get("elicitation").is_some(),
    }
}

impl<'s, S> Server<'s, S> {
    /// A server with no tools, resources or prompts yet.
    pub const fn new(info: ServerInfo<'s>, state: S) -> Self {
        Self {
            info,
            instructions: None,
            tools: &[],
            resources: &[],
            templates: &[],
            prompts: &[],
            completion: None,
            logging: false,
            page_size: None,
            cursor_key: [0x7069_636f_6d63_7031, 0x6375_7273_6f72_6b31],
            cache: Cache::NONE,
            state_key: None,
            limits: Limits::DEFAULT,
            state,
        }
    }

    /// Set `instructions` (sent in the `initialize` result).
    pub const fn instructions(mut self, text: &'s str) -> Self {
        self.instructions = Some(text);
        self
    }

    /// Register the tools, in listing order.
    pub const fn tools(mut self, tools: &'s [Tool<S>]) -> Self {
        self.tools = tools;
        self
    }

    /// Register the fixed resources, in listing order.
    pub const fn resources(mut self, resources: &'s [Resource<S>]) -> Self {
        self.resources = resources;
        self
    }

    /// Register the URI templates, in matching and listing order.
    pub const fn templates(mut self, templates: &'s [ResourceTemplate<S>]) -> Self {
        self.templates = templates;
        self
    }

    /// Register the prompts, in listing order.
    pub const fn prompts(mut self, prompts: &'s [Prompt<S>]) -> Self {
        self.prompts = prompts;
        self
    }

    /// Set the completion handler (advertises `completions`).
    pub const fn completion(mut self, handler: CompleteFn<S>) -> Self {
        self.completion = Some(handler);
        self
    }

    /// Offer logging: advertise `logging`, serve `logging/setLevel`, and
    /// deliver handlers' log notifications at or above the session's level
    /// (`info` until the client sets one). Without it, log calls send nothing.
    pub const fn logging(mut self) -> Self {
        self.logging = true;
        self
    }

    /// End list pages after `n` items (default: only the output buffer ends a
    /// page). `0` means no limit.
    pub const fn page_size(mut self, n: usize) -> Self {
        self.page_size = if n == 0 { None } else { Some(n) };
        self
    }

    /// Key for the pagination cursors' integrity tag (set a secret one if
    /// clients must not be able to forge cursors for your lists).
    pub const fn cursor_key(mut self, key: [u64; 2]) -> Self {
        self.cursor_key = key;
        self
    }

    /// The caching hint of `server/discover`, the lists and `resources/read`
    /// results (2026-07-28); default `ttlMs: 0`, `cacheScope: "private"`.
    /// A resource or template can override it for its reads.
    pub const fn cache(mut self, cache: Cache) -> Self {
        self.cache = cache;
        self
    }

    /// The HMAC-SHA256 key that seals MRTR `requestState` (2026-07-28). Keep
    /// it secret; without it, handlers cannot attach state to an
    /// `input_required` answer and any `requestState` is refused.
    pub const fn request_state_key(mut self, key: &'s [u8]) -> Self {
        self.state_key = Some(key);
        self
    }

    /// Set the JSON scanner limits (default: depth 32, no other limit than
    /// the frame size).
    pub const fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The application state.
    pub fn state(&self) -> &S {
        &self.state
    }

    /// The server identity.
    pub fn info(&self) -> &ServerInfo<'s> {
        &self.info
    }

    /// Answer a frame the framer reported as too long (`limit` bytes):
    /// `-32600` with `"id": null`, message `message too large: limit N bytes`.
    pub fn handle_overflow(&self, limit: usize, out: &mut [u8]) -> usize {
        crate::log::debug!("picomcp: message over the {}-byte limit", limit);
        let mut w = answer_writer(out);
        Out::begin(&mut w, None).error(
            INVALID_REQUEST,
            format_args!("message too large: limit {} bytes", Decimal::from(limit)),
            Data::None,
        );
        finish(w)
    }

    /// Handle one frame (one line, without its terminator) and write the
    /// answer, if any, into `out`, preceded by any notifications the handler
    /// sent. Returns the number of bytes written (0 for notifications,
    /// responses and empty lines). Never panics; `frame` is modified (strings
    /// are unescaped in place).
    pub fn handle(&self, conn: &mut Connection, frame: &mut [u8], out: &mut [u8]) -> usize {
        self.handle_inner(conn, frame, out, None)
    }

    /// Like [`handle`](Self::handle), but each notification a handler sends
    /// is passed to `notify` as soon as it is written; `out` then holds only
    /// the answer.
    pub fn handle_with(
        &self,
        conn: &mut Connection,
        frame: &mut [u8],
        out: &mut [u8],
        notify: &mut dyn Notify,
    ) -> usize {
        self.handle_inner(conn, frame, out, Some(notify))
    }

    fn handle_inner(
        &self,
        conn: &mut Connection,
        frame: &mut [u8],
        out: &mut [u8],
        notify: Option<&mut dyn Notify>,
    ) -> usize {
        if frame
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        {
            return 0;
        }
        let mut w = answer_writer(out);
        let mut outline = json::Outline::new();
        if let Err(e) = json::validate_outlined(frame, &self.limits, &mut outline) {
            Out::begin(&mut w, None).error(
                PARSE_ERROR,
                format_args!("Parse error"),
                Data::Fmt(format_args!("{e}")),
            );
            return finish(w);
        }
        if Value::trusted(frame).kind() == Kind::Array {
            self.batch(conn, frame, &mut w, notify);
        } else {
            self.message(conn, frame, Some(&outline), &mut w, notify, false);
        }
        finish(w)
    }

    /// A JSON array: a batch (2025-03-26 sessions only).
    fn batch(
        &self,
        conn: &mut Connection,
        frame: &mut [u8],
        w: &mut Writer<'_>,
        mut notify: Option<&mut dyn Notify>,
    ) {
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
            return;
        }
        if Value::trusted(frame).is_empty() {
            Out::begin(w, None).error(
                INVALID_REQUEST,
                format_args!("Invalid Request"),
                Data::Str("empty batch"),
            );
            return;
        }
        let start = w.len();
        w.raw(b"[");
        let mut answers = 0;
        let mut failed = false;
        // Walk the elements by position: each is handled (and unescaped in
        // place) in turn, so the bytes after it are still intact.
        let mut pos = frame
            .iter()
            .position(|&b| b == b'[')
            .map_or(frame.len(), |i| i + 1);
        loop {
            pos += frame.get(pos..).map_or(0, |r| {
                r.iter().take_while(|b| b.is_ascii_whitespace()).count()
            });
            let Some(len) = frame.get(pos..).and_then(json::value_len) else {
                break;
            };
            let before = w.len();
            if answers > 0 {
                w.raw(b",");
            }
            let element = frame.get_mut(pos..pos + len).unwrap_or(&mut []);
            let sink: Option<&mut dyn Notify> = match notify.as_mut() {
                Some(n) => Some(&mut **n),
                None => None,
            };
            match self.message(conn, element, None, w, sink, true) {
                Wrote::Answer | Wrote::Error => answers += 1,
                Wrote::Nothing => w.truncate(before),
                Wrote::Failed => {
                    failed = true;
                    break;
                }
            }
            pos += len;
            pos += frame.get(pos..).map_or(0, |r| {
                r.iter().take_while(|b| b.is_ascii_whitespace()).count()
            });
            if frame.get(pos) == Some(&b',') {
                pos += 1;
            } else {
                break;
            }
        }
        w.raw(b"]");
        if failed || w.is_overflowed() {
            w.truncate(start);
            let cap = w.capacity();
            Out::begin(w, None).error(
                INTERNAL_ERROR,
                format_args!(
                    "batch response exceeds the {}-byte output buffer",
                    Decimal::from(cap)
                ),
                Data::None,
            );
        } else if answers == 0 {
            w.truncate(start); // all notifications: no output at all
        }
    }

    /// One JSON-RPC message (top level or a batch element). `outline`, when
    /// given, is the [`json::Outline`] of exactly `frame`.
    fn message(
        &self,
        conn: &mut Connection,
        frame: &mut [u8],
        outline: Option<&json::Outline>,
        w: &mut Writer<'_>,
        notify: Option<&mut dyn Notify>,
        in_batch: bool,
    ) -> Wrote {
        let value = Value::trusted(frame);
        let parsed = match outline.and_then(|o| o.members(frame, None)) {
            Some(mut members) => envelope::parse_members(value, &mut members),
            None => envelope::parse(value),
        };
        let request = match parsed {
            Ok(Envelope::Request(r)) => r,
            // Notifications (initialized, cancelled, unknown ones) and client
            // responses are never answered.
            Ok(_) => return Wrote::Nothing,
            Err(invalid) => {
                crate::log::debug!("picomcp: invalid request: {}", invalid.reason);
                return Out::begin(w, invalid.id.map(|i| i.raw())).error(
                    INVALID_REQUEST,
                    format_args!("Invalid Request"),
                    Data::Str(invalid.reason),
                );
            }
        };
        let method = Method::from_json(request.method);
        let method_span = span(frame, request.method.raw());
        let params = request.params;
        let scan = match params {
            None => ParamsScan::default(),
            Some(p) => match outline.and_then(|o| o.members(frame, Some(span(frame, p.raw())))) {
                Some(mut members) => ParamsScan::of(&mut members),
                None => ParamsScan::of(&mut p.members()),
            },
        };
        let meta = scan.meta;
        let named = NamedSpans {
            name: scan.name.map(|v| span(frame, v.raw())),
            arguments: scan.arguments.map(|v| span(frame, v.raw())),
        };
        let enveloped = meta.and_then(|m| m.get(PROTOCOL_VERSION_KEY)).is_some();
        // The first request decides the connection's era, once.
        if *conn == Connection::Fresh {
            *conn = if method != Method::Initialize && enveloped {
                Connection::Modern
            } else {
                Connection::Uninitialized(Session::new())
            };
        }
        let mut resp = Out::begin(w, Some(request.id.raw()));
        let params_span = params.map(|p| span(frame, p.raw()));
        let progress = progress_token(meta);
        let session = match conn {
            Connection::Modern => {
                resp.stamp = Some(self.info);
                let info = match self.envelope(method, params, resp) {
                    Ok(((log_level, client), r)) => {
                        resp = r;
                        RequestInfo {
                            version: ProtocolVersion::V2026_07_28,
                            modern: true,
                            log_level,
                            client,
                            progress,
                            notify,
                            named,
                        }
                    }
                    Err(wrote) => return wrote,
                };
                return match method {
                    Method::Discover => {
                        let fields = ProtocolVersion::V2026_07_28.fields();
                        resp.result_cached(
                            |w| {
                                w.raw(b"{\"supportedVersions\":[\"2026-07-28\"],\"capabilities\":");
                                self.write_capabilities(w, fields);
                                if let Some(text) = self.instructions {
                                    w.raw(b",\"instructions\":");
                                    w.string(text);
                                }
                                w.raw(b"}");
                            },
                            Some(self.cache),
                        )
                    }
                    // Removed in 2026-07-28.
                    Method::Ping | Method::SetLevel | Method::Initialize => {
                        self.not_found(frame, method_span, resp)
                    }
                    _ => self.dispatch(method, method_span, info, frame, params_span, resp),
                };
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
                        let (wrote, negotiated) = self.initialize(params, resp);
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
            Connection::Ready(session) => session,
        };
        let version = session.version();
        let info = RequestInfo {
            version,
            modern: false,
            log_level: self.logging.then_some(session.log_level()),
            client: session.client_capabilities(),
            progress,
            notify,
            named,
        };
        match method {
            Method::Ping => resp.result(|w| w.raw(b"{}")),
            Method::Initialize if in_batch => resp.error(
                INVALID_REQUEST,
                format_args!("initialize must not be part of a batch"),
                Data::None,
            ),
            Method::Initialize => {
                let (wrote, renegotiated) = self.initialize(params, resp);
                if let (Wrote::Answer, Some((version, client))) = (wrote, renegotiated) {
                    *session = session.reinitialize(version, client);
                }
                wrote
            }
            Method::SetLevel if self.logging => {
                let Some(level) = params.and_then(|p| p.get("level")).and_then(|l| l.as_str())
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
                resp.result(|w| w.raw(b"{}"))
            }
            Method::Discover => self.not_found(frame, method_span, resp),
            _ => self.dispatch(method, method_span, info, frame, params_span, resp),
        }
    }

    /// The 2026-07-28 envelope ladder: `_meta` keys, version, log level.
    fn envelope<'w, 'o>(
        &self,
        method: Method,
        params: Option<Value<'_>>,
        resp: Out<'w, 'o>,
    ) -> Result<((Option<LogLevel>, ClientCapabilities), Out<'w, 'o>), Wrote> {
        if method == Method::Initialize {
            let requested = params
                .and_then(|p| p.get("protocolVersion"))
                .and_then(|v| v.as_str());
            return Err(resp.error(
                UNSUPPORTED_PROTOCOL_VERSION,
                format_args!("connection is serving the 2026-07-28 protocol; the initialize handshake is not accepted"),
                Data::Versions(requested),
            ));
        }
        let Some(meta) = params
            .and_then(|p| p.get("_meta"))
            .filter(|m| m.kind() == Kind::Object)
        else {
            return Err(resp.error(
                INVALID_PARAMS,
                format_args!(
                    "params._meta must be an object carrying the required '{PROTOCOL_VERSION_KEY}' and '{CLIENT_CAPABILITIES_KEY}' envelope keys"
                ),
                Data::None,
            ));
        };
        let (version, caps) = (
            meta.get(PROTOCOL_VERSION_KEY),
            meta.get(CLIENT_CAPABILITIES_KEY),
        );
        let missing = match (version.is_none(), caps.is_none()) {
            (true, true) => Some(format_args!(
                "{PROTOCOL_VERSION_KEY}, {CLIENT_CAPABILITIES_KEY}"
            )),
            (true, false) => Some(format_args!("{PROTOCOL_VERSION_KEY}")),
            (false, true) => Some(format_args!("{CLIENT_CAPABILITIES_KEY}")),
            (false, false) => None,
        };
        if let Some(keys) = missing {
            return Err(resp.error(
                INVALID_PARAMS,
                format_args!("params._meta is missing the required envelope key(s): {keys}"),
                Data::None,
            ));
        }
        let (Some(version), Some(caps)) = (version, caps) else {
            return Err(resp.invalid_params());
        };
        let Some(version) = version.as_str() else {
            return Err(resp.error(
                INVALID_PARAMS,
                format_args!("the protocol-version envelope value must be a string"),
                Data::None,
            ));
        };
        if !version.eq_str(ProtocolVersion::V2026_07_28.as_str()) {
            return Err(resp.error(
                UNSUPPORTED_PROTOCOL_VERSION,
                format_args!("Unsupported protocol version"),
                Data::Versions(Some(version)),
            ));
        }
        if caps.kind() != Kind::Object {
            return Err(resp.error(
                INVALID_PARAMS,
                format_args!("the client-capabilities envelope value must be an object"),
                Data::None,
            ));
        }
        let log_level = match meta.get(LOG_LEVEL_KEY) {
            None => None,
            Some(level) => match level.as_str().and_then(LogLevel::from_json) {
                Some(l) => Some(l),
                None => {
                    return Err(resp.error(
                        INVALID_PARAMS,
                        format_args!("Invalid log level in {LOG_LEVEL_KEY}"),
                        Data::None,
                    ));
                }
            },
        };
        // Log notifications only when this request asked for a level.
        Ok((
            (
                log_level.filter(|_| self.logging),
                client_capabilities(caps),
            ),
            resp,
        ))
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
        info: RequestInfo<'_>,
        frame: &mut [u8],
        params_span: Option<Range<usize>>,
        resp: Out<'_, '_>,
    ) -> Wrote {
        let version = info.version;
        let fields = version.fields();
        let cache = info.modern.then_some(self.cache);
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

    fn has_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty()
    }

    #[allow(clippy::too_many_arguments)]
    fn list<T>(
        &self,
        resp: Out<'_, '_>,
        cursor: Option<Value<'_>>,
        name: &str,
        items: &[T],
        kind: List,
        cache: Option<Cache>,
        visible: impl Fn(&T) -> bool,
        write_item: impl FnMut(&mut Writer<'_>, &T),
    ) -> Wrote {
        let start = match cursor {
            None => 0,
            Some(c) => match c
                .as_str()
                .and_then(|c| list::decode(self.cursor_key, kind, items.len(), c))
            {
                Some(i) => i,
                None => {
                    return resp.error(INVALID_PARAMS, format_args!("Invalid cursor"), Data::None);
                }
            },
        };
        let mut ok = true;
        let key = self.cursor_key;
        let page = self.page_size;
        let wrote = resp.result_cached(
            |w| {
                ok = list::write_page(w, name, items, start, page, key, kind, visible, write_item)
                    .is_ok();
            },
            cache,
        );
        if ok { wrote } else { Wrote::Failed }
    }

    /// Negotiate and answer `initialize`. Returns what was written and, on
    /// success, the negotiated version and the client's capabilities.
    fn initialize(
        &self,
        params: Option<Value<'_>>,
        resp: Out<'_, '_>,
    ) -> (Wrote, Option<(ProtocolVersion, ClientCapabilities)>) {
        let Some(params) = params else {
            return (resp.invalid_params(), None);
        };
        let requested = params.get("protocolVersion").and_then(|v| v.as_str());
        let caps = params
            .get("capabilities")
            .filter(|v| v.kind() == Kind::Object);
        let info_ok = params.get("clientInfo").is_some_and(|ci| {
            ci.kind() == Kind::Object
                && ci.get("name").is_some_and(|n| n.kind() == Kind::String)
                && ci.get("version").is_some_and(|n| n.kind() == Kind::String)
        });
        let (Some(requested), Some(caps), true) = (requested, caps, info_ok) else {
            return (resp.invalid_params(), None);
        };
        let version = ProtocolVersion::HANDSHAKE
            .into_iter()
            .find(|v| requested.eq_str(v.as_str()))
            .unwrap_or(ProtocolVersion::LATEST_HANDSHAKE);
        let client = client_capabilities(caps);
        let fields = version.fields();
        let wrote = resp.result(|w| {
            w.raw(b"{\"protocolVersion\":");
            w.string(version.as_str());
            w.raw(b",\"capabilities\":");
            self.write_capabilities(w, fields);
            w.raw(b",\"serverInfo\":");
            self.info.write(w, fields);
            if let Some(text) = self.instructions {
                w.raw(b",\"instructions\":");
                w.string(text);
            }
            w.raw(b"}");
        });
        (wrote, Some((version, client)))
    }

    /// The capabilities this server has: derived from what is registered.
    fn write_capabilities(&self, w: &mut Writer<'_>, fields: Fields) {
        let mut o = w.value().object();
        if self.completion.is_some() && fields.completions {
            o.member("completions").raw_json("{}");
        }
        if self.logging {
            o.member("logging").raw_json("{}");
        }
        if !self.prompts.is_empty() {
            o.object("prompts").bool("listChanged", false);
        }
        if self.has_resources() {
            o.object("resources")
                .bool("subscribe", false)
                .bool("listChanged", false);
        }
        if !self.tools.is_empty() {
            o.object("tools").bool("listChanged", false);
        }
    }

    /// Phase-1 MRTR lookups (2026-07-28 only): the binding a `requestState`
    /// must match, and where the state and `inputResponses` are.
    fn mrtr_spans<'k>(
        &self,
        info: &RequestInfo<'_>,
        params: &Value<'_>,
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
        let binding = self.state_key.map(|key| crate::mrtr::Binding {
            key,
            method,
            name: [name],
            args: crate::mrtr::digest_json(args),
        });
        let state = match crate::mrtr::state_raw(params) {
            None => None,
            Some(Ok(s)) => Some(span(frame, s.raw())),
            Some(Err(())) => return Err(()),
        };
        let responses = match params.get("inputResponses") {
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

    /// Phase-2 MRTR: verify the `requestState` in place. `Err` when it is
    /// present but does not verify.
    fn open_state<'f>(
        binding: Option<crate::mrtr::Binding<'_>>,
        raw: Option<&'f mut [u8]>,
    ) -> Result<Option<&'f [u8]>, ()> {
        match (raw, binding) {
            (None, _) => Ok(None),
            (Some(raw), Some(b)) => crate::mrtr::open(&b, raw).map(Some).ok_or(()),
            (Some(_), None) => Err(()),
        }
    }

    fn bad_state(resp: Out<'_, '_>) -> Wrote {
        resp.error(
            INVALID_PARAMS,
            format_args!("Invalid requestState: it was altered, or issued for another request"),
            Data::None,
        )
    }

    fn call_tool(
        &self,
        mut info: RequestInfo<'_>,
        frame: &mut [u8],
        params: Option<Range<usize>>,
        mut resp: Out<'_, '_>,
    ) -> Wrote {
        let version = info.version;
        // Phase 1 (shared borrow of the frame): find the tool, check the arguments.
        let (tool, args_span, mrtr) = {
            let Some((params, name, given)) = named_call(frame, params, &info.named) else {
                return resp.invalid_params();
            };
            let found = self
                .tools
                .iter()
                .find(|t| name.eq_str(t.descriptor.name) && t.descriptor.offered_to(version));
            let Some(tool) = found else {
                return resp.error(
                    INVALID_PARAMS,
                    format_args!("Unknown tool: {name}"),
                    Data::None,
                );
            };
            let args = given.unwrap_or(Value::trusted(b"{}"));
            // The one place that decides the channel of a schema violation:
            // a tool error, which the model can correct (MCP 2025-11-25).
            if let Err(violation) = tool.descriptor.input_schema.validate(&args) {
                let tool_name = tool.descriptor.name;
                return resp.result(|w| {
                    w.raw(b"{\"content\":[{\"type\":\"text\",\"text\":");
                    w.string_fmt(format_args!(
                        "Invalid arguments for tool {tool_name}: {violation}"
                    ));
                    w.raw(b"}],\"isError\":true}");
                });
            }
            let name = tool.descriptor.name.as_bytes();
            let Ok(mrtr) = self.mrtr_spans(&info, &params, frame, "tools/call", name, args.raw())
            else {
                return resp.invalid_params();
            };
            (tool, given.map(|a| span(frame, a.raw())), mrtr)
        };
        // Phase 2: hand the handler the arguments (mutable, for in-place
        // unescaping), the verified MRTR input and the output writer.
        let name = tool.descriptor.name;
        let modern = info.modern;
        let body_start = resp.open_result();
        let mut empty = *b"{}";
        let [args, state, responses] = split_spans(frame, [args_span, mrtr.state, mrtr.responses]);
        let Ok(state) = Self::open_state(mrtr.binding, state) else {
            return Self::bad_state(resp);
        };
        let input = crate::mrtr::Mrtr {
            binding: mrtr.binding,
            state,
            responses: responses.map(|r| Value::trusted(r)),
        };
        let mut state = ReplyState::default();
        let mut track = Track::default();
        let outcome = {
            let ctx = self.ctx(&mut resp, &mut info, &mut track, body_start, &input);
            (tool.handler)(
                &self.state,
                Arguments::new(args.unwrap_or(&mut empty)),
                Reply::new(ctx, &mut state),
            )
        };
        resp.w.resume(track.len, track.limit, track.overflow);
        match outcome {
            Ok(_) if track.finished && track.input_required && !modern => {
                resp.w.truncate(body_start);
                write_tool_error(
                    resp.w,
                    name,
                    format_args!(
                        "this tool needs input from the user, which protocol version {version} cannot ask for (it needs 2026-07-28)"
                    ),
                );
                self.close_tool_result(name, body_start, resp)
            }
            Ok(_) if track.finished && track.input_required => {
                Self::finish_input_required(body_start, &track, resp)
            }
            Ok(_) => self.finish_tool_result(tool, version, &track, state, body_start, resp),
            Err(ToolFailure::Tool(e)) => {
                resp.w.truncate(body_start);
                open_tool_error(resp.w, name);
                resp.w.str_content(e.message());
                resp.w.raw(TOOL_ERROR_END);
                self.close_tool_result(name, body_start, resp)
            }
            Err(ToolFailure::Protocol(e)) => resp.protocol(&e),
        }
    }

    /// Close an `input_required` answer (2026-07-28).
    fn finish_input_required(body_start: usize, track: &Track, resp: Out<'_, '_>) -> Wrote {
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

    /// A handler context. It borrows the request's facts and MRTR input
    /// rather than holding copies, so moving it (into `Reply`, `Content`,
    /// ...) stays cheap.
    fn ctx<'c, 'n: 'c>(
        &self,
        resp: &'c mut Out<'_, '_>,
        info: &'c mut RequestInfo<'n>,
        track: &'c mut Track,
        body_start: usize,
        mrtr: &'c crate::mrtr::Mrtr<'c>,
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
        Ctx {
            w: resp.w.reborrow(),
            track,
            body_start,
            finished: false,
            input_required: false,
            state_error: false,
            mrtr,
            client: info.client,
            version: info.version,
            progress_token: progress.as_deref(),
            last_progress: None,
            log_level: info.log_level,
            notify,
            cancelled: false,
        }
    }

    fn finish_tool_result(
        &self,
        tool: &Tool<S>,
        version: ProtocolVersion,
        track: &Track,
        state: ReplyState,
        body_start: usize,
        resp: Out<'_, '_>,
    ) -> Wrote {
        let name = tool.descriptor.name;
        if !track.finished {
            return resp.error(
                INTERNAL_ERROR,
                format_args!("tool {name} returned without finishing its reply"),
                Data::None,
            );
        }
        if resp.w.is_overflowed() {
            return self.tool_too_large(name, body_start, resp);
        }
        let fields = version.fields();
        match (state.structured, tool.descriptor.output_schema) {
            (None, Some(_)) => {
                return resp.error(
                    INTERNAL_ERROR,
                    format_args!(
                        "tool {name} has an output schema but returned no structured content"
                    ),
                    Data::None,
                );
            }
            (Some((start, stop, cut_start, cut_end)), schema) => {
                let bytes = resp.w.as_bytes().get(start..stop).unwrap_or(&[]);
                let mut problem = None;
                let mut object = false;
                // Written by a type whose every value matches this very
                // schema (and by the core's writer, so it is JSON): no need
                // to parse and check it again.
                // By address: `tool!` and the derive share one static (a
                // descriptor built by hand with another copy of the same
                // schema is simply checked).
                let exact = match (state.exact, schema) {
                    (Some(e), Some(s)) => core::ptr::eq(e, s),
                    _ => false,
                };
                if exact {
                    object = Value::trusted(bytes).kind() == Kind::Object;
                } else {
                    match Value::parse(bytes, &Limits::DEFAULT.max_depth(json::MAX_DEPTH)) {
                        Err(_) => {
                            problem = Some(crate::error::Message::new("it is not valid JSON"))
                        }
                        Ok(v) => {
                            object = v.kind() == Kind::Object;
                            if let Some(Err(viol)) = schema.map(|s| s.validate(&v)) {
                                problem = Some(crate::error::Message::format(format_args!(
                                    "it does not match the output schema: {viol}"
                                )));
                            }
                        }
                    }
                }
                if let Some(p) = problem {
                    return resp.error(
                        INTERNAL_ERROR,
                        format_args!("tool {name} returned invalid structured content: {p}"),
                        Data::None,
                    );
                }
                // Before 2026-07-28 structuredContent must be an object; the
                // text block still carries the JSON.
                if !fields.structured_content || (!fields.result_type && !object) {
                    resp.w.cut(cut_start, cut_end);
                }
            }
            (None, None) => {}
        }
        resp.w.raw(b",\"isError\":false");
        self.close_tool_result(name, body_start, resp)
    }

    fn close_tool_result(&self, name: &str, body_start: usize, resp: Out<'_, '_>) -> Wrote {
        if let Some(info) = resp.stamp {
            write_stamp(resp.w, &info, false, true, None);
        }
        resp.w.raw(b"}}");
        if resp.w.is_overflowed() {
            return self.tool_too_large(name, body_start, resp);
        }
        resp.done()
    }

    /// The result does not fit: a tool error the model can act on.
    fn tool_too_large(&self, name: &str, body_start: usize, resp: Out<'_, '_>) -> Wrote {
        let cap = resp.w.capacity();
        resp.w.truncate(body_start);
        write_tool_error(
            resp.w,
            name,
            format_args!(
                "result exceeds the {}-byte response buffer",
                Decimal::from(cap)
            ),
        );
        if let Some(info) = resp.stamp {
            write_stamp(resp.w, &info, false, true, None);
        }
        resp.w.raw(b"}}");
        if resp.w.is_overflowed() {
            return resp.too_large();
        }
        resp.done()
    }

    fn read_resource(
        &self,
        mut info: RequestInfo<'_>,
        frame: &mut [u8],
        params: Option<Range<usize>>,
        mut resp: Out<'_, '_>,
    ) -> Wrote {
        // Phase 1: find the URI string's raw bytes and the MRTR pieces.
        let (uri_span, mrtr) = {
            let Some(params) = params.and_then(|r| frame.get(r)).map(Value::trusted) else {
                return resp.invalid_params();
            };
            let Some(uri) = params.get("uri").and_then(|v| v.as_str()) else {
                return resp.invalid_params();
            };
            let Ok(mrtr) = self.mrtr_spans(&info, &params, frame, "resources/read", b"", uri.raw())
            else {
                return resp.invalid_params();
            };
            (span(frame, uri.raw()), mrtr)
        };
        // Phase 2: unescape the URI in place; it borrows the frame from here on.
        let [uri, state, responses] =
            split_spans(frame, [Some(uri_span), mrtr.state, mrtr.responses]);
        let Some(uri) = uri.and_then(|u| json::unescape_str_in_place(u).ok()) else {
            return resp.invalid_params();
        };
        let uri: &str = uri;
        let target = self
            .resources
            .iter()
            .find(|r| r.descriptor.uri == uri)
            .map(|r| (r.handler, Vars::default(), r.descriptor.cache))
            .or_else(|| {
                self.templates.iter().find_map(|t| {
                    crate::resource::match_template(t.descriptor.uri_template, uri)
                        .map(|vars| (t.handler, vars, t.descriptor.cache))
                })
            });
        let Some((handler, vars, cache)) = target else {
            return resp.error(
                INVALID_PARAMS,
                format_args!("Unknown resource: {uri}"),
                Data::Uri(uri),
            );
        };
        let Ok(state) = Self::open_state(mrtr.binding, state) else {
            return Self::bad_state(resp);
        };
        let input = crate::mrtr::Mrtr {
            binding: mrtr.binding,
            state,
            responses: responses.map(|r| Value::trusted(r)),
        };
        let modern = info.modern;
        let body_start = resp.open_result();
        let mut track = Track::default();
        let outcome = {
            let ctx = self.ctx(&mut resp, &mut info, &mut track, body_start, &input);
            handler(&self.state, ReadRequest::new(uri, vars), Contents::new(ctx))
        };
        resp.w.resume(track.len, track.limit, track.overflow);
        match outcome {
            Ok(_) => Self::close_handled(
                resp,
                &track,
                modern,
                body_start,
                Some(cache.unwrap_or(self.cache)),
                "resource",
            ),
            Err(ResourceFailure::NotFound(e)) => resp.error(
                INVALID_PARAMS,
                format_args!("{}", e.message()),
                Data::Uri(uri),
            ),
            Err(ResourceFailure::Protocol(e)) => resp.protocol(&e),
        }
    }

    /// Close what a resource, prompt or completion handler wrote: a finished
    /// result (stamped, with `cache` on 2026-07-28), an `input_required`
    /// answer, or `-32603` if it returned without finishing.
    fn close_handled(
        resp: Out<'_, '_>,
        track: &Track,
        modern: bool,
        body_start: usize,
        cache: Option<Cache>,
        what: &str,
    ) -> Wrote {
        if !track.finished {
            return resp.error(
                INTERNAL_ERROR,
                format_args!("{what} handler returned without finishing its answer"),
                Data::None,
            );
        }
        if track.input_required {
            return Self::finish_input_required_any(modern, body_start, track, resp);
        }
        resp.close_result(body_start, track, cache)
    }

    /// `input_required` from a resource or prompt handler: only 2026-07-28
    /// clients can be asked for input.
    fn finish_input_required_any(
        modern: bool,
        body_start: usize,
        track: &Track,
        resp: Out<'_, '_>,
    ) -> Wrote {
        if !modern {
            return resp.error(
                INTERNAL_ERROR,
                format_args!("the handler needs input from the user, which only 2026-07-28 clients can be asked for"),
                Data::None,
            );
        }
        Self::finish_input_required(body_start, track, resp)
    }

    fn get_prompt(
        &self,
        mut info: RequestInfo<'_>,
        frame: &mut [u8],
        params: Option<Range<usize>>,
        mut resp: Out<'_, '_>,
    ) -> Wrote {
        const N: usize = MAX_PROMPT_ARGUMENTS + 2;
        // Phase 1: the prompt, the spans of its declared arguments' values,
        // and the MRTR pieces (the last two spans).
        let (prompt, spans, binding) = {
            let Some((params, name, args)) = named_call(frame, params, &info.named) else {
                return resp.invalid_params();
            };
            let Some(prompt) = self.prompts.iter().find(|p| name.eq_str(p.descriptor.name)) else {
                return resp.error(
                    INVALID_PARAMS,
                    format_args!("Unknown prompt: {name}"),
                    Data::None,
                );
            };
            let mut spans: [Option<Range<usize>>; N] = Default::default();
            for (i, a) in prompt
                .descriptor
                .arguments
                .iter()
                .enumerate()
                .take(MAX_PROMPT_ARGUMENTS)
            {
                match args.and_then(|args| args.get(a.name)) {
                    Some(v) => match v.as_str() {
                        Some(s) => {
                            if let Some(slot) = spans.get_mut(i) {
                                *slot = Some(span(frame, s.raw()));
                            }
                        }
                        None => {
                            return resp.error(
                                INVALID_PARAMS,
                                format_args!("Argument {} must be a string", a.name),
                                Data::None,
                            );
                        }
                    },
                    None if a.required => {
                        return resp.error(
                            INVALID_PARAMS,
                            format_args!("Missing required argument: {}", a.name),
                            Data::None,
                        );
                    }
                    None => {}
                }
            }
            let args_raw = args.map_or(&b"{}"[..], |a| a.raw());
            let name = prompt.descriptor.name.as_bytes();
            let Ok(mrtr) = self.mrtr_spans(&info, &params, frame, "prompts/get", name, args_raw)
            else {
                return resp.invalid_params();
            };
            let [.., state, responses] = &mut spans;
            (*state, *responses) = (mrtr.state, mrtr.responses);
            (prompt, spans, mrtr.binding)
        };
        let mut parts = split_spans(frame, spans);
        let responses = parts.get_mut(N - 1).and_then(Option::take);
        let state = parts.get_mut(N - 2).and_then(Option::take);
        let values: [Option<&str>; MAX_PROMPT_ARGUMENTS] = core::array::from_fn(|i| {
            parts
                .get_mut(i)
                .and_then(Option::take)
                .and_then(|r| json::unescape_str_in_place(r).ok())
        });
        let Ok(state) = Self::open_state(binding, state) else {
            return Self::bad_state(resp);
        };
        let input = crate::mrtr::Mrtr {
            binding,
            state,
            responses: responses.map(|r| Value::trusted(r)),
        };
        let modern = info.modern;
        let body_start = resp.open_result();
        let mut track = Track::default();
        let outcome = {
            let ctx = self.ctx(&mut resp, &mut info, &mut track, body_start, &input);
            (prompt.handler)(
                &self.state,
                PromptRequest::new(prompt.descriptor.arguments, values),
                Messages::new(ctx),
            )
        };
        resp.w.resume(track.len, track.limit, track.overflow);
        match outcome {
            Ok(_) => Self::close_handled(resp, &track, modern, body_start, None, "prompt"),
            Err(e) => resp.protocol(&e),
        }
    }

    fn complete(
        &self,
        mut info: RequestInfo<'_>,
        frame: &mut [u8],
        params: Option<Range<usize>>,
        mut resp: Out<'_, '_>,
    ) -> Wrote {
        let Some(handler) = self.completion else {
            return resp.invalid_params();
        };
        // Phase 1: check the reference, find the three strings.
        let (is_prompt, spans) = {
            let Some(params) = params.and_then(|r| frame.get(r)).map(Value::trusted) else {
                return resp.invalid_params();
            };
            let reference = params.get("ref");
            let argument = params.get("argument");
            let kind = reference
                .and_then(|r| r.get("type"))
                .and_then(|t| t.as_str());
            let arg_name = argument
                .and_then(|a| a.get("name"))
                .and_then(|n| n.as_str());
            let arg_value = argument
                .and_then(|a| a.get("value"))
                .and_then(|n| n.as_str());
            let (Some(kind), Some(arg_name), Some(arg_value)) = (kind, arg_name, arg_value) else {
                return resp.invalid_params();
            };
            let (is_prompt, target) = if kind.eq_str("ref/prompt") {
                let Some(name) = reference
                    .and_then(|r| r.get("name"))
                    .and_then(|n| n.as_str())
                else {
                    return resp.invalid_params();
                };
                if !self.prompts.iter().any(|p| name.eq_str(p.descriptor.name)) {
                    return resp.error(
                        INVALID_PARAMS,
                        format_args!("Unknown prompt: {name}"),
                        Data::None,
                    );
                }
                (true, name)
            } else if kind.eq_str("ref/resource") {
                let Some(uri) = reference
                    .and_then(|r| r.get("uri"))
                    .and_then(|n| n.as_str())
                else {
                    return resp.invalid_params();
                };
                if !self
                    .templates
                    .iter()
                    .any(|t| uri.eq_str(t.descriptor.uri_template))
                {
                    return resp.error(
                        INVALID_PARAMS,
                        format_args!("Unknown resource template: {uri}"),
                        Data::None,
                    );
                }
                (false, uri)
            } else {
                return resp.error(
                    INVALID_PARAMS,
                    format_args!("Unknown reference type: {kind}"),
                    Data::None,
                );
            };
            (
                is_prompt,
                [
                    Some(span(frame, target.raw())),
                    Some(span(frame, arg_name.raw())),
                    Some(span(frame, arg_value.raw())),
                ],
            )
        };
        let [Some(target), Some(argument), Some(value)] = decode_spans(frame, spans) else {
            return resp.invalid_params();
        };
        let reference = if is_prompt {
            CompletionRef::Prompt(target)
        } else {
            CompletionRef::ResourceTemplate(target)
        };
        let info_modern = info.modern;
        let body_start = resp.open_result();
        let mut track = Track::default();
        let outcome = {
            let ctx = self.ctx(
                &mut resp,
                &mut info,
                &mut track,
                body_start,
                &crate::mrtr::Mrtr::NONE,
            );
            handler(
                &self.state,
                CompleteRequest {
                    reference,
                    argument,
                    value,
                },
                Completions::new(ctx),
            )
        };
        resp.w.resume(track.len, track.limit, track.overflow);
        match outcome {
            Ok(_) => Self::close_handled(resp, &track, info_modern, body_start, None, "completion"),
            Err(e) => resp.protocol(&e),
        }
    }
}

/// Terminate the message (if any) with `\n` and put stashed notifications
/// ahead of it.
fn finish(mut w: Writer<'_>) -> usize {
    w.set_reserve(0);
    if !w.is_empty() {
        w.raw(b"\n");
    }
    w.finish_with_stash()
}

/// A writer for one answer, keeping a byte free for its newline.
fn answer_writer(out: &mut [u8]) -> Writer<'_> {
    let mut w = Writer::new(out);
    w.set_reserve(1);
    w
}
