//! What the sans-IO HTTP mapping adds to a request: the bookshop server as
//! `http_bookshop` builds it (request state sealed with a key and a 300 s
//! time to live), answering `--hits` stateless 2026-07-28
//! `tools/call get_author "Dune"` requests either through
//! `Server::handle` on a `Connection::modern()` (`core`) or through
//! `picomcp::http::Http::handle` with the headers a client sends (`http`).
//! Each request's body is copied into a scratch buffer first, in both.
//!
//! `scripts/http_cost.sh` runs it under callgrind with and without hits;
//! (run − empty run) / hits is a request's cost, and `http` minus `core`
//! is the mapping's.
//!
//! Usage: http_mapping core|http [--hits H]

#[path = "bookshop/src/shop.rs"]
#[allow(dead_code)]
mod shop;

use picomcp::Connection;
use picomcp::changes::Changes;
use picomcp::http::{Http, Request, Sessions};

static CHANGES: Changes = Changes::new();

/// The list cache `http_bookshop` gives its server (it also keeps the
/// 2026-07-28 stamp's server identity).
static LISTS: picomcp::server::ListCache<4096, 24> = picomcp::server::ListCache::new();

const BODY: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

/// The headers of `scripts/http_cost.sh`'s client (Python's http.client),
/// in its order.
const HEADERS: [(&str, &str); 8] = [
    ("Host", "127.0.0.1:8193"),
    ("Accept-Encoding", "identity"),
    ("Content-Length", "219"),
    ("Content-Type", "application/json"),
    ("Accept", "application/json, text/event-stream"),
    ("MCP-Protocol-Version", "2026-07-28"),
    ("Mcp-Method", "tools/call"),
    ("Mcp-Name", "get_author"),
];

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn main() {
    let usage = "usage: http_mapping core|http [--hits H]";
    let mut args = std::env::args().skip(1);
    let http = match args.next().as_deref() {
        Some("core") => false,
        Some("http") => true,
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    let mut hits = 10_000usize;
    while let Some(a) = args.next() {
        match (a.as_str(), args.next().and_then(|h| h.parse().ok())) {
            ("--hits", Some(h)) => hits = h,
            _ => {
                eprintln!("{usage}");
                std::process::exit(2);
            }
        }
    }
    let server = shop::server_in(0, shop::DEFAULT_STATE_KEY, &CHANGES)
        .list_cache(&LISTS)
        .request_state_ttl(300, unix_now);
    let endpoint = Http::new(&server);
    let mut sessions = Sessions::<1>::new();
    let mut random = |id: &mut [u8; 16]| *id = [7; 16];
    let mut body = [0u8; 512];
    let mut out = vec![0u8; 256 << 10];
    let mut answered = 0usize;
    for _ in 0..hits {
        body[..BODY.len()].copy_from_slice(BODY);
        let frame = &mut body[..BODY.len()];
        let n = if http {
            let r = endpoint.handle(
                &mut sessions,
                &mut random,
                Request::post(&HEADERS, frame, 0),
                &mut out,
            );
            assert_eq!(r.status, 200);
            r.body_len
        } else {
            server.handle(&mut Connection::modern(), frame, &mut out)
        };
        answered += n;
        std::hint::black_box(&out[..n]);
    }
    if let Some(len) = answered.checked_div(hits) {
        let answer = &out[..len];
        assert!(
            answer.windows(15).any(|w| w == b"\"Frank Herbert\""),
            "{}",
            String::from_utf8_lossy(answer)
        );
    }
    println!("{answered}");
}
