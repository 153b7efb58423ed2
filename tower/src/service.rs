//! [`McpService`]: one MCP endpoint as a tower service.

use std::cell::RefCell;
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode};
use http_body::Frame;
use picomcp::asynch::AsyncHandlers;
use picomcp::http::call::{Begun, PendingCall};
use picomcp::http::{Headers, Http, SessionId, SessionStore, Sessions, Streams};
use picomcp::server::Waiting;
use picomcp::{Connection, Server};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::oneshot;

use crate::BoxError;

/// Woken by [`crate::wake`].
pub(crate) static NOTIFY: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Handshake-era calls waiting for a client's answers, for every session of
/// a service: 16 at once, 16 KiB each.
type WaitingCalls = Waiting<16, { 16 << 10 }>;

/// Notification streams of a service: 256 slots, each up to 8 URIs of at
/// most 256 bytes.
type NoteStreams = Streams<256, 8, 256>;

/// The session store of a service not given one: 1,024 sessions (about
/// 40 KiB), each expiring after 600 s unused.
const DEFAULT_SESSIONS: Sessions<1024> = Sessions::new().idle_timeout(600);

/// Bytes of SSE events one notification-stream poll may write.
const STREAM_BUFFER: usize = 16 << 10;

/// The limits of one exchange.
#[derive(Clone, Debug)]
pub struct Config {
    /// Largest request body (default 64 KiB): a larger declared
    /// `Content-Length` is `413` before a byte is read, a body that grows
    /// past it is `413` as soon as it does.
    pub max_body: usize,
    /// The output buffer per worker thread, and per async call in flight
    /// ([`max_calls`](Self::max_calls)) (default 256 KiB): it bounds one
    /// answer (the core answers `-32603` when an answer does not fit).
    pub max_response: usize,
    /// How long a client may take to send a request's body (default 30 s);
    /// then `408`.
    pub body_timeout: Duration,
    /// Between SSE keep-alive comments on a notification stream (default
    /// 15 s): proxies see a live stream, a client that has gone is found.
    pub keep_alive: Duration,
    /// The header an authenticating proxy in front sets to the client's
    /// principal; 2026-07-28 request state is bound to it
    /// ([`picomcp::http::Request::subject`]). Only behind a proxy that
    /// alone reaches the service and overwrites the header: a client that
    /// can set it can claim any subject. Default: none.
    pub subject_header: Option<HeaderName>,
    /// How long a handshake-era call that asked its client (an
    /// elicitation, a sampling request, roots) waits for the answers of
    /// one round (default 300 s, at least 1 s): then its request is
    /// answered `-32603` on its stream and its waiting-call slot is given
    /// back ([`Http::expire_waiting`]), so a client that never answers
    /// does not hold the slots other sessions need. Checked before each
    /// request, and by a sweep every half of it (at least every second, at
    /// most every minute) that the first request starts on its runtime, so
    /// such a call is answered even when no other request comes.
    pub wait_timeout: Duration,
    /// Async handlers' calls in flight at once (default 512, at least 1):
    /// each has its own output buffer ([`max_response`](Self::max_response)
    /// bytes) and copy of its body while its handler awaits, so this bounds
    /// their memory wherever the service is mounted (over HTTP/2, or behind
    /// a server with no connection cap; [`serve`](crate::serve)'s 512
    /// connections bound it too). A call past it is answered `503` with
    /// `Retry-After: 1` before its handler runs. A handshake-era call run
    /// again with its client's answers is not counted: it holds a slot of
    /// the waiting-call store, which bounds those.
    pub max_calls: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            max_body: 64 << 10,
            max_response: 256 << 10,
            body_timeout: Duration::from_secs(30),
            keep_alive: Duration::from_secs(15),
            subject_header: None,
            wait_timeout: Duration::from_secs(300),
            max_calls: 512,
        }
    }
}

/// Where a service keeps the handshake era's sessions: shared by every
/// request, each method synchronised by the store itself. A
/// `Mutex` around any [`SessionStore`] is one (locked for one method at a
/// time, never across a handler); a store backed by a database shared by
/// several replicas is another.
pub trait SharedStore: Send + Sync + 'static {
    /// [`SessionStore::load`].
    fn load(&self, id: &SessionId, now: u64) -> Option<Connection>;
    /// [`SessionStore::save`].
    fn save(&self, id: &SessionId, conn: Connection, now: u64);
    /// [`SessionStore::try_insert`]: `false` when the store is full (the
    /// client is answered `503` with `Retry-After`).
    fn try_insert(&self, id: SessionId, conn: Connection, now: u64) -> bool;
    /// [`SessionStore::remove`].
    fn remove(&self, id: &SessionId) -> bool;
    /// [`SessionStore::contains`].
    fn contains(&self, id: &SessionId, now: u64) -> bool {
        self.load(id, now).is_some()
    }
}

fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl<T: SessionStore + Send + 'static> SharedStore for Mutex<T> {
    fn load(&self, id: &SessionId, now: u64) -> Option<Connection> {
        lock(self).load(id, now)
    }
    fn save(&self, id: &SessionId, conn: Connection, now: u64) {
        lock(self).save(id, conn, now)
    }
    fn try_insert(&self, id: SessionId, conn: Connection, now: u64) -> bool {
        lock(self).try_insert(id, conn, now)
    }
    fn remove(&self, id: &SessionId) -> bool {
        lock(self).remove(id)
    }
    fn contains(&self, id: &SessionId, now: u64) -> bool {
        lock(self).contains(id, now)
    }
}

impl<T: SharedStore> SharedStore for &'static T {
    fn load(&self, id: &SessionId, now: u64) -> Option<Connection> {
        (**self).load(id, now)
    }
    fn save(&self, id: &SessionId, conn: Connection, now: u64) {
        (**self).save(id, conn, now)
    }
    fn try_insert(&self, id: SessionId, conn: Connection, now: u64) -> bool {
        (**self).try_insert(id, conn, now)
    }
    fn remove(&self, id: &SessionId) -> bool {
        (**self).remove(id)
    }
    fn contains(&self, id: &SessionId, now: u64) -> bool {
        (**self).contains(id, now)
    }
}

/// A [`SharedStore`] seen as the core's [`SessionStore`].
struct Store<'a>(&'a dyn SharedStore);

impl SessionStore for Store<'_> {
    fn load(&mut self, id: &SessionId, now: u64) -> Option<Connection> {
        self.0.load(id, now)
    }
    fn save(&mut self, id: &SessionId, conn: Connection, now: u64) {
        self.0.save(id, conn, now)
    }
    fn insert(&mut self, id: SessionId, conn: Connection, now: u64) {
        let _ = self.0.try_insert(id, conn, now);
    }
    fn try_insert(&mut self, id: SessionId, conn: Connection, now: u64) -> bool {
        self.0.try_insert(id, conn, now)
    }
    fn remove(&mut self, id: &SessionId) -> bool {
        self.0.remove(id)
    }
    fn contains(&mut self, id: &SessionId, now: u64) -> bool {
        self.0.contains(id, now)
    }
}

