//! HTTP transcript tests for subscriptions and notification streams
//! (`Http::handle_streams`, `Http::poll_stream`, `Streams`): a handshake
//! session's `resources/subscribe` and its `GET` SSE stream, told of another
//! session's `buy` and of a change outside any request; the edges of `GET`
//! (406, 400, 404, 409, 503 with `Retry-After`, 405 in the modern era); the
//! stream table's bound; a 2026-07-28 `subscriptions/listen` stream with its
//! acknowledgment, tagged notifications and its end after
//! `notifications/cancelled`.

mod common;

use common::shop::{self, Shop};
use picomcp::Server;
use picomcp::changes::Changes;
use picomcp::http::{Http, Request, Response, SessionId, Sessions, Streams};
use picomcp::server::Waiting;
use serde_json::{Value, json};

const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");
const SSE: (&str, &str) = ("Accept", "text/event-stream");
const CT: (&str, &str) = ("Content-Type", "application/json");
const HOST: (&str, &str) = ("Host", "localhost:8080");
const MODERN: (&str, &str) = ("MCP-Protocol-Version", "2026-07-28");
const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const ENV: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// A test endpoint with its own bookshop (its own stock and changes).
struct Endpoint<const M: usize> {
    http: Http<'static, Shop>,
    server: &'static Server<'static, Shop>,
    sessions: Sessions<4>,
    waiting: Waiting<1, 1024>,
    streams: Streams<M, 2, 64>,
    next_id: u8,
    now: u64,
}

#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    stream: Option<SessionId>,
    poll_streams: bool,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {:?}", self.body))
    }
}

/// The JSON messages of SSE events.
fn events(sse: &str) -> Vec<Value> {
    sse.split("\n\n")
        .filter(|e| !e.is_empty())
        .map(|e| {
            let data = e
                .strip_prefix("event: message\ndata: ")
                .unwrap_or_else(|| panic!("not an SSE message event: {e:?}"));
            serde_json::from_str(data).unwrap()
        })
        .collect()
}

impl<const M: usize> Endpoint<M> {
    fn new() -> Self {
        let changes: &'static Changes = Box::leak(Box::new(Changes::new()));
        let server: &'static Server<'static, Shop> = Box::leak(Box::new(shop::server_in(
            0,
            shop::DEFAULT_STATE_KEY,
            changes,
        )));
        Self {
            http: Http::new(server),
            server,
            sessions: Sessions::new(),
            waiting: Waiting::new(),
            streams: Streams::new(),
            next_id: 0,
            now: 0,
        }
    }

    fn send(&mut self, method: &str, headers: &[(&str, &str)], body: &str) -> Answer {
        let mut body = body.as_bytes().to_vec();
        let mut out = vec![0u8; 16 * 1024];
        self.now += 1;
        let next = &mut self.next_id;
        let mut random = |id: &mut [u8; 16]| {
            *next += 1;
            *id = [0; 16];
            id[15] = *next;
        };
        let r: Response = self.http.handle_streams(
            &mut self.sessions,
            &mut random,
            &mut self.waiting,
            &mut self.streams,
            Request::new(method, headers, &mut body, self.now),
            &mut out,
        );
        Answer {
            status: r.status,
            headers: r
                .headers()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
            body: String::from_utf8(out[..r.body_len].to_vec()).unwrap(),
            stream: r.stream,
            poll_streams: r.poll_streams,
        }
    }

    fn post(&mut self, headers: &[(&str, &str)], body: &str) -> Answer {
        self.send("POST", headers, body)
    }

    /// A session: `initialize` (checked: `subscribe: true`) and `initialized`.
    fn init(&mut self) -> String {
        let a = self.post(&[HOST, ACCEPT, CT], INIT);
        assert_eq!(a.status, 200, "{a:?}");
        assert_eq!(
            a.json()["result"]["capabilities"]["resources"]["subscribe"],
            true
        );
        let sid = a.header("Mcp-Session-Id").unwrap().to_owned();
        let b = self.post(
            &[HOST, ACCEPT, CT, ("Mcp-Session-Id", &sid)],
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        );
        assert_eq!(b.status, 202);
        sid
    }

    fn call(&mut self, sid: &str, id: u32, method: &str, params: &str) -> Answer {
        self.post(
            &[HOST, ACCEPT, CT, ("Mcp-Session-Id", sid)],
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#),
        )
    }

    fn get(&mut self, sid: &str) -> Answer {
        self.send("GET", &[HOST, SSE, ("Mcp-Session-Id", sid)], "")
    }

    /// Poll stream `id`: `None` when it is gone, else its events and
    /// whether it ends.
    fn poll(&mut self, id: &SessionId) -> Option<(Vec<Value>, bool)> {
        let mut out = vec![0u8; 4096];
        let (n, last) = self.http.poll_stream(&mut self.streams, id, &mut out)?;
        Some((events(std::str::from_utf8(&out[..n]).unwrap()), last))
    }
}

