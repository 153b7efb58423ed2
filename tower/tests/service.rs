//! `McpService` driven without a network: through tower's
//! `ServiceExt::oneshot`, and as an axum route beside an ordinary one.
//! Then `serve` on a loopback socket: the router behind it, and its header
//! timeout.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::get;
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use picomcp::http::Sessions;
use picomcp::tool::{Arguments, Reply, Tool, ToolDescriptor, ToolOutcome};
use picomcp::{Server, ServerInfo};
use picomcp_tower::{Config, ConnLimits, McpBody, McpService};
use tower::ServiceExt;

mod common;
use common::{Chunks, NO_ARGS, Shop, ask, event, next_frame, post};

fn hello<'a>(_: &'a Shop, _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    reply.text("hello from a sync tool")
}

/// Awaits a tokio timer: only the calls thread of `Builder::async_handlers`
/// (a tokio runtime) can run it.
async fn slow<'a>(_: &'a Shop, _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    tokio::time::sleep(Duration::from_millis(20)).await;
    reply.text("hello from an async tool")
}

/// How many of a tool's futures started, and how many were dropped.
struct Hangs {
    started: AtomicUsize,
    dropped: AtomicUsize,
}

impl Hangs {
    const fn new() -> Self {
        Hangs {
            started: AtomicUsize::new(0),
            dropped: AtomicUsize::new(0),
        }
    }

    /// Awaits an hour: only a dropped future ends it early.
    async fn hang<'a>(&self, reply: Reply<'_>) -> ToolOutcome<'a> {
        struct CountDrop<'h>(&'h AtomicUsize);
        impl Drop for CountDrop<'_> {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let _count = CountDrop(&self.dropped);
        self.started.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(3600)).await;
        reply.text("an hour later")
    }

    /// Wait (5 s at most) until `counter` is `n`.
    async fn until(counter: &AtomicUsize, n: usize, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while counter.load(Ordering::SeqCst) != n {
            assert!(Instant::now() < deadline, "{what}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// The futures of `hang::<N>` (`HANGS[N]`) and of `ask_then_hang::<N>` run
/// again (`AGAIN[N]`): one test's each.
static HANGS: [Hangs; 3] = [const { Hangs::new() }; 3];
static AGAIN: [Hangs; 3] = [const { Hangs::new() }; 3];

/// Hangs in `HANGS[N]` (`N`: one test's).
async fn hang<'a, const N: usize>(
    _: &'a Shop,
    _: Arguments<'a>,
    reply: Reply<'_>,
) -> ToolOutcome<'a> {
    HANGS[N].hang(reply).await
}

/// `ask` after an awaited timer: an async handler that asks the client.
async fn ask_slow<'a>(shop: &'a Shop, args: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    tokio::time::sleep(Duration::from_millis(20)).await;
    ask(shop, args, reply)
}

impl Hangs {
    /// `ask`, but run again with the client's answer it hangs.
    async fn ask_then_hang<'a>(
        &self,
        shop: &'a Shop,
        args: Arguments<'a>,
        reply: Reply<'_>,
    ) -> ToolOutcome<'a> {
        if reply.request_state() == Some(b"asked") {
            return self.hang(reply).await;
        }
        ask(shop, args, reply)
    }
}

/// `ask`, then hanging in `AGAIN[N]` when run again (`N`: one test's).
async fn ask_then_hang<'a, const N: usize>(
    shop: &'a Shop,
    args: Arguments<'a>,
    reply: Reply<'_>,
) -> ToolOutcome<'a> {
    AGAIN[N].ask_then_hang(shop, args, reply).await
}

/// How many `slow_counted` calls have started.
static SLOW_STARTED: AtomicUsize = AtomicUsize::new(0);

/// Counted, then 300 ms of a timer: a call in flight for a while.
async fn slow_counted<'a>(_: &'a Shop, _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    SLOW_STARTED.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(300)).await;
    reply.text("finished after 300 ms")
}

/// How many `together` calls have started.
static TOGETHER: AtomicUsize = AtomicUsize::new(0);

/// Blocks its thread (no await) until two `together` calls have started,
/// or 5 s: "together" if they did, "alone" if not. Two answered
/// "together" ran on two threads at once.
async fn together<'a>(_: &'a Shop, _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    TOGETHER.fetch_add(1, Ordering::SeqCst);
    let deadline = Instant::now() + Duration::from_secs(5);
    while TOGETHER.load(Ordering::SeqCst) < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    reply.text(if TOGETHER.load(Ordering::SeqCst) >= 2 {
        "together"
    } else {
        "alone"
    })
}

/// The name of the thread its handler runs on (a calls thread's).
async fn which_thread<'a>(_: &'a Shop, _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    let name = std::thread::current().name().map(str::to_owned);
    reply.text(name.as_deref().unwrap_or("unnamed"))
}