/// What the replicas of one deployment share beyond the session store, so
/// that any replica serves any request of a handshake-era session (a load
/// balancer with no stickiness in front): give every replica's service one
/// with [`Builder::peers`]. picomcp-redis implements it over Redis.
///
/// - A client's message for a call that may wait on another replica (a
///   JSON-RPC answer to one of the server's requests, elicitation or
///   sampling; a `notifications/cancelled`) is handed to
///   [`relay`](Self::relay), which sends it to the other replicas; each
///   gives it to [`McpService::relayed`]. The replica where the call waits
///   takes it; the others ignore it (no such call of that session).
/// - A session's `resources/subscribe` / `resources/unsubscribe` served
///   here is recorded with [`subscribed`](Self::subscribed) and relayed
///   too, so the replica that holds the session's `GET` stream applies it;
///   a replica where the session opens a `GET` stream first replays
///   [`subscriptions`](Self::subscriptions).
///
/// Changes (a resource updated on one replica, told to subscribers on all)
/// are the application's to share: its `Changes` on each replica.
///
/// The methods are called from the request's task and should be quick
/// (a round trip to a server on the same network).
pub trait Peers: Send + Sync + 'static {
    /// Send `message` (one JSON-RPC message, as the client sent it) of
    /// session `session` to every other replica.
    fn relay(&self, session: &SessionId, message: &[u8]);
    /// Session `session` subscribed to `uri` (`on`), or unsubscribed.
    fn subscribed(&self, session: &SessionId, uri: &str, on: bool);
    /// The URIs session `session` is subscribed to, through any replica.
    fn subscriptions(&self, session: &SessionId) -> Vec<String>;
}

/// `picomcp::http::Headers` over an `http` header map.
struct HeaderView<'a>(&'a HeaderMap);

impl Headers for HeaderView<'_> {
    fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(|v| v.to_str().ok())
    }

    fn count(&self, name: &str) -> usize {
        self.0.get_all(name).iter().count()
    }

    fn unreadable(&self, name: &str) -> bool {
        self.0.get_all(name).iter().any(|v| v.to_str().is_err())
    }

    /// One pass over the map (the mapping reads every header it needs from
    /// it) instead of a hashed lookup, and a parse of the name, per header.
    fn visit<'s>(&'s self, f: &mut dyn FnMut(&'s str, Option<&'s str>)) -> bool {
        for (name, value) in self.0 {
            f(name.as_str(), value.to_str().ok());
        }
        true
    }
}

/// An async call of a session, cancellable while it runs: out of the
/// table when it ends (answered, cancelled, or its client gone).
struct InFlightCall<'t> {
    table: &'t InFlight,
    key: Option<(SessionId, Vec<u8>)>,
    call: u64,
}

impl Drop for InFlightCall<'_> {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            let mut table = lock(self.table);
            if table.get(&key).is_some_and(|(call, _)| *call == self.call) {
                table.remove(&key);
            }
        }
    }
}

/// `202` with no body.
fn accepted() -> Response<McpBody> {
    let mut accepted = Response::new(McpBody::bytes(Bytes::new()));
    *accepted.status_mut() = StatusCode::ACCEPTED;
    accepted
}

/// The session a request names (`Mcp-Session-Id`), if it is well formed.
fn session_of(headers: &HeaderMap) -> Option<SessionId> {
    SessionId::parse(headers.get("mcp-session-id")?.to_str().ok()?.trim())
}

/// 128 bits from the OS (session ids).
fn random_id(bytes: &mut [u8; 16]) {
    crate::os_random(bytes);
}

/// A worker thread's buffers for the core.
struct Buffers {
    /// The answer ([`Config::max_response`] bytes).
    out: Vec<u8>,
    /// The request body, which the core reads and unescapes in place: it
    /// grows to the largest body the thread has served (at most
    /// [`Config::max_body`]) and is kept, so a request's body is copied
    /// into it rather than into a new allocation (hyper's chunk is shared:
    /// it cannot be taken as it is; about 200 instructions a request,
    /// `scripts/http_cost.sh`).
    input: Vec<u8>,
}

thread_local! {
    /// One set of buffers per worker thread: the core's part of a request
    /// never awaits, so a request borrows them from start to end of that
    /// synchronous call.
    static BUFFERS: RefCell<Buffers> = const {
        RefCell::new(Buffers { out: Vec::new(), input: Vec::new() })
    };
}

/// A response body: what the core wrote, then, for a held stream, whatever
/// is delivered to it until it is over.
pub struct McpBody {
    first: Option<Bytes>,
    rest: Option<UnboundedReceiver<Bytes>>,
}

impl McpBody {
    fn bytes(b: Bytes) -> Self {
        McpBody {
            first: (!b.is_empty()).then_some(b),
            rest: None,
        }
    }
}

impl std::fmt::Debug for McpBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpBody")
            .field("first", &self.first.as_ref().map(Bytes::len))
            .field("stream", &self.rest.is_some())
            .finish()
    }
}

impl http_body::Body for McpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if let Some(b) = self.first.take() {
            return Poll::Ready(Some(Ok(Frame::data(b))));
        }
        match self.rest.as_mut() {
            None => Poll::Ready(None),
            Some(rx) => rx.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.first.is_none() && self.rest.is_none()
    }

    /// Exact for a body that is only what the core wrote: hyper then sends
    /// `Content-Length`, not chunks. A held stream's length is not known.
    fn size_hint(&self) -> http_body::SizeHint {
        match self.rest {
            None => {
                http_body::SizeHint::with_exact(self.first.as_ref().map_or(0, |b| b.len() as u64))
            }
            Some(_) => http_body::SizeHint::default(),
        }
    }
}

/// An async tool's call, stopped before its handler: the call, the request
/// body, the call's own output buffer, and what it keeps of the
/// waiting-call store (a handshake-era call that may ask the client).
type CallJob = (PendingCall, Vec<u8>, Vec<u8>, Kept);

/// What a handshake-era async call that may ask for input keeps across its
/// handler ([`Http::keep`]; nothing for any other call), and how it
/// reaches the store after it.
struct Kept {
    bytes: Vec<u8>,
    store: Arc<Mutex<Box<WaitingCalls>>>,
    /// The service's clock (`Inner::start`).
    start: Instant,
    /// The call's place among [`Config::max_calls`] (a first run's; none
    /// for a call run again), held until its handler is over or dropped.
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
}

/// A finished call: its response and output buffer; `None`: it was
/// cancelled (no answer).
type CallDone = Option<(picomcp::http::Response, Vec<u8>)>;

/// A call for a calls thread: the job, what cancels it, where it ends.
type CallMsg = (CallJob, oneshot::Receiver<()>, oneshot::Sender<CallDone>);

