//! HTTP transcript tests for `picomcp::http`: raw method, headers and body
//! in; exact status, headers and body out. One test per rule of the module
//! docs, both eras, against the bookshop.

mod common;

use common::{BOOKSHOP, shop::Shop};
use picomcp::http::{Http, Request, Response, SessionStore, Sessions};

const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");
const CT: (&str, &str) = ("Content-Type", "application/json");
const HOST: (&str, &str) = ("Host", "localhost:8080");
const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const SID: &str = "00000000000000000000000000000001";
const ENV: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
const STAMP: &str =
    r#""_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"0.1.0"}}"#;

/// A test endpoint: the bookshop, 4 session slots, ids 1, 2, 3... and a clock.
struct Endpoint {
    http: Http<'static, Shop>,
    sessions: Sessions<4>,
    next_id: u8,
    now: u64,
}

/// What came back: status, headers, body text.
#[derive(Debug, PartialEq)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    /// A response and its body, `out[..body_len]`.
    fn of(r: &Response, out: &[u8]) -> Self {
        Answer {
            status: r.status,
            headers: r
                .headers()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
            body: String::from_utf8(out[..r.body_len].to_vec()).unwrap(),
        }
    }
}

impl Endpoint {
    fn new() -> Self {
        Self {
            http: Http::new(&BOOKSHOP),
            sessions: Sessions::new(),
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
        let r: Response = self.http.handle(
            &mut self.sessions,
            &mut random,
            Request::new(method, headers, &mut body, self.now),
            &mut out,
        );
        Answer::of(&r, &out)
    }

    fn post(&mut self, headers: &[(&str, &str)], body: &str) -> Answer {
        self.send("POST", headers, body)
    }

    /// `initialize` + `notifications/initialized`; returns the session id.
    fn init(&mut self) -> String {
        let a = self.post(&[HOST, ACCEPT, CT], INIT);
        assert_eq!(a.status, 200, "{a:?}");
        let sid = a.headers[1].1.clone();
        let b = self.post(
            &[HOST, ACCEPT, CT, ("Mcp-Session-Id", &sid)],
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        );
        assert_eq!(b.status, 202);
        sid
    }
}

fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn json() -> Vec<(String, String)> {
    h(&[("Content-Type", "application/json")])
}

fn answer(status: u16, headers: Vec<(String, String)>, body: &str) -> Answer {
    Answer {
        status,
        headers,
        body: body.to_owned(),
    }
}

fn refusal(status: u16, message: &str) -> Answer {
    answer(
        status,
        json(),
        &format!(
            r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32600,"message":"{message}"}}}}"#
        ),
    )
}

#[test]
fn initialize_issues_a_session_id() {
    let mut e = Endpoint::new();
    let a = e.post(&[HOST, ACCEPT, CT], INIT);
    assert_eq!(a.status, 200);
    assert_eq!(
        a.headers,
        h(&[
            ("Content-Type", "application/json"),
            ("Mcp-Session-Id", SID)
        ])
    );
    assert!(a.body.starts_with(
        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":"#
    ));
    assert!(a.body.ends_with("}}"), "no trailing newline: {:?}", a.body);
}

#[test]
fn failed_initialize_issues_no_session() {
    let mut e = Endpoint::new();
    let a = e.post(
        &[HOST, ACCEPT, CT],
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
    );
    assert_eq!(a.status, 200);
    assert_eq!(a.headers, json());
    assert!(a.body.contains(r#""code":-32602"#), "{}", a.body);
    assert!(e.sessions.is_empty());
}

#[test]
fn request_in_a_session_is_json() {
    let mut e = Endpoint::new();
    let sid = e.init();
    let a = e.post(
        &[HOST, ACCEPT, CT, ("Mcp-Session-Id", &sid), ("MCP-Protocol-Version", "2025-11-25")],
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}"#,
    );
    assert_eq!(
        a,
        answer(
            200,
            json(),
            r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Frank Herbert"}],"structuredContent":{"result":"Frank Herbert"},"isError":false}}"#
        )
    );
}

#[test]
fn notifications_and_responses_are_accepted_with_202() {
    let mut e = Endpoint::new();
    let sid = e.init();
    let hs = [HOST, ACCEPT, CT, ("Mcp-Session-Id", sid.as_str())];
    assert_eq!(
        e.post(
            &hs,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}"#
        ),
        answer(202, vec![], "")
    );
    assert_eq!(
        e.post(&hs, r#"{"jsonrpc":"2.0","id":5,"result":{}}"#),
        answer(202, vec![], "")
    );
}

#[test]
fn notifications_before_the_response_make_an_sse_stream() {
    let mut e = Endpoint::new();
    let sid = e.init();
    let a = e.post(
        &[HOST, ACCEPT, CT, ("Mcp-Session-Id", &sid)],
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"count","arguments":{"n":2},"_meta":{"progressToken":"p"}}}"#,
    );
    assert_eq!(a.status, 200);
    assert_eq!(a.headers, h(&[("Content-Type", "text/event-stream")]));
    assert_eq!(
        a.body,
        concat!(
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p\",\"progress\":1,\"total\":2}}\n\n",
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p\",\"progress\":2,\"total\":2}}\n\n",
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"logger\":\"bookshop\",\"data\":\"counting done\"}}\n\n",
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"counted 2\"}],\"isError\":false}}\n\n",
        )
    );
}

