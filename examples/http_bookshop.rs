//! The bookshop MCP server over Streamable HTTP (picomcp-tower's service
//! in an axum router beside `/health`, hyper 1, tokio multi-thread): both
//! protocol eras on one endpoint, `/mcp`.
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
//! authenticating proxy puts in that header), `--delay-ms N` (`get_author`
//! awaits a timer of N ms first, a stand-in for an upstream call: an async
//! tool, so calls wait together; `--blocking-delay` makes it block its
//! worker thread instead, for comparison).
//! See `examples/HTTP.md`.

#[path = "http/serve.rs"]
mod serve;
#[path = "bookshop/src/shop.rs"]
#[allow(dead_code)]
mod shop;

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use picomcp::Server;
use picomcp::changes::Changes;
use picomcp::http::Sessions;
use picomcp::tool::{Arguments, Reply, Tool, ToolOutcome};

/// Up to 1024 handshake-era sessions (about 40 KiB); a full table refuses a
/// new one (`503`) rather than evicting a live one, and idle sessions
/// expire (`--session-idle-s`).
static SESSIONS: Mutex<Sessions<1024>> = Mutex::new(Sessions::new());

/// The stock's changes (a `buy` by any client) wake every open notification
/// stream: subscribed sessions' `GET` streams and listen streams.
static CHANGES: Changes = Changes::new().on_change(serve::wake);

/// Each list's first page, written once per protocol version.
static LISTS: picomcp::server::ListCache<4096, 24> = picomcp::server::ListCache::new();

/// `--delay-ms`: how long `get_author` waits.
static DELAY_MS: AtomicU64 = AtomicU64::new(0);

/// `get_author` after an awaited timer: the upstream call it stands for
/// holds no thread while it waits.
async fn delayed_get_author<'a>(
    shop: &'a shop::Shop,
    args: Arguments<'a>,
    reply: Reply<'_>,
) -> ToolOutcome<'a> {
    tokio::time::sleep(Duration::from_millis(DELAY_MS.load(Ordering::Relaxed))).await;
    (shop::TOOLS[0].handler)(shop, args, reply)
}

/// `get_author` after a blocking sleep (`--blocking-delay`): what a sync
/// handler waiting on I/O does to a worker thread.
fn blocking_get_author<'a>(
    shop: &'a shop::Shop,
    args: Arguments<'a>,
    reply: Reply<'_>,
) -> ToolOutcome<'a> {
    std::thread::sleep(Duration::from_millis(DELAY_MS.load(Ordering::Relaxed)));
    (shop::TOOLS[0].handler)(shop, args, reply)
}

picomcp::async_tools! {
    /// The bookshop's async tools under `--delay-ms`.
    struct Delayed for shop::Shop {
        GET_AUTHOR: shop::TOOLS[0].descriptor => delayed_get_author,
    }
}

/// The bookshop's tools with `get_author` replaced (`tools[0]` is it).
fn tools_with(get_author: Tool<shop::Shop>) -> &'static [Tool<shop::Shop>] {
    let mut tools: Vec<Tool<shop::Shop>> = shop::TOOLS
        .iter()
        .map(|t| Tool::new(t.descriptor, t.handler))
        .collect();
    tools[0] = get_author;
    tools.leak()
}

fn main() {
    let (port, limits) = serve::args(
        "usage: http_bookshop [--port N] [--max-body BYTES] [--max-response BYTES] [--session-idle-s N] [--key-file PATH] [--header-timeout-s N] [--body-timeout-s N] [--idle-timeout-s N] [--keep-alive-s N] [--max-connections N] [--state-ttl-s N] [--subject-header NAME] [--delay-ms N] [--blocking-delay]",
        8080,
    );
    // One server for every connection and thread, sealing with the secret.
    let key = serve::secret("http_bookshop", limits.key_file);
    let mut server = shop::server_in(0, key, &CHANGES).list_cache(&LISTS);
    DELAY_MS.store(limits.delay_ms, Ordering::Relaxed);
    if limits.delay_ms > 0 {
        server = server.tools(if limits.blocking_delay {
            tools_with(Tool::new(shop::TOOLS[0].descriptor, blocking_get_author))
        } else {
            tools_with(Delayed::GET_AUTHOR)
        });
    }
    let server: &'static Server<'static, shop::Shop> =
        Box::leak(Box::new(serve::with_state_ttl(server, &limits)));
    serve::run("http_bookshop", server, &SESSIONS, port, limits, |mcp| {
        mcp.async_handlers(&Delayed)
    });
}
