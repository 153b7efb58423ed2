//! The I/O-only baseline of the HTTP bookshop: hyper 1 on a tokio
//! multi-thread runtime (the stack `http_bookshop` runs on, without axum,
//! picomcp-tower or picomcp), reading each request's body whole and
//! answering every `POST` with the bytes `http_bookshop` answers a
//! stateless `tools/call get_author "Dune"` with (`200`,
//! `Content-Type: application/json`, the same body). What a request costs
//! here is what any Rust HTTP server on this stack pays before it does any
//! MCP work: `scripts/http_cost.sh` and `scripts/http_load.sh` run it
//! beside the bookshop.
//!
//! ```sh
//! cargo run --release --example http_canned -- --port 8080
//! ```

use std::convert::Infallible;
use std::net::SocketAddr;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

/// `http_bookshop`'s answer to `get_author "Dune"` (request id 1).
const ANSWER: &[u8] = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Frank Herbert"}],"structuredContent":{"result":"Frank Herbert"},"isError":false,"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"0.1.0"}}}}"#;

async fn answer(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    // Read the body, as a real server must before it can answer.
    let read = req.into_body().collect().await.map(|b| b.to_bytes());
    let mut r = Response::new(Full::new(Bytes::from_static(ANSWER)));
    if read.is_err() {
        *r.status_mut() = hyper::StatusCode::BAD_REQUEST;
    }
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    Ok(r)
}

fn main() {
    let mut port = 8080u16;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next().and_then(|v| v.parse().ok())) {
            ("--port", Some(p)) => port = p,
            _ => {
                eprintln!("usage: http_canned [--port N]");
                std::process::exit(2);
            }
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async move {
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let listener = match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("http_canned: cannot listen on {addr}: {e}");
                std::process::exit(1);
            }
        };
        // The line scripts/lib/serve_http.sh waits for.
        eprintln!("http_canned: canned answers, as MCP Streamable HTTP on http://{addr}/mcp");
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            tokio::spawn(async move {
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service_fn(answer))
                    .await;
            });
        }
    });
}