#[test]
fn session_id_missing_is_400_and_unknown_is_404() {
    let mut e = Endpoint::new();
    e.init();
    let ping = r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#;
    assert_eq!(
        e.post(&[HOST, ACCEPT, CT], ping),
        refusal(400, "Bad Request: Mcp-Session-Id header is required")
    );
    assert_eq!(
        e.post(
            &[
                HOST,
                ACCEPT,
                CT,
                ("Mcp-Session-Id", "ffffffffffffffffffffffffffffffff")
            ],
            ping
        ),
        refusal(404, "Session not found")
    );
    assert_eq!(
        e.post(&[HOST, ACCEPT, CT, ("Mcp-Session-Id", "not-hex")], ping),
        refusal(404, "Session not found")
    );
}

#[test]
fn delete_ends_a_session() {
    let mut e = Endpoint::new();
    let sid = e.init();
    let hs = [HOST, ("Mcp-Session-Id", sid.as_str())];
    assert_eq!(e.send("DELETE", &hs, ""), answer(200, vec![], ""));
    assert_eq!(e.send("DELETE", &hs, ""), refusal(404, "Session not found"));
    assert_eq!(
        e.send("DELETE", &[HOST], ""),
        refusal(400, "Bad Request: Mcp-Session-Id header is required")
    );
    assert_eq!(
        e.post(
            &[HOST, ACCEPT, CT, ("Mcp-Session-Id", &sid)],
            r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#
        ),
        refusal(404, "Session not found")
    );
}

#[test]
fn get_and_other_methods_are_405() {
    let mut e = Endpoint::new();
    let allow = h(&[("Allow", "POST, DELETE")]);
    assert_eq!(
        e.send("GET", &[HOST, ("Accept", "text/event-stream")], ""),
        answer(405, allow.clone(), "")
    );
    assert_eq!(e.send("PUT", &[HOST], ""), answer(405, allow, ""));
}

#[test]
fn accept_must_cover_json_and_sse() {
    let mut e = Endpoint::new();
    let msg = "Not Acceptable: Accept must include application/json and text/event-stream";
    assert_eq!(
        e.post(&[HOST, ("Accept", "application/json"), CT], INIT),
        refusal(406, msg)
    );
    assert_eq!(e.post(&[HOST, CT], INIT), refusal(406, msg));
    assert_eq!(e.post(&[HOST, ("Accept", "*/*"), CT], INIT).status, 200);
}

#[test]
fn content_type_must_be_json() {
    let mut e = Endpoint::new();
    let msg = "Unsupported Media Type: Content-Type must be application/json";
    assert_eq!(
        e.post(&[HOST, ACCEPT, ("Content-Type", "text/plain")], INIT),
        refusal(415, msg)
    );
    assert_eq!(e.post(&[HOST, ACCEPT], INIT), refusal(415, msg));
    assert_eq!(
        e.post(
            &[
                HOST,
                ACCEPT,
                ("content-type", "application/json; charset=utf-8")
            ],
            INIT
        )
        .status,
        200
    );
}