/// The calls threads ([`Builder::calls_threads`]), each fed in turn.
struct CallSenders {
    threads: Box<[UnboundedSender<CallMsg>]>,
    next: AtomicUsize,
}

impl CallSenders {
    /// Have the next thread in turn await `call`; `Err`: that thread is
    /// gone (its runtime could not be built).
    fn send(&self, call: CallMsg) -> Result<(), ()> {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.threads.len();
        self.threads[i].send(call).map_err(drop)
    }
}

/// Starts the calls threads, as many as it is given: what
/// [`Builder::async_handlers`] leaves for [`Builder::build`].
type SpawnCalls = Box<dyn FnOnce(usize) -> Option<CallSenders> + Send + Sync>;

/// The async calls in flight of handshake-era sessions, by session and
/// request id (as written): what a `notifications/cancelled` fires, and
/// which call put it there (a later call reusing the id replaces it).
type InFlight = Mutex<HashMap<(SessionId, Vec<u8>), (u64, oneshot::Sender<()>)>>;

/// Numbers the calls of [`InFlight`].
static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

struct Inner<S: 'static> {
    http: Http<'static, S>,
    sessions: Box<dyn SharedStore>,
    /// Shared with the calls thread, which takes it after an async
    /// handler that may ask ([`Kept`]).
    waiting: Arc<Mutex<Box<WaitingCalls>>>,
    streams: Mutex<Box<NoteStreams>>,
    /// The SSE streams held open for waiting calls, by call.
    held: Mutex<HashMap<u64, UnboundedSender<Bytes>>>,
    /// Where async tools' calls are sent to be awaited.
    calls: Option<CallSenders>,
    /// Those calls, when they belong to a session.
    in_flight: InFlight,
    /// Places of async calls in flight (first runs): [`Config::max_calls`]
    /// of them, as `serve` counts connections.
    calls_count: Arc<tokio::sync::Semaphore>,
    config: Config,
    /// The clock of sessions (seconds since the service was built).
    start: Instant,
    /// The other replicas, when there are.
    peers: Option<Box<dyn Peers>>,
    /// The waiting-call sweep was started.
    sweeping: AtomicBool,
    /// [`McpService::end_streams`] was called: notification streams end.
    ending: AtomicBool,
    /// The second (on `start`'s clock) of the last walk of the waiting
    /// calls for expired ones ([`Inner::expire_waiting`]).
    swept: AtomicU64,
}

impl<S: 'static> Inner<S> {
    /// Answer every call that waited past [`Config::wait_timeout`] for its
    /// client, `-32603` on its held stream (which ends), and give its slot
    /// back. `waiting` is the locked store; `out` a buffer for the answers.
    fn expire_waiting(&self, waiting: &mut WaitingCalls, now: u64, out: &mut [u8]) {
        // Waits are counted in whole seconds, and the limit is at least
        // one: a call not due at this second's first walk cannot fall due
        // within the second (one parked since then has waited 0 s). One
        // walk of the slots a second, not one a request. (Both callers
        // hold the store's lock: the walks are in turn. A request that
        // read the clock a second earlier than the one before it walks
        // again; a call it parks with that earlier second is answered at
        // most a second late.)
        if self.swept.swap(now, Ordering::Relaxed) == now {
            return;
        }
        let limit = self.config.wait_timeout.as_secs().max(1);
        while let Some(r) = self.http.expire_waiting(waiting, now, limit, out) {
            if let Some(delivery) = r.deliver
                && let Some(tx) = lock(&self.held).remove(&delivery.call.0)
            {
                let _ = tx.send(Bytes::copy_from_slice(&out[..r.body_len]));
            }
        }
    }
}

/// The waiting-call sweep: every `period`, what [`Inner::expire_waiting`]
/// does before a request, for a service no request reaches; until the
/// service is gone.
async fn sweep<S: Sync + 'static>(inner: Weak<Inner<S>>, period: Duration) {
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // An answer is an error object with the call's id: the response cap
    // holds it.
    let mut out = Vec::new();
    loop {
        tick.tick().await;
        let Some(inner) = inner.upgrade() else {
            return;
        };
        if out.len() != inner.config.max_response {
            out = vec![0; inner.config.max_response];
        }
        let now = inner.start.elapsed().as_secs();
        let mut waiting = lock(&inner.waiting);
        inner.expire_waiting(&mut waiting, now, &mut out);
    }
}

/// Why a request body was not read.
enum BodyError {
    /// More than the cap (declared, or as read).
    TooLarge,
    /// The body's stream failed.
    Unreadable,
    /// Not all there within the body timeout.
    TimedOut,
}

impl BodyError {
    /// The adapter's answer: each refusal's status and text, once.
    fn response(self) -> Response<McpBody> {
        match self {
            BodyError::TooLarge => plain(StatusCode::PAYLOAD_TOO_LARGE, "request body too large\n"),
            BodyError::Unreadable => plain(StatusCode::BAD_REQUEST, "could not read the body\n"),
            BodyError::TimedOut => plain(
                StatusCode::REQUEST_TIMEOUT,
                "the request body did not arrive in time\n",
            ),
        }
    }
}

/// A request body's bytes as they come, at most `max` of them (trailers
/// are ignored). One data chunk (most bodies: they came with the head) is
/// kept as it is (hyper's `Bytes`: no copy); a second one and later ones
/// are appended to a copy of the first. (What `Limited` and `collect` do,
/// without their queue of chunks: about 600 instructions less a request,
/// `scripts/http_cost.sh`.)
struct Collected {
    /// The one chunk so far, or (once `more` is not empty) nothing more.
    first: Bytes,
    more: Vec<u8>,
    max: usize,
}

impl Collected {
    fn new(max: usize) -> Self {
        Collected {
            first: Bytes::new(),
            more: Vec::new(),
            max,
        }
    }

    fn push<D: bytes::Buf>(&mut self, frame: Frame<D>) -> Result<(), BodyError> {
        let Ok(mut data) = frame.into_data() else {
            return Ok(());
        };
        let n = data.remaining();
        let held = self.first.len() + self.more.len();
        if n > self.max.saturating_sub(held) {
            return Err(BodyError::TooLarge);
        }
        if held == 0 {
            self.first = data.copy_to_bytes(n);
            return Ok(());
        }
        if self.more.is_empty() {
            self.more.reserve(self.first.len() + n);
            self.more.extend_from_slice(&self.first);
            self.first = Bytes::new();
        }
        while data.has_remaining() {
            let chunk = data.chunk();
            self.more.extend_from_slice(chunk);
            let k = chunk.len();
            data.advance(k);
        }
        Ok(())
    }

    fn finish(self) -> Bytes {
        if self.more.is_empty() {
            self.first
        } else {
            Bytes::from(self.more)
        }
    }
}

