//! `Mount`: the endpoint at its path in front of an axum `Router`, through
//! `oneshot` and over a socket under `serve`. Its future answers a request
//! whose body is all here without an allocation, and goes on as the
//! service's own for the rest: a body still on its way (and its timeout),
//! a body over the cap, an async handler's call, a session's requests.

use std::convert::Infallible;
use std::future::Future;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::get;
use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use picomcp::tool::{Arguments, Reply, Tool, ToolDescriptor, ToolOutcome};
use picomcp::{Server, ServerInfo};
use picomcp_tower::{Config, ConnLimits, McpService, Mount};
use tower::ServiceExt;

#[allow(dead_code)] // each test file uses its part
mod common;
use common::{Chunks, NO_ARGS, Shop, post};

fn hello<'a>(_: &'a Shop, _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    reply.text("hello from a sync tool")
}

async fn slow<'a>(_: &'a Shop, _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    tokio::time::sleep(Duration::from_millis(20)).await;
    reply.text("hello from an async tool")
}

picomcp::async_tools! {
    struct ShopAsync for Shop {
        SLOW: ToolDescriptor::new("slow", &NO_ARGS) => slow,
    }
}

static TOOLS: [Tool<Shop>; 2] = [
    Tool::new(ToolDescriptor::new("hello", &NO_ARGS), hello),
    ShopAsync::SLOW,
];
static SERVER: Server<'static, Shop> =
    Server::new(ServerInfo::new("shop", "1.0.0"), Shop).tools(&TOOLS);

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn call_body(tool: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"{tool}","arguments":{{}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    )
}

/// A stateless 2026-07-28 `tools/call` of `tool` at `path`, its body `B`.
fn modern<B>(path: &str, tool: &str, body: impl FnOnce(String) -> B) -> Request<B> {
    Request::post(path)
        .header("Host", "localhost:8080")
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", tool)
        .body(body(call_body(tool)))
        .unwrap()
}

fn full(s: String) -> axum::body::Body {
    axum::body::Body::from(s)
}

async fn text<B>(r: http::Response<B>) -> (StatusCode, http::HeaderMap, String)
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

fn config() -> Config {
    Config {
        max_body: 512,
        body_timeout: Duration::from_millis(200),
        ..Config::default()
    }
}

fn mounted() -> Mount<Shop, Router> {
    let mcp = McpService::builder(&SERVER)
        .config(config())
        .async_handlers(&ShopAsync)
        .build();
    let app = Router::new().route("/health", get(|| async { "ok" }));
    Mount::new("/mcp", mcp, app)
}

/// `/mcp` (with or without a query) is the endpoint's; every other path,
/// `/mcp/` included, the router's.
#[tokio::test]
async fn the_path_is_the_endpoints_the_rest_the_routers() {
    let app = mounted();
    let health = Request::get("/health")
        .body(axum::body::Body::empty())
        .unwrap();
    let (status, _, body) = text(app.clone().oneshot(health).await.unwrap()).await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "ok"));

    for path in ["/mcp", "/mcp?x=1"] {
        let r = app.clone().oneshot(modern(path, "hello", full)).await;
        let (status, headers, body) = text(r.unwrap()).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        assert_eq!(headers["content-type"], "application/json");
        assert!(body.contains("hello from a sync tool"), "{path}: {body}");
    }
    for path in ["/mcp/", "/nope", "/mcpx"] {
        let r = app.clone().oneshot(modern(path, "hello", full)).await;
        assert_eq!(r.unwrap().status(), StatusCode::NOT_FOUND, "{path}");
    }
}

/// A handshake session through the mount: its id, then a call in it.
#[tokio::test]
async fn a_session_is_served_through_the_mount() {
    let app = mounted();
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
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello","arguments":{}}}"#;
    let r = app
        .oneshot(post(call, Some(&id)).map(axum::body::Body::new))
        .await;
    let (status, _, body) = text(r.unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains("hello from a sync tool"), "{body}");
}

/// An async handler's call goes on to the calls thread and is answered.
#[tokio::test]
async fn an_async_handlers_call_is_awaited() {
    let r = mounted().oneshot(modern("/mcp", "slow", full)).await;
    let (status, _, body) = text(r.unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains("hello from an async tool"), "{body}");
}

/// `call_body(tool)` cut in three chunks.
fn three(body: String) -> Vec<Bytes> {
    let b = body.into_bytes();
    let (a, rest) = b.split_at(50);
    let (c, d) = rest.split_at(60);
    [a, c, d].map(Bytes::copy_from_slice).to_vec()
}