#[test]
fn unsupported_protocol_version_header_is_400() {
    let mut e = Endpoint::new();
    let sid = e.init();
    let ping = r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#;
    let msg = "Bad Request: Unsupported MCP-Protocol-Version";
    assert_eq!(
        e.post(
            &[
                HOST,
                ACCEPT,
                CT,
                ("Mcp-Session-Id", &sid),
                ("MCP-Protocol-Version", "1999-01-01")
            ],
            ping
        ),
        refusal(400, msg)
    );
    // Any version this crate speaks is accepted (the suite sends 2025-03-26
    // on a 2025-11-25 session).
    assert_eq!(
        e.post(
            &[
                HOST,
                ACCEPT,
                CT,
                ("Mcp-Session-Id", &sid),
                ("MCP-Protocol-Version", "2025-03-26")
            ],
            ping
        ),
        answer(200, json(), r#"{"jsonrpc":"2.0","id":4,"result":{}}"#)
    );
}

#[test]
fn invalid_json_is_400_parse_error() {
    let mut e = Endpoint::new();
    let a = e.post(&[HOST, ACCEPT, CT], "{nope");
    assert_eq!(a.status, 400);
    assert_eq!(a.headers, json());
    assert!(
        a.body.starts_with(
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error""#
        ),
        "{}",
        a.body
    );
}

#[test]
fn dns_rebinding_host_and_origin_are_checked() {
    let mut e = Endpoint::new();
    let msg = "Forbidden: Host or Origin not allowed";
    assert_eq!(
        e.post(&[("Host", "evil.example.com"), ACCEPT, CT], INIT),
        refusal(403, msg)
    );
    assert_eq!(
        e.post(
            &[HOST, ("Origin", "http://evil.example.com"), ACCEPT, CT],
            INIT
        ),
        refusal(403, msg)
    );
    assert_eq!(
        e.send("GET", &[("Host", "evil.example.com:80")], ""),
        refusal(403, msg)
    );
    for host in ["127.0.0.1:3001", "[::1]:3001", "LOCALHOST", "localhost"] {
        let a = e.post(
            &[
                ("Host", host),
                ("Origin", "http://localhost:5173"),
                ACCEPT,
                CT,
            ],
            INIT,
        );
        assert_eq!(a.status, 200, "{host}");
    }
    // Configured lists.
    let mut e = Endpoint::new();
    e.http = Http::new(&BOOKSHOP)
        .allowed_hosts(&["mcp.example.com"])
        .allowed_origins(&["https://app.example.com"]);
    assert_eq!(e.post(&[HOST, ACCEPT, CT], INIT).status, 403);
    assert_eq!(
        e.post(
            &[
                ("Host", "mcp.example.com"),
                ("Origin", "https://app.example.com"),
                ACCEPT,
                CT
            ],
            INIT
        )
        .status,
        200
    );
    e.http = Http::new(&BOOKSHOP).any_host();
    assert_eq!(
        e.post(&[("Host", "evil.example.com"), ACCEPT, CT], INIT)
            .status,
        200
    );
}

#[test]
fn a_full_table_refuses_new_sessions_with_503_and_keeps_the_live_ones() {
    let mut e = Endpoint::new();
    let ids: Vec<String> = (0..4).map(|_| e.init()).collect();
    let ping = r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#;
    // A flood of initialize requests: each refused, no session evicted.
    for _ in 0..100 {
        let a = e.post(&[HOST, ACCEPT, CT], INIT);
        assert_eq!(a.status, 503, "{a:?}");
        assert!(
            a.headers.contains(&("Retry-After".into(), "1".into())),
            "{a:?}"
        );
        assert!(a.body.contains("every session slot is in use"), "{a:?}");
    }
    assert_eq!(e.sessions.len(), 4);
    for sid in &ids {
        assert_eq!(
            e.post(&[HOST, ACCEPT, CT, ("Mcp-Session-Id", sid)], ping)
                .status,
            200
        );
    }
}

#[test]
fn idle_sessions_expire_and_free_their_slot() {
    let mut e = Endpoint::new();
    e.sessions.set_idle_timeout(50);
    let ids: Vec<String> = (0..4).map(|_| e.init()).collect();
    let ping = r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#;
    // Session 0 is used every 10 ticks; the others go idle.
    for _ in 0..6 {
        e.now += 10;
        assert_eq!(
            e.post(&[HOST, ACCEPT, CT, ("Mcp-Session-Id", &ids[0])], ping)
                .status,
            200
        );
    }
    // A new client gets a slot an idle session freed; the live one stays.
    let fifth = e.init();
    assert_eq!(
        e.post(&[HOST, ACCEPT, CT, ("Mcp-Session-Id", &ids[1])], ping),
        refusal(404, "Session not found")
    );
    for sid in [&ids[0], &fifth] {
        assert_eq!(
            e.post(&[HOST, ACCEPT, CT, ("Mcp-Session-Id", sid)], ping)
                .status,
            200
        );
    }
}

#[test]
fn session_keeps_its_log_level() {
    let mut e = Endpoint::new();
    let sid = e.init();
    let hs = [HOST, ACCEPT, CT, ("Mcp-Session-Id", sid.as_str())];
    let a = e.post(
        &hs,
        r#"{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"error"}}"#,
    );
    assert_eq!(
        a,
        answer(200, json(), r#"{"jsonrpc":"2.0","id":5,"result":{}}"#)
    );
    // `count` logs at info: filtered now, so a plain JSON answer.
    let a = e.post(&hs, r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"count","arguments":{"n":1}}}"#);
    assert_eq!(
        a,
        answer(
            200,
            json(),
            r#"{"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"counted 1"}],"isError":false}}"#
        )
    );
    let conn = e
        .sessions
        .load(&picomcp::http::SessionId::parse(&sid).unwrap(), 99)
        .unwrap();
    assert_eq!(conn.version(), Some(picomcp::ProtocolVersion::V2025_11_25));
}

// ---- 2026-07-28 ----

fn modern_call(id: u32, name: &str, args: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{args},{ENV}}}}}"#
    )
}

const MV: (&str, &str) = ("MCP-Protocol-Version", "2026-07-28");

#[test]
fn modern_request_is_stateless_and_stamped() {
    let mut e = Endpoint::new();
    let a = e.post(
        &[
            HOST,
            ACCEPT,
            CT,
            MV,
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "get_author"),
            ("Mcp-Session-Id", "whatever"),
        ],
        &modern_call(7, "get_author", r#"{"title":"Dune"}"#),
    );
    assert_eq!(
        a,
        answer(
            200,
            json(),
            &format!(
                r#"{{"jsonrpc":"2.0","id":7,"result":{{"content":[{{"type":"text","text":"Frank Herbert"}}],"structuredContent":{{"result":"Frank Herbert"}},"isError":false,"resultType":"complete",{STAMP}}}}}"#
            )
        )
    );
    assert!(e.sessions.is_empty());
}

#[test]
fn modern_discover_needs_only_method_header() {
    let mut e = Endpoint::new();
    let a = e.post(
        &[HOST, ACCEPT, CT, MV, ("Mcp-Method", "server/discover")],
        &format!(r#"{{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{{{ENV}}}}}"#),
    );
    assert_eq!(a.status, 200);
    assert!(
        a.body.starts_with(
            r#"{"jsonrpc":"2.0","id":"d","result":{"supportedVersions":["2026-07-28"]"#
        ),
        "{}",
        a.body
    );
}

fn mismatch(id: &str, message: &str) -> Answer {
    answer(
        400,
        json(),
        &format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32020,"message":"Header mismatch: {message}"}}}}"#
        ),
    )
}

#[test]
fn modern_header_mismatch_is_32020_and_400() {
    let mut e = Endpoint::new();
    let body = modern_call(8, "get_author", r#"{"title":"Dune"}"#);
    let cases: [(&[(&str, &str)], &str); 7] = [
        (
            &[("Mcp-Method", "tools/call"), ("Mcp-Name", "get_author")],
            "MCP-Protocol-Version header is required",
        ),
        (
            &[
                ("MCP-Protocol-Version", "2025-11-25"),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "get_author"),
            ],
            "MCP-Protocol-Version does not match params._meta",
        ),
        (
            &[MV, ("Mcp-Name", "get_author")],
            "Mcp-Method header is required",
        ),
        (
            &[MV, ("Mcp-Method", "tools/list"), ("Mcp-Name", "get_author")],
            "Mcp-Method does not match the body's method",
        ),
        (
            &[MV, ("Mcp-Method", "tools/call")],
            "Mcp-Name header is required",
        ),
        (
            &[MV, ("Mcp-Method", "tools/call"), ("Mcp-Name", "top")],
            "Mcp-Name does not match the body's name or uri",
        ),
        (
            &[
                MV,
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "=?base64?dG9w?="),
            ],
            "Mcp-Name does not match the body's name or uri",
        ),
    ];
    for (extra, message) in cases {
        let mut hs = vec![HOST, ACCEPT, CT];
        hs.extend_from_slice(extra);
        assert_eq!(e.post(&hs, &body), mismatch("8", message), "{extra:?}");
    }
}