/// Take what is here of `body` into `read`: ready when the body is over
/// (or refused), pending while more is on its way. A body that says it is
/// over is not polled again: hyper's knows from `Content-Length` (one poll
/// of its channel fewer a request).
fn poll_body<B>(
    mut body: Pin<&mut B>,
    read: &mut Collected,
    cx: &mut Context<'_>,
) -> Poll<Result<(), BodyError>>
where
    B: http_body::Body,
{
    while !body.is_end_stream() {
        match body.as_mut().poll_frame(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(None) => break,
            Poll::Ready(Some(Err(_))) => return Poll::Ready(Err(BodyError::Unreadable)),
            Poll::Ready(Some(Ok(frame))) => read.push(frame)?,
        }
    }
    Poll::Ready(Ok(()))
}

/// The rest of `body` after what `read` holds.
async fn read_body<B>(body: B, mut read: Collected) -> Result<Bytes, BodyError>
where
    B: http_body::Body,
{
    let mut body = std::pin::pin!(body);
    std::future::poll_fn(|cx| poll_body(body.as_mut(), &mut read, cx)).await?;
    Ok(read.finish())
}

/// One MCP Streamable HTTP endpoint (both protocol eras) as a
/// `tower::Service<http::Request<B>>`. Cheap to clone: every clone serves
/// the same sessions and streams.
///
/// It answers every request itself (no path routing: mount it at a route).
/// A response is the core's [`picomcp::http::Response`] with its headers,
/// plus `Cache-Control: no-cache` on SSE; the adapter's own refusals are
/// plain text: `413` (body over [`Config::max_body`]), `408` (body not in
/// within [`Config::body_timeout`]), `400` (the body could not be read).
pub struct McpService<S: 'static> {
    inner: Arc<Inner<S>>,
}

impl<S> Clone for McpService<S> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<S> std::fmt::Debug for McpService<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService")
            .field("config", &self.inner.config)
            .field("async_handlers", &self.inner.calls.is_some())
            .finish_non_exhaustive()
    }
}

/// Builds an [`McpService`].
pub struct Builder<S: 'static> {
    http: Http<'static, S>,
    sessions: Option<Box<dyn SharedStore>>,
    peers: Option<Box<dyn Peers>>,
    calls: Option<SpawnCalls>,
    calls_threads: usize,
    config: Config,
}

impl<S> std::fmt::Debug for Builder<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builder")
            .field("config", &self.config)
            .field("async_handlers", &self.calls.is_some())
            .field("calls_threads", &self.calls_threads)
            .finish_non_exhaustive()
    }
}

impl<S: Sync + 'static> Builder<S> {
    /// Serve through `http` (an endpoint with its own allowed hosts and
    /// origins) instead of `Http::new(server)`.
    pub fn http(mut self, http: Http<'static, S>) -> Self {
        self.http = http;
        self
    }

    /// Keep sessions in `store` (default: a `Mutex<Sessions<1024>>` whose
    /// sessions expire after 600 s unused; give a [`Sessions`] of another
    /// size or idle time, or a store shared by replicas). The store's
    /// clock (`now`) is the service's: seconds since it was built.
    pub fn sessions(mut self, store: impl SharedStore) -> Self {
        self.sessions = Some(Box::new(store));
        self
    }

    /// Share with the other replicas of a deployment what a session leaves
    /// on the replica that served it (see [`Peers`]); give them a session
    /// store they share too ([`sessions`](Self::sessions)).
    pub fn peers(mut self, peers: impl Peers) -> Self {
        self.peers = Some(Box::new(peers));
        self
    }

    /// The limits of one exchange.
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// Await the async handlers of `handlers` (registered with
    /// `Tool::awaiting` and the like): on threads of their own (one unless
    /// [`calls_threads`](Self::calls_threads) says more), each a
    /// current-thread tokio runtime and a `LocalSet`, where every call is
    /// a local task, so any number are in flight at once and a handler
    /// that awaits a timer or a socket holds no thread. Local, because a
    /// handler's future need not be `Send`. A call is cancelled where its
    /// handler awaits (the future is dropped, not run to its end) when its
    /// client stops waiting for the response (closes the connection: how a
    /// 2026-07-28 client cancels over HTTP), or, handshake era, when a
    /// `notifications/cancelled` of the same session names its request id
    /// (to any replica, with [`peers`](Self::peers)): its POST then ends
    /// `202` with no answer. A handshake-era handler that asks the client
    /// for input waits as a sync one does (its requests on its POST's held
    /// stream; run again, awaited, when the answers are in): the waiting
    /// calls' store is locked only before and after a handler, never while
    /// it awaits ([`picomcp::http::call`]). Without this, an async
    /// handler's call is answered `-32603` (the server does not await).
    pub fn async_handlers<A>(mut self, handlers: &'static A) -> Self
    where
        A: AsyncHandlers<S> + Sync + 'static,
    {
        let http = self.http;
        self.calls = Some(Box::new(move |threads: usize| {
            let threads: Box<[_]> = (0..threads)
                .filter_map(|n| calls_thread(http, handlers, n))
                .collect();
            (!threads.is_empty()).then(|| CallSenders {
                threads,
                next: AtomicUsize::new(0),
            })
        }));
        self
    }

    /// How many threads await the async handlers (default 1; 0 counts as
    /// 1). Calls are handed to them in turn, and a call stays on its
    /// thread to its end: more threads let calls whose handlers compute
    /// between their awaits (or whose answers are large) use more cores at
    /// once. Each thread runs the calls it is given concurrently, as the
    /// one thread does. A handler that blocks its thread (a synchronous
    /// wait) still holds up the calls that thread was given.
    pub fn calls_threads(mut self, threads: usize) -> Self {
        self.calls_threads = threads.max(1);
        self
    }

    /// The service.
    pub fn build(self) -> McpService<S> {
        let mut waiting = Box::new(Waiting::new());
        // A random first round: the ids of this replica's requests to
        // clients differ from another replica's.
        let mut round = [0u8; 4];
        crate::os_random(&mut round);
        waiting.set_round(u32::from_le_bytes(round));
        McpService {
            inner: Arc::new(Inner {
                http: self.http,
                sessions: self
                    .sessions
                    .unwrap_or_else(|| Box::new(Mutex::new(DEFAULT_SESSIONS))),
                waiting: Arc::new(Mutex::new(waiting)),
                streams: Mutex::new(Box::new(Streams::new())),
                held: Mutex::new(HashMap::new()),
                in_flight: Mutex::new(HashMap::new()),
                calls_count: Arc::new(tokio::sync::Semaphore::new(
                    self.config
                        .max_calls
                        .clamp(1, tokio::sync::Semaphore::MAX_PERMITS),
                )),
                calls: self.calls.and_then(|spawn| spawn(self.calls_threads)),
                config: self.config,
                start: Instant::now(),
                peers: self.peers,
                sweeping: AtomicBool::new(false),
                ending: AtomicBool::new(false),
                // No second yet.
                swept: AtomicU64::new(u64::MAX),
            }),
        }
    }
}

