//! [`Mount`]: the endpoint at one path, in front of any other service.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::{Request, Response};
use http_body_util::Either;

use crate::service::Fast;
use crate::{BoxError, McpBody, McpService};

/// The MCP endpoint at one path, every other request to `other` (an axum
/// `Router`, or any tower service).
///
/// `Router::new().route_service("/mcp", mcp)` works as well; a `Mount`
/// costs less per MCP request, because the endpoint's requests do not go
/// through the router (no route table look-up, no path-parameter extension
/// inserted and dropped, no boxed route future, no boxed body), and a
/// request the core answers at once (its body came with its head, no async
/// handler to await) is answered without an allocated future. In the
/// bookshop (`scripts/http_cost.sh`) the two were about 2,700 and 280
/// instructions of a stateless `tools/call` (benches/RESULTS.md).
///
/// The request body must be `Unpin` (hyper's `Incoming` and axum's `Body`
/// are; `Box::pin` makes any body so).
///
/// A request is the endpoint's when its path is exactly `path` (the query
/// is not part of the path; `/mcp/` is not `/mcp`), as an axum route of
/// that path would match it. The response body is
/// [`Either`]`<`[`McpBody`]`, B>`: `Left` from the endpoint, `Right` from
/// `other`.
///
/// ```no_run
/// use axum::Router;
/// use axum::routing::get;
/// use picomcp::{Server, ServerInfo};
/// use picomcp_tower::{ConnLimits, McpService, Mount};
///
/// static SERVER: Server<'static, ()> = Server::new(ServerInfo::new("demo", "1.0.0"), ());
///
/// # async fn run() -> std::io::Result<()> {
/// let mcp = McpService::builder(&SERVER).build();
/// let app = Router::new().route("/health", get(|| async { "ok" }));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// picomcp_tower::serve(listener, Mount::new("/mcp", mcp, app), ConnLimits::default()).await
/// # }
/// ```
pub struct Mount<S: 'static, F> {
    path: &'static str,
    mcp: McpService<S>,
    other: F,
}

impl<S, F> Mount<S, F> {
    /// `mcp` at `path` (say `"/mcp"`), everything else to `other`.
    pub fn new(path: &'static str, mcp: McpService<S>, other: F) -> Self {
        Mount { path, mcp, other }
    }
}

impl<S, F: Clone> Clone for Mount<S, F> {
    fn clone(&self) -> Self {
        Mount {
            path: self.path,
            mcp: self.mcp.clone(),
            other: self.other.clone(),
        }
    }
}

impl<S, F> std::fmt::Debug for Mount<S, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mount")
            .field("path", &self.path)
            .field("mcp", &self.mcp)
            .finish_non_exhaustive()
    }
}

/// The future of a [`Mount`]'s response: the endpoint's, or `other`'s
/// (boxed, so that it needs no pinning in place).
pub struct MountFuture<S: 'static, B, Fut> {
    inner: Inner<S, B, Fut>,
}

// The endpoint's future inline (its point: no allocation), `other`'s boxed.
#[allow(clippy::large_enum_variant)]
enum Inner<S: 'static, B, Fut> {
    Mcp(Fast<S, B>),
    Other(Pin<Box<Fut>>),
}

impl<S, B, Fut> std::fmt::Debug for MountFuture<S, B, Fut> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let which = match self.inner {
            Inner::Mcp(_) => "mcp",
            Inner::Other(_) => "other",
        };
        f.debug_struct("MountFuture").field("to", &which).finish()
    }
}

impl<S, B, Fut, FB, E> Future for MountFuture<S, B, Fut>
where
    S: Sync + 'static,
    B: http_body::Body + Send + Unpin + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
    Fut: Future<Output = Result<Response<FB>, E>>,
{
    type Output = Result<Response<Either<McpBody, FB>>, E>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.inner {
            Inner::Mcp(f) => Pin::new(f).poll(cx).map(|r| Ok(r.map(Either::Left))),
            Inner::Other(f) => f.as_mut().poll(cx).map(|r| r.map(|r| r.map(Either::Right))),
        }
    }
}

impl<S, F, B, FB> tower_service::Service<Request<B>> for Mount<S, F>
where
    S: Sync + 'static,
    B: http_body::Body + Send + Unpin + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
    F: tower_service::Service<Request<B>, Response = Response<FB>>,
{
    type Response = Response<Either<McpBody, FB>>;
    type Error = F::Error;
    type Future = MountFuture<S, B, F::Future>;

    /// Ready when `other` is (the endpoint always is).
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), F::Error>> {
        self.other.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let inner = if req.uri().path() == self.path {
            Inner::Mcp(self.mcp.call_fast(req))
        } else {
            Inner::Other(Box::pin(self.other.call(req)))
        };
        MountFuture { inner }
    }
}
