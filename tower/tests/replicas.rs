//! Two services as two replicas behind a load balancer with no stickiness:
//! one session store, and `Peers` that hand each other's messages to
//! `McpService::relayed` (what picomcp-redis does over Redis pub/sub).

use std::sync::Mutex;

use http::StatusCode;
use picomcp::http::{SessionId, Sessions};
use picomcp::tool::{Tool, ToolDescriptor};
use picomcp::{Server, ServerInfo};
use picomcp_tower::{McpService, Peers};
use tower::ServiceExt;

mod common;
use common::{NO_ARGS, Shop, ask, event, next_frame, post};

static TOOLS: [Tool<Shop>; 1] = [Tool::new(ToolDescriptor::new("ask", &NO_ARGS), ask)];
static SERVER: Server<'static, Shop> =
    Server::new(ServerInfo::new("shop", "1.0.0"), Shop).tools(&TOOLS);

/// The session store both replicas share.
static SESSIONS: Mutex<Sessions<8>> = Mutex::new(Sessions::new());

/// The replicas, by index, and every message relayed.
static REPLICAS: Mutex<Vec<McpService<Shop>>> = Mutex::new(Vec::new());
static RELAYED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Replica `0`'s or `1`'s link to the other.
struct Link(usize);

impl Peers for Link {
    fn relay(&self, session: &SessionId, message: &[u8]) {
        RELAYED
            .lock()
            .unwrap()
            .push(String::from_utf8_lossy(message).into_owned());
        for (i, other) in REPLICAS.lock().unwrap().iter().enumerate() {
            if i != self.0 {
                tokio::spawn(other.relayed(*session, message.to_vec()));
            }
        }
    }
    fn subscribed(&self, _: &SessionId, _: &str, _: bool) {}
    fn subscriptions(&self, _: &SessionId) -> Vec<String> {
        Vec::new()
    }
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}"#;

#[tokio::test]
async fn an_answer_posted_to_one_replica_reaches_the_call_waiting_on_the_other() {
    {
        let mut replicas = REPLICAS.lock().unwrap();
        for i in 0..2 {
            replicas.push(
                McpService::builder(&SERVER)
                    .sessions(&SESSIONS)
                    .peers(Link(i))
                    .build(),
            );
        }
    }
    let (a, b) = {
        let r = REPLICAS.lock().unwrap();
        (r[0].clone(), r[1].clone())
    };

    // The session is made on A and used on B.
    let r = a.clone().oneshot(post(INIT, None)).await.unwrap();
    let id = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let r = b
        .clone()
        .oneshot(post(initialized, Some(&id)))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);

    // The call waits on A, holding its SSE stream ...
    let call =
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{}}}"#;
    let r = a.clone().oneshot(post(call, Some(&id))).await.unwrap();
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let mut stream = r.into_body();
    let asked = event(&next_frame(&mut stream).await.unwrap());
    assert_eq!(asked["method"], "elicitation/create");

    // ... and the client's answer is POSTed to B: B answers 202 and relays
    // it to A, where the call finishes on its stream.
    let answer = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"action":"accept","content":{{"confirm":true}}}}}}"#,
        asked["id"]
    );
    let r = b.clone().oneshot(post(answer, Some(&id))).await.unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let done = event(&next_frame(&mut stream).await.unwrap());
    assert_eq!(done["id"], 2);
    assert_eq!(done["result"]["content"][0]["text"], "confirmed");
    assert_eq!(next_frame(&mut stream).await, None);
    // Only the client's answer was relayed (by B; relayed messages are not
    // relayed again by A).
    let relayed = RELAYED.lock().unwrap().clone();
    assert_eq!(relayed.len(), 1, "{relayed:?}");
    assert!(relayed[0].contains(r#""confirm":true"#), "{relayed:?}");
}
