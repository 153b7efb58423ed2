//! The HTTP adapter shared by `http_bookshop` and `conformance_fixture`:
//! their command line, and the picomcp endpoint
//! ([`picomcp_tower::McpService`]) mounted at `/mcp` in front of an axum
//! `Router` with a `/health` route ([`picomcp_tower::Mount`]), served by `picomcp_tower::serve` (hyper 1 on a tokio
//! multi-thread runtime, with header and idle timeouts and a connection
//! cap). The session table sits behind a mutex held only to copy a
//! `Connection` out or write it back; the service's waiting-call and stream
//! tables are locked while the core runs (a sync handler too), never while
//! an async handler awaits.

use std::net::SocketAddr;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use picomcp::Server;
use picomcp::http::Sessions;
use picomcp_tower::{Builder, Config, ConnLimits, McpService, Mount};

/// The `on_change` hook of the server's `Changes`: every open notification
/// stream looks for what is due.
#[allow(dead_code)] // not every includer announces changes
pub fn wake() {
    picomcp_tower::wake();
}

/// `--redis URL`, opened by the example: `run` keeps handshake sessions in
/// it and shares subscriptions and client answers through it with the other
/// replicas (instead of the `sessions` table it is given).
#[allow(dead_code)] // not every includer shares
pub static REDIS: OnceLock<picomcp_redis::RedisStore> = OnceLock::new();

/// What the example does with a change another replica announced through
/// [`REDIS`] (e.g. tell its `Changes`).
#[allow(dead_code)] // not every includer shares
pub static ON_CHANGE: OnceLock<fn(&str)> = OnceLock::new();

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
    /// Seconds a handshake-era call that asked its client waits for one
    /// round of answers; then it is answered `-32603` and its slot freed.
    pub wait_timeout_s: u64,
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
    /// `--shutdown-s N`: on SIGTERM or Ctrl-C, stop accepting and let
    /// the requests in flight finish, for at most N s
    /// (`picomcp_tower::serve_with_shutdown`); 0 (default): the signal
    /// ends the process at once.
    pub shutdown_s: u64,
    /// `--max-calls N`: async handlers' calls in flight at once
    /// (`Config::max_calls`; default 512).
    pub max_calls: usize,
    /// `--calls-threads N`: threads awaiting async handlers
    /// (`Builder::calls_threads`; default 1).
    pub calls_threads: usize,
    /// `--page-size N`: items per list page (0: as many as fit the output
    /// buffer), for an example that takes it.
    pub page_size: usize,
    /// `--redis URL`: share sessions, subscriptions, waiting calls' answers
    /// and the example's state with the other replicas through this Redis
    /// server (`http_bookshop`; see `picomcp-redis`).
    pub redis: Option<&'static str>,
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
            wait_timeout_s: 300,
            subject_header: None,
            max_connections: 512,
            state_ttl_s: 300,
            delay_ms: 0,
            blocking_delay: false,
            calls_threads: 1,
            max_calls: 512,
            shutdown_s: 0,
            page_size: 0,
            redis: None,
        }
    }
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