/// Calls thread number `n` of [`Builder::async_handlers`]: a
/// current-thread runtime and a `LocalSet` awaiting the handlers of the
/// calls sent to it. `None`: the thread could not be started.
fn calls_thread<S, A>(
    http: Http<'static, S>,
    handlers: &'static A,
    n: usize,
) -> Option<UnboundedSender<CallMsg>>
where
    S: Sync + 'static,
    A: AsyncHandlers<S> + Sync + 'static,
{
    let (tx, mut rx) = unbounded_channel::<CallMsg>();
    std::thread::Builder::new()
        .name(format!("picomcp-calls-{n}"))
        .spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return; // the sender side answers 503
            };
            let local = tokio::task::LocalSet::new();
            local.block_on(&runtime, async move {
                while let Some(((call, mut body, mut out, kept), cancel, mut done)) =
                    rx.recv().await
                {
                    tokio::task::spawn_local(async move {
                        // The client that stops waiting (closes the
                        // connection: on 2026-07-28 HTTP, the cancel)
                        // or cancels the call (`notifications/cancelled`,
                        // handshake era) drops the handler's future
                        // where it awaits.
                        let finished = async {
                            // (`_permit`: the call's place, given back
                            // when this ends or is dropped.)
                            let Kept {
                                mut bytes,
                                store,
                                start,
                                permit: _permit,
                            } = kept;
                            // The store is taken only after the
                            // handler, to park or free the call.
                            let mut lock_store = |f: &mut dyn FnMut(&mut WaitingCalls, u64)| {
                                f(&mut lock(&store), start.elapsed().as_secs());
                            };
                            http.finish_waiting(
                                call,
                                &mut body,
                                &mut bytes,
                                &mut out,
                                handlers,
                                &mut lock_store,
                            )
                            .await
                        };
                        let end = tokio::select! {
                            r = finished => Some(Some(r)),
                            () = done.closed() => None,
                            Ok(()) = cancel => Some(None),
                        };
                        if let Some(r) = end {
                            let _ = done.send(r.map(|r| (r, out)));
                        }
                    });
                }
            });
        })
        .ok()
        .map(|_| tx)
}

/// A `resources/subscribe` (`on`) or `resources/unsubscribe` of `uri`, as
/// a client would send it.
fn subscribe_message(uri: &str, on: bool) -> Vec<u8> {
    let method = if on {
        "resources/subscribe"
    } else {
        "resources/unsubscribe"
    };
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": "picomcp-relayed",
        "method": method,
        "params": {"uri": uri},
    })
    .to_string()
    .into_bytes()
}

/// Tell the peers what a client's POST of session `id` (`sent`, answered
/// with `answer`) leaves behind: its answers to the server's requests and
/// cancellations (relayed), its subscriptions that succeeded (recorded and
/// relayed).
fn share(peers: &dyn Peers, id: &SessionId, sent: &[u8], answer: &[u8]) {
    use serde_json::Value;
    let messages = match serde_json::from_slice::<Value>(sent) {
        Ok(Value::Array(batch)) => batch,
        Ok(one @ Value::Object(_)) => vec![one],
        _ => return,
    };
    let mut answers: Option<Vec<Value>> = None;
    for message in &messages {
        let method = message.get("method").and_then(Value::as_str);
        let is_answer = method.is_none()
            && message.get("id").is_some()
            && (message.get("result").is_some() || message.get("error").is_some());
        if is_answer || method == Some("notifications/cancelled") {
            peers.relay(id, message.to_string().as_bytes());
            continue;
        }
        let on = match method {
            Some("resources/subscribe") => true,
            Some("resources/unsubscribe") => false,
            _ => continue,
        };
        let (Some(uri), Some(request_id)) = (
            message.pointer("/params/uri").and_then(Value::as_str),
            message.get("id"),
        ) else {
            continue;
        };
        let answers = answers.get_or_insert_with(|| answers_in(answer));
        let served = answers
            .iter()
            .any(|a| a.get("id") == Some(request_id) && a.get("result").is_some());
        if served {
            peers.subscribed(id, uri, on);
            peers.relay(id, &subscribe_message(uri, on));
        }
    }
}

/// The JSON-RPC answers in a response body: JSON (one, or a batch's
/// array) or SSE events' `data:` lines.
fn answers_in(body: &[u8]) -> Vec<serde_json::Value> {
    use serde_json::Value;
    let flatten = |v: Value| match v {
        Value::Array(items) => items,
        one => vec![one],
    };
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        return flatten(v);
    }
    body.split(|&b| b == b'\n')
        .filter_map(|line| line.strip_prefix(b"data:"))
        .filter_map(|data| serde_json::from_slice::<Value>(data).ok())
        .flat_map(flatten)
        .collect()
}

