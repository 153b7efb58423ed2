//! The hyper 1 adapter shared by `http_bookshop` and `conformance_fixture`:
//! one `static` picomcp `Server`, a tokio multi-thread runtime, and the
//! sans-IO `picomcp::http` mapping. No lock around dispatch: the session
//! table sits behind a mutex held only to copy a `Connection` out or write
//! it back, never across a handler.

use std::cell::RefCell;
use std::collections::HashMap;
use std::convert::Infallible;
use std::io::Read;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{LazyLock, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Limited};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{HeaderMap, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use picomcp::asynch::AsyncHandlers;
use picomcp::http::call::{Begun, PendingCall};
use picomcp::http::{Headers, Http, SessionId, SessionStore, Sessions, Streams};
use picomcp::server::Waiting;
use picomcp::{Connection, Server};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// Handshake-era calls waiting for a client's answers (elicitation,
/// sampling, roots), for every session: 16 at once, 16 KiB each.
static WAITING: Mutex<Waiting<16, { 16 << 10 }>> = Mutex::new(Waiting::new());

/// The notification streams: 256 slots (sessions with subscriptions or a
/// `GET` stream, and 2026-07-28 listen streams), each up to 8 URIs of at
/// most 256 bytes: 256 × (8 × 264 + about 130) bytes, about 570 KiB.
static NOTE_STREAMS: Mutex<Streams<256, 8, 256>> = Mutex::new(Streams::new());

/// Woken by the server's `Changes` (`Changes::on_change(serve::wake)`): every
/// open notification stream looks for what is due.
static NOTIFY: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// The `on_change` hook of the server's `Changes`.
#[allow(dead_code)] // not every includer announces changes
pub fn wake() {
    NOTIFY.notify_waiters();
}

/// hyper's read buffer per connection.
const READ_BUFFER: usize = 32 << 10;

/// Bytes of SSE events one stream poll may write.
const STREAM_BUFFER: usize = 16 << 10;

/// The SSE streams held open for waiting calls, by call: where the rest of
/// a call (more requests, its final answer) is sent.
static STREAMS: LazyLock<Mutex<HashMap<u64, UnboundedSender<Bytes>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A response body: what `Http::handle` wrote, then, for a held stream,
/// whatever is delivered to it until its call is over.
pub struct Reply {
    first: Option<Bytes>,
    rest: Option<UnboundedReceiver<Bytes>>,
    /// The request stays in flight (no header or idle timeout on its
    /// connection) until this body is dropped.
    in_flight: Option<InFlight>,
}

impl Reply {
    fn bytes(b: Bytes) -> Self {
        Reply {
            first: (!b.is_empty()).then_some(b),
            rest: None,
            in_flight: None,
        }
    }
}

/// What one connection is doing, for its header and idle timeouts.
///
/// hyper's own `header_read_timeout` starts as soon as a connection waits
/// for its next request, so it is the keep-alive idle timeout as well; an
/// idle timeout longer than the header timeout needs this watch instead.
/// The connection is closed when it is idle (no request in flight, no byte
/// of a next one) for `--idle-timeout-s`, or when bytes of a next request
/// have arrived but its headers are not complete within
/// `--header-timeout-s`. Bytes of a pipelined request read while another
/// is in flight count as idle time (the idle timeout bounds them).
struct Watch {
    base: Instant,
    /// Requests whose response body is not over yet.
    in_flight: AtomicUsize,
    /// Milliseconds from `base` to when the connection last became idle.
    idle_since: AtomicU64,
    /// Milliseconds from `base` to the first byte of the next request, plus
    /// one; 0 while none has come.
    head_since: AtomicU64,
    /// Woken when a request begins or ends (the deadline moves).
    changed: tokio::sync::Notify,
}

impl Watch {
    fn new() -> Arc<Self> {
        Arc::new(Watch {
            base: Instant::now(),
            in_flight: AtomicUsize::new(0),
            idle_since: AtomicU64::new(0),
            // A new connection owes its first request's headers from the
            // start (as nginx's client_header_timeout): not idle time.
            head_since: AtomicU64::new(1),
            changed: tokio::sync::Notify::new(),
        })
    }

    fn now_ms(&self) -> u64 {
        self.base.elapsed().as_millis() as u64
    }

    /// Bytes arrived.
    fn read(&self) {
        if self.in_flight.load(Ordering::Acquire) == 0 {
            let now = self.now_ms() + 1;
            let _ = self
                .head_since
                .compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire);
            self.changed.notify_one();
        }
    }

    /// hyper handed a request to the service: its headers are complete.
    fn begin(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.head_since.store(0, Ordering::Release);
        self.changed.notify_one();
        InFlight(self.clone())
    }

    /// When the connection is to be closed, if nothing changes first.
    fn deadline(&self, header: Duration, idle: Duration) -> Option<Instant> {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return None;
        }
        let (at, limit) = match self.head_since.load(Ordering::Acquire) {
            0 => (self.idle_since.load(Ordering::Acquire), idle),
            head => (head - 1, header),
        };
        Some(self.base + Duration::from_millis(at) + limit)
    }
}

