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
//! [`ProtocolVersion::fields`](crate::mcp::ProtocolVersion::fields): a client never receives a field its version
//! does not define. Audio and resource links become text blocks for versions
//! without them; `structuredContent` is left out before 2025-06-18 (a text
//! block carries the same JSON).

mod asking;
mod complete;
#[cfg(feature = "async-handlers")]
pub(crate) mod deferred;
mod index;
pub(crate) mod invoke;
mod lifecycle;
mod list;
mod listing;
mod out;
mod params;
mod prompts;
mod resources;
mod route;
mod session;
mod subscribe;
mod tools;
mod waiting;

pub use index::ToolIndex;
pub use listing::ListCache;
#[cfg(feature = "async-handlers")]
pub(crate) use out::Wrote;
pub(crate) use out::{Answer, write_error};
pub(crate) use session::Origin;
pub use session::{ClientCapabilities, Connection, Ready, Session, Subject, Uninitialized};
#[cfg(feature = "async-handlers")]
pub(crate) use waiting::NoRoom;
#[cfg(feature = "async-handlers")]
pub(crate) use waiting::call_key;
pub(crate) use waiting::{CallEvent, WaitingView};
pub use waiting::{MAX_INPUT_REQUESTS, MAX_KEY, MAX_ROUNDS, Waiting};

/// Where the caching hint types live now (paths kept).
pub use crate::mcp::{Cache, CacheScope};

use core::fmt;

use crate::changes::{Changes, Subscriber};
use crate::completion::CompleteFn;
use crate::context::Notify;
use crate::error::INVALID_REQUEST;
use crate::mcp::ServerInfo;
use crate::prompt::Prompt;
use crate::resource::{Resource, ResourceTemplate};
use crate::tool::Tool;
use crate::wire::emit::Decimal;
use crate::wire::json::Limits;
use out::{Data, Out, answer_writer, finish};

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
    /// The identity, and the list cache (where the first pages of the
    /// lists and the 2026-07-28 stamp are kept).
    id: out::Identity<'s>,
    instructions: Option<&'s str>,
    tools: &'s [Tool<S>],
    resources: &'s [Resource<S>],
    templates: &'s [ResourceTemplate<S>],
    prompts: &'s [Prompt<S>],
    completion: Option<CompleteFn<S>>,
    /// The completion handler is the async one ([`crate::asynch`]).
    #[cfg(feature = "async-handlers")]
    completion_awaits: bool,
    logging: bool,
    page_size: Option<usize>,
    cursor_key: Option<[u64; 2]>,
    cache: Cache,
    state_key: Option<&'s [u8]>,
    /// Time to live of sealed request state (seconds) and the clock.
    state_ttl: Option<(u64, fn() -> u64)>,
    limits: Limits,
    changes: Option<&'s Changes>,
    tool_index: Option<&'s (dyn index::Lookup + Sync)>,
    state: S,
}

impl<S> fmt::Debug for Server<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.id.info)
            .field("tools", &self.tools.len())
            .field("resources", &self.resources.len())
            .field("templates", &self.templates.len())
            .field("prompts", &self.prompts.len())
            .field("page_size", &self.page_size)
            .finish_non_exhaustive()
    }
}

impl<'s, S> Server<'s, S> {
    /// A server with no tools, resources or prompts yet.
    pub const fn new(info: ServerInfo<'s>, state: S) -> Self {
        Self {
            id: out::Identity { info, kept: None },
            instructions: None,
            tools: &[],
            resources: &[],
            templates: &[],
            prompts: &[],
            completion: None,
            #[cfg(feature = "async-handlers")]
            completion_awaits: false,
            logging: false,
            page_size: None,
            cursor_key: None,
            cache: Cache::NONE,
            state_key: None,
            state_ttl: None,
            limits: Limits::DEFAULT,
            changes: None,
            tool_index: None,
            state,
        }
    }

    /// Set `instructions` (sent in the `initialize` result).
    pub const fn instructions(mut self, text: &'s str) -> Self {
        self.instructions = Some(text);
        self
    }

