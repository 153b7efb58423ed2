//! The bookshop MCP server over Streamable HTTP (hyper 1, tokio
//! multi-thread): both protocol eras on one endpoint, `/mcp`.
//!
//! ```sh
//! cargo run --release --example http_bookshop -- --port 8080
//! ```
//!
//! Options: `--port N` (default 8080), `--max-body BYTES` (default 64 KiB;
//! larger bodies get `413`), `--max-response BYTES` (output buffer per
//! worker thread, default 256 KiB), `--header-timeout-s N` (30), `--body-timeout-s N`
//! (30; then `408`), `--idle-timeout-s N` (75: an idle keep-alive connection
//! is closed), `--keep-alive-s N` (15: SSE comments on notification
//! streams), `--max-connections N` (512; more wait in the backlog),
//! `--state-ttl-s N` (300: how long a sealed request state is valid; 0: forever),
//! `--subject-header NAME` (bind request state to the principal an
//! authenticating proxy puts in that header).
//! See `examples/HTTP.md`.

#[path = "http/serve.rs"]
mod serve;
#[path = "bookshop/src/shop.rs"]
#[allow(dead_code)]
mod shop;

use std::sync::Mutex;

use picomcp::Server;
use picomcp::changes::Changes;
use picomcp::http::Sessions;

/// Up to 1024 handshake-era sessions (about 40 KiB); a full table refuses a
/// new one (`503`) rather than evicting a live one, and idle sessions
/// expire (`--session-idle-s`).
static SESSIONS: Mutex<Sessions<1024>> = Mutex::new(Sessions::new());

/// The stock's changes (a `buy` by any client) wake every open notification
/// stream: subscribed sessions' `GET` streams and listen streams.
static CHANGES: Changes = Changes::new().on_change(serve::wake);

/// Each list's first page, written once per protocol version.
static LISTS: picomcp::server::ListCache<4096, 24> = picomcp::server::ListCache::new();

fn main() {
    let (port, limits) = serve::args(
        "usage: http_bookshop [--port N] [--max-body BYTES] [--max-response BYTES] [--session-idle-s N] [--key-file PATH] [--header-timeout-s N] [--body-timeout-s N] [--idle-timeout-s N] [--keep-alive-s N] [--max-connections N] [--state-ttl-s N] [--subject-header NAME]",
        8080,
    );
    // One server for every connection and thread, sealing with the secret.
    let key = serve::secret("http_bookshop", limits.key_file);
    let server: &'static Server<'static, shop::Shop> = Box::leak(Box::new(serve::with_state_ttl(
        shop::server_in(0, key, &CHANGES).list_cache(&LISTS),
        &limits,
    )));
    serve::run("http_bookshop", server, &SESSIONS, port, limits);
}