/// A request in flight; dropped with its response body.
struct InFlight(Arc<Watch>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let w = &self.0;
        w.idle_since.store(w.now_ms(), Ordering::Release);
        w.in_flight.fetch_sub(1, Ordering::AcqRel);
        w.changed.notify_one();
    }
}

/// A TCP stream that tells its [`Watch`] when bytes arrive.
struct Watched {
    stream: tokio::net::TcpStream,
    watch: Arc<Watch>,
}

impl tokio::io::AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.stream).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.watch.read();
        }
        r
    }
}

impl tokio::io::AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

impl hyper::body::Body for Reply {
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
}

/// Size limits of one exchange.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Largest request body; more is `413`.
    pub max_body: usize,
    /// Output buffer per worker thread (bounds one answer).
    pub max_response: usize,
    /// Seconds a handshake-era session may stay unused before it expires.
    pub session_idle_s: u64,
    /// `--key-file PATH`: the secret (see [`secret`]).
    pub key_file: Option<&'static str>,
    /// Seconds a client may take to send a request's headers, from their
    /// first byte (see `Watch`); then the connection is closed.
    pub header_timeout_s: u64,
    /// Seconds a client may take to send a request's body; then `408`.
    pub body_timeout_s: u64,
    /// Seconds a keep-alive connection may stay idle (no request in flight,
    /// no byte of a next one) before it is closed.
    pub idle_timeout_s: u64,
    /// Seconds between SSE keep-alive comments on a notification stream.
    pub keep_alive_s: u64,
    /// `--subject-header NAME`: the header an authenticating proxy in front
    /// sets to the client's principal; 2026-07-28 request state is bound
    /// to it (`picomcp::http::Request::subject`). Only for a server that
    /// the proxy alone can reach, and a proxy that overwrites the header:
    /// a client that can set it can claim any subject.
    pub subject_header: Option<&'static str>,
    /// Connections served at once; more wait in the listen backlog until
    /// one closes (no accept, no file descriptor, no memory for them).
    pub max_connections: usize,
    /// Seconds a sealed request state stays valid (0: forever).
    pub state_ttl_s: u64,
    /// `--delay-ms N`: milliseconds an example's stand-in for an upstream
    /// call waits (`http_bookshop`'s `get_author`); 0: none.
    pub delay_ms: u64,
    /// `--blocking-delay`: that wait blocks the worker thread (a sync
    /// handler) instead of awaiting a timer, for comparison.
    pub blocking_delay: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body: 64 << 10,
            max_response: 256 << 10,
            session_idle_s: 600,
            key_file: None,
            header_timeout_s: 30,
            body_timeout_s: 30,
            idle_timeout_s: 75,
            keep_alive_s: 15,
            subject_header: None,
            max_connections: 512,
            state_ttl_s: 300,
            delay_ms: 0,
            blocking_delay: false,
        }
    }
}

/// `picomcp::http::Headers` over hyper's header map.
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
}

/// The session table behind a mutex; every call locks only for itself.
struct Locked<'a, const N: usize>(&'a Mutex<Sessions<N>>);