#[test]
fn modern_name_headers_for_prompts_and_resources_and_base64() {
    let mut e = Endpoint::new();
    let read = format!(
        r#"{{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{{"uri":"books://Dune",{ENV}}}}}"#
    );
    let a = e.post(
        &[
            HOST,
            ACCEPT,
            CT,
            MV,
            ("Mcp-Method", "resources/read"),
            ("Mcp-Name", "books://Dune"),
        ],
        &read,
    );
    assert_eq!(a.status, 200, "{}", a.body);
    assert!(a.body.contains("Dune by Frank Herbert"));
    let a = e.post(
        &[
            HOST,
            ACCEPT,
            CT,
            MV,
            ("Mcp-Method", "resources/read"),
            ("Mcp-Name", "books://Neuromancer"),
        ],
        &read,
    );
    assert_eq!(
        a,
        mismatch(r#""r""#, "Mcp-Name does not match the body's name or uri")
    );
    let get = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"prompts/get","params":{{"name":"recommend","arguments":{{"genre":"cyberpunk"}},{ENV}}}}}"#
    );
    let a = e.post(
        &[
            HOST,
            ACCEPT,
            CT,
            MV,
            ("Mcp-Method", "prompts/get"),
            ("Mcp-Name", "recommend"),
        ],
        &get,
    );
    assert_eq!(a.status, 200, "{}", a.body);
    // Non-ASCII name: the base64 sentinel (an unknown tool, so -32602 -> 400).
    let body = modern_call(10, "caf\u{e9}", "{}");
    let a = e.post(
        &[
            HOST,
            ACCEPT,
            CT,
            MV,
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "=?base64?Y2Fmw6k=?="),
        ],
        &body,
    );
    assert_eq!(a.status, 400);
    assert!(
        a.body.contains(r#""code":-32602"#) && a.body.contains("Unknown tool"),
        "{}",
        a.body
    );
}

#[test]
fn modern_status_codes_follow_the_error_code() {
    let mut e = Endpoint::new();
    let hs = |m: &'static str| vec![HOST, ACCEPT, CT, MV, ("Mcp-Method", m)];
    // -32601 -> 404
    let a = e.post(
        &hs("ping"),
        &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{{ENV}}}}}"#),
    );
    assert_eq!(a.status, 404, "{}", a.body);
    assert!(a.body.contains(r#""code":-32601"#));
    // -32022 -> 400 (header and _meta agree on an unsupported version)
    let body = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let a = e.post(
        &[
            HOST,
            ACCEPT,
            CT,
            ("MCP-Protocol-Version", "2099-01-01"),
            ("Mcp-Method", "tools/list"),
        ],
        body,
    );
    assert_eq!(a.status, 400);
    assert!(a.body.contains(r#""code":-32022"#), "{}", a.body);
    // Missing envelope key: the core's -32602 comes before header checks.
    let body = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    let a = e.post(&[HOST, ACCEPT, CT], body);
    assert_eq!(a.status, 400);
    assert!(a.body.contains(r#""code":-32602"#), "{}", a.body);
    // Header says 2026-07-28 but no envelope at all: -32602, 400.
    let a = e.post(
        &hs("tools/list"),
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
    );
    assert_eq!(a.status, 400);
    assert!(a.body.contains(r#""code":-32602"#), "{}", a.body);
    // A tool error is a result: 200.
    let a = e.post(
        &[
            HOST,
            ACCEPT,
            CT,
            MV,
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "get_author"),
        ],
        &modern_call(5, "get_author", r#"{"title":"Nothing"}"#),
    );
    assert_eq!(a.status, 200);
    assert!(a.body.contains(r#""isError":true"#));
}

#[test]
fn modern_is_post_only() {
    let mut e = Endpoint::new();
    let allow = h(&[("Allow", "POST")]);
    assert_eq!(
        e.send("GET", &[HOST, MV], ""),
        answer(405, allow.clone(), "")
    );
    assert_eq!(
        e.send("DELETE", &[HOST, MV, ("Mcp-Session-Id", SID)], ""),
        answer(405, allow, "")
    );
}

#[test]
fn modern_notifications_stream_as_sse() {
    let mut e = Endpoint::new();
    let body = r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"count","arguments":{"n":1},"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let a = e.post(
        &[
            HOST,
            ACCEPT,
            CT,
            MV,
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "count"),
        ],
        body,
    );
    assert_eq!(a.status, 200);
    assert_eq!(a.headers, h(&[("Content-Type", "text/event-stream")]));
    assert!(
        a.body.starts_with(
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\""
        ),
        "{}",
        a.body
    );
    assert_eq!(
        a.body.matches("event: message\n").count(),
        2,
        "no log without a logLevel: {}",
        a.body
    );
    assert!(
        a.body
            .ends_with(&("\"resultType\":\"complete\",".to_owned() + STAMP + "}}\n\n")),
        "{}",
        a.body
    );
}

#[test]
fn initialize_with_an_envelope_is_handshake_traffic() {
    // Not served statelessly: the handshake path runs it, and the core
    // refuses an enveloped message on a handshake connection (no session).
    let mut e = Endpoint::new();
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}},{ENV}}}}}"#
    );
    assert_eq!(
        e.post(&[HOST, ACCEPT, CT], &body),
        answer(
            200,
            json(),
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"this connection serves the handshake protocol era; requests carrying the 2026-07-28 envelope are not accepted on it"}}"#
        )
    );
    assert!(e.sessions.is_empty());
}

