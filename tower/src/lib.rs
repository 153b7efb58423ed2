//! picomcp's Streamable HTTP endpoint as a [`tower_service::Service`], to
//! mount in axum or any tower stack beside a server's other routes.
//!
//! The core crate, `picomcp`, is sans-IO: [`picomcp::http::Http`] maps one
//! HTTP request (method, headers, body) to a response written into a
//! caller's buffer, and leaves sockets, tasks and clocks to its adapter.
//! This crate is that adapter for the Rust HTTP stack (tokio, hyper, tower):
//!
//! - [`McpService`]: a `Service<http::Request<B>>` for any request body `B`,
//!   answering `http::Response<`[`McpBody`]`>`. It caps and times the body
//!   ([`Config`]), holds the handshake era's sessions in a
//!   [`SessionStore`](picomcp::http::SessionStore) of your choice, keeps the
//!   SSE streams of calls that wait for the client (elicitation, sampling,
//!   roots) and of notifications (subscriptions, `GET` streams, 2026-07-28
//!   listens), and awaits async handlers ([`Builder::async_handlers`]).
//! - [`serve`]: a hyper 1 connection loop for any such service (an axum
//!   `Router` too) with the timeouts a server exposed to clients needs:
//!   header, idle keep-alive, a cap on connections, a bounded read buffer
//!   ([`ConnLimits`]); [`serve_with_shutdown`] stops gracefully on a signal
//!   (no new clients, idle connections closed, requests in flight
//!   finished).
//!
//! ```no_run
//! use axum::Router;
//! use axum::routing::get;
//! use picomcp::{Server, ServerInfo};
//! use picomcp_tower::{ConnLimits, McpService};
//!
//! static SERVER: Server<'static, ()> = Server::new(ServerInfo::new("demo", "1.0.0"), ());
//!
//! # async fn run() -> std::io::Result<()> {
//! let mcp = McpService::builder(&SERVER).build();
//! let app = Router::new()
//!     .route("/health", get(|| async { "ok" }))
//!     .route_service("/mcp", mcp);
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! picomcp_tower::serve(listener, app, ConnLimits::default()).await
//! # }
//! ```
//!
//! (`axum::serve(listener, app)` works as well; it has hyper's defaults
//! instead of [`ConnLimits`]' timeouts and connection cap.)
//!
//! # Limits and their defaults
//!
//! | bound | default | field | past it |
//! |---|---|---|---|
//! | request body size | 64 KiB | [`Config::max_body`] | `413`, at once when `Content-Length` declares more (no byte read) |
//! | request body must arrive within | 30 s | [`Config::body_timeout`] | `408` |
//! | one answer (output buffer) | 256 KiB | [`Config::max_response`] | the core answers `-32603` |
//! | SSE keep-alive comment on a notification stream | 15 s | [`Config::keep_alive`] | a client that has gone is found, its stream slot given back |
//! | handshake sessions | 1,024, expiring after 600 s unused | [`Builder::sessions`] | `503` with `Retry-After: 1` (no live session is evicted) |
//! | async handlers' calls in flight (each with its own output buffer) | 512 | [`Config::max_calls`] | `503` with `Retry-After: 1`, before the handler runs |
//! | request headers must arrive within (from their first byte; on a new connection, from accept) | 30 s | [`ConnLimits::header_timeout`] | connection closed |
//! | an idle keep-alive connection | 75 s | [`ConnLimits::idle_timeout`] | connection closed |
//! | connections served at once | 512 | [`ConnLimits::max_connections`] | further clients wait in the listen backlog |
//! | hyper's read buffer per connection | 32 KiB | [`ConnLimits::read_buffer`] | `431` from hyper for a larger head (it reads in growing chunks: a head a little over it may pass; 64 KiB is refused, tested) |
//!
//! The [`Config`] bounds hold wherever the service is mounted; the
//! [`ConnLimits`] ones need [`serve`] (the adapter that owns the
//! connection). `Host` and `Origin` are checked by the core (localhost
//! only, unless [`Builder::http`] gives an endpoint with other allowed
//! hosts).
//!
//! # Handlers that await, and SSE streams
//!
//! [`Builder::async_handlers`] has the async handlers of an
//! `async_handlers!` registry awaited on a thread of the service's own, or
//! [`Builder::calls_threads`] of them (a handler's future need not be
//! `Send`); the core's locks are not held while they await, and
//! [`Config::max_calls`] bounds how many are in flight. Handshake-era calls that ask the client (elicitation,
//! sampling, roots) answer on the POST's SSE stream, which stays open until
//! the client's answers have come in other POSTs; a session's `GET` and a
//! 2026-07-28 `subscriptions/listen` are notification streams, fed when
//! [`wake`] is called: give it to the server's `Changes`
//! (`Changes::new().on_change(picomcp_tower::wake)`).
//!
//! # Several replicas
//!
//! Behind a load balancer with no stickiness, give every replica's service
//! one shared session store ([`Builder::sessions`], a [`SharedStore`]) and
//! [`Peers`] ([`Builder::peers`]): a client's answer to a server's request,
//! POSTed to any replica, reaches the one where its call waits
//! ([`McpService::relayed`]), and a session's subscriptions follow it to
//! whichever replica holds its `GET` stream. Each service numbers its
//! requests to clients from a random round, so two replicas do not give
//! one session's waiting calls the same id. The workspace crate
//! picomcp-redis is both, over Redis. The 2026-07-28 revision needs only
//! the same request-state key on every replica.
//!
//! # Memory
//!
//! Each service holds, on the heap, allocated once when it is built: its
//! session store (by default [`Sessions<1024>`](picomcp::http::Sessions),
//! about 40 KiB), a table of 16 waiting calls of 16 KiB each
//! ([`Waiting`](picomcp::server::Waiting), 256 KiB) and 256 notification
//! stream slots of 8 URIs of 256 bytes ([`Streams`](picomcp::http::Streams),
//! about 570 KiB). Each tokio worker thread that serves a request keeps one
//! output buffer of [`Config::max_response`] bytes; each request in flight
//! holds its body (at most [`Config::max_body`]), an open notification
//! stream 16 KiB, an async handler's call in flight its own output buffer
//! ([`Config::max_response`]). Under [`serve`], each connection adds
//! hyper's read buffer ([`ConnLimits::read_buffer`]).

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod conn;
mod mount;
mod service;

pub use conn::{ConnLimits, Serves, serve, serve_with_shutdown};
pub use mount::{Mount, MountFuture};
pub use service::{Builder, Config, McpBody, McpService, Peers, SharedStore};

/// Bytes from the operating system's randomness (`/dev/urandom`): the
/// service's session ids and first request-id round, and whatever else an
/// application needs (a replica's name, a development key). Where that
/// cannot be read, std's per-process random hasher keys, which the OS
/// seeds too.
pub fn os_random(bytes: &mut [u8]) {
    use std::io::Read;
    let ok = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(bytes));
    if ok.is_err() {
        use std::hash::{BuildHasher, Hasher};
        for (i, chunk) in bytes.chunks_mut(8).enumerate() {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_usize(i);
            let word = h.finish().to_le_bytes();
            chunk.copy_from_slice(word.get(..chunk.len()).unwrap_or(&word));
        }
    }
}

/// Woken by the server's `Changes` (`Changes::on_change(picomcp_tower::wake)`):
/// every open notification stream of every [`McpService`] looks for what
/// is due.
pub fn wake() {
    service::NOTIFY.notify_waiters();
}

/// A boxed error, as tower and hyper use them.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