impl<const N: usize> Locked<'_, N> {
    fn table(&self) -> std::sync::MutexGuard<'_, Sessions<N>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl<const N: usize> SessionStore for Locked<'_, N> {
    fn load(&mut self, id: &SessionId, now: u64) -> Option<Connection> {
        self.table().load(id, now)
    }
    fn save(&mut self, id: &SessionId, conn: Connection, now: u64) {
        self.table().save(id, conn, now)
    }
    fn insert(&mut self, id: SessionId, conn: Connection, now: u64) {
        self.table().insert(id, conn, now)
    }
    fn try_insert(&mut self, id: SessionId, conn: Connection, now: u64) -> bool {
        self.table().try_insert(id, conn, now)
    }
    fn remove(&mut self, id: &SessionId) -> bool {
        self.table().remove(id)
    }
}

/// 128 bits from the OS.
fn random_id(bytes: &mut [u8; 16]) {
    let ok = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(bytes));
    if ok.is_err() {
        // Fallback: std's per-process random hasher keys.
        use std::hash::{BuildHasher, Hasher};
        for (i, chunk) in bytes.chunks_mut(8).enumerate() {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_usize(i);
            chunk.copy_from_slice(&h.finish().to_le_bytes());
        }
    }
}

thread_local! {
    /// One output buffer per worker thread: handling never awaits, so a
    /// request borrows it from start to finish of the synchronous call.
    static OUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

fn plain(status: StatusCode, text: &'static str) -> Response<Reply> {
    let mut r = Response::new(Reply::bytes(Bytes::from_static(text.as_bytes())));
    *r.status_mut() = status;
    r
}

async fn serve_one<S: Sync + 'static, const N: usize>(
    http: Http<'static, S>,
    sessions: &'static Mutex<Sessions<N>>,
    start: Instant,
    limits: Limits,
    req: Request<Incoming>,
) -> Result<Response<Reply>, std::convert::Infallible> {
    if req.uri().path() != "/mcp" {
        return Ok(plain(
            StatusCode::NOT_FOUND,
            "not found: the endpoint is /mcp\n",
        ));
    }
    let (parts, body) = req.into_parts();
    // A declared length over the cap is refused before a byte is read.
    let declared = parts
        .headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits.max_body as u64) {
        return Ok(plain(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request body too large\n",
        ));
    }
    let read = Limited::new(body, limits.max_body).collect();
    let body_timeout = Duration::from_secs(limits.body_timeout_s);
    let mut body = match tokio::time::timeout(body_timeout, read).await {
        Ok(Ok(b)) => b.to_bytes().to_vec(),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            return Ok(plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                "request body too large\n",
            ));
        }
        Ok(Err(_)) => return Ok(plain(StatusCode::BAD_REQUEST, "could not read the body\n")),
        Err(_) => {
            return Ok(plain(
                StatusCode::REQUEST_TIMEOUT,
                "the request body did not arrive in time\n",
            ));
        }
    };
    let now = start.elapsed().as_secs();
    let headers = HeaderView(&parts.headers);
    let response = OUT.with(
        |out| -> Result<Result<Response<Reply>, hyper::http::Error>, Box<CallJob>> {
            let mut out = out.borrow_mut();
            if out.len() != limits.max_response {
                out.resize(limits.max_response, 0);
            }
            let mut request =
                picomcp::http::Request::new(parts.method.as_str(), &headers, &mut body, now);
            if let Some(subject) = limits
                .subject_header
                .and_then(|name| parts.headers.get(name))
            {
                request = request.subject(subject.as_bytes());
            }
            // One store for every session; held only while the core runs,
            // never while an async tool's handler awaits.
            let r = match http.begin_streams(
                &mut Locked(sessions),
                &mut random_id,
                &mut *lock(&WAITING),
                &mut *lock(&NOTE_STREAMS),
                request,
                &mut out,
            ) {
                Begun::Response(r) => r,
                Begun::Call(call) => {
                    // The call's own output buffer, starting with the open answer.
                    let mut own = vec![0u8; limits.max_response];
                    own[..call.written()].copy_from_slice(&out[..call.written()]);
                    return Err(Box::new((call, std::mem::take(&mut body), own)));
                }
            };
            if r.poll_streams {
                wake();
            }
            let bytes = Bytes::copy_from_slice(&out[..r.body_len]);
            if let Some(delivery) = r.deliver {
                // This request's output belongs on a waiting call's stream.
                let mut streams = lock(&STREAMS);
                if let Some(tx) = streams.get(&delivery.call.0)
                    && !bytes.is_empty()
                {
                    let _ = tx.send(bytes);
                }
                if delivery.last {
                    streams.remove(&delivery.call.0); // ends the stream
                }
                return Ok(Response::builder()
                    .status(r.status)
                    .body(Reply::bytes(Bytes::new())));
            }
            let mut builder = Response::builder().status(r.status);
            for (name, value) in r.headers() {
                builder = builder.header(name, value);
            }
            if r.content_type == Some(picomcp::http::EVENT_STREAM) {
                builder = builder.header("Cache-Control", "no-cache");
            }
            let mut reply = Reply::bytes(bytes);
            if let Some(call) = r.hold {
                let (tx, rx) = unbounded_channel();
                lock(&STREAMS).insert(call.0, tx);
                reply.rest = Some(rx);
            }
            if let Some(id) = r.stream {
                let (tx, rx) = unbounded_channel();
                reply.rest = Some(rx);
                // A session's `GET` stream keeps its session in use; a listen
                // stream belongs to no session.
                let session = (parts.method == hyper::Method::GET).then_some((sessions, start));
                tokio::spawn(notification_stream(
                    http,
                    id,
                    tx,
                    session,
                    limits.keep_alive_s,
                ));
            }
            Ok(builder.body(reply))
        },
    );
    let response = match response {
        Ok(r) => r,
        Err(job) => finish_call(*job).await,
    };
    Ok(response.unwrap_or_else(|_| plain(StatusCode::INTERNAL_SERVER_ERROR, "bad response\n")))
}