picomcp::async_tools! {
    struct ShopAsync for Shop {
        SLOW: ToolDescriptor::new("slow", &NO_ARGS) => slow,
        HANG: ToolDescriptor::new("hang", &NO_ARGS) => hang::<0>,
        HANG_CANCELLED: ToolDescriptor::new("hang_cancelled", &NO_ARGS) => hang::<1>,
        HANG_BUSY: ToolDescriptor::new("hang_busy", &NO_ARGS) => hang::<2>,
        ASK_SLOW: ToolDescriptor::new("ask_slow", &NO_ARGS) => ask_slow,
        ASK_THEN_HANG: ToolDescriptor::new("ask_then_hang", &NO_ARGS) => ask_then_hang::<0>,
        ASK_THEN_HANG_LEFT: ToolDescriptor::new("ask_then_hang_left", &NO_ARGS) => ask_then_hang::<1>,
        ASK_THEN_HANG_LATE: ToolDescriptor::new("ask_then_hang_late", &NO_ARGS) => ask_then_hang::<2>,
        TOGETHER: ToolDescriptor::new("together", &NO_ARGS) => together,
        SLOW_COUNTED: ToolDescriptor::new("slow_counted", &NO_ARGS) => slow_counted,
        WHICH_THREAD: ToolDescriptor::new("which_thread", &NO_ARGS) => which_thread,
    }
}

static TOOLS: [Tool<Shop>; 13] = [
    Tool::new(ToolDescriptor::new("hello", &NO_ARGS), hello),
    Tool::new(ToolDescriptor::new("ask", &NO_ARGS), ask),
    ShopAsync::SLOW,
    ShopAsync::HANG,
    ShopAsync::HANG_CANCELLED,
    ShopAsync::HANG_BUSY,
    ShopAsync::ASK_SLOW,
    ShopAsync::ASK_THEN_HANG,
    ShopAsync::ASK_THEN_HANG_LEFT,
    ShopAsync::ASK_THEN_HANG_LATE,
    ShopAsync::TOGETHER,
    ShopAsync::SLOW_COUNTED,
    ShopAsync::WHICH_THREAD,
];
static SERVER: Server<'static, Shop> =
    Server::new(ServerInfo::new("shop", "1.0.0"), Shop).tools(&TOOLS);

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const ENV: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn call_body(tool: &str, meta: bool) -> String {
    let meta = if meta {
        format!(",{ENV}")
    } else {
        String::new()
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}{meta}}}}}"#
    )
}

/// A stateless 2026-07-28 `tools/call` of `tool`.
fn modern_call(tool: &str) -> Request<Full<Bytes>> {
    Request::post("/mcp")
        .header("Host", "localhost:8080")
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", tool)
        .body(Full::new(Bytes::from(call_body(tool, true))))
        .unwrap()
}

async fn text<B>(r: Response<B>) -> (StatusCode, http::HeaderMap, String)
where
    B: http_body::Body,
    B::Error: std::fmt::Debug,
{
    let (parts, body) = r.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    (
        parts.status,
        parts.headers,
        String::from_utf8(bytes.to_vec()).unwrap(),
    )
}

/// initialize, then notifications/initialized: the session id.
async fn open_session(mcp: &McpService<Shop>) -> String {
    open_session_with(mcp, INIT).await
}

