//! The bookshop MCP server over Streamable HTTP (picomcp-tower's service
//! mounted at `/mcp` in front of an axum router with `/health`, hyper 1,
//! tokio multi-thread): both
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
//! streams), `--wait-timeout-s N` (300: how long a call that asked its
//! client waits for the answers), `--max-connections N` (512; more wait in the backlog),
//! `--state-ttl-s N` (300: how long a sealed request state is valid; 0: forever),
//! `--subject-header NAME` (bind request state to the principal an
//! authenticating proxy puts in that header), `--delay-ms N` (`get_author`
//! awaits a timer of N ms first, a stand-in for an upstream call: an async
//! tool, so calls wait together; `reserve` and `blurb`, which ask the
//! client, become async tools that await it too; `--blocking-delay` makes
//! `get_author` block its worker thread instead, for comparison), `--calls-threads N`
//! (threads awaiting the async tools, 1: calls are handed to them in turn), `--max-calls N`
//! (512: async calls in flight at once; more are `503`), `--shutdown-s N` (on SIGTERM or
//! Ctrl-C, finish the requests in flight for at most N s; default: exit at once), `--page-size N` (items per list
//! page; default: as many as fit), `--key-file PATH` (the secret sealing
//! request state and list cursors: give every replica the same file),
//! `--redis redis://HOST:PORT/` (one of several replicas: handshake-era
//! sessions, subscriptions and client answers shared through that Redis
//! server with picomcp-redis, the stock kept there, each `buy` announced
//! to the other replicas' subscribers; see `scripts/scaleout.sh`).
//! See `examples/HTTP.md`.

#[path = "http/serve.rs"]
mod serve;
#[path = "bookshop/src/shop.rs"]
#[allow(dead_code)]
mod shop;

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use picomcp::changes::Changes;
use picomcp::http::Sessions;
use picomcp::resource::{Contents, ReadRequest, Resource, ResourceFailure, ResourceOutcome};
use picomcp::tool::{Arguments, Reply, Tool, ToolFailure, ToolOutcome};
use picomcp::{ProtocolError, Server, ToolError};
use picomcp_redis::{RedisStore, redis};

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

/// The bookshop's tool `I` after an awaited timer: the upstream call it
/// stands for holds no thread while it waits.
async fn delayed<'a, const I: usize>(
    shop: &'a shop::Shop,
    args: Arguments<'a>,
    reply: Reply<'_>,
) -> ToolOutcome<'a> {
    tokio::time::sleep(Duration::from_millis(DELAY_MS.load(Ordering::Relaxed))).await;
    (shop::TOOLS[I].handler)(shop, args, reply)
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
        GET_AUTHOR: shop::TOOLS[GET_AUTHOR].descriptor => delayed::<GET_AUTHOR>,
        RESERVE: shop::TOOLS[RESERVE].descriptor => delayed::<RESERVE>,
        BLURB: shop::TOOLS[BLURB].descriptor => delayed::<BLURB>,
    }
}

/// The bookshop's tools with some replaced: `(position, tool)`.
fn tools_with(replaced: &[(usize, Tool<shop::Shop>)]) -> &'static [Tool<shop::Shop>] {
    // Copied whole: an async tool stays async (`Tool::new` of its parts
    // would make a sync tool of its placeholder handler).
    let mut tools: Vec<Tool<shop::Shop>> = shop::TOOLS.to_vec();
    for &(at, tool) in replaced {
        tools[at] = tool;
    }
    tools.leak()
}

/// The positions of `get_author`, `reserve`, `blurb` and `buy` in
/// `shop::TOOLS`, and of `books://stock` in `shop::RESOURCES`.
const GET_AUTHOR: usize = 0;
const RESERVE: usize = 3;
const BLURB: usize = 4;
const BUY: usize = 5;
const STOCK: usize = 1;

/// The stock of several replicas: a Redis hash, title → copies left.
fn stock_key(store: &RedisStore) -> String {
    store.key("stock")
}

/// Sell one copy of `title` if there is one, atomically in Redis: the
/// copies left, or -1.
const SELL: &str = "local n = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') \
    if n <= 0 then return -1 end \
    return redis.call('HINCRBY', KEYS[1], ARGV[1], -1)";

#[derive(serde::Deserialize)]
struct TitleArg<'a> {
    title: &'a str,
}

/// `buy` on a stock kept in Redis (`--redis`): the same answers as
/// `shop.rs`'s, and the change announced to every replica's subscribers.
fn shared_buy<'a>(shop: &'a shop::Shop, args: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    let TitleArg { title } = args.parse()?;
    if !shop.catalog.iter().any(|(t, _)| *t == title) {
        return Err(
            ToolError::format(format_args!("No book titled '{title}' in the catalog.")).into(),
        );
    }
    let Some(store) = serve::REDIS.get() else {
        return Err(ToolFailure::protocol(ProtocolError::internal(
            "no shared stock",
        )));
    };
    let sold = store.run(|c| {
        redis::cmd("EVAL")
            .arg(SELL)
            .arg(1)
            .arg(stock_key(store))
            .arg(title)
            .query::<i64>(c)
    });
    let left = match sold {
        Ok(left) if left >= 0 => left,
        Ok(_) => return Err(ToolError::format(format_args!("{title} is out of stock.")).into()),
        Err(e) => {
            eprintln!("http_bookshop: redis: {e}");
            return Err(ToolFailure::protocol(ProtocolError::internal(
                "the stock cannot be reached",
            )));
        }
    };
    CHANGES.resource_updated(shop::STOCK_URI);
    if let Err(e) = store.announce(shop::STOCK_URI) {
        eprintln!("http_bookshop: redis: cannot announce the change: {e}");
    }
    reply.text(&format!("Bought {title} ({left} left)"))
}