/// An async tool's call, stopped before its handler: the call, the request
/// body and the call's output buffer.
type CallJob = (PendingCall, Vec<u8>, Vec<u8>);

/// The answer of a finished call: the response and its output buffer.
type CallDone = (picomcp::http::Response, Vec<u8>);

/// Where calls are sent to have their handlers awaited (see [`spawn_calls`]).
static CALLS: OnceLock<UnboundedSender<(CallJob, tokio::sync::oneshot::Sender<CallDone>)>> =
    OnceLock::new();

/// Await async tools' handlers on a thread of their own: a current-thread
/// tokio runtime and a `LocalSet`, where every call is a local task, so any
/// number are in flight at once (a handler that awaits a timer or a socket
/// holds no thread). Local, because a handler's future is not `Send` (its
/// context holds the notification sink as a `&mut dyn Notify`).
#[allow(dead_code)] // not every includer has async tools
pub fn spawn_calls<S, A>(http: Http<'static, S>, tools: &'static A)
where
    S: Sync + 'static,
    A: AsyncHandlers<S> + Sync + 'static,
{
    let (tx, mut rx) = unbounded_channel::<(CallJob, tokio::sync::oneshot::Sender<CallDone>)>();
    if CALLS.set(tx).is_err() {
        return;
    }
    std::thread::Builder::new()
        .name("picomcp-calls".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("tokio runtime for calls");
            let local = tokio::task::LocalSet::new();
            local.block_on(&runtime, async move {
                while let Some(((call, mut body, mut out), done)) = rx.recv().await {
                    tokio::task::spawn_local(async move {
                        let r = http.finish(call, &mut body, &mut out, tools).await;
                        let _ = done.send((r, out));
                    });
                }
            });
        })
        .expect("calls thread");
}

/// Have a call's handler awaited (on the calls thread) and build its
/// response.
async fn finish_call(job: CallJob) -> Result<Response<Reply>, hyper::http::Error> {
    let Some(calls) = CALLS.get() else {
        return Ok(plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            "an async tool, but no calls thread\n",
        ));
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    if calls.send((job, tx)).is_err() {
        return Ok(plain(
            StatusCode::SERVICE_UNAVAILABLE,
            "calls thread gone\n",
        ));
    }
    let Ok((r, out)) = rx.await else {
        return Ok(plain(StatusCode::INTERNAL_SERVER_ERROR, "call dropped\n"));
    };
    let mut builder = Response::builder().status(r.status);
    for (name, value) in r.headers() {
        builder = builder.header(name, value);
    }
    if r.content_type == Some(picomcp::http::EVENT_STREAM) {
        builder = builder.header("Cache-Control", "no-cache");
    }
    builder.body(Reply::bytes(Bytes::copy_from_slice(&out[..r.body_len])))
}