#[test]
fn sse_that_does_not_fit_falls_back_to_the_response() {
    let http = Http::new(&BOOKSHOP);
    let mut sessions = Sessions::<1>::new();
    let mut random = |id: &mut [u8; 16]| *id = [1; 16];
    let mut body = INIT.as_bytes().to_vec();
    let mut out = vec![0u8; 4096];
    let hs = [HOST, ACCEPT, CT];
    let r = http.handle(
        &mut sessions,
        &mut random,
        Request::post(&hs[..], &mut body, 0),
        &mut out,
    );
    let sid = r.session_id.unwrap();
    let hs = [HOST, ACCEPT, CT, ("Mcp-Session-Id", sid.as_str())];
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"count","arguments":{"n":2},"_meta":{"progressToken":"p"}}}"#;
    // Room for the messages, not for their SSE framing.
    let mut conn = sessions
        .load(&picomcp::http::SessionId([1; 16]), 1)
        .unwrap();
    let mut probe = vec![0u8; 4096];
    let n = BOOKSHOP.handle(&mut conn, &mut call.as_bytes().to_vec(), &mut probe);
    assert_eq!(std::str::from_utf8(&probe[..n]).unwrap().lines().count(), 4);
    let mut body = call.as_bytes().to_vec();
    // (n + 60: the core itself garbles notification lines when `out` is
    // only a few bytes larger than its output; see the report.)
    let mut out = vec![0u8; n + 60];
    let r = http.handle(
        &mut sessions,
        &mut random,
        Request::post(&hs[..], &mut body, 1),
        &mut out,
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.content_type, Some("application/json"));
    assert_eq!(
        std::str::from_utf8(&out[..r.body_len]).unwrap(),
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"counted 2"}],"isError":false}}"#
    );
}

/// One session's POSTs through `Http::handle_waiting`, with the waiting
/// store shared by every session.
struct Asker {
    sessions: Sessions<8>,
    waiting: picomcp::server::Waiting<4, 4096>,
    next: u8,
    /// The clock of the requests.
    now: u64,
}

struct Asked {
    r: Response,
    body: String,
}

impl Asker {
    fn new() -> Self {
        Asker {
            sessions: Sessions::new(),
            waiting: picomcp::server::Waiting::new(),
            next: 0,
            now: 0,
        }
    }

    fn post(&mut self, session: Option<&str>, body: &str) -> Asked {
        let mut headers = vec![
            ("Host", "localhost"),
            ("Accept", "application/json, text/event-stream"),
            ("Content-Type", "application/json"),
        ];
        if let Some(s) = session {
            headers.push(("Mcp-Session-Id", s));
        }
        self.next = self.next.wrapping_add(1);
        let n = self.next;
        let mut random = move |id: &mut [u8; 16]| *id = [n; 16];
        let mut body = body.as_bytes().to_vec();
        let mut out = vec![0u8; 8192];
        let http = Http::new(&BOOKSHOP);
        let r = http.handle_waiting(
            &mut self.sessions,
            &mut random,
            &mut self.waiting,
            Request::post(&headers[..], &mut body, self.now),
            &mut out,
        );
        Asked {
            body: String::from_utf8(out[..r.body_len].to_vec()).unwrap(),
            r,
        }
    }

    fn session(&mut self) -> String {
        let a = self.post(
            None,
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}"#,
        );
        a.r.session_id.unwrap().as_str().to_owned()
    }
}

/// The JSON messages of an SSE body.
fn events(body: &str) -> Vec<serde_json::Value> {
    body.split("\n\n")
        .filter_map(|e| e.strip_prefix("event: message\ndata: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

const RESERVE: &str = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"reserve","arguments":{"title":"Dune"}}}"#;

#[test]
fn a_handshake_call_that_asks_holds_its_stream_and_a_later_post_delivers_the_answer() {
    let mut a = Asker::new();
    let s = a.session();
    let asked = a.post(Some(&s), RESERVE);
    assert_eq!(asked.r.status, 200);
    assert_eq!(asked.r.content_type, Some(picomcp::http::EVENT_STREAM));
    let call = asked.r.hold.expect("the stream is held");
    let ask = &events(&asked.body)[0];
    assert_eq!(ask["method"], "elicitation/create");
    // Another request in the session meanwhile is an ordinary answer.
    let ping = a.post(Some(&s), r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#);
    assert_eq!(
        (ping.r.status, ping.r.hold, ping.r.deliver),
        (200, None, None)
    );
    // The answer: 202 for its POST; the final answer goes on the held stream.
    let answer = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"action":"accept","content":{{"confirm":true}}}}}}"#,
        ask["id"]
    );
    let done = a.post(Some(&s), &answer);
    assert_eq!(done.r.status, 202);
    let delivery = done.r.deliver.expect("delivered to the held stream");
    assert_eq!((delivery.call, delivery.last), (call, true));
    let final_answer = &events(&done.body)[0];
    assert_eq!(final_answer["id"], 5);
    assert_eq!(
        final_answer["result"]["content"][0]["text"],
        "Reserved Dune"
    );
    assert!(a.waiting.is_empty());
}