/// `books://stock` read from Redis (`--redis`).
fn shared_stock<'a>(
    shop: &'a shop::Shop,
    req: ReadRequest<'a>,
    mut contents: Contents<'_>,
) -> ResourceOutcome<'a> {
    let Some(store) = serve::REDIS.get() else {
        return Err(ResourceFailure::protocol(ProtocolError::internal(
            "no shared stock",
        )));
    };
    let titles: Vec<&str> = shop.catalog.iter().map(|(t, _)| *t).collect();
    let copies = store.run(|c| {
        redis::cmd("HMGET")
            .arg(stock_key(store))
            .arg(&titles)
            .query::<Vec<Option<u64>>>(c)
    });
    let Ok(copies) = copies else {
        return Err(ResourceFailure::protocol(ProtocolError::internal(
            "the stock cannot be reached",
        )));
    };
    contents.json(req.uri(), Some("application/json"), |v| {
        let mut o = v.object();
        for (t, n) in titles.iter().zip(copies) {
            o.u64(t, n.unwrap_or(0));
        }
    });
    contents.finish()
}

/// Open `--redis URL`: sessions, subscriptions and answers shared (by
/// `serve::run`), the stock in Redis (set to the starting stock unless
/// another replica did), other replicas' changes told to this one's
/// subscribers.
fn share(url: &str, idle_s: u64) {
    let store = match RedisStore::open(url, "bookshop:", idle_s) {
        Ok(store) => store,
        Err(e) => {
            eprintln!("http_bookshop: cannot reach redis at {url}: {e}");
            std::process::exit(1);
        }
    };
    let init = store.run(|c| {
        let mut pipe = redis::pipe();
        for ((title, _), n) in shop::CATALOG.iter().zip(shop::START_STOCK) {
            pipe.cmd("HSETNX")
                .arg(stock_key(&store))
                .arg(*title)
                .arg(n)
                .ignore();
        }
        pipe.query::<()>(c)
    });
    if let Err(e) = init {
        eprintln!("http_bookshop: redis: {e}");
        std::process::exit(1);
    }
    let _ = serve::REDIS.set(store);
    let _ = serve::ON_CHANGE.set(|what| {
        if what == shop::STOCK_URI {
            CHANGES.resource_updated(shop::STOCK_URI);
        }
    });
}

fn main() {
    let (port, limits) = serve::args(
        "usage: http_bookshop [--port N] [--max-body BYTES] [--max-response BYTES] [--session-idle-s N] [--key-file PATH] [--header-timeout-s N] [--body-timeout-s N] [--idle-timeout-s N] [--keep-alive-s N] [--wait-timeout-s N] [--max-connections N] [--state-ttl-s N] [--subject-header NAME] [--delay-ms N] [--blocking-delay] [--calls-threads N] [--max-calls N] [--shutdown-s N] [--page-size N] [--redis URL]",
        8080,
    );
    // One server for every connection and thread, sealing with the secret.
    let key = serve::secret("http_bookshop", limits.key_file);
    let mut server = shop::server_in(limits.page_size, key, &CHANGES).list_cache(&LISTS);
    DELAY_MS.store(limits.delay_ms, Ordering::Relaxed);
    let mut replaced = Vec::new();
    if limits.delay_ms > 0 {
        replaced.push((
            GET_AUTHOR,
            if limits.blocking_delay {
                Tool::new(shop::TOOLS[GET_AUTHOR].descriptor, blocking_get_author)
            } else {
                Delayed::GET_AUTHOR
            },
        ));
        if !limits.blocking_delay {
            // Handlers that ask the client, awaiting first.
            replaced.push((RESERVE, Delayed::RESERVE));
            replaced.push((BLURB, Delayed::BLURB));
        }
    }
    if let Some(url) = limits.redis {
        share(url, limits.session_idle_s);
        replaced.push((BUY, Tool::new(shop::TOOLS[BUY].descriptor, shared_buy)));
        let mut resources: Vec<Resource<shop::Shop>> = shop::RESOURCES.to_vec();
        resources[STOCK] = Resource::new(shop::RESOURCES[STOCK].descriptor, shared_stock);
        server = server.resources(resources.leak());
    }
    if !replaced.is_empty() {
        server = server.tools(tools_with(&replaced));
    }
    let server: &'static Server<'static, shop::Shop> =
        Box::leak(Box::new(serve::with_state_ttl(server, &limits)));
    serve::run("http_bookshop", server, &SESSIONS, port, limits, |mcp| {
        mcp.async_handlers(&Delayed)
    });
}