/// The body's edge cases through the mount's future: chunks all here
/// (read at once), chunks that come after polls that find nothing (read
/// on under the body timeout), a declared size over the cap (413 at
/// once), chunks growing past the cap (413), a body that stops coming
/// (408 after the body timeout).
#[tokio::test]
async fn bodies_here_on_their_way_too_large_and_stalled() {
    for pending in [0, 1, 3] {
        let r = mounted()
            .oneshot(modern("/mcp", "hello", |b| {
                Chunks::new(three(b), pending, false)
            }))
            .await;
        let (status, _, body) = text(r.unwrap()).await;
        assert_eq!(status, StatusCode::OK, "{pending}: {body}");
        assert!(body.contains("hello from a sync tool"), "{pending}: {body}");
    }

    let start = Instant::now();
    let declared = modern("/mcp", "hello", |b| {
        let mut c = Chunks::new(three(b), 0, true);
        c.declared = Some(513);
        c
    });
    let r = mounted().oneshot(declared).await.unwrap();
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert!(start.elapsed() < Duration::from_millis(200));

    for pending in [0, 1] {
        let big = (0..6).map(|_| Bytes::from_static(&[b' '; 100])).collect();
        let r = mounted()
            .oneshot(modern("/mcp", "hello", |_| {
                Chunks::new(big, pending, false)
            }))
            .await;
        assert_eq!(
            r.unwrap().status(),
            StatusCode::PAYLOAD_TOO_LARGE,
            "{pending}"
        );
    }

    for pending in [0, 1] {
        let start = Instant::now();
        let r = mounted().oneshot(modern("/mcp", "hello", |b| {
            let mut chunks = three(b);
            chunks.truncate(2);
            Chunks::new(chunks, pending, true)
        }));
        let r = tokio::time::timeout(Duration::from_secs(5), r).await;
        let r = r.expect("answered within the body timeout");
        assert_eq!(
            r.unwrap().status(),
            StatusCode::REQUEST_TIMEOUT,
            "{pending}"
        );
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(200) && took < Duration::from_secs(2),
            "{took:?}"
        );
    }
}

/// Polled again after its answer, the future answers `500` (no panic).
#[tokio::test]
async fn polled_after_its_answer_it_answers_500() {
    let mut app = mounted();
    let mut cx = Context::from_waker(std::task::Waker::noop());
    type Svc = dyn tower::Service<
            Request<axum::body::Body>,
            Response = http::Response<
                http_body_util::Either<picomcp_tower::McpBody, axum::body::Body>,
            >,
            Error = Infallible,
            Future = picomcp_tower::MountFuture<
                Shop,
                axum::body::Body,
                <Router as tower::Service<Request<axum::body::Body>>>::Future,
            >,
        >;
    let svc: &mut Svc = &mut app;
    let ready = std::future::poll_fn(|cx| svc.poll_ready(cx)).await;
    assert!(ready.is_ok());
    let mut f = std::pin::pin!(svc.call(modern("/mcp", "hello", full)));
    let Poll::Ready(Ok(first)) = f.as_mut().poll(&mut cx) else {
        panic!("a stateless call whose body is here is answered at the first poll");
    };
    assert_eq!(first.status(), StatusCode::OK);
    let Poll::Ready(Ok(again)) = f.as_mut().poll(&mut cx) else {
        panic!("answered again");
    };
    assert_eq!(again.status(), StatusCode::INTERNAL_SERVER_ERROR);
}

/// Under `serve`, on one kept-alive connection: two calls (the body read
/// as far as its declared length, the connection kept), then `/health`.
#[tokio::test]
async fn served_over_a_kept_alive_connection() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(picomcp_tower::serve(
        listener,
        mounted(),
        ConnLimits::default(),
    ));
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let body = call_body("hello");
    let call = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\n\
         Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: hello\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut seen = String::new();
    for i in 0..2 {
        s.write_all(call.as_bytes()).await.unwrap();
        let mut buf = [0u8; 4096];
        while seen.matches("hello from a sync tool").count() <= i {
            let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf))
                .await
                .expect("answered")
                .unwrap();
            assert!(n > 0, "closed after {i} answers: {seen}");
            seen.push_str(std::str::from_utf8(&buf[..n]).unwrap());
        }
    }
    assert_eq!(seen.matches("HTTP/1.1 200").count(), 2, "{seen}");
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).await.unwrap();
    let rest = String::from_utf8(rest).unwrap();
    assert!(
        rest.starts_with("HTTP/1.1 200") && rest.ends_with("ok"),
        "{rest}"
    );
}