#[test]
fn only_the_calling_session_can_answer_or_cancel_and_delete_forgets_its_calls() {
    let mut a = Asker::new();
    let (s1, s2) = (a.session(), a.session());
    let asked = a.post(Some(&s1), RESERVE);
    let call = asked.r.hold.unwrap();
    let ask_id = events(&asked.body)[0]["id"].clone();
    let answer = format!(r#"{{"jsonrpc":"2.0","id":{ask_id},"result":{{"action":"decline"}}}}"#);
    // Another session's answer or cancellation is ignored.
    let other = a.post(Some(&s2), &answer);
    assert_eq!((other.r.status, other.r.deliver), (202, None));
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#;
    assert_eq!(a.post(Some(&s2), cancel).r.deliver, None);
    assert_eq!(a.waiting.len(), 1);
    // Its own cancellation ends the stream with nothing more.
    let cancelled = a.post(Some(&s1), cancel);
    let delivery = cancelled.r.deliver.unwrap();
    assert_eq!(
        (
            cancelled.r.status,
            delivery.call,
            delivery.last,
            cancelled.r.body_len
        ),
        (202, call, true, 0)
    );
    assert!(a.waiting.is_empty());
    // A DELETE forgets the session's waiting calls.
    a.post(Some(&s1), RESERVE);
    assert_eq!(a.waiting.len(), 1);
    let headers = [("Host", "localhost"), ("Mcp-Session-Id", s1.as_str())];
    let mut out = [0u8; 512];
    let r = Http::new(&BOOKSHOP).handle_waiting(
        &mut a.sessions,
        &mut |_: &mut [u8; 16]| {},
        &mut a.waiting,
        Request::new("DELETE", &headers[..], &mut [], 0),
        &mut out,
    );
    assert_eq!(r.status, 200);
    assert!(a.waiting.is_empty());
}

/// A call whose client does not answer its requests within the limit is
/// answered `-32603` on its held stream and gives its slot back: a client
/// that never answers cannot keep the store from other sessions.
#[test]
fn a_call_left_unanswered_past_the_limit_is_answered_and_frees_its_slot() {
    const LIMIT: u64 = 600;
    let mut a = Asker::new();
    let (hostile, other) = (a.session(), a.session());
    a.now = 100;
    // Four calls fill the store; a fifth (another session's) is refused.
    let mut held = Vec::new();
    for id in 1..=4 {
        let call = RESERVE.replace(r#""id":5"#, &format!(r#""id":{id}"#));
        let asked = a.post(Some(&hostile), &call);
        held.push((
            id,
            asked.r.hold.unwrap(),
            events(&asked.body)[0]["id"].clone(),
        ));
    }
    let refused = a.post(Some(&other), RESERVE);
    assert!(
        refused.body.contains("all 4 waiting-call slots are in use"),
        "{}",
        refused.body
    );
    let mut out = vec![0u8; 4096];
    let http = Http::new(&BOOKSHOP);
    // Waited 599 (from when each call parked, not from 0): not yet.
    assert!(
        http.expire_waiting(&mut a.waiting, 100 + LIMIT - 1, LIMIT, &mut out)
            .is_none()
    );
    assert_eq!(a.waiting.len(), 4);
    // At the limit each is answered, once, on its own stream, which ends.
    let mut answered = Vec::new();
    while let Some(r) = http.expire_waiting(&mut a.waiting, 100 + LIMIT, LIMIT, &mut out) {
        let delivery = r.deliver.expect("for a held stream");
        assert!(delivery.last);
        let body = std::str::from_utf8(&out[..r.body_len]).unwrap();
        let event = &events(body)[0];
        assert_eq!(event["error"]["code"], -32603, "{body}");
        assert_eq!(
            event["error"]["message"],
            "cannot wait for the client's input: no answer within the waiting-call time limit"
        );
        answered.push((event["id"].as_u64().unwrap(), delivery.call));
    }
    answered.sort_by_key(|(id, _)| *id);
    let expected: Vec<_> = held.iter().map(|(id, call, _)| (*id, *call)).collect();
    assert_eq!(answered, expected);
    assert!(a.waiting.is_empty());
    // A late answer to an expired call's request is ignored.
    let late = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"action":"accept","content":{{"confirm":true}}}}}}"#,
        held[0].2
    );
    a.now = 100 + LIMIT;
    let ignored = a.post(Some(&hostile), &late);
    assert_eq!((ignored.r.status, ignored.r.deliver), (202, None));
    // The other session's call can wait now.
    let asked = a.post(Some(&other), RESERVE);
    assert!(asked.r.hold.is_some(), "{}", asked.body);
}

