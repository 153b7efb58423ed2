//! What the tower tests share: the test shop's asking tool, a client's
//! POST, a request body that comes in pieces, and reading SSE frames.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::Request;
use http_body::Frame;
use http_body_util::{BodyExt, Full};
use picomcp::mrtr::ElicitAction;
use picomcp::schema::{Property, Schema};
use picomcp::tool::{Arguments, Reply, ToolOutcome};
use picomcp_tower::McpBody;

/// The test servers' state.
pub struct Shop;

/// No arguments.
pub const NO_ARGS: Schema<'static> = Schema::object(&[]);

/// `ask`'s elicitation form: one required boolean.
pub const CONFIRM: Schema<'static> =
    Schema::object(&[Property::new("confirm", Schema::boolean())]).required(&["confirm"]);

/// Asks the client to confirm (on the handshake era: an
/// `elicitation/create` on the call's SSE stream while the call waits),
/// then answers `confirmed` or `not confirmed`.
pub fn ask<'a>(_: &'a Shop, _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    if reply.request_state() == Some(b"asked") {
        let yes = reply
            .input_response("confirm")
            .filter(|r| r.action() == Some(ElicitAction::Accept))
            .and_then(|r| r.content())
            .and_then(|c| c.get("confirm"))
            .and_then(|v| v.as_bool())
            == Some(true);
        return reply.text(if yes { "confirmed" } else { "not confirmed" });
    }
    let mut asking = reply.input_required();
    asking
        .elicit("confirm", format_args!("Go on?"), &CONFIRM)
        .state(b"asked");
    asking.finish()
}

/// A POST to `/mcp` as a client sends it (in the handshake era session
/// `session`, or none).
pub fn post(body: impl Into<String>, session: Option<&str>) -> Request<Full<Bytes>> {
    let body: String = body.into();
    let mut b = Request::post("/mcp")
        .header("Host", "localhost:8080")
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json");
    if let Some(id) = session {
        b = b
            .header("Mcp-Session-Id", id)
            .header("MCP-Protocol-Version", "2025-11-25");
    }
    b.body(Full::new(Bytes::from(body))).unwrap()
}

/// The next frame of a streamed body, as text (`None` at its end); within
/// 5 s.
pub async fn next_frame(body: &mut McpBody) -> Option<String> {
    let frame = tokio::time::timeout(Duration::from_secs(5), body.frame())
        .await
        .expect("a frame within 5 s")?;
    let data = frame.unwrap().into_data().unwrap();
    Some(String::from_utf8(data.to_vec()).unwrap())
}

/// The JSON of an SSE `event: message`.
pub fn event(frame: &str) -> serde_json::Value {
    let data = frame
        .split("\n\n")
        .find_map(|e| e.strip_prefix("event: message\ndata: "))
        .unwrap_or_else(|| panic!("no message event in {frame:?}"));
    serde_json::from_str(data).unwrap()
}

/// A body in `chunks`, the first at once, each later one after `pending`
/// polls that wake at once and find nothing; then, if `stall`, nothing
/// ever again. Its declared size is `declared`.
#[allow(dead_code)] // not every test file reads bodies in pieces
pub struct Chunks {
    chunks: std::collections::VecDeque<Bytes>,
    pending: usize,
    left: usize,
    stall: bool,
    /// The size the body says it has (`Content-Length`, as hyper's
    /// `size_hint` gives it).
    pub declared: Option<u64>,
}

#[allow(dead_code)]
impl Chunks {
    pub fn new(chunks: Vec<Bytes>, pending: usize, stall: bool) -> Self {
        Chunks {
            chunks: chunks.into(),
            pending,
            left: 0,
            stall,
            declared: None,
        }
    }
}

impl http_body::Body for Chunks {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.chunks.is_empty() {
            return if self.stall {
                Poll::Pending
            } else {
                Poll::Ready(None)
            };
        }
        if self.left > 0 {
            self.left -= 1;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.left = self.pending;
        Poll::Ready(self.chunks.pop_front().map(|c| Ok(Frame::data(c))))
    }

    fn size_hint(&self) -> http_body::SizeHint {
        match self.declared {
            Some(n) => http_body::SizeHint::with_exact(n),
            None => http_body::SizeHint::default(),
        }
    }
}