fn updated(uri: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}})
}

#[test]
fn a_subscribed_session_is_told_on_its_get_stream() {
    let mut e = Endpoint::<4>::new();
    let (a, b) = (e.init(), e.init());
    let r = e.call(&a, 2, "resources/subscribe", r#"{"uri":"books://stock"}"#);
    assert_eq!(r.json(), json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    // The stream opens empty: nothing has changed yet.
    let get = e.get(&a);
    assert_eq!(get.status, 200, "{get:?}");
    assert_eq!(get.header("Content-Type"), Some("text/event-stream"));
    assert_eq!(get.body, "");
    let stream = get.stream.expect("a stream to keep open");
    assert_eq!(e.poll(&stream), Some((vec![], false)));
    // One stream per session.
    let again = e.get(&a);
    assert_eq!(again.status, 409, "{again:?}");
    assert_eq!(again.stream, None);
    // Another session buys: the subscriber's stream has the update, once.
    let bought = e.call(
        &b,
        3,
        "tools/call",
        r#"{"name":"buy","arguments":{"title":"Dune"}}"#,
    );
    assert_eq!(
        bought.json()["result"]["content"][0]["text"],
        "Bought Dune (2 left)"
    );
    assert_eq!(
        e.poll(&stream),
        Some((vec![updated("books://stock")], false))
    );
    assert_eq!(e.poll(&stream), Some((vec![], false)));
    // A change outside any request (a delivery) reaches it the same way.
    assert!(e.server.state().restock());
    assert_eq!(
        e.poll(&stream),
        Some((vec![updated("books://stock")], false))
    );
    // The session that did not subscribe has a stream of nothing.
    let other = e.get(&b).stream.unwrap();
    assert_eq!(e.poll(&other), Some((vec![], false)));
    // The client goes away: the stream can be opened again, and what
    // changed meanwhile is on it at once.
    e.streams.close(&stream);
    e.call(
        &b,
        4,
        "tools/call",
        r#"{"name":"buy","arguments":{"title":"Dune"}}"#,
    );
    let get = e.get(&a);
    assert_eq!(get.status, 200);
    assert_eq!(events(&get.body), [updated("books://stock")]);
    // Unsubscribed: nothing more.
    let r = e.call(&a, 5, "resources/unsubscribe", r#"{"uri":"books://stock"}"#);
    assert_eq!(r.json()["result"], json!({}));
    e.call(
        &b,
        6,
        "tools/call",
        r#"{"name":"buy","arguments":{"title":"Dune"}}"#,
    );
    assert_eq!(e.poll(&stream), Some((vec![], false)));
    // The session deleted: its stream is over.
    let d = e.send("DELETE", &[HOST, ("Mcp-Session-Id", &a)], "");
    assert_eq!(d.status, 200);
    assert_eq!(e.poll(&stream), None);
}

#[test]
fn get_at_its_edges() {
    let mut e = Endpoint::<4>::new();
    let a = e.init();
    // Accept must cover text/event-stream.
    let r = e.send(
        "GET",
        &[HOST, ("Accept", "application/json"), ("Mcp-Session-Id", &a)],
        "",
    );
    assert_eq!(r.status, 406);
    assert_eq!(e.send("GET", &[HOST, SSE], "").status, 400);
    let unknown = "0000000000000000000000000000ffff";
    assert_eq!(e.get(unknown).status, 404);
    assert_eq!(
        e.send("GET", &[("Host", "evil.example.com"), SSE], "")
            .status,
        403
    );
    // 2026-07-28 has no GET stream.
    let r = e.send("GET", &[HOST, SSE, MODERN], "");
    assert_eq!(r.status, 405);
    assert_eq!(r.header("Allow"), Some("POST"));
    // Other methods name GET among those allowed.
    let r = e.send("PUT", &[HOST], "");
    assert_eq!(r.status, 405);
    assert_eq!(r.header("Allow"), Some("GET, POST, DELETE"));
}

#[test]
fn the_stream_table_is_bounded_and_nothing_is_evicted() {
    let mut e = Endpoint::<1>::new();
    let (a, b) = (e.init(), e.init());
    assert_eq!(
        e.call(&a, 2, "resources/subscribe", r#"{"uri":"books://stock"}"#)
            .json()["result"],
        json!({})
    );
    let r = e.call(&b, 3, "resources/subscribe", r#"{"uri":"books://stock"}"#);
    assert_eq!(
        r.json(),
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "cannot subscribe to books://stock: every notification stream slot of this server is in use"}})
    );
    let get = e.get(&b);
    assert_eq!(get.status, 503);
    assert_eq!(get.header("Retry-After"), Some("1"));
    // The session's own bound: 2 URIs of at most 64 bytes.
    e.call(&a, 4, "resources/subscribe", r#"{"uri":"books://Dune"}"#);
    let r = e.call(&a, 5, "resources/subscribe", r#"{"uri":"books://catalog"}"#);
    assert_eq!(
        r.json()["error"]["message"],
        "cannot subscribe to books://catalog: all 2 subscriptions of this session are in use"
    );
    // A deleted session gives its slot back.
    assert_eq!(
        e.send("DELETE", &[HOST, ("Mcp-Session-Id", &a)], "").status,
        200
    );
    assert_eq!(
        e.call(&b, 6, "resources/subscribe", r#"{"uri":"books://stock"}"#)
            .json()["result"],
        json!({})
    );
    // A listen needs a slot too.
    let r = e.post(
        &[HOST, ACCEPT, CT, MODERN, ("Mcp-Method", "subscriptions/listen")],
        &format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{{"notifications":{{"toolsListChanged":true}},{ENV}}}}}"#
        ),
    );
    assert_eq!(
        r.json()["error"]["message"],
        "cannot listen: every notification stream of this server is in use"
    );
    assert_eq!(r.stream, None);
}

fn modern_post<const M: usize>(e: &mut Endpoint<M>, method: &str, body: &str) -> Answer {
    e.post(&[HOST, ACCEPT, CT, MODERN, ("Mcp-Method", method)], body)
}

#[test]
fn a_listen_stream_is_acknowledged_tagged_and_ended_by_cancel() {
    let mut e = Endpoint::<4>::new();
    let listen = modern_post(
        &mut e,
        "subscriptions/listen",
        &format!(
            r#"{{"jsonrpc":"2.0","id":"l1","method":"subscriptions/listen","params":{{"notifications":{{"resourceSubscriptions":["books://stock"]}},{ENV}}}}}"#
        ),
    );
    assert_eq!(listen.status, 200);
    assert_eq!(listen.header("Content-Type"), Some("text/event-stream"));
    let tag = json!({"io.modelcontextprotocol/subscriptionId": "l1"});
    assert_eq!(
        events(&listen.body),
        [
            json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {"notifications": {"resourceSubscriptions": ["books://stock"]}, "_meta": tag}})
        ]
    );
    let stream = listen.stream.expect("the listen stream stays open");
    assert_eq!(e.streams.listens(), 1);
    // Another request (another client) buys.
    let buy = e.post(
        &[HOST, ACCEPT, CT, MODERN, ("Mcp-Method", "tools/call"), ("Mcp-Name", "buy")],
        &format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"buy","arguments":{{"title":"Dune"}},{ENV}}}}}"#
        ),
    );
    assert_eq!(buy.status, 200, "{buy:?}");
    assert_eq!(
        e.poll(&stream),
        Some((
            vec![
                json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "books://stock", "_meta": tag}})
            ],
            false
        ))
    );
    // Cancelled in another POST: accepted, and the stream's end is due.
    let cancel = modern_post(
        &mut e,
        "notifications/cancelled",
        &format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":"l1",{ENV}}}}}"#
        ),
    );
    assert_eq!(cancel.status, 202);
    assert!(cancel.poll_streams);
    let (end, last) = e.poll(&stream).unwrap();
    assert!(last);
    assert_eq!(end.len(), 1);
    assert_eq!(end[0]["id"], "l1");
    assert_eq!(end[0]["result"]["resultType"], "complete");
    assert_eq!(
        end[0]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "l1"
    );
    assert_eq!(e.poll(&stream), None);
    assert!(e.streams.is_empty());
    // A cancel for no listen of ours is a notification like any other.
    let cancel = modern_post(
        &mut e,
        "notifications/cancelled",
        &format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":"l1",{ENV}}}}}"#
        ),
    );
    assert_eq!(cancel.status, 202);
    assert!(!cancel.poll_streams);
}

#[test]
fn a_refused_listen_keeps_no_slot_and_the_client_closing_frees_it() {
    let mut e = Endpoint::<1>::new();
    let bad = modern_post(
        &mut e,
        "subscriptions/listen",
        &format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{{"notifications":[],{ENV}}}}}"#
        ),
    );
    assert_eq!(bad.json()["error"]["code"], -32602);
    assert_eq!(bad.stream, None);
    assert!(e.streams.is_empty());
    let ok = modern_post(
        &mut e,
        "subscriptions/listen",
        &format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{{"notifications":{{"toolsListChanged":true}},{ENV}}}}}"#
        ),
    );
    let stream = ok.stream.unwrap();
    e.streams.close(&stream);
    assert!(e.streams.is_empty());
    assert_eq!(e.poll(&stream), None);
    // Discover says subscriptions are served here.
    let d = modern_post(
        &mut e,
        "server/discover",
        &format!(r#"{{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{{{ENV}}}}}"#),
    );
    assert_eq!(
        d.json()["result"]["capabilities"]["resources"]["subscribe"],
        true
    );
}