#[test]
fn initialize_claimed_as_2026_07_28_is_a_removed_method() {
    // The header claims the stateless era, where there is no initialize:
    // 404 with -32601, and no session.
    let mut e = Endpoint::new();
    let enveloped =
        format!(r#"{{"jsonrpc":"2.0","id":7,"method":"initialize","params":{{{ENV}}}}}"#);
    let hs = [HOST, ACCEPT, CT, MV, ("Mcp-Method", "initialize")];
    assert_eq!(
        e.post(&hs, &enveloped),
        answer(
            404,
            json(),
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found","data":"initialize"}}"#
        )
    );
    // A handshake initialize sent with that header: cross-era, -32022 with
    // the supported versions (400).
    let a = e.post(&hs, INIT);
    assert_eq!(a.status, 400, "{}", a.body);
    assert!(
        a.body.contains(r#""code":-32022"#) && a.body.contains(r#""supported":["2026-07-28"]"#),
        "{}",
        a.body
    );
    assert!(e.sessions.is_empty());
    // Without the header an initialize still opens a session.
    assert_eq!(e.post(&[HOST, ACCEPT, CT], INIT).status, 200);
    assert_eq!(e.sessions.len(), 1);
}

mod param_headers {
    //! `Mcp-Param-*` (2026-07-28): arguments with `x-mcp-header` must agree
    //! with their headers.

    use super::*;
    use picomcp::schema::{Property, Schema};
    use picomcp::tool::{Arguments, Reply, Tool, ToolDescriptor, ToolOutcome};
    use picomcp::{Server, ServerInfo};

    const ARGS: Schema = Schema::object(&[
        Property::new("region", Schema::string().header("Region")),
        Property::new("limit", Schema::integer().nullable().header("Limit")),
        Property::new("query", Schema::string()),
    ])
    .required(&["region"]);

    fn run<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
        reply.text("ran")
    }

    static TOOLS: &[Tool<()>] = &[Tool::new(ToolDescriptor::new("execute_sql", &ARGS), run)];
    static SERVER: Server<'static, ()> =
        Server::new(ServerInfo::new("params", "1.0.0"), ()).tools(TOOLS);

    /// POST `body` with the 2026-07-28 headers for `method` (and `Mcp-Name`
    /// when given) plus `extra`.
    fn post(method: &str, name: Option<&str>, body: &str, extra: &[(&str, &str)]) -> Answer {
        let mut headers = vec![HOST, ACCEPT, CT, MV, ("Mcp-Method", method)];
        headers.extend(name.map(|n| ("Mcp-Name", n)));
        headers.extend_from_slice(extra);
        let mut body = body.as_bytes().to_vec();
        let mut out = vec![0u8; 4096];
        let r = Http::new(&SERVER).handle(
            &mut Sessions::<1>::new(),
            &mut |_: &mut [u8; 16]| {},
            Request::post(&headers[..], &mut body, 0),
            &mut out,
        );
        Answer::of(&r, &out)
    }

    fn call(args: &str, params: &[(&str, &str)]) -> Answer {
        let body = modern_call(1, "execute_sql", args);
        post("tools/call", Some("execute_sql"), &body, params)
    }

    #[test]
    fn the_schema_lists_the_annotation() {
        let body =
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{ENV}}}}}"#);
        let text = post("tools/list", None, &body, &[]).body;
        assert!(
            text.contains(r#""region":{"type":"string","x-mcp-header":"Region"}"#),
            "{text}"
        );
    }

    #[test]
    fn matching_headers_are_served() {
        let ok = |args: &str, params: &[(&str, &str)]| {
            let a = call(args, params);
            assert_eq!(a.status, 200, "{args} {params:?}: {}", a.body);
            assert!(a.body.contains(r#""text":"ran""#), "{}", a.body);
        };
        ok(
            r#"{"region":"us-west1"}"#,
            &[("Mcp-Param-Region", "us-west1")],
        );
        ok(
            r#"{"region":"Hello"}"#,
            &[("mcp-param-region", "=?base64?SGVsbG8=?=")],
        );
        // Values without the exact sentinel are literal.
        ok(
            r#"{"region":"SGVsbG8="}"#,
            &[("Mcp-Param-Region", "SGVsbG8=")],
        );
        ok(
            r#"{"region":"=?base64?SGVsbG8="}"#,
            &[("Mcp-Param-Region", "=?base64?SGVsbG8=")],
        );
        // Integers compare numerically; null or absent values expect no header.
        ok(
            r#"{"region":"eu","limit":42}"#,
            &[("Mcp-Param-Region", "eu"), ("Mcp-Param-Limit", "42.0")],
        );
        ok(
            r#"{"region":"eu","limit":null}"#,
            &[("Mcp-Param-Region", "eu")],
        );
        // Unannotated headers are ignored.
        ok(
            r#"{"region":"eu"}"#,
            &[("Mcp-Param-Region", "eu"), ("Mcp-Param-Other", "x")],
        );
    }

    #[test]
    fn disagreeing_headers_are_32020_and_400() {
        type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);
        let cases: [Case; 6] = [
            (
                r#"{"region":"us-west1"}"#,
                &[],
                "Mcp-Param-Region header is required: params.arguments has a value for it",
            ),
            (
                r#"{"region":"us-west1"}"#,
                &[("Mcp-Param-Region", "us-east1")],
                "Mcp-Param-Region header does not match the value in params.arguments",
            ),
            (
                r#"{"region":"Hello"}"#,
                &[("Mcp-Param-Region", "=?base64?SGVsbG8?=")],
                "Mcp-Param-Region header value is not valid base64 (=?base64?…?=)",
            ),
            (
                r#"{"region":"Hello"}"#,
                &[("Mcp-Param-Region", "=?base64?SGVs!!!bG8=?=")],
                "Mcp-Param-Region header value is not valid base64 (=?base64?…?=)",
            ),
            (
                r#"{"region":"eu","limit":42}"#,
                &[("Mcp-Param-Region", "eu"), ("Mcp-Param-Limit", "41")],
                "Mcp-Param-Limit header does not match the value in params.arguments",
            ),
            (
                r#"{"region":"eu"}"#,
                &[("Mcp-Param-Region", "eu"), ("Mcp-Param-Limit", "1")],
                "Mcp-Param-Limit header is sent, but params.arguments has no value for it",
            ),
        ];
        for (args, params, message) in cases {
            assert_eq!(
                call(args, params),
                mismatch("1", message),
                "{args} {params:?}"
            );
        }
    }

    #[test]
    fn only_a_complete_envelope_and_a_known_tool_are_checked() {
        // An unknown tool: the core's -32602, not a header mismatch.
        let body = modern_call(2, "nope", r#"{"region":"eu"}"#);
        let text = post("tools/call", Some("nope"), &body, &[]).body;
        assert!(
            text.contains(r#""code":-32602"#) && text.contains("Unknown tool"),
            "{text}"
        );
        // A missing envelope key is the core's -32602 first.
        let body = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"execute_sql","arguments":{"region":"eu"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let text = post("tools/call", Some("execute_sql"), body, &[]).body;
        assert!(
            text.contains(r#""code":-32602"#) && text.contains("clientCapabilities"),
            "{text}"
        );
    }
}

#[test]
fn duplicate_unreadable_and_trailing_host_headers_are_refused() {
    let mut e = Endpoint::new();
    let twice = refusal(400, "Bad Request: more than one Host or Origin header");
    let forbidden = refusal(403, "Forbidden: Host or Origin not allowed");
    // Two Hosts or two Origins: 400, even when the first is allowed.
    assert_eq!(
        e.post(&[HOST, ("Host", "evil.example"), ACCEPT, CT], INIT),
        twice
    );
    assert_eq!(
        e.post(
            &[
                HOST,
                ("Origin", "http://localhost"),
                ("origin", "http://evil.example"),
                ACCEPT,
                CT
            ],
            INIT
        ),
        twice
    );
    // Present but not readable as text: 403, not "absent".
    assert_eq!(
        e.post(&[("Host", "l\u{f6}calhost"), ACCEPT, CT], INIT),
        forbidden
    );
    assert_eq!(
        e.post(
            &[HOST, ("Origin", "http://localhost\u{7f}"), ACCEPT, CT],
            INIT
        ),
        forbidden
    );
    // Anything after `]` but a port: 403.
    for host in ["[::1]evil.example", "[::1]:", "[::1]:80x", "[::1]x:80"] {
        assert_eq!(
            e.post(&[("Host", host), ACCEPT, CT], INIT),
            forbidden,
            "{host}"
        );
    }
    for host in ["[::1]", "[::1]:8080"] {
        assert_eq!(
            e.post(&[("Host", host), ACCEPT, CT], INIT).status,
            200,
            "{host}"
        );
    }
}

#[test]
fn mcp_name_takes_only_canonical_standard_base64() {
    let mut e = Endpoint::new();
    let body = modern_call(10, "caf\u{e9}", "{}");
    let post = |e: &mut Endpoint, name: &str| {
        e.post(
            &[
                HOST,
                ACCEPT,
                CT,
                MV,
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", name),
            ],
            &body,
        )
    };
    // Canonical: the core answers (an unknown tool).
    let a = post(&mut e, "=?base64?Y2Fmw6k=?=");
    assert!(a.body.contains("Unknown tool"), "{}", a.body);
    // Unpadded, URL-safe alphabet, or non-zero unused bits (`l` decodes to
    // the same bytes as `k`): a header mismatch.
    for name in [
        "=?base64?Y2Fmw6k?=",
        "=?base64?Y2Fmw6l=?=",
        "=?base64?Y2Fmw6k=?=x",
    ] {
        let a = post(&mut e, name);
        assert_eq!(a.status, 400, "{name}");
        assert!(a.body.contains(r#""code":-32020"#), "{name}: {}", a.body);
    }
    let body = modern_call(11, "a?b", "{}");
    let a = e.post(
        &[
            HOST,
            ACCEPT,
            CT,
            MV,
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "=?base64?YT9i?="),
        ],
        &body,
    );
    assert!(a.body.contains("Unknown tool"), "{}", a.body);
    let a = e.post(
        &[
            HOST,
            ACCEPT,
            CT,
            MV,
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "=?base64?YT9i_?="),
        ],
        &body,
    );
    assert_eq!(a.status, 400);
}

/// 2026-07-28 request state is bound to the subject the caller's
/// authentication layer gives with the request (`Request::subject`).
#[test]
fn request_state_is_bound_to_the_request_subject() {
    const ELICIT: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#;
    let call = |subject: Option<&[u8]>, extra: &str| -> (u16, serde_json::Value) {
        let headers = [
            HOST,
            ACCEPT,
            CT,
            MV,
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "reserve"),
        ];
        let mut body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"reserve","arguments":{{"title":"Dune"}}{extra},{ELICIT}}}}}"#
        )
        .into_bytes();
        let mut out = vec![0u8; 8192];
        let mut req = Request::post(&headers[..], &mut body, 0);
        if let Some(s) = subject {
            req = req.subject(s);
        }
        let r = Http::new(&BOOKSHOP).handle(
            &mut Sessions::<1>::new(),
            &mut |_: &mut [u8; 16]| {},
            req,
            &mut out,
        );
        (
            r.status,
            serde_json::from_slice(&out[..r.body_len]).unwrap(),
        )
    };
    let (status, first) = call(Some(b"alice"), "");
    assert_eq!(
        (status, &first["result"]["resultType"]),
        (200, &"input_required".into()),
        "{first}"
    );
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let retry = format!(
        r#","requestState":"{state}","inputResponses":{{"confirm":{{"action":"accept","content":{{"confirm":true}}}}}}"#
    );
    for other in [Some(&b"bob"[..]), None] {
        let (_, v) = call(other, &retry);
        assert_eq!(v["error"]["code"], -32602, "{v}");
        assert_eq!(
            v["error"]["message"],
            "Invalid requestState: it was altered, or issued for another request"
        );
    }
    let (status, done) = call(Some(b"alice"), &retry);
    assert_eq!(status, 200);
    assert_eq!(
        done["result"]["content"][0]["text"], "Reserved Dune",
        "{done}"
    );
}
