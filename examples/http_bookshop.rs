//! The bookshop MCP server over Streamable HTTP (hyper 1, tokio
//! multi-thread): both protocol eras on one endpoint, `/mcp`.
//!
//! ```sh
//! cargo run --release --example http_bookshop -- --port 8080
//! ```
//!
//! Options: `--port N` (default 8080), `--max-body BYTES` (default 64 KiB;
//! larger bodies get `413`), `--max-response BYTES` (output buffer per
//! worker thread, default 256 KiB). See `examples/HTTP.md`.

#[path = "http/serve.rs"]
mod serve;
#[path = "bookshop/src/shop.rs"]
#[allow(dead_code)]
mod shop;

use std::sync::Mutex;

use picomcp::Server;
use picomcp::http::Sessions;

/// One server for every connection and thread.
static SERVER: Server<'static, shop::Shop> = shop::server();
/// Up to 1024 handshake-era sessions (about 40 KiB); the least recently
/// used one is evicted when a new session needs a slot.
static SESSIONS: Mutex<Sessions<1024>> = Mutex::new(Sessions::new());

fn main() {
    let (port, limits) = serve::args(
        "usage: http_bookshop [--port N] [--max-body BYTES] [--max-response BYTES] [--session-idle-s N]",
        8080,
    );
    serve::run("http_bookshop", &SERVER, &SESSIONS, port, limits);
}
