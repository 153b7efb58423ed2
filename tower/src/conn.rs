//! [`serve`]: a hyper 1 connection loop with the timeouts a public server
//! needs, for any tower service (an [`McpService`](crate::McpService), an
//! axum `Router` holding one).

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response};
use http_body::Frame;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;

use crate::BoxError;

/// The limits of [`serve`]'s connections.
#[derive(Clone, Copy, Debug)]
pub struct ConnLimits {
    /// How long a client may take to send a request's headers, from their
    /// first byte (default 30 s); then the connection is closed. A new
    /// connection owes its first request's headers from the start.
    /// `Duration::MAX` (anything past what an `Instant` holds): never.
    pub header_timeout: Duration,
    /// How long a keep-alive connection may stay idle (no request in
    /// flight, no byte of a next one) before it is closed (default 75 s).
    /// `Duration::MAX`: never.
    pub idle_timeout: Duration,
    /// Connections served at once (default 512); more wait in the listen
    /// backlog until one closes (no accept, no file descriptor, no memory
    /// for them).
    pub max_connections: usize,
    /// hyper's read buffer per connection (default 32 KiB; hyper's own
    /// default is about 400 KiB): bounds headers (`431` past it, roughly:
    /// hyper reads in growing chunks) and pipelined bytes.
    pub read_buffer: usize,
    /// Told of each failed `accept` (out of file descriptors, say) before
    /// the 100 ms back-off; default: nothing (the crate does not log).
    pub on_accept_error: Option<fn(&std::io::Error)>,
}

impl Default for ConnLimits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(75),
            max_connections: 512,
            read_buffer: 32 << 10,
            on_accept_error: None,
        }
    }
}

/// What one connection is doing, for its header and idle timeouts.
///
/// hyper's own `header_read_timeout` starts as soon as a connection waits
/// for its next request, so it is the keep-alive idle timeout as well; an
/// idle timeout longer than the header timeout needs this watch instead.
/// The connection is closed when it is idle (no request in flight, no byte
/// of a next one) for the idle timeout, or when bytes of a next request
/// have arrived but its headers are not complete within the header
/// timeout. Bytes of a pipelined request read while another is in flight
/// count as idle time (the idle timeout bounds them).
///
/// Nothing is woken as requests come and go: the connection's loop looks
/// at the watch when its one timer fires (see [`connection`]).
struct Watch {
    base: Instant,
    /// Requests whose response body is not over yet.
    in_flight: AtomicUsize,
    /// Milliseconds from `base` to when the connection last became idle.
    idle_since: AtomicU64,
    /// Milliseconds from `base` to the first byte of the next request, plus
    /// one; 0 while none has come.
    head_since: AtomicU64,
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
        })
    }

    fn now_ms(&self) -> u64 {
        self.base.elapsed().as_millis() as u64
    }

    /// Bytes arrived.
    fn read(&self) {
        if self.in_flight.load(Ordering::Acquire) == 0
            && self.head_since.load(Ordering::Acquire) == 0
        {
            let now = self.now_ms() + 1;
            let _ = self
                .head_since
                .compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire);
        }
    }

    /// hyper handed a request to the service: its headers are complete.
    fn begin(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.head_since.store(0, Ordering::Release);
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
        // Past what an `Instant` holds (a timeout of `Duration::MAX`, say):
        // no deadline.
        self.base
            .checked_add(Duration::from_millis(at))?
            .checked_add(limit)
    }
}

