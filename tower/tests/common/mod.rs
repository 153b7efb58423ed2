//! What the tower tests share: the test shop's asking tool, a client's
//! POST, and reading SSE frames.

use std::time::Duration;

use bytes::Bytes;
use http::Request;
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