async fn open_session_with(mcp: &McpService<Shop>, init: &str) -> String {
    let r = mcp.clone().oneshot(post(init, None)).await.unwrap();
    let (status, headers, body) = text(r).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains(r#""serverInfo":{"name":"shop""#), "{body}");
    let id = headers["mcp-session-id"].to_str().unwrap().to_owned();
    let r = mcp
        .clone()
        .oneshot(post(INITIALIZED, Some(&id)))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    id
}

#[tokio::test]
async fn oneshot_initialize_then_call() {
    let mcp = McpService::new(&SERVER);
    let id = open_session(&mcp).await;
    let r = mcp
        .clone()
        .oneshot(post(call_body("hello", false), Some(&id)))
        .await
        .unwrap();
    let (status, headers, body) = text(r).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "application/json");
    assert!(body.contains("hello from a sync tool"), "{body}");
    assert!(body.contains(r#""id":2"#), "{body}");

    // An unknown session is 404; DELETE ends ours.
    let r = mcp
        .clone()
        .oneshot(post(call_body("hello", false), Some("f00")))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let delete = Request::delete("/mcp")
        .header("Host", "localhost")
        .header("Mcp-Session-Id", &id)
        .header("MCP-Protocol-Version", "2025-11-25")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let r = mcp.clone().oneshot(delete).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let r = mcp
        .oneshot(post(call_body("hello", false), Some(&id)))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn oneshot_stateless_call() {
    let mcp = McpService::new(&SERVER);
    let r = mcp.oneshot(modern_call("hello")).await.unwrap();
    // Only the core's answer: its size is exact, so hyper sends
    // `Content-Length`, not chunks.
    let exact = http_body::Body::size_hint(r.body()).exact();
    let (status, _, body) = text(r).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains("hello from a sync tool"), "{body}");
    assert_eq!(exact, Some(body.len() as u64));
}

#[tokio::test]
async fn dns_rebinding_is_refused() {
    let mcp = McpService::new(&SERVER);
    let mut req = modern_call("hello");
    req.headers_mut()
        .insert("Host", "evil.example".parse().unwrap());
    assert_eq!(
        mcp.oneshot(req).await.unwrap().status(),
        StatusCode::FORBIDDEN
    );
}

/// A service that awaits `ShopAsync`'s handlers.
fn async_service() -> McpService<Shop> {
    McpService::builder(&SERVER)
        .async_handlers(&ShopAsync)
        .build()
}

/// `slow`'s answer, awaited.
async fn slow_answered(call: Response<McpBody>) {
    let (status, _, body) = text(call).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains("hello from an async tool"), "{body}");
}

#[tokio::test]
async fn async_tool_is_awaited_on_the_calls_thread() {
    let mcp = async_service();
    // Eight at once: each awaits its timer, none holds a thread.
    let calls: Vec<_> = (0..8)
        .map(|_| tokio::spawn(mcp.clone().oneshot(modern_call("slow"))))
        .collect();
    for call in calls {
        slow_answered(call.await.unwrap().unwrap()).await;
    }
}

/// With two calls threads, two calls run on two threads at once: handlers
/// that each block their thread until the other has started both finish.
/// (With one thread the first would wait its 5 s alone.)
#[tokio::test]
async fn calls_threads_run_calls_at_once() {
    let mcp = McpService::builder(&SERVER)
        .async_handlers(&ShopAsync)
        .calls_threads(2)
        .build();
    let (a, b) = tokio::join!(
        mcp.clone().oneshot(modern_call("together")),
        mcp.clone().oneshot(modern_call("together")),
    );
    for r in [a, b] {
        let (status, _, body) = text(r.unwrap()).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(body.contains(r#""text":"together""#), "{body}");
    }
}

/// Calls are handed to the calls threads in turn: six calls one after
/// another on three threads run on each thread twice, in a cycle.
#[tokio::test]
async fn calls_are_handed_to_the_calls_threads_in_turn() {
    let mcp = McpService::builder(&SERVER)
        .async_handlers(&ShopAsync)
        .calls_threads(3)
        .build();
    let mut names = Vec::new();
    for _ in 0..6 {
        let (status, _, body) = text(
            mcp.clone()
                .oneshot(modern_call("which_thread"))
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let name = body
            .split(r#""text":""#)
            .nth(1)
            .and_then(|t| t.split('"').next())
            .unwrap_or_else(|| panic!("no text in {body}"));
        assert!(name.starts_with("picomcp-calls-"), "{name}");
        names.push(name.to_owned());
    }
    let first: std::collections::HashSet<_> = names[..3].iter().collect();
    assert_eq!(first.len(), 3, "three calls, three threads: {names:?}");
    assert_eq!(names[..3], names[3..], "the same cycle again: {names:?}");
}

/// Past `Config::max_calls` async calls in flight, a call is `503` with
/// `Retry-After` before its handler runs; a call that ends gives its place
/// back. Sync requests are not counted.
#[tokio::test]
async fn async_calls_past_max_calls_are_503() {
    let mcp = McpService::builder(&SERVER)
        .async_handlers(&ShopAsync)
        .config(Config {
            max_calls: 1,
            ..Config::default()
        })
        .build();
    let first = tokio::spawn(mcp.clone().oneshot(modern_call("hang_busy")));
    Hangs::until(&HANGS[2].started, 1, "the handler never started").await;
    let (status, headers, body) =
        text(mcp.clone().oneshot(modern_call("slow")).await.unwrap()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(headers["retry-after"], "1");
    // A sync tool is served meanwhile.
    let (status, _, body) = text(mcp.clone().oneshot(modern_call("hello")).await.unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("hello from a sync tool"), "{body}");
    // The first call's client goes: its place is given back.
    first.abort();
    Hangs::until(&HANGS[2].dropped, 1, "the handler's future was not dropped").await;
    // (Given back as the dropped call's task ends, on the calls thread:
    // at most a moment after its handler's future.)
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let r = mcp.clone().oneshot(modern_call("slow")).await.unwrap();
        if r.status() != StatusCode::SERVICE_UNAVAILABLE {
            break slow_answered(r).await;
        }
        assert!(Instant::now() < deadline, "the place was not given back");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// `calls_threads(0)` counts as one thread: async calls are still served.
#[tokio::test]
async fn zero_calls_threads_is_one() {
    let builder = McpService::builder(&SERVER)
        .calls_threads(0)
        .async_handlers(&ShopAsync);
    assert!(
        format!("{builder:?}").contains("calls_threads: 1"),
        "{builder:?}"
    );
    let mcp = builder.build();
    slow_answered(mcp.oneshot(modern_call("slow")).await.unwrap()).await;
}

/// On 2026-07-28 HTTP a client cancels a call by closing its response
/// stream: the handler's future is dropped where it awaits, not run on.
#[tokio::test]
async fn a_client_that_goes_away_drops_the_async_handlers_future() {
    let mcp = async_service();
    let call = tokio::spawn(mcp.clone().oneshot(modern_call("hang")));
    Hangs::until(&HANGS[0].started, 1, "the handler never started").await;
    assert_eq!(HANGS[0].dropped.load(Ordering::SeqCst), 0);
    call.abort(); // the response future is dropped: the client has gone
    Hangs::until(&HANGS[0].dropped, 1, "the handler's future was not dropped").await;
    // The service goes on serving async calls.
    slow_answered(mcp.oneshot(modern_call("slow")).await.unwrap()).await;
}

/// Handshake era: `notifications/cancelled` in another POST of the session
/// drops the running call's future; its POST ends `202`, with no answer.
/// Another session's cancel of the same id does not touch it.
#[tokio::test]
async fn a_cancelled_async_call_is_dropped_and_not_answered() {
    let mcp = async_service();
    let session = open_session(&mcp).await;
    let other = open_session(&mcp).await;
    let call = r#"{"jsonrpc":"2.0","id":"c-7","method":"tools/call","params":{"name":"hang_cancelled","arguments":{}}}"#;
    let call = tokio::spawn(mcp.clone().oneshot(post(call, Some(&session))));
    Hangs::until(&HANGS[1].started, 1, "the handler never started").await;
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c-7","reason":"no longer needed"}}"#;
    let r = mcp
        .clone()
        .oneshot(post(cancel, Some(&other)))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        HANGS[1].dropped.load(Ordering::SeqCst),
        0,
        "another session cancelled it"
    );
    let r = mcp
        .clone()
        .oneshot(post(cancel, Some(&session)))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    Hangs::until(&HANGS[1].dropped, 1, "the handler's future was not dropped").await;
    let (status, _, body) = text(call.await.unwrap().unwrap()).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(body, "", "a cancelled call is not answered");
    // The session goes on.
    let ping = r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#;
    let (status, _, body) = text(
        mcp.clone()
            .oneshot(post(ping, Some(&session)))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains(r#""id":8,"result":{}"#), "{body}");
}

#[tokio::test]
async fn async_tool_without_async_handlers_is_32603() {
    let mcp = McpService::new(&SERVER);
    let (status, _, body) = text(mcp.oneshot(modern_call("slow")).await.unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains(r#""code":-32603"#), "{body}");
}

/// A session that declares elicitation, and its call of `ask`: the
/// session's id and the call's response.
async fn ask_in_a_session(mcp: &McpService<Shop>) -> (String, Response<McpBody>) {
    ask_in_a_session_with(mcp, "ask").await
}

/// A session that declares elicitation, and its call of `tool`.
async fn ask_in_a_session_with(mcp: &McpService<Shop>, tool: &str) -> (String, Response<McpBody>) {
    let init = INIT.replace(
        r#""capabilities":{}"#,
        r#""capabilities":{"elicitation":{}}"#,
    );
    let id = open_session_with(mcp, &init).await;
    let r = mcp
        .clone()
        .oneshot(post(call_body(tool, false), Some(&id)))
        .await
        .unwrap();
    (id, r)
}

/// The client's acceptance of the input request `asked`.
fn accept(asked: &serde_json::Value) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"action":"accept","content":{{"confirm":true}}}}}}"#,
        asked["id"]
    )
}

#[tokio::test]
async fn a_call_that_asks_holds_its_sse_stream_until_the_answer_is_posted() {
    let mcp = McpService::new(&SERVER);
    let (id, r) = ask_in_a_session(&mcp).await;
    assert_eq!(r.status(), StatusCode::OK);
    // A held stream's length is not known.
    assert_eq!(http_body::Body::size_hint(r.body()).exact(), None);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    assert_eq!(r.headers()["cache-control"], "no-cache");
    let mut stream = r.into_body();
    let asked = event(&next_frame(&mut stream).await.unwrap());
    assert_eq!(asked["method"], "elicitation/create");

    // The stream stays open while the call waits; a ping is answered meanwhile.
    let waiting = tokio::time::timeout(Duration::from_millis(100), stream.frame()).await;
    assert!(waiting.is_err(), "the held stream has nothing more yet");
    let ping = post(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#, Some(&id));
    let (status, _, body) = text(mcp.clone().oneshot(ping).await.unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains(r#""id":7"#), "{body}");

    confirmed_on_the_stream(&mcp, &id, &asked, &mut stream).await;
}

/// The client accepts `asked` in its own POST (202); the call's answer
/// comes on the held `stream`, which then ends.
async fn confirmed_on_the_stream(
    mcp: &McpService<Shop>,
    id: &str,
    asked: &serde_json::Value,
    stream: &mut McpBody,
) {
    let answer = accept(asked);
    let (status, _, body) = text(mcp.clone().oneshot(post(answer, Some(id))).await.unwrap()).await;
    assert_eq!((status, body.as_str()), (StatusCode::ACCEPTED, ""));
    let done = event(&next_frame(stream).await.unwrap());
    assert_eq!(done["id"], 2);
    assert_eq!(done["result"]["content"][0]["text"], "confirmed");
    assert_eq!(next_frame(stream).await, None);
}

/// An async handler that asks waits as a sync one does: its requests on
/// its held stream (its handler's future is over meanwhile: no thread, no
/// lock), its answer there once the client's is posted, run again awaited.
#[tokio::test]
async fn an_async_call_that_asks_holds_its_stream_until_the_answer_is_posted() {
    let mcp = async_service();
    let (id, r) = ask_in_a_session_with(&mcp, "ask_slow").await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let mut stream = r.into_body();
    let asked = event(&next_frame(&mut stream).await.unwrap());
    assert_eq!(asked["method"], "elicitation/create");
    let waiting = tokio::time::timeout(Duration::from_millis(100), stream.frame()).await;
    assert!(waiting.is_err(), "the held stream has nothing more yet");
    confirmed_on_the_stream(&mcp, &id, &asked, &mut stream).await;
}

/// A session's call of `tool` (one that asks, then hangs in `hangs` when
/// run again) with the client's answer posted: that POST ends `202` at
/// once (the call runs again on its own, not as part of it), and the
/// handler runs again. The session's id and the call's held stream.
async fn running_again(mcp: &McpService<Shop>, tool: &str, hangs: &Hangs) -> (String, McpBody) {
    let (id, r) = ask_in_a_session_with(mcp, tool).await;
    let mut stream = r.into_body();
    let asked = event(&next_frame(&mut stream).await.unwrap());
    assert_eq!(asked["method"], "elicitation/create");
    let answer = mcp.clone().oneshot(post(accept(&asked), Some(&id)));
    let answer = tokio::time::timeout(Duration::from_secs(5), answer)
        .await
        .expect("the answer's POST is answered while the call runs again")
        .unwrap();
    let (status, _, body) = text(answer).await;
    assert_eq!((status, body.as_str()), (StatusCode::ACCEPTED, ""));
    Hangs::until(&hangs.started, 1, "the call never ran again").await;
    (id, stream)
}

/// A waiting call run again, awaited, once its client's answer is in,
/// then cancelled: its handler's future is dropped and its held stream
/// ends with no answer.
#[tokio::test]
async fn a_call_cancelled_while_it_runs_again_drops_its_handler() {
    let mcp = async_service();
    let (id, mut stream) = running_again(&mcp, "ask_then_hang", &AGAIN[0]).await;
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#;
    let (status, _, _) = text(mcp.clone().oneshot(post(cancel, Some(&id))).await.unwrap()).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    Hangs::until(&AGAIN[0].dropped, 1, "the handler's future was not dropped").await;
    assert_eq!(
        next_frame(&mut stream).await,
        None,
        "no answer on the stream"
    );
}

/// A call run again, awaited, whose client leaves its held stream (the
/// only place its output would go) meanwhile: its handler's future is
/// dropped, not run to its end.
#[tokio::test]
async fn a_call_run_again_whose_client_left_its_stream_drops_its_handler() {
    let mcp = async_service();
    let (_, stream) = running_again(&mcp, "ask_then_hang_left", &AGAIN[1]).await;
    drop(stream);
    Hangs::until(&AGAIN[1].dropped, 1, "the handler's future was not dropped").await;
}

/// A call run again, awaited, that is still running at its wait limit
/// (counted from when it first asked): it is answered `-32603` on its held
/// stream, which ends then (the retry keeps no strong hold on it), and its
/// handler's future is dropped.
#[tokio::test]
async fn a_call_still_running_again_at_its_wait_limit_ends_its_stream() {
    let mcp = McpService::builder(&SERVER)
        .async_handlers(&ShopAsync)
        .config(Config {
            wait_timeout: Duration::from_secs(1),
            ..Config::default()
        })
        .build();
    let (_, mut stream) = running_again(&mcp, "ask_then_hang_late", &AGAIN[2]).await;
    // Within 5 s each (`next_frame`): the answer, then the stream's end.
    let done = event(&next_frame(&mut stream).await.unwrap());
    assert_eq!(done["id"], 2);
    assert_eq!(done["error"]["code"], -32603);
    assert_eq!(next_frame(&mut stream).await, None);
    Hangs::until(&AGAIN[2].dropped, 1, "the handler's future was not dropped").await;
}

/// A service whose calls wait a second at most for their client, and a
/// call of it that asked: its session, its held stream, and the
/// elicitation the stream carried.
async fn asked_with_a_one_second_limit() -> (McpService<Shop>, String, McpBody, serde_json::Value) {
    let mcp = McpService::builder(&SERVER)
        .config(Config {
            wait_timeout: Duration::from_secs(1),
            ..Config::default()
        })
        .build();
    let (id, r) = ask_in_a_session(&mcp).await;
    let mut stream = r.into_body();
    let asked = event(&next_frame(&mut stream).await.unwrap());
    assert_eq!(asked["method"], "elicitation/create");
    (mcp, id, stream, asked)
}

/// A call whose client does not answer within `Config::wait_timeout` is
/// answered `-32603` on its held stream (at the next request the service
/// serves), which ends.
#[tokio::test]
async fn a_call_left_unanswered_past_the_wait_timeout_is_answered_on_its_stream() {
    let (mcp, id, mut stream, asked) = asked_with_a_one_second_limit().await;
    // Within the limit a request leaves it waiting.
    let ping = |n: u32| {
        post(
            format!(r#"{{"jsonrpc":"2.0","id":{n},"method":"ping"}}"#),
            Some(&id),
        )
    };
    let (status, _, _) = text(mcp.clone().oneshot(ping(7)).await.unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    let waiting = tokio::time::timeout(Duration::from_millis(100), stream.frame()).await;
    assert!(waiting.is_err(), "the held stream has nothing more yet");
    // Past it (the service's clock counts whole seconds), the next request
    // has the call answered.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let (status, _, _) = text(mcp.clone().oneshot(ping(8)).await.unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    let done = event(&next_frame(&mut stream).await.unwrap());
    assert_eq!(done["id"], 2);
    assert_eq!(done["error"]["code"], -32603);
    assert_eq!(next_frame(&mut stream).await, None);
    // The client's late answer is ignored.
    let answer = accept(&asked);
    let (status, _, body) = text(mcp.clone().oneshot(post(answer, Some(&id))).await.unwrap()).await;
    assert_eq!((status, body.as_str()), (StatusCode::ACCEPTED, ""));
}

/// The same with no other request at all: the service's sweep answers the
/// call once it waited too long, and its stream ends.
#[tokio::test]
async fn a_call_left_unanswered_is_answered_without_another_request() {
    let (_mcp, _, mut stream, _) = asked_with_a_one_second_limit().await;
    // Not before the limit (the clock counts whole seconds)...
    let early = tokio::time::timeout(Duration::from_millis(900), stream.frame()).await;
    assert!(early.is_err(), "answered before its time");
    // ...and within a few sweeps after it.
    let done = tokio::time::timeout(Duration::from_secs(5), next_frame(&mut stream))
        .await
        .expect("the sweep answers the call")
        .unwrap();
    let done = event(&done);
    assert_eq!(done["id"], 2);
    assert_eq!(done["error"]["code"], -32603);
    assert_eq!(next_frame(&mut stream).await, None);
}

/// The `GET` that opens session `id`'s notification stream.
fn session_get(id: &str) -> Request<Full<Bytes>> {
    Request::get("/mcp")
        .header("Host", "localhost")
        .header("Accept", "text/event-stream")
        .header("Mcp-Session-Id", id)
        .header("MCP-Protocol-Version", "2025-11-25")
        .body(Full::new(Bytes::new()))
        .unwrap()
}

#[tokio::test]
async fn a_sessions_get_stream_keeps_alive_and_ends_with_its_session() {
    let mcp = McpService::builder(&SERVER)
        .config(Config {
            keep_alive: Duration::from_secs(1),
            ..Config::default()
        })
        .build();
    let id = open_session(&mcp).await;
    let get = session_get(&id);
    let r = mcp.clone().oneshot(get).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let mut stream = r.into_body();
    assert_eq!(
        next_frame(&mut stream).await.as_deref(),
        Some(": keep-alive\n\n")
    );
    // DELETE ends the session; its stream ends at the next keep-alive.
    let delete = Request::delete("/mcp")
        .header("Host", "localhost")
        .header("Mcp-Session-Id", &id)
        .header("MCP-Protocol-Version", "2025-11-25")
        .body(Full::new(Bytes::new()))
        .unwrap();
    assert_eq!(mcp.oneshot(delete).await.unwrap().status(), StatusCode::OK);
    assert_eq!(next_frame(&mut stream).await, None);
}

/// `end_streams` ends an open session stream at once (no keep-alive due
/// for an hour), and a stream opened after it ends as it opens; the
/// session itself stays.
#[tokio::test]
async fn end_streams_ends_open_and_later_notification_streams() {
    let mcp = McpService::builder(&SERVER)
        .config(Config {
            keep_alive: Duration::from_secs(3600),
            ..Config::default()
        })
        .build();
    let id = open_session(&mcp).await;
    let r = mcp.clone().oneshot(session_get(&id)).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let mut stream = r.into_body();
    let waiting = tokio::time::timeout(Duration::from_millis(100), stream.frame()).await;
    assert!(waiting.is_err(), "the stream is open and quiet");
    mcp.end_streams();
    assert_eq!(next_frame(&mut stream).await, None);
    let r = mcp.clone().oneshot(session_get(&id)).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(next_frame(&mut r.into_body()).await, None);
    let ping = post(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#, Some(&id));
    let (status, _, body) = text(mcp.oneshot(ping).await.unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// The keep-alive's far edge: `Duration::MAX` (never, in effect) keeps a
/// session's stream open and quiet.
#[tokio::test]
async fn a_keep_alive_of_duration_max_keeps_the_stream_open() {
    let mcp = McpService::builder(&SERVER)
        .config(Config {
            keep_alive: Duration::MAX,
            ..Config::default()
        })
        .build();
    let id = open_session(&mcp).await;
    let get = session_get(&id);
    let r = mcp.oneshot(get).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let mut stream = r.into_body();
    let quiet = tokio::time::timeout(Duration::from_millis(300), next_frame(&mut stream)).await;
    assert!(quiet.is_err(), "the stream ended or spoke: {quiet:?}");
}

fn small_body() -> Config {
    Config {
        max_body: 512,
        body_timeout: Duration::from_millis(200),
        ..Config::default()
    }
}

#[tokio::test]
async fn declared_body_over_the_cap_is_413() {
    let mcp = McpService::builder(&SERVER).config(small_body()).build();
    let mut req = post("x".repeat(513), None);
    req.headers_mut()
        .insert("Content-Length", "100000000".parse().unwrap());
    let (status, _, body) = text(mcp.oneshot(req).await.unwrap()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
}

/// A `POST /mcp` whose body is `chunks` (no declared length), then, if
/// `stall`, nothing.
fn trickled(chunks: impl IntoIterator<Item = Bytes>, stall: bool) -> Request<Chunks> {
    Request::post("/mcp")
        .header("Host", "localhost")
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .body(Chunks::new(chunks.into_iter().collect(), 0, stall))
        .unwrap()
}

/// [`trickled`] with `chunks` chunks of 100 spaces.
fn trickle(chunks: usize, stall: bool) -> Request<Chunks> {
    trickled((0..chunks).map(|_| Bytes::from_static(&[b' '; 100])), stall)
}

/// The body's own exact size is the declared length when it has one (no
/// `Content-Length` header here): over the cap it is `413` at once, not a
/// read that waits for the body timeout; at the cap it is read (and here
/// times out, as the body never comes).
#[tokio::test]
async fn body_of_a_known_size_over_the_cap_is_413_at_once() {
    let mcp = McpService::builder(&SERVER).config(small_body()).build();
    let declared = |n| {
        Request::post("/mcp")
            .header("Host", "localhost")
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .body({
                // A size said (as hyper's body says it, from
                // `Content-Length`), and never a byte.
                let mut never = Chunks::new(Vec::new(), 0, true);
                never.declared = Some(n);
                never
            })
            .unwrap()
    };
    let start = Instant::now();
    let (status, _, _) = text(mcp.clone().oneshot(declared(513)).await.unwrap()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(start.elapsed() < Duration::from_millis(200));
    let (status, _, _) = text(mcp.oneshot(declared(512)).await.unwrap()).await;
    assert_eq!(status, StatusCode::REQUEST_TIMEOUT);
}

#[tokio::test]
async fn body_growing_past_the_cap_is_413() {
    let mcp = McpService::builder(&SERVER).config(small_body()).build();
    let (status, _, _) = text(mcp.oneshot(trickle(6, false)).await.unwrap()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn stalled_body_is_408() {
    let mcp = McpService::builder(&SERVER).config(small_body()).build();
    let start = Instant::now();
    let (status, _, _) = text(mcp.oneshot(trickle(2, true)).await.unwrap()).await;
    assert_eq!(status, StatusCode::REQUEST_TIMEOUT);
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(200) && took < Duration::from_secs(2),
        "{took:?}"
    );
}

#[tokio::test]
async fn full_session_table_is_503_with_retry_after() {
    let mcp = McpService::builder(&SERVER)
        .sessions(Mutex::new(Sessions::<2>::new()))
        .build();
    let first = open_session(&mcp).await;
    open_session(&mcp).await;
    let (status, headers, _) = text(mcp.clone().oneshot(post(INIT, None)).await.unwrap()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(headers["retry-after"], "1");
    // A session ended gives its slot back.
    let delete = Request::delete("/mcp")
        .header("Host", "localhost")
        .header("Mcp-Session-Id", &first)
        .header("MCP-Protocol-Version", "2025-11-25")
        .body(Full::new(Bytes::new()))
        .unwrap();
    assert_eq!(
        mcp.clone().oneshot(delete).await.unwrap().status(),
        StatusCode::OK
    );
    open_session(&mcp).await;
}

fn router(mcp: McpService<Shop>) -> Router {
    Router::new()
        .route("/health", get(|| async { "ok" }))
        .route_service("/mcp", mcp)
}

#[tokio::test]
async fn axum_router_serves_mcp_beside_another_route() {
    let mcp = McpService::builder(&SERVER)
        .config(small_body())
        .async_handlers(&ShopAsync)
        .build();
    let app = router(mcp);

    let health = Request::get("/health")
        .body(axum::body::Body::empty())
        .unwrap();
    let (status, _, body) = text(app.clone().oneshot(health).await.unwrap()).await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "ok"));

    let missing = Request::get("/nope")
        .body(axum::body::Body::empty())
        .unwrap();
    let r = app.clone().oneshot(missing).await.unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);

    let r = app
        .clone()
        .oneshot(post(INIT, None).map(axum::body::Body::new))
        .await;
    let (status, headers, body) = text(r.unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let id = headers["mcp-session-id"].to_str().unwrap().to_owned();
    let r = app
        .clone()
        .oneshot(post(INITIALIZED, Some(&id)).map(axum::body::Body::new))
        .await;
    assert_eq!(r.unwrap().status(), StatusCode::ACCEPTED);
    let r = app
        .clone()
        .oneshot(post(call_body("hello", false), Some(&id)).map(axum::body::Body::new))
        .await;
    let (status, _, body) = text(r.unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains("hello from a sync tool"), "{body}");

    let r = app
        .clone()
        .oneshot(modern_call("slow").map(axum::body::Body::new))
        .await;
    let (status, _, body) = text(r.unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains("hello from an async tool"), "{body}");

    let big = post("x".repeat(600), None).map(axum::body::Body::new);
    let r = app.oneshot(big).await.unwrap();
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
}

/// The test router served by `picomcp_tower::serve` with `limits` on a
/// port of its own: its address.
async fn serve_router(limits: ConnLimits) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = router(McpService::new(&SERVER));
    tokio::spawn(picomcp_tower::serve(listener, app, limits));
    addr
}

/// A 2026-07-28 `tools/call` of `tool` as bare HTTP/1.1, with the header
/// lines `extra` (each ending `\r\n`).
fn raw_call(tool: &str, extra: &str) -> String {
    let body = call_body(tool, true);
    format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\n{extra}\
         Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {tool}\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// A bare HTTP/1.1 exchange on `addr`: the status line and the body.
async fn raw(addr: std::net::SocketAddr, request: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).await.unwrap();
    String::from_utf8(answer).unwrap()
}

/// `serve_with_shutdown`, signalled: an idle keep-alive connection is
/// closed at once, a call in flight is answered in full before its
/// (keep-alive) connection is closed, the server future returns, and new
/// clients are refused.
#[tokio::test]
async fn serve_with_shutdown_finishes_calls_in_flight_then_returns() {
    use tokio::io::AsyncReadExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(picomcp_tower::serve_with_shutdown(
        listener,
        router(async_service()),
        ConnLimits::default(),
        async {
            let _ = stopped.await;
        },
    ));
    let mut idle = tokio::net::TcpStream::connect(addr).await.unwrap();
    // Keep-alive: only the shutdown closes it after its answer.
    let request = raw_call("slow_counted", "");
    let call = tokio::spawn(async move { raw(addr, &request).await });
    Hangs::until(&SLOW_STARTED, 1, "the call never started").await;
    stop.send(()).unwrap();

    let mut buf = [0u8; 64];
    let closed = tokio::time::timeout(Duration::from_secs(2), idle.read(&mut buf)).await;
    // (Reset when it was still in the backlog as the listener closed.)
    assert!(
        matches!(closed, Ok(Ok(0) | Err(_))),
        "the idle connection is closed: {closed:?}"
    );
    let answer = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the call's connection is closed after its answer")
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("finished after 300 ms"), "{answer}");
    let returned = tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("serve_with_shutdown returns once its connections are over");
    assert!(matches!(returned, Ok(Ok(()))), "{returned:?}");
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

#[tokio::test]
async fn serve_runs_the_router_with_its_header_timeout() {
    let addr = serve_router(ConnLimits {
        header_timeout: Duration::from_millis(300),
        ..ConnLimits::default()
    })
    .await;

    let health = raw(
        addr,
        "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(health.ends_with("\r\n\r\nok"), "{health}");

    let call = raw(addr, &raw_call("hello", "Connection: close\r\n")).await;
    assert!(call.starts_with("HTTP/1.1 200"), "{call}");
    assert!(call.contains("hello from a sync tool"), "{call}");

    // A 64 KiB head, twice the 32 KiB read buffer: refused by hyper (it
    // reads in growing chunks, so a head a little over the buffer may pass).
    let big = raw(
        addr,
        &format!(
            "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: {}\r\n\r\n",
            "a".repeat(64 << 10)
        ),
    )
    .await;
    assert!(big.starts_with("HTTP/1.1 431"), "{big}");

    // Headers that never finish: the connection is closed after 300 ms.
    let start = Instant::now();
    let cut = tokio::time::timeout(
        Duration::from_secs(5),
        raw(addr, "GET /health HTTP/1.1\r\nHost: x\r\n"),
    )
    .await
    .expect("closed by the header timeout");
    assert_eq!(cut, "");
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(3),
        "{took:?}"
    );
}

/// A kept-alive connection is closed once idle for the idle timeout, after
/// requests that each woke the connection's task (its timer is polled once
/// per arming, then only looked at), and not before.
#[tokio::test]
async fn serve_closes_a_connection_idle_after_requests() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = serve_router(ConnLimits {
        header_timeout: Duration::from_secs(30),
        idle_timeout: Duration::from_secs(1),
        ..ConnLimits::default()
    })
    .await;

    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut buf = vec![0u8; 4096];
    // Requests 200 ms apart: each well within the idle timeout of the last.
    for _ in 0..4 {
        s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut got = Vec::new();
        while !got.ends_with(b"ok") {
            let n = s.read(&mut buf).await.unwrap();
            assert!(
                n > 0,
                "closed while in use: {:?}",
                String::from_utf8_lossy(&got)
            );
            got.extend_from_slice(&buf[..n]);
        }
        assert!(got.starts_with(b"HTTP/1.1 200"));
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let start = Instant::now();
    let n = tokio::time::timeout(Duration::from_secs(6), s.read(&mut buf))
        .await
        .expect("closed by the idle timeout")
        .unwrap();
    assert_eq!(n, 0);
    let took = start.elapsed();
    // A second after the last answer, 200 ms of which had passed.
    assert!(
        took >= Duration::from_millis(700) && took < Duration::from_secs(4),
        "{took:?}"
    );
}

/// Timeouts at the far edge (`Duration::MAX`: never) serve requests and
/// neither panic nor close the connection: the deadline past what an
/// `Instant` holds is no deadline.
#[tokio::test]
async fn serve_with_timeouts_of_duration_max_serves() {
    let addr = serve_router(ConnLimits {
        header_timeout: Duration::MAX,
        idle_timeout: Duration::MAX,
        ..ConnLimits::default()
    })
    .await;
    for _ in 0..2 {
        let health = raw(
            addr,
            "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
        .await;
        assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    }
}

// `McpBody` is what the service answers: a plain `http_body::Body`.
const _: fn(McpService<Shop>) = |mcp| {
    fn is_service<T: tower::Service<Request<Full<Bytes>>, Response = Response<McpBody>>>(_: T) {}
    is_service(mcp);
};

/// The cap's edge, with no declared length: a body of exactly
/// `max_body` bytes in three chunks is read whole and in order (the
/// message straddles the second and third chunks; the core answers it),
/// one byte more is 413.
#[tokio::test]
async fn body_of_exactly_the_cap_is_read_one_more_byte_is_413() {
    let request = |len: usize| {
        let mut body = vec![b' '; 280];
        body.extend_from_slice(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        body.resize(len, b' ');
        let chunks = [&body[..100], &body[100..300], &body[300..]].map(Bytes::copy_from_slice);
        trickled(chunks, false)
    };
    let mcp = McpService::builder(&SERVER).config(small_body()).build();
    let (status, _, body) = text(mcp.clone().oneshot(request(512)).await.unwrap()).await;
    assert_ne!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert!(
        body.contains(r#""jsonrpc":"2.0""#),
        "the core answered: {body}"
    );
    let (status, _, _) = text(mcp.oneshot(request(513)).await.unwrap()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
}