fn plain(status: StatusCode, text: &'static str) -> Response<McpBody> {
    let mut r = Response::new(McpBody::bytes(Bytes::from_static(text.as_bytes())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// The response for what the core answered: status, headers, body.
fn response_for(r: &picomcp::http::Response, body: McpBody) -> Response<McpBody> {
    let Ok(status) = StatusCode::from_u16(r.status) else {
        return plain(StatusCode::INTERNAL_SERVER_ERROR, "not an HTTP status\n");
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    // The core's header names are known: no name is parsed; its constant
    // values are not checked again.
    for (name, value) in r.headers() {
        let name = match name {
            "Content-Type" => http::header::CONTENT_TYPE,
            "Allow" => http::header::ALLOW,
            "Retry-After" => http::header::RETRY_AFTER,
            "Mcp-Session-Id" => HeaderName::from_static("mcp-session-id"),
            other => match HeaderName::from_bytes(other.as_bytes()) {
                Ok(name) => name,
                Err(_) => continue,
            },
        };
        let value = match value {
            picomcp::http::JSON => HeaderValue::from_static(picomcp::http::JSON),
            picomcp::http::EVENT_STREAM => HeaderValue::from_static(picomcp::http::EVENT_STREAM),
            other => match HeaderValue::from_str(other) {
                Ok(value) => value,
                Err(_) => {
                    return plain(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "the answer's headers are not valid HTTP\n",
                    );
                }
            },
        };
        headers.insert(name, value);
    }
    if r.content_type == Some(picomcp::http::EVENT_STREAM) {
        headers.insert(
            http::header::CACHE_CONTROL,
            HeaderValue::from_static("no-cache"),
        );
    }
    response
}

impl<S: Sync + 'static> McpService<S> {
    /// A builder for an endpoint of `server` (`Http::new(server)`: `Host`
    /// and `Origin` on localhost only; see [`Builder::http`]).
    pub fn builder(server: &'static Server<'static, S>) -> Builder<S> {
        Builder {
            http: Http::new(server),
            sessions: None,
            peers: None,
            calls: None,
            calls_threads: 1,
            config: Config::default(),
        }
    }

    /// An endpoint of `server` with the defaults.
    pub fn new(server: &'static Server<'static, S>) -> Self {
        Self::builder(server).build()
    }

    /// End every notification stream of this service (a session's `GET`,
    /// a 2026-07-28 `subscriptions/listen`), now and any opened later: for
    /// a graceful shutdown ([`serve_with_shutdown`](crate::serve_with_shutdown)),
    /// so that the connections holding them can close and their clients
    /// reconnect (to another replica). Sessions stay; a stream of a call
    /// that waits for its client's answers is left to finish (or to
    /// [`Config::wait_timeout`]).
    pub fn end_streams(&self) {
        self.inner.ending.store(true, Ordering::SeqCst);
        NOTIFY.notify_waiters();
    }

    fn now(&self) -> u64 {
        self.inner.start.elapsed().as_secs()
    }

    /// Start the waiting-call sweep once, on the runtime of the first
    /// request; it ends with the last clone of the service.
    fn start_sweep(&self) {
        if self.inner.sweeping.swap(true, Ordering::Relaxed) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.inner.sweeping.store(false, Ordering::Relaxed);
            return;
        };
        let period = (self.inner.config.wait_timeout / 2)
            .clamp(Duration::from_secs(1), Duration::from_secs(60));
        let inner = Arc::downgrade(&self.inner);
        runtime.spawn(sweep(inner, period));
    }

    /// Serve `message` (one JSON-RPC message of session `session`, relayed
    /// by another replica through [`Peers::relay`]) as if its client had
    /// POSTed it here, and drop the answer: a client's answer reaches the
    /// call waiting here for it (its output goes on the call's SSE stream),
    /// a subscription is applied to the session's stream here.
    pub fn relayed(
        &self,
        session: SessionId,
        message: Vec<u8>,
    ) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        let this = self.clone();
        Box::pin(async move {
            let request = Request::builder()
                .method(Method::POST)
                .header(http::header::HOST, "127.0.0.1")
                .header(http::header::ACCEPT, "application/json, text/event-stream")
                .header(http::header::CONTENT_TYPE, "application/json")
                .header("mcp-session-id", session.hex().as_str())
                .body(http_body_util::Full::new(Bytes::from(message)));
            if let Ok(request) = request {
                let _ = this.serve_as(request, false).await;
            }
        })
    }

    /// Serve `req`; `from_client`: it came from a client, not from a peer
    /// (only a client's messages are shared with the peers).
    async fn serve_as<B>(
        self,
        req: Request<B>,
        from_client: bool,
    ) -> Result<Response<McpBody>, Infallible>
    where
        B: http_body::Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        let (parts, body) = req.into_parts();
        if let Some(refused) = self.refuse_declared(&parts, &body) {
            return Ok(refused);
        }
        // A body that is already here (most are: it came with the head) is
        // taken without arming the timer.
        let mut read = Collected::new(self.inner.config.max_body);
        let mut body = std::pin::pin!(body);
        let first = std::future::poll_fn(|cx| Poll::Ready(poll_body(body.as_mut(), &mut read, cx)));
        Ok(match first.await {
            Poll::Ready(Ok(())) => self.serve_body(parts, read.finish(), from_client).await,
            Poll::Ready(Err(refused)) => refused.response(),
            // Boxed, as the timer is only armed for a body still on its way.
            Poll::Pending => Box::pin(self.serve_rest(parts, body, read, from_client)).await,
        })
    }

    /// A declared length over the cap is refused before a byte is read:
    /// the body's exact size when it knows it (hyper's does, from
    /// `Content-Length`: no header lookup, about 100 instructions a
    /// request), else the header.
    fn refuse_declared<B: http_body::Body>(
        &self,
        parts: &http::request::Parts,
        body: &B,
    ) -> Option<Response<McpBody>> {
        let declared = body.size_hint().exact().or_else(|| {
            parts
                .headers
                .get(http::header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
        });
        declared
            .is_some_and(|n| n > self.inner.config.max_body as u64)
            .then(|| BodyError::TooLarge.response())
    }

    /// What the peers are told about: a client's request of a session.
    fn peers_of(
        &self,
        parts: &http::request::Parts,
        from_client: bool,
    ) -> Option<(&dyn Peers, SessionId)> {
        self.inner
            .peers
            .as_deref()
            .filter(|_| from_client)
            .and_then(|p| {
                let id = parts.headers.get("mcp-session-id")?.to_str().ok()?;
                Some((p, SessionId::parse(id.trim())?))
            })
    }

    /// A session's `GET` with peers: the session's subscriptions, made
    /// through any replica, are applied here before its stream opens (the
    /// one step before the core's that awaits).
    fn relays_first(
        &self,
        parts: &http::request::Parts,
        from_client: bool,
    ) -> Option<(&dyn Peers, SessionId)> {
        self.peers_of(parts, from_client)
            .filter(|_| parts.method == Method::GET)
    }

    /// The rest of `body` after what `read` holds, under the body timeout
    /// (armed only for a body still on its way), then its answer.
    async fn serve_rest<B: http_body::Body>(
        &self,
        parts: http::request::Parts,
        body: B,
        read: Collected,
        from_client: bool,
    ) -> Response<McpBody> {
        let timeout = self.inner.config.body_timeout;
        match tokio::time::timeout(timeout, read_body(body, read)).await {
            Ok(Ok(body)) => self.serve_body(parts, body, from_client).await,
            Ok(Err(refused)) => refused.response(),
            Err(_) => BodyError::TimedOut.response(),
        }
    }

    /// Serve a request whose body is all here.
    async fn serve_body(
        &self,
        parts: http::request::Parts,
        body: Bytes,
        from_client: bool,
    ) -> Response<McpBody> {
        if let Some((p, id)) = self.relays_first(&parts, from_client) {
            for uri in p.subscriptions(&id) {
                self.relayed(id, subscribe_message(&uri, true)).await;
            }
        }
        match self.answer_now(&parts, &body, from_client) {
            Ok(r) => r,
            // Boxed: the call's future is most of this one's size, and only
            // an async handler's call (a rare request) makes it.
            Err(job) => Box::pin(self.finish_call(*job, session_of(&parts.headers))).await,
        }
    }

    /// The core's answer to a request whose body is all here, or the call
    /// an async handler is to finish.
    fn answer_now(
        &self,
        parts: &http::request::Parts,
        body: &Bytes,
        from_client: bool,
    ) -> Result<Response<McpBody>, Box<CallJob>> {
        let inner = &*self.inner;
        let config = &inner.config;
        let now = self.now();
        let peers = self.peers_of(parts, from_client);
        let sent = match peers {
            Some(_) if parts.method == Method::POST => Some(body.clone()),
            _ => None,
        };
        let headers = HeaderView(&parts.headers);
        BUFFERS.with(|buffers| -> Result<Response<McpBody>, Box<CallJob>> {
            let Buffers { out, input } = &mut *buffers.borrow_mut();
            if out.len() != config.max_response {
                // Zeroed by the allocator (`calloc`: fresh pages from the
                // OS for a large buffer), not written over byte by byte on
                // each thread's first request.
                *out = vec![0; config.max_response];
            }
            input.clear();
            input.extend_from_slice(body);
            let mut request =
                picomcp::http::Request::new(parts.method.as_str(), &headers, input, now);
            if let Some(subject) = config
                .subject_header
                .as_ref()
                .and_then(|name| parts.headers.get(name))
            {
                request = request.subject(subject.as_bytes());
            }
            // The tables are locked while the core runs (a sync handler
            // included: it takes them as `&mut`), never while an async
            // handler awaits.
            let mut sessions = Store(&*inner.sessions);
            let mut waiting = lock(&inner.waiting);
            inner.expire_waiting(&mut waiting, now, out);
            let mut streams = lock(&inner.streams);
            let begun = if inner.calls.is_some() {
                inner.http.begin_streams(
                    &mut sessions,
                    &mut random_id,
                    &mut **waiting,
                    &mut **streams,
                    request,
                    out,
                )
            } else {
                // Nothing awaits here: the core answers an async
                // handler's call `-32603` itself.
                Begun::Response(inner.http.handle_streams(
                    &mut sessions,
                    &mut random_id,
                    &mut **waiting,
                    &mut **streams,
                    request,
                    out,
                ))
            };
            let r = match begun {
                Begun::Response(r) => {
                    drop((waiting, streams));
                    r
                }
                Begun::Call(mut call) => {
                    // Its own buffers while it awaits: a first run takes a
                    // place among `max_calls` first (nothing of it is in
                    // the store yet: refused, it leaves no trace).
                    let permit = if call.runs_again() {
                        None
                    } else {
                        match Arc::clone(&inner.calls_count).try_acquire_owned() {
                            Ok(permit) => Some(permit),
                            Err(_) => {
                                drop((waiting, streams));
                                let mut busy = plain(
                                    StatusCode::SERVICE_UNAVAILABLE,
                                    "too many calls in flight\n",
                                );
                                busy.headers_mut().insert(
                                    http::header::RETRY_AFTER,
                                    HeaderValue::from_static(picomcp::http::RETRY_AFTER),
                                );
                                return Ok(busy);
                            }
                        }
                    };
                    // A handshake-era call that may ask for input keeps its
                    // part of the store, copied while it is still locked.
                    // (Nothing for any other call: `finish_waiting` then
                    // finishes it as `finish` does.)
                    let mut bytes = vec![0u8; call.kept_len()];
                    inner.http.keep(&mut call, &mut **waiting, &mut bytes);
                    let kept = Kept {
                        bytes,
                        store: Arc::clone(&inner.waiting),
                        start: inner.start,
                        permit,
                    };
                    drop((waiting, streams));
                    // The call's own output buffer, starting with the open answer.
                    let mut own = vec![0u8; config.max_response];
                    own[..call.written()].copy_from_slice(&out[..call.written()]);
                    // And its own copy of the body (as the core left it).
                    return Err(Box::new((call, input.clone(), own, kept)));
                }
            };
            if r.poll_streams {
                crate::wake();
            }
            if let Some((start, end)) = r.cancels
                && let Some(session) = session_of(&parts.headers)
                && let Some(id) = input.get(start..end)
                && let Some((_, cancel)) = lock(&inner.in_flight).remove(&(session, id.to_vec()))
            {
                let _ = cancel.send(());
            }
            if let (Some((p, id)), Some(sent)) = (peers, sent.as_deref()) {
                share(p, &id, sent, &out[..r.body_len]);
            }
            let bytes = Bytes::copy_from_slice(&out[..r.body_len]);
            let mut reply = if r.deliver.is_none() && r.hold.is_none() {
                McpBody::bytes(bytes)
            } else {
                match self.waiting_output(&r, bytes) {
                    Ok(reply) => reply,
                    Err(delivered) => return Ok(delivered),
                }
            };
            if let Some(id) = r.stream {
                let (tx, rx) = unbounded_channel();
                reply.rest = Some(rx);
                // A session's `GET` stream keeps its session in use; a
                // listen stream belongs to no session.
                let of_session = parts.method == Method::GET;
                tokio::spawn(self.clone().notification_stream(id, tx, of_session));
            }
            Ok(response_for(&r, reply))
        })
    }

    /// The body of response `r`, whose output is `bytes`: held open when
    /// its call waits for the client (`r.hold`: the call's later output
    /// goes on it). `Err`: the output belongs on a waiting call's stream
    /// (`r.deliver`), sent there; this request's own response is empty.
    /// (Out of line: most responses have neither.)
    #[inline(never)]
    fn waiting_output(
        &self,
        r: &picomcp::http::Response,
        bytes: Bytes,
    ) -> Result<McpBody, Response<McpBody>> {
        let inner = &*self.inner;
        if let Some(delivery) = r.deliver {
            let mut held = lock(&inner.held);
            if let Some(tx) = held.get(&delivery.call.0)
                && !bytes.is_empty()
            {
                let _ = tx.send(bytes);
            }
            if delivery.last {
                held.remove(&delivery.call.0); // ends the stream
            }
            let mut empty = Response::new(McpBody::bytes(Bytes::new()));
            *empty.status_mut() = StatusCode::from_u16(r.status).unwrap_or(StatusCode::ACCEPTED);
            return Err(empty);
        }
        let mut reply = McpBody::bytes(bytes);
        if let Some(call) = r.hold {
            let (tx, rx) = unbounded_channel();
            lock(&inner.held).insert(call.0, tx);
            reply.rest = Some(rx);
        }
        Ok(reply)
    }

    /// Have a call's handler awaited (on the calls thread) and answer it;
    /// a call of a `session` can be cancelled by its request id until then.
    async fn finish_call(&self, job: CallJob, session: Option<SessionId>) -> Response<McpBody> {
        if job.0.runs_again() {
            // A call run again with the client's answers: its output goes
            // to the stream of the request that made it, so it runs on its
            // own, not as part of this POST (the client's answer,
            // accepted), whose client may go meanwhile. A
            // `notifications/cancelled` drops it, and so does the client
            // of that stream going away (no one would read the output).
            // (A weak handle: the stream still ends when its entry is
            // removed, at the call's last output or its time limit; this
            // task holds it for a second at a time.)
            let held = job
                .0
                .held(&job.3.bytes)
                .and_then(|call| lock(&self.inner.held).get(&call.0).map(|s| s.downgrade()));
            let this = self.clone();
            tokio::spawn(async move {
                let call = this.await_call(job, session);
                let Some(held) = held else {
                    drop(call.await);
                    return;
                };
                tokio::pin!(call);
                while let Some(stream) = held.upgrade() {
                    tokio::select! {
                        r = &mut call => return drop(r),
                        () = stream.closed() => return,
                        () = tokio::time::sleep(Duration::from_secs(1)) => {}
                    }
                }
            });
            return accepted();
        }
        self.await_call(job, session).await
    }

    /// [`finish_call`](Self::finish_call)'s wait for the calls thread.
    async fn await_call(&self, job: CallJob, session: Option<SessionId>) -> Response<McpBody> {
        let Some(calls) = self.inner.calls.as_ref() else {
            // Unreachable: without a calls thread the core is not asked
            // to defer a call.
            return plain(
                StatusCode::INTERNAL_SERVER_ERROR,
                "an async handler, but no Builder::async_handlers\n",
            );
        };
        let (cancel_tx, cancel_rx) = oneshot::channel();
        let in_flight = InFlightCall {
            table: &self.inner.in_flight,
            key: session.map(|s| (s, job.0.id(&job.2).to_vec())),
            call: CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        };
        if let Some(key) = &in_flight.key {
            lock(in_flight.table).insert(key.clone(), (in_flight.call, cancel_tx));
        }
        let (tx, rx) = oneshot::channel();
        if calls.send((job, cancel_rx, tx)).is_err() {
            return plain(StatusCode::SERVICE_UNAVAILABLE, "calls thread gone\n");
        }
        let (r, out) = match rx.await {
            Ok(Some(done)) => done,
            // Cancelled: no answer, the request's POST ends with `202`.
            Ok(None) => return accepted(),
            Err(_) => return plain(StatusCode::INTERNAL_SERVER_ERROR, "call dropped\n"),
        };
        // A handshake-era call that asked waits (its stream is held); one
        // run again with the client's answers delivers to that stream.
        match self.waiting_output(&r, Bytes::copy_from_slice(&out[..r.body_len])) {
            Ok(reply) => response_for(&r, reply),
            Err(delivered) => delivered,
        }
    }

    /// Keep a notification stream (a session's `GET`, a listen) fed: poll
    /// it whenever [`crate::wake`] is called, until it is over or the
    /// client has gone (then its slot is given back).
    ///
    /// Every [`Config::keep_alive`] it writes an SSE comment
    /// (`: keep-alive`): proxies and clients see a live stream, and a
    /// client that has gone is found (the send fails). A session's stream
    /// also marks its session used, so a client that only listens keeps
    /// its session; the stream ends when its session does.
    async fn notification_stream(
        self,
        id: SessionId,
        tx: UnboundedSender<Bytes>,
        of_session: bool,
    ) {
        let inner = &*self.inner;
        let mut keep_alive =
            tokio::time::interval(inner.config.keep_alive.max(Duration::from_secs(1)));
        keep_alive.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        keep_alive.tick().await; // the first tick is at once
        let mut buf = vec![0u8; STREAM_BUFFER];
        loop {
            // Registered before polling, so a change in between is not missed.
            let notified = NOTIFY.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if inner.ending.load(Ordering::SeqCst) {
                break; // `end_streams` (after `enable`: its wake is not missed)
            }
            let polled = inner
                .http
                .poll_stream(&mut **lock(&inner.streams), &id, &mut buf);
            let Some((n, last)) = polled else { break };
            if n > 0 && tx.send(Bytes::copy_from_slice(&buf[..n])).is_err() {
                break;
            }
            if last {
                break;
            }
            tokio::select! {
                () = &mut notified => {}
                () = tx.closed() => break,
                _ = keep_alive.tick() => {
                    if of_session && inner.sessions.load(&id, self.now()).is_none() {
                        break; // the session ended (deleted or expired)
                    }
                    if tx.send(Bytes::from_static(b": keep-alive\n\n")).is_err() {
                        break;
                    }
                }
            }
        }
        lock(&inner.streams).close(&id);
    }
}

impl<S, B> tower_service::Service<Request<B>> for McpService<S>
where
    S: Sync + 'static,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<McpBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        // One future, not one awaiting another: each level of async fn
        // keeps its own copy of the request (a larger future, moved in
        // whole into its box).
        self.start_sweep();
        Box::pin(self.clone().serve_as(req, true))
    }
}