/// Serve `server` on `127.0.0.1:port` until killed: the endpoint at `/mcp`
/// (built by `configure` from a builder with `limits` and `sessions`),
/// `GET /health` answering `ok`, `404` elsewhere.
pub fn run<S: Sync + 'static, const N: usize>(
    name: &str,
    server: &'static Server<'static, S>,
    sessions: &'static Mutex<Sessions<N>>,
    port: u16,
    limits: Limits,
    configure: impl FnOnce(Builder<S>) -> Builder<S>,
) {
    sessions
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .set_idle_timeout(limits.session_idle_s);
    let config = Config {
        max_body: limits.max_body,
        max_response: limits.max_response,
        body_timeout: Duration::from_secs(limits.body_timeout_s),
        keep_alive: Duration::from_secs(limits.keep_alive_s),
        subject_header: limits.subject_header.and_then(|h| h.parse().ok()),
        wait_timeout: Duration::from_secs(limits.wait_timeout_s),
        max_calls: limits.max_calls,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async move {
        let mut builder = configure(
            McpService::builder(server)
                .sessions(sessions)
                .config(config)
                .calls_threads(limits.calls_threads),
        );
        if let Some(store) = REDIS.get() {
            builder = builder.sessions(store.clone()).peers(store.clone());
        }
        let mcp = builder.build();
        if let Some(store) = REDIS.get() {
            // Other replicas' clients' answers and subscriptions, served here;
            // their changes, told to this replica's subscribers.
            let relay_to = mcp.clone();
            let runtime = tokio::runtime::Handle::current();
            store.listen(
                move |session, message| {
                    runtime.spawn(relay_to.relayed(session, message));
                },
                |what| {
                    if let Some(on_change) = ON_CHANGE.get() {
                        on_change(what);
                    }
                },
            );
        }
        // `/mcp` straight to the endpoint (no route look-up, no boxed
        // body: `Mount`'s doc), every other path to an axum Router.
        let app = Router::new()
            .route("/health", get(|| async { "ok\n" }))
            .fallback(|| async { (StatusCode::NOT_FOUND, "not found: the endpoint is /mcp\n") });
        let ending = mcp.clone();
        let app = Mount::new("/mcp", mcp, app);
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
        let conn = ConnLimits {
            header_timeout: Duration::from_secs(limits.header_timeout_s),
            idle_timeout: Duration::from_secs(limits.idle_timeout_s),
            max_connections: limits.max_connections,
            on_accept_error: Some(|e| eprintln!("accept: {e}; retrying in 100 ms")),
            ..ConnLimits::default()
        };
        let served = if limits.shutdown_s > 0 {
            // SIGTERM or Ctrl-C: stop gracefully (notification streams
            // ended, so their clients reconnect elsewhere), then at most
            // `shutdown_s` more for what is still in flight.
            let (signalled, deadline) = tokio::sync::oneshot::channel();
            let signal = async move {
                stop_signal().await;
                eprintln!("{name}: stopping");
                ending.end_streams();
                let _ = signalled.send(());
            };
            tokio::select! {
                r = picomcp_tower::serve_with_shutdown(listener, app, conn, signal) => r,
                () = async {
                    let _ = deadline.await;
                    tokio::time::sleep(Duration::from_secs(limits.shutdown_s)).await;
                } => {
                    eprintln!("{name}: shutdown deadline passed; closing what is left");
                    Ok(())
                }
            }
        } else {
            picomcp_tower::serve(listener, app, conn).await
        };
        if let Err(e) = served {
            eprintln!("{name}: {e}");
            std::process::exit(1);
        }
    });
}

/// The first SIGTERM or Ctrl-C (SIGINT).
async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
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
            ("--wait-timeout-s", Some(n)) if n > 0 => limits.wait_timeout_s = n as u64,
            ("--subject-header", _) if text.as_deref().is_some_and(|t| !t.is_empty()) => {
                limits.subject_header = text.map(|t| &*Box::leak(t.into_boxed_str()));
            }
            ("--max-connections", Some(n)) if n > 0 => limits.max_connections = n,
            ("--state-ttl-s", Some(n)) => limits.state_ttl_s = n as u64,
            ("--delay-ms", Some(n)) => limits.delay_ms = n as u64,
            ("--page-size", Some(n)) => limits.page_size = n,
            ("--calls-threads", Some(n)) if n > 0 => limits.calls_threads = n,
            ("--max-calls", Some(n)) if n > 0 => limits.max_calls = n,
            ("--shutdown-s", Some(n)) => limits.shutdown_s = n as u64,
            ("--redis", _) if text.as_deref().is_some_and(|t| t.starts_with("redis://")) => {
                limits.redis = text.map(|t| &*Box::leak(t.into_boxed_str()));
            }
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
            picomcp_tower::os_random(&mut key);
            Box::leak(Box::new(key))
        }
    }
}