/// Serve `server` on `127.0.0.1:port`, endpoint `/mcp`, until killed.
/// Keep a notification stream (a session's `GET`, a listen) fed: poll it
/// whenever the server's changes wake us, until it is over or the client
/// has gone (then its slot is given back).
///
/// Every `keep_alive_s` seconds it writes an SSE comment (`: keep-alive`):
/// proxies and clients see a live stream, and a client that has gone is
/// found (the write fails) and its slot given back. A session's stream then
/// also marks its session used, so a client that only listens keeps its
/// session past `--session-idle-s`; the stream ends when its session does.
async fn notification_stream<S: Sync + 'static, const N: usize>(
    http: Http<'static, S>,
    id: SessionId,
    tx: UnboundedSender<Bytes>,
    session: Option<(&'static Mutex<Sessions<N>>, Instant)>,
    keep_alive_s: u64,
) {
    let mut keep_alive = tokio::time::interval(Duration::from_secs(keep_alive_s.max(1)));
    keep_alive.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    keep_alive.tick().await; // the first tick is at once
    let mut buf = vec![0u8; STREAM_BUFFER];
    loop {
        // Registered before polling, so a change in between is not missed.
        let notified = NOTIFY.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let polled = http.poll_stream(&mut lock(&NOTE_STREAMS), &id, &mut buf);
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
                if let Some((sessions, start)) = session
                    && lock(sessions).load(&id, start.elapsed().as_secs()).is_none()
                {
                    break; // the session ended (deleted or expired)
                }
                if tx.send(Bytes::from_static(b": keep-alive\n\n")).is_err() {
                    break;
                }
            }
        }
    }
    lock(&NOTE_STREAMS).close(&id);
}

/// Seconds since the Unix epoch: the clock of sealed request state (every
/// replica reads the same one).
#[allow(dead_code)] // not every includer seals
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `server` with request states that expire after `limits.state_ttl_s`.
#[allow(dead_code)] // not every includer seals
pub fn with_state_ttl<S>(server: Server<'static, S>, limits: &Limits) -> Server<'static, S> {
    match limits.state_ttl_s {
        0 => server,
        ttl => server.request_state_ttl(ttl, unix_now),
    }
}

pub fn run<S: Sync + 'static, const N: usize>(
    name: &str,
    server: &'static Server<'static, S>,
    sessions: &'static Mutex<Sessions<N>>,
    port: u16,
    limits: Limits,
) {
    let http = Http::new(server);
    lock(sessions).set_idle_timeout(limits.session_idle_s);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async move {
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let listener = match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("{name}: cannot listen on {addr}: {e}");
                std::process::exit(1);
            }
        };
        eprintln!(
            "{name}: MCP Streamable HTTP on http://{}/mcp",
            listener.local_addr().map_or(addr, |a| a)
        );
        let start = Instant::now();
        let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections.max(1)));
        let header_timeout = Duration::from_secs(limits.header_timeout_s);
        let idle_timeout = Duration::from_secs(limits.idle_timeout_s);
        loop {
            // At the cap, stop accepting: new clients wait in the backlog.
            let Ok(permit) = slots.clone().acquire_owned().await else {
                break;
            };
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors (EMFILE/ENFILE) or another
                    // transient error: back off instead of spinning.
                    eprintln!("{name}: accept: {e}; retrying in 100 ms");
                    drop(permit);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let watch = Watch::new();
                let io = Watched {
                    stream,
                    watch: watch.clone(),
                };
                let service = {
                    let watch = watch.clone();
                    service_fn(move |req| {
                        let in_flight = watch.begin();
                        async move {
                            let mut r = serve_one(http, sessions, start, limits, req).await?;
                            r.body_mut().in_flight = Some(in_flight);
                            Ok::<_, Infallible>(r)
                        }
                    })
                };
                let conn = http1::Builder::new()
                    .timer(TokioTimer::new())
                    // The watch times headers (see `Watch`): hyper's timer
                    // would also close idle connections after it.
                    .header_read_timeout(None)
                    // Bounds a connection's read buffer (headers and
                    // pipelined bytes); hyper's default is about 400 KiB.
                    .max_buf_size(READ_BUFFER)
                    .keep_alive(true)
                    .serve_connection(TokioIo::new(io), service);
                tokio::pin!(conn);
                loop {
                    let changed = watch.changed.notified();
                    let deadline = watch.deadline(header_timeout, idle_timeout);
                    let expired = async {
                        match deadline {
                            Some(at) => tokio::time::sleep_until(at.into()).await,
                            None => std::future::pending().await,
                        }
                    };
                    tokio::select! {
                        _ = conn.as_mut() => break,
                        () = changed => {}
                        // Dropping the connection closes it: nothing is in
                        // flight to lose.
                        () = expired => {
                            if watch
                                .deadline(header_timeout, idle_timeout)
                                .is_some_and(|at| at <= Instant::now())
                            {
                                break;
                            }
                        }
                    }
                }
                drop(permit);
            });
        }
    });
}