    /// The registered tools (read once by the HTTP mapping, when it is
    /// built, for their `x-mcp-header` annotations).
    pub(crate) const fn registered_tools(&self) -> &'s [Tool<S>] {
        self.tools
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
        #[cfg(feature = "async-handlers")]
        {
            self.completion_awaits = false;
        }
        self
    }

    /// Complete through the async handlers' [`AsyncHandlers::complete`]
    /// (advertises `completions`; served by [`Server::handle_async`]).
    ///
    /// [`AsyncHandlers::complete`]: crate::asynch::AsyncHandlers::complete
    #[cfg(feature = "async-handlers")]
    pub const fn completion_awaiting(mut self) -> Self {
        self.completion = Some(crate::completion::needs_async);
        self.completion_awaits = true;
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

    /// Key for the pagination cursors' integrity tag. Without one, the
    /// cursors are tagged under the [`request_state_key`](Self::request_state_key)
    /// secret when it is set (domain-separated), else under a public
    /// constant. The tag binds a cursor to its list, its position and the
    /// list's length: under a secret key a client can neither edit nor
    /// forge one; under the public constant an edited or truncated cursor
    /// is still refused (`-32602`), but a client that knows this crate could
    /// compute a valid cursor for any position of any list — harmless for
    /// static lists, which is what a cursor pages through.
    pub const fn cursor_key(mut self, key: [u64; 2]) -> Self {
        self.cursor_key = Some(key);
        self
    }

    /// The key that tags list cursors (see [`cursor_key`](Self::cursor_key)).
    pub(super) fn cursor_tag_key(&self) -> list::TagKey<'s> {
        const PUBLIC: [u64; 2] = [0x7069_636f_6d63_7031, 0x6375_7273_6f72_6b31];
        match (self.cursor_key, self.state_key) {
            (Some(key), _) => list::TagKey::words(key),
            (None, Some(secret)) => list::TagKey::Secret(secret),
            (None, None) => list::TagKey::words(PUBLIC),
        }
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

    /// Sealed `requestState` expires: each carries its issue time (from
    /// `clock`, seconds, e.g. Unix time; replicas must share it), and one
    /// older than `ttl_s` seconds, issued more than `ttl_s` in the future,
    /// or sealed without an issue time is refused like a tampered one
    /// (`-32602`), so a state cannot be replayed past its TTL. Default: no
    /// expiry.
    pub const fn request_state_ttl(mut self, ttl_s: u64, clock: fn() -> u64) -> Self {
        self.state_ttl = Some((ttl_s, clock));
        self
    }

    /// Keep each list's first page in `cache` once written, per protocol
    /// version, and copy it from there afterwards ([`ListCache`]): a
    /// listing is `const` data, so `tools/list` and the other lists cost a
    /// copy instead of writing every descriptor and schema again. The
    /// server's identity that stamps every 2026-07-28 result is kept there
    /// too (one more entry). Default: written every time.
    pub const fn list_cache<const W: usize, const E: usize>(
        mut self,
        cache: &'s ListCache<W, E>,
    ) -> Self {
        self.id.kept = Some(cache);
        self
    }

    /// Find tools by name through `index` ([`ToolIndex`], at least two
    /// slots per tool), built on first use: a call's lookup then costs the
    /// same with 5 tools or 5,000. Default: the registry is walked.
    pub const fn tool_index<const SLOTS: usize>(mut self, index: &'s ToolIndex<SLOTS>) -> Self {
        self.tool_index = Some(index);
        self
    }

    /// Set the JSON scanner limits (default: depth 32, no other limit than
    /// the frame size).
    pub const fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Serve subscriptions and change notifications from `changes`
    /// ([`crate::changes`]): `resources/subscribe` and `resources/unsubscribe`
    /// (handshake era), `subscriptions/listen` (2026-07-28), and
    /// `listChanged` for the lists `changes` announces. The capabilities
    /// say so. Notifications reach a connection that keeps
    /// [`Subscriptions`](crate::changes::Subscriptions) (the serve loops,
    /// the HTTP sessions' `GET` streams, a listen stream).
    pub const fn changes(mut self, changes: &'s Changes) -> Self {
        self.changes = Some(changes);
        self
    }

    /// The change registry, if the server serves subscriptions.
    pub fn change_registry(&self) -> Option<&'s Changes> {
        self.changes
    }

    /// The application state.
    pub fn state(&self) -> &S {
        &self.state
    }

    /// The server identity.
    pub fn info(&self) -> &ServerInfo<'s> {
        &self.id.info
    }

    /// Answer a frame the framer reported as too long (`limit` bytes):
    /// `-32600` with `"id": null`, message `message too large: limit N bytes`.
    #[must_use = "the answer is out[..n]: send it"]
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
    #[must_use = "the answer is out[..n]: send it"]
    pub fn handle(&self, conn: &mut Connection, frame: &mut [u8], out: &mut [u8]) -> usize {
        self.handle_inner(conn, frame, out, None, None, None, None, None)
            .len
    }

    /// Like [`handle`](Self::handle), for a request the caller authenticated
    /// as `subject` (a principal, a client certificate's name): 2026-07-28
    /// request state sealed for it is taken back only with the same subject,
    /// and state sealed without one is not taken here ([`Subject`]).
    /// Handshake-era requests are unaffected (their waiting calls stay with
    /// their connection).
    #[must_use = "the answer is out[..n]: send it"]
    pub fn handle_as(
        &self,
        conn: &mut Connection,
        subject: &[u8],
        frame: &mut [u8],
        out: &mut [u8],
    ) -> usize {
        let subject = Subject::of(subject);
        self.handle_inner(conn, frame, out, None, None, None, Some(&subject), None)
            .len
    }

    /// Like [`handle`](Self::handle), but each notification a handler sends
    /// is passed to `notify` as soon as it is written; `out` then holds only
    /// the answer.
    #[must_use = "the answer is out[..n]: send it"]
    pub fn handle_with(
        &self,
        conn: &mut Connection,
        frame: &mut [u8],
        out: &mut [u8],
        notify: &mut dyn Notify,
    ) -> usize {
        self.handle_inner(conn, frame, out, Some(notify), None, None, None, None)
            .len
    }

    /// Like [`handle`](Self::handle), on a connection whose calls can wait
    /// for the client: a handshake-era handler that asks for input
    /// ([`crate::mrtr`]) has its input requests sent to the client as
    /// JSON-RPC requests (in `out`, instead of an answer) and waits in
    /// `waiting`; the client's answers, passed in like any other frame,
    /// complete it, and its final answer comes out then. Keep one `waiting`
    /// per connection, beside its [`Connection`].
    #[must_use = "the answer is out[..n]: send it"]
    pub fn handle_waiting<const N: usize, const B: usize>(
        &self,
        conn: &mut Connection,
        waiting: &mut Waiting<N, B>,
        frame: &mut [u8],
        out: &mut [u8],
    ) -> usize {
        self.handle_inner(
            conn,
            frame,
            out,
            None,
            Some(&mut waiting.view()),
            None,
            None,
            None,
        )
        .len
    }

    /// [`handle_waiting`](Self::handle_waiting) with notifications streamed
    /// through `notify` (as [`handle_with`](Self::handle_with)).
    #[must_use = "the answer is out[..n]: send it"]
    pub fn handle_waiting_with<const N: usize, const B: usize>(
        &self,
        conn: &mut Connection,
        waiting: &mut Waiting<N, B>,
        frame: &mut [u8],
        out: &mut [u8],
        notify: &mut dyn Notify,
    ) -> usize {
        self.handle_inner(
            conn,
            frame,
            out,
            Some(notify),
            Some(&mut waiting.view()),
            None,
            None,
            None,
        )
        .len
    }

    /// Like [`handle`](Self::handle), on a connection that keeps
    /// subscriptions in `subs` ([`crate::changes`]): `resources/subscribe`
    /// and `resources/unsubscribe` (handshake era) and `subscriptions/listen`
    /// (2026-07-28) are served there. The notifications due are written by
    /// [`pending`](Self::pending), which the caller runs before reading
    /// each request and when told of a change.
    #[must_use = "the answer is out[..n]: send it"]
    pub fn handle_subscribed(
        &self,
        conn: &mut Connection,
        subs: &mut Subscriber<'_>,
        frame: &mut [u8],
        out: &mut [u8],
    ) -> usize {
        self.handle_inner(conn, frame, out, None, None, Some(subs), None, None)
            .len
    }

    /// The JSON limits every frame is validated under.
    pub(crate) fn json_limits(&self) -> &Limits {
        &self.limits
    }

    pub(super) fn has_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty()
    }
}