/// A request in flight; dropped with its response body.
struct InFlight(Arc<Watch>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let w = &self.0;
        w.idle_since.store(w.now_ms(), Ordering::Release);
        w.in_flight.fetch_sub(1, Ordering::AcqRel);
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

/// A response body that keeps its request in flight until it is over.
struct Tracked<B> {
    body: B,
    _in_flight: InFlight,
}

impl<B> http_body::Body for Tracked<B>
where
    B: http_body::Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        Pin::new(&mut self.body)
            .poll_frame(cx)
            .map(|f| f.map(|f| f.map_err(Into::into)))
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A service [`serve`] runs: a tower service of hyper's requests answering
/// `Response<B>` (an axum `Router`, a [`Mount`](crate::Mount), an
/// [`McpService`](crate::McpService)), cloned for each connection.
pub trait Serves<B>:
    tower_service::Service<
        Request<Incoming>,
        Response = Response<B>,
        Error = Infallible,
        Future: Send + 'static,
    > + Clone
    + Send
    + 'static
{
}

impl<T, B> Serves<B> for T where
    T: tower_service::Service<
            Request<Incoming>,
            Response = Response<B>,
            Error = Infallible,
            Future: Send + 'static,
        > + Clone
        + Send
        + 'static
{
}

/// Serve `service` on every connection `listener` accepts, HTTP/1.1 with
/// keep-alive, until the future is dropped (it never returns: a failed
/// `accept` is retried; the `Result` is for callers' `?`): the header and idle
/// timeouts and the connection cap of `limits`. Accept errors (out of file
/// descriptors) back off for 100 ms instead of spinning
/// ([`ConnLimits::on_accept_error`] hears of them).
///
/// The body timeout and size cap are the service's ([`crate::Config`]).
/// [`serve_with_shutdown`] stops gracefully instead.
pub async fn serve<T, B>(
    listener: TcpListener,
    service: T,
    limits: ConnLimits,
) -> std::io::Result<()>
where
    T: Serves<B>,
    B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<BoxError>,
{
    serve_with_shutdown(listener, service, limits, std::future::pending()).await
}

/// [`serve`], until `signal` completes (a `SIGTERM` or Ctrl-C handler, a
/// channel): then it stops accepting (the listener is dropped: new clients
/// are refused), closes idle keep-alive connections, lets each request in
/// flight finish (its response written, its connection then closed), and
/// returns once every connection is over. A response that streams (an
/// SSE notification stream, a call's held stream) keeps its connection
/// until it ends ([`McpService::end_streams`](crate::McpService::end_streams)
/// ends an MCP service's notification streams: call it in `signal`); the
/// connections' header and idle timeouts still hold. Wrap the future in a
/// timeout (`tokio::time::timeout`) for a deadline: dropping it closes
/// what is left.
pub async fn serve_with_shutdown<T, B>(
    listener: TcpListener,
    service: T,
    limits: ConnLimits,
    signal: impl Future<Output = ()>,
) -> std::io::Result<()>
where
    T: Serves<B>,
    B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<BoxError>,
{
    let max = limits
        .max_connections
        .clamp(1, tokio::sync::Semaphore::MAX_PERMITS);
    let slots = Arc::new(tokio::sync::Semaphore::new(max));
    let stop = Arc::new(Stop::default());
    tokio::pin!(signal);
    loop {
        // At the cap, stop accepting: new clients wait in the backlog.
        let accepted = tokio::select! {
            () = &mut signal => break,
            accepted = next_connection(&listener, &slots, &limits) => accepted,
        };
        let Some((stream, permit)) = accepted else {
            continue;
        };
        let service = service.clone();
        let stop = Arc::clone(&stop);
        tokio::spawn(async move {
            connection(stream, service, limits, &stop).await;
            drop(permit);
        });
    }
    drop(listener);
    stop.flag.store(true, Ordering::SeqCst);
    stop.wake.notify_waiters();
    // Every connection's slot back: every connection is over.
    let all = u32::try_from(max).unwrap_or(u32::MAX);
    let _ = slots.acquire_many(all).await;
    Ok(())
}

/// The next connection and its slot among the cap; `None` after an accept
/// error (reported, then 100 ms of back-off).
async fn next_connection(
    listener: &TcpListener,
    slots: &Arc<tokio::sync::Semaphore>,
    limits: &ConnLimits,
) -> Option<(tokio::net::TcpStream, tokio::sync::OwnedSemaphorePermit)> {
    let permit = slots.clone().acquire_owned().await.ok()?;
    match listener.accept().await {
        Ok((stream, _)) => {
            let _ = stream.set_nodelay(true);
            Some((stream, permit))
        }
        Err(e) => {
            // Out of file descriptors (EMFILE/ENFILE) or another
            // transient error: back off instead of spinning.
            if let Some(report) = limits.on_accept_error {
                report(&e);
            }
            drop(permit);
            tokio::time::sleep(Duration::from_millis(100)).await;
            None
        }
    }
}

/// One connection, until it closes or times out.
async fn connection<T, B>(
    stream: tokio::net::TcpStream,
    service: T,
    limits: ConnLimits,
    stop: &Stop,
) where
    T: Serves<B>,
    B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<BoxError>,
{
    let watch = Watch::new();
    let io = Watched {
        stream,
        watch: watch.clone(),
    };
    let hyper_service = {
        let watch = watch.clone();
        service_fn(move |req: Request<Incoming>| {
            let in_flight = watch.begin();
            let mut service = service.clone();
            async move {
                std::future::poll_fn(|cx| service.poll_ready(cx)).await?;
                let r = service.call(req).await?;
                Ok::<_, Infallible>(r.map(|body| Tracked {
                    body,
                    _in_flight: in_flight,
                }))
            }
        })
    };
    let conn = http1::Builder::new()
        .timer(TokioTimer::new())
        // The watch times headers (see `Watch`): hyper's timer would also
        // close idle connections after it.
        .header_read_timeout(None)
        .max_buf_size(limits.read_buffer.max(8192))
        .keep_alive(true)
        .serve_connection(TokioIo::new(io), hyper_service);
    // When the server stops, the request in flight (if any) is finished
    // and the connection closed; an idle one is closed at once.
    watch_over(conn, &watch, &limits, Some(stop), |conn| {
        conn.graceful_shutdown();
    })
    .await;
}

/// A server's stop, as its connections see it ([`serve_with_shutdown`]):
/// `flag`, looked at whenever a connection's task runs (a load, not a
/// poll of a future: this costs a request nothing), and `wake`, which
/// wakes the tasks of idle connections.
#[derive(Default)]
struct Stop {
    flag: AtomicBool,
    wake: tokio::sync::Notify,
}

/// Drive `conn` (a connection, or in the tests anything standing in for
/// one) until it is over or `watch` says its header or idle time is up
/// (then dropping it closes it).
/// Once `stop` is set, `shut` is called on `conn` (once), and it is driven
/// on to its end.
async fn watch_over<F: Future>(
    conn: F,
    watch: &Watch,
    limits: &ConnLimits,
    mut stop: Option<&Stop>,
    shut: impl FnOnce(Pin<&mut F>),
) {
    tokio::pin!(conn);
    let mut shut = Some(shut);
    // Registered with `stop.wake` by one poll, at the first look (as the
    // timer is): from then on only the flag is read.
    let stopped = stop.map(|s| s.wake.notified());
    tokio::pin!(stopped);
    let mut stop_armed = false;
    // One timer, re-armed only when it fires: a request neither wakes this
    // loop nor touches the timer (it did, three times a request: about
    // 1,000 instructions, `scripts/http_cost.sh`). Each look at the watch
    // sleeps until its deadline, or for at most `step`: a deadline that
    // activity sets after a look (a header's first byte, the end of a
    // request) is at least the shorter timeout away from it, so the next
    // look comes before it. (Timeouts under `MIN_STEP` may be late by up to
    // it; they are not useful values.)
    const MIN_STEP: Duration = Duration::from_millis(10);
    let step = limits.header_timeout.min(limits.idle_timeout).max(MIN_STEP);
    let timer = tokio::time::sleep(Duration::ZERO);
    tokio::pin!(timer);
    loop {
        let now = Instant::now();
        let deadline = watch.deadline(limits.header_timeout, limits.idle_timeout);
        // Dropping the connection closes it: nothing is in flight to lose.
        if deadline.is_some_and(|at| at <= now) {
            break;
        }
        // `step` past what an `Instant` holds: a look a year from now.
        let look = now
            .checked_add(step)
            .unwrap_or_else(|| now + Duration::from_secs(365 * 24 * 3600));
        let next = deadline.map_or(look, |at| at.min(look));
        timer.as_mut().reset(next.into());
        // The timer is polled once after each reset, outside the task's
        // budget (a poll refused for want of budget would leave it
        // without our waker), and from then on only looked at: it keeps
        // this task's waker (the same at every poll: `serve` spawns each
        // connection as its own task) until it fires. Polling it at every
        // wake, as `select!` does, cost about 330 instructions a request:
        // the connection's task, inclusive, in `scripts/http_cost.sh DIR`'s
        // profile of `http_bookshop`, 30,008 before and 29,681 after (the
        // whole process moves by a few hundred between runs with the
        // scheduler's parking).
        let mut armed = false;
        let closed = std::future::poll_fn(|cx| {
            if conn.as_mut().poll(cx).is_ready() {
                return Poll::Ready(true);
            }
            if let Some(s) = stop {
                if !stop_armed {
                    stop_armed = true;
                    if let Some(stopped) = stopped.as_mut().as_pin_mut() {
                        let _ = stopped.poll(cx); // registers; the flag says
                    }
                }
                if s.flag.load(Ordering::Relaxed) {
                    stop = None;
                    if let Some(shut) = shut.take() {
                        shut(conn.as_mut());
                    }
                    // The connection is polled again at once, shut.
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
            }
            if !armed {
                armed = true;
                let first = std::pin::pin!(tokio::task::coop::unconstrained(timer.as_mut()));
                return first.poll(cx).map(|()| false);
            }
            if timer.is_elapsed() {
                Poll::Ready(false)
            } else {
                Poll::Pending
            }
        })
        .await;
        if closed {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection whose first poll spends its task's whole coop budget
    /// (a burst of pipelined requests does: each read and write of the
    /// socket takes from it) and which then waits for a client that sends
    /// nothing more: nothing but the timer wakes its task again.
    struct Burst {
        spent: bool,
    }

    impl Future for Burst {
        type Output = ();

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if !self.spent {
                self.spent = true;
                while std::pin::pin!(tokio::task::coop::consume_budget())
                    .poll(cx)
                    .is_ready()
                {}
            }
            Poll::Pending
        }
    }

    /// The timer's first poll after a reset is outside the budget: polled
    /// within it, right after a poll of the connection that spent it, it
    /// would not keep the task's waker, and an idle connection would never
    /// be closed.
    #[tokio::test]
    async fn the_idle_timeout_holds_after_a_poll_that_spent_the_budget() {
        let watch = Watch::new();
        watch.head_since.store(0, Ordering::Release); // idle, not in a header
        let limits = ConnLimits {
            header_timeout: Duration::from_millis(50),
            idle_timeout: Duration::from_millis(50),
            ..ConnLimits::default()
        };
        let started = Instant::now();
        // The guard is looked at first: when it fires, the connection is
        // not polled once more (where it would see its timer elapsed).
        let closed = tokio::select! {
            biased;
            () = tokio::time::sleep(Duration::from_secs(10)) => false,
            () = watch_over(Burst { spent: false }, &watch, &limits, None, |_| {}) => true,
        };
        assert!(closed, "the idle connection was not closed within 10 s");
        assert!(started.elapsed() >= Duration::from_millis(40));
    }
}