/// `--port N` (default `default`) and `--max-body BYTES` from the command line.
#[allow(dead_code)] // conformance_fixture takes a leading `--stdio` first
pub fn args(usage: &str, default_port: u16) -> (u16, Limits) {
    args_from(usage, default_port, std::env::args().skip(1))
}

/// [`args`] over the given arguments (a caller that takes a leading flag of
/// its own passes the rest).
pub fn args_from(
    usage: &str,
    default_port: u16,
    mut args: impl Iterator<Item = String>,
) -> (u16, Limits) {
    let mut port = default_port;
    let mut limits = Limits::default();
    while let Some(arg) = args.next() {
        if arg == "--blocking-delay" {
            limits.blocking_delay = true;
            continue;
        }
        let text = args.next();
        let value = text.as_deref().and_then(|v| v.parse::<usize>().ok());
        match (arg.as_str(), value) {
            ("--port", Some(n)) if n <= usize::from(u16::MAX) => port = n as u16,
            ("--max-body", Some(n)) if n >= 64 => limits.max_body = n,
            ("--max-response", Some(n)) if n >= 256 => limits.max_response = n,
            ("--session-idle-s", Some(n)) if n > 0 => limits.session_idle_s = n as u64,
            ("--header-timeout-s", Some(n)) if n > 0 => limits.header_timeout_s = n as u64,
            ("--body-timeout-s", Some(n)) if n > 0 => limits.body_timeout_s = n as u64,
            ("--idle-timeout-s", Some(n)) if n > 0 => limits.idle_timeout_s = n as u64,
            ("--keep-alive-s", Some(n)) if n > 0 => limits.keep_alive_s = n as u64,
            ("--subject-header", _) if text.as_deref().is_some_and(|t| !t.is_empty()) => {
                limits.subject_header = text.map(|t| &*Box::leak(t.into_boxed_str()));
            }
            ("--max-connections", Some(n)) if n > 0 => limits.max_connections = n,
            ("--state-ttl-s", Some(n)) => limits.state_ttl_s = n as u64,
            ("--delay-ms", Some(n)) => limits.delay_ms = n as u64,
            ("--key-file", _) if text.is_some() => {
                limits.key_file = text.map(|t| &*Box::leak(t.into_boxed_str()));
            }
            _ => {
                eprintln!("{usage}");
                std::process::exit(2);
            }
        }
    }
    (port, limits)
}

/// The secret that seals MRTR request state and tags list cursors: the
/// contents of `--key-file PATH` (at least 32 bytes), else 32 fresh random
/// bytes, with a warning (replicas then cannot share request state or
/// cursors). Never a key from the source.
#[allow(dead_code)] // not every includer seals
pub fn secret(name: &str, key_file: Option<&str>) -> &'static [u8] {
    match key_file {
        Some(path) => match std::fs::read(path) {
            Ok(key) if key.len() >= 32 => Box::leak(key.into_boxed_slice()),
            Ok(key) => {
                eprintln!(
                    "{name}: {path}: the key must be at least 32 bytes (it has {})",
                    key.len()
                );
                std::process::exit(2);
            }
            Err(e) => {
                eprintln!("{name}: cannot read the key file {path}: {e}");
                std::process::exit(2);
            }
        },
        None => {
            eprintln!(
                "{name}: warning: no --key-file: a random key for this process (replicas cannot share request state or cursors)"
            );
            let mut key = [0u8; 32];
            let (a, b) = key.split_at_mut(16);
            random_id(a.try_into().unwrap_or(&mut [0; 16]));
            random_id(b.try_into().unwrap_or(&mut [0; 16]));
            Box::leak(Box::new(key))
        }
    }
}