/// An MCP response future that needs no allocation for a request the core
/// answers at once (its body here with its head, no handler to await):
/// what [`crate::Mount`] gives for a body that is `Unpin` (hyper's, axum's).
/// Anything else (a body still on its way, a `GET` with peers, an async
/// handler's call) goes on as [`McpService`]'s own boxed future.
pub(crate) struct Fast<S: 'static, B> {
    state: FastState<S, B>,
}

// The request is held inline, not boxed: an allocation a request is what
// this future is for not making.
#[allow(clippy::large_enum_variant)]
enum FastState<S: 'static, B> {
    Start(McpService<S>, Request<B>),
    Slow(Pin<Box<dyn Future<Output = Response<McpBody>> + Send>>),
    Over,
}

impl<S: Sync + 'static> McpService<S> {
    /// `req`'s answer as a [`Fast`] future.
    pub(crate) fn call_fast<B>(&self, req: Request<B>) -> Fast<S, B> {
        self.start_sweep();
        Fast {
            state: FastState::Start(self.clone(), req),
        }
    }
}

impl<S, B> Future for Fast<S, B>
where
    S: Sync + 'static,
    B: http_body::Body + Send + Unpin + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Output = Response<McpBody>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Response<McpBody>> {
        let this = self.get_mut();
        loop {
            match std::mem::replace(&mut this.state, FastState::Over) {
                FastState::Start(service, req) => {
                    let (parts, mut body) = req.into_parts();
                    if let Some(refused) = service.refuse_declared(&parts, &body) {
                        return Poll::Ready(refused);
                    }
                    let mut read = Collected::new(service.inner.config.max_body);
                    match poll_body(Pin::new(&mut body), &mut read, cx) {
                        Poll::Ready(Ok(())) => {}
                        Poll::Ready(Err(refused)) => return Poll::Ready(refused.response()),
                        // The rest under the body timeout, as `serve_as`'s.
                        Poll::Pending => {
                            this.state = FastState::Slow(Box::pin(async move {
                                service.serve_rest(parts, body, read, true).await
                            }));
                            continue;
                        }
                    }
                    let body = read.finish();
                    if service.relays_first(&parts, true).is_some() {
                        this.state = FastState::Slow(Box::pin(async move {
                            service.serve_body(parts, body, true).await
                        }));
                        continue;
                    }
                    match service.answer_now(&parts, &body, true) {
                        Ok(r) => return Poll::Ready(r),
                        Err(job) => {
                            this.state = FastState::Slow(Box::pin(async move {
                                let session = session_of(&parts.headers);
                                service.finish_call(*job, session).await
                            }));
                        }
                    }
                }
                FastState::Slow(mut f) => {
                    let r = f.as_mut().poll(cx);
                    if r.is_pending() {
                        this.state = FastState::Slow(f);
                    }
                    return r;
                }
                // Polled again after its answer: a future's contract allows
                // anything but undefined behaviour; this one answers 500.
                FastState::Over => {
                    return Poll::Ready(plain(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "polled after its answer\n",
                    ));
                }
            }
        }
    }
}
