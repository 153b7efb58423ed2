//! Transcript tests for the 2026-07-28 (stateless) revision: era selection,
//! the `_meta` envelope ladder, result stamping, `server/discover`, removed
//! methods, per-request logging, and MRTR with sealed `requestState`.

mod common;

use common::{BOOKSHOP, bookshop, init};
use serde_json::{Value, json};

const ENV: &str = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}"#;
const ENV_ELICIT: &str = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}"#;
const STAMP: &str =
    r#""_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"0.1.0"}}"#;

fn req(id: u32, method: &str, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params}}}}}"#)
}

fn env(extra: &str) -> String {
    if extra.is_empty() {
        format!(r#""_meta":{{{ENV}}}"#)
    } else {
        format!(r#"{extra},"_meta":{{{ENV}}}"#)
    }
}

fn run(lines: &[String]) -> Vec<String> {
    bookshop(&(lines.join("\n") + "\n"))
}

fn parse(line: &str) -> Value {
    serde_json::from_str(line).unwrap()
}

#[test]
fn discover_and_stamped_results() {
    let out = run(&[
        req(1, "server/discover", &env("")),
        req(
            2,
            "tools/call",
            &env(r#""name":"get_author","arguments":{"title":"Dune"}"#),
        ),
        req(3, "resources/read", &env(r#""uri":"books://Dune""#)),
        req(
            4,
            "tools/call",
            &env(r#""name":"get_author","arguments":{"title":"Nothing"}"#),
        ),
    ]);
    assert_eq!(
        out[0],
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"supportedVersions":["2026-07-28"],"capabilities":{{"completions":{{}},"logging":{{}},"prompts":{{"listChanged":false}},"resources":{{"subscribe":false,"listChanged":false}},"tools":{{"listChanged":false}}}},"instructions":"A small bookshop: look up authors with get_author, list titles with top, read books://{{title}}.","resultType":"complete","ttlMs":0,"cacheScope":"private",{STAMP}}}}}"#
        )
    );
    assert_eq!(
        out[1],
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"result":{{"content":[{{"type":"text","text":"Frank Herbert"}}],"structuredContent":{{"result":"Frank Herbert"}},"isError":false,"resultType":"complete",{STAMP}}}}}"#
        )
    );
    assert_eq!(
        out[2],
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"result":{{"contents":[{{"uri":"books://Dune","mimeType":"text/plain","text":"Dune by Frank Herbert"}}],"resultType":"complete","ttlMs":0,"cacheScope":"private",{STAMP}}}}}"#
        )
    );
    let err = parse(&out[3]);
    assert_eq!(err["result"]["isError"], true);
    assert_eq!(err["result"]["resultType"], "complete");
}

#[test]
fn every_list_is_cacheable_and_stamped() {
    for (method, key) in [
        ("tools/list", "tools"),
        ("resources/list", "resources"),
        ("resources/templates/list", "resourceTemplates"),
        ("prompts/list", "prompts"),
    ] {
        let v = parse(&run(&[req(1, method, &env(""))])[0]);
        let r = &v["result"];
        assert!(r[key].is_array(), "{method}");
        assert_eq!(
            (
                r["resultType"].as_str(),
                r["ttlMs"].as_u64(),
                r["cacheScope"].as_str()
            ),
            (Some("complete"), Some(0), Some("private"))
        );
        assert_eq!(
            r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "Bookshop"
        );
    }
    // reserve is offered to 2026-07-28 clients only.
    let tools = parse(&run(&[req(1, "tools/list", &env(""))])[0]);
    assert!(
        tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "reserve")
    );
}

#[test]
fn envelope_ladder() {
    let out = run(&[
        req(1, "server/discover", &env("")),
        req(
            2,
            "tools/list",
            r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#,
        ),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#.into(),
        req(
            4,
            "tools/list",
            r#""_meta":{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}"#,
        ),
        req(
            5,
            "tools/list",
            r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}"#,
        ),
        req(
            6,
            "tools/list",
            r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}"#,
        ),
        req(
            7,
            "tools/list",
            r#""_meta":{"io.modelcontextprotocol/clientCapabilities":{}}"#,
        ),
        req(8, "tools/list", r#""_meta":{}"#),
        req(
            9,
            "tools/list",
            r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}"#,
        ),
        req(10, "tools/list", r#""_meta":5"#),
    ]);
    let expected = [
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"params._meta is missing the required envelope key(s): io.modelcontextprotocol/clientCapabilities"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"params._meta must be an object carrying the required 'io.modelcontextprotocol/protocolVersion' and 'io.modelcontextprotocol/clientCapabilities' envelope keys"}}"#,
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"the protocol-version envelope value must be a string"}}"#,
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2099-01-01"}}}"#,
        r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}}"#,
        r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"params._meta is missing the required envelope key(s): io.modelcontextprotocol/protocolVersion"}}"#,
        r#"{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"params._meta is missing the required envelope key(s): io.modelcontextprotocol/protocolVersion, io.modelcontextprotocol/clientCapabilities"}}"#,
        r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"the client-capabilities envelope value must be an object"}}"#,
        r#"{"jsonrpc":"2.0","id":10,"error":{"code":-32602,"message":"params._meta must be an object carrying the required 'io.modelcontextprotocol/protocolVersion' and 'io.modelcontextprotocol/clientCapabilities' envelope keys"}}"#,
    ];
    assert_eq!(&out[1..], expected);
}

#[test]
fn removed_methods_and_cross_era_traffic() {
    let out = run(&[
        req(1, "server/discover", &env("")),
        req(2, "ping", &env("")),
        req(3, "logging/setLevel", &env(r#""level":"info""#)),
        req(4, "resources/subscribe", &env(r#""uri":"books://Dune""#)),
        init("2025-11-25").replace(r#""id":0"#, r#""id":5"#),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into(),
        req(6, "books/frobnicate", &env("")),
    ]);
    assert_eq!(
        &out[1..],
        [
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found","data":"ping"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found","data":"logging/setLevel"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found","data":"resources/subscribe"}}"#,
            r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32022,"message":"connection is serving the 2026-07-28 protocol; the initialize handshake is not accepted","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}}"#,
            r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"Method not found","data":"books/frobnicate"}}"#,
        ]
    );
    // A handshake connection refuses enveloped requests; server/discover is unknown there.
    let out = run(&[
        init("2025-11-25"),
        req(2, "tools/list", &env("")),
        r#"{"jsonrpc":"2.0","id":3,"method":"server/discover"}"#.into(),
    ]);
    assert_eq!(
        &out[1..],
        [
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"this connection serves the handshake protocol era; requests carrying the 2026-07-28 envelope are not accepted on it"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found","data":"server/discover"}}"#,
        ]
    );
    // The first request decides: a plain ping makes the connection handshake-era.
    let out = run(&[
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.into(),
        req(2, "server/discover", &env("")),
    ]);
    assert!(out[1].contains("-32600"), "{}", out[1]);
    // Notifications before the first request decide nothing.
    let out = run(&[
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into(),
        req(2, "server/discover", &env("")),
    ]);
    assert!(out[0].contains("supportedVersions"));
}

#[test]
fn per_request_logging_and_progress() {
    let call = |meta_extra: &str| {
        req(
            1,
            "tools/call",
            &format!(r#""name":"count","arguments":{{"n":2}},"_meta":{{{ENV}{meta_extra}}}"#),
        )
    };
    // No logLevel: no log notification.
    let out = run(&[call("")]);
    assert_eq!(out.len(), 1);
    let out = run(&[call(
        r#","io.modelcontextprotocol/logLevel":"info","progressToken":"p""#,
    )]);
    assert_eq!(
        &out[..3],
        [
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":2}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":2,"total":2}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"bookshop","data":"counting done"}}"#,
        ]
    );
    // Filtered by the request's level.
    let out = run(&[call(r#","io.modelcontextprotocol/logLevel":"error""#)]);
    assert_eq!(out.len(), 1);
    let out = run(&[call(r#","io.modelcontextprotocol/logLevel":"loud""#)]);
    assert!(out[0].contains("-32602"));
}

/// Pull `requestState` out of an `input_required` answer.
fn state_of(line: &str) -> String {
    let v = parse(line);
    assert_eq!(v["result"]["resultType"], "input_required", "{line}");
    v["result"]["requestState"].as_str().unwrap().to_owned()
}

fn reserve(id: u32, title: &str, state: Option<&str>, action: Option<&str>) -> String {
    let mut p = format!(r#""name":"reserve","arguments":{{"title":"{title}"}}"#);
    if let Some(s) = state {
        p += &format!(r#","requestState":{}"#, json!(s));
    }
    if let Some(a) = action {
        p += &format!(
            r#","inputResponses":{{"confirm":{{"action":"{a}","content":{{"confirm":true}}}}}}"#
        );
    }
    req(
        id,
        "tools/call",
        &format!(r#"{p},"_meta":{{{ENV_ELICIT}}}"#),
    )
}

#[test]
fn mrtr_reserve_round_trip() {
    let first = run(&[reserve(1, "Dune", None, None)]);
    assert_eq!(
        first[0],
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"resultType":"input_required","inputRequests":{{"confirm":{{"method":"elicitation/create","params":{{"mode":"form","message":"Reserve Dune?","requestedSchema":{{"type":"object","properties":{{"confirm":{{"type":"boolean","description":"Reserve this book?"}}}},"required":["confirm"]}}}}}}}},"requestState":"{}",{STAMP}}}}}"#,
            state_of(&first[0])
        )
    );
    let state = state_of(&first[0]);
    let out = run(&[
        reserve(2, "Dune", Some(&state), Some("accept")),
        reserve(3, "Dune", Some(&state), Some("decline")),
    ]);
    assert_eq!(
        parse(&out[0])["result"]["content"][0]["text"],
        "Reserved Dune"
    );
    assert_eq!(
        parse(&out[1])["result"]["content"][0]["text"],
        "Not reserved: Dune"
    );
    // Without elicitation the client is told which capability is missing.
    let out = run(&[req(
        4,
        "tools/call",
        &env(r#""name":"reserve","arguments":{"title":"Dune"}"#),
    )]);
    assert_eq!(
        out[0],
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32021,"message":"Missing required client capability: elicitation","data":{"requiredCapabilities":{"elicitation":{}}}}}"#
    );
    // A handshake client without elicitation is told the same (reserve is
    // served on every era; tests/asking.rs has the rest).
    let out = run(&[init("2025-11-25"), r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"reserve","arguments":{"title":"Dune"}}}"#.into()]);
    assert_eq!(
        out[1],
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"Missing required client capability: elicitation","data":{"requiredCapabilities":{"elicitation":{}}}}}"#
    );
}

#[test]
fn tampered_replayed_or_cross_tool_state_is_refused() {
    let state = state_of(&run(&[reserve(1, "Dune", None, None)])[0]);
    let refused = |id: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"Invalid requestState: it was altered, or issued for another request"}}}}"#
        )
    };
    // Every single-character edit.
    for i in 0..state.len() {
        let mut t = state.clone().into_bytes();
        t[i] = if t[i] == b'A' { b'B' } else { b'A' };
        let t = String::from_utf8(t).unwrap();
        assert_eq!(
            run(&[reserve(2, "Dune", Some(&t), Some("accept"))])[0],
            refused(2),
            "edit at {i}"
        );
    }
    // Replayed onto other arguments.
    assert_eq!(
        run(&[reserve(3, "Neuromancer", Some(&state), Some("accept"))])[0],
        refused(3)
    );
    // Replayed onto another tool.
    let cross = req(
        4,
        "tools/call",
        &format!(
            r#""name":"get_author","arguments":{{"title":"Dune"}},"requestState":{},"_meta":{{{ENV_ELICIT}}}"#,
            json!(state)
        ),
    );
    assert_eq!(run(&[cross])[0], refused(4));
    // Onto another method.
    let cross = req(
        5,
        "resources/read",
        &format!(
            r#""uri":"books://Dune","requestState":{},"_meta":{{{ENV}}}"#,
            json!(state)
        ),
    );
    assert_eq!(run(&[cross])[0], refused(5));
    // Issued by a server with another key.
    static OTHER: picomcp::Server<'static, common::shop::Shop> =
        common::shop::server_with(0, b"another key entirely");
    let out = common::serve_with(
        &OTHER,
        (reserve(6, "Dune", Some(&state), Some("accept")) + "\n").as_bytes(),
        8192,
        8192,
        4096,
    );
    assert_eq!(out[0], refused(6));
    // Not a string.
    let bad = req(
        7,
        "tools/call",
        &format!(
            r#""name":"reserve","arguments":{{"title":"Dune"}},"requestState":5,"_meta":{{{ENV_ELICIT}}}"#
        ),
    );
    assert!(run(&[bad])[0].contains("-32602"));
    // Whitespace in the arguments does not matter.
    let spaced = reserve(8, "Dune", Some(&state), Some("accept"))
        .replace(r#"{"title":"Dune"}"#, r#"{ "title" : "Dune" }"#);
    assert_eq!(
        parse(&run(&[spaced])[0])["result"]["content"][0]["text"],
        "Reserved Dune"
    );
}

#[test]
fn modern_connection_stays_modern_and_is_allocation_free_compatible() {
    // Same handlers, same answers in both eras (apart from the stamp).
    let modern = parse(
        &run(&[req(
            1,
            "tools/call",
            &env(r#""name":"top","arguments":{"n":2}"#),
        )])[0],
    );
    let legacy = parse(
        &bookshop(&format!(
            "{}\n{}\n",
            init("2025-11-25"),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"top","arguments":{"n":2}}}"#
        ))[1],
    );
    assert_eq!(modern["result"]["content"], legacy["result"]["content"]);
    assert_eq!(
        modern["result"]["structuredContent"],
        legacy["result"]["structuredContent"]
    );
    assert!(legacy["result"].get("resultType").is_none());
    let _ = &BOOKSHOP;
}

/// On a stream's 2026-07-28 connection an `initialize` is refused with
/// `-32022`, enveloped or not (over HTTP, under `MCP-Protocol-Version:
/// 2026-07-28`, an enveloped one is a removed method instead: tests/http.rs).
#[test]
fn an_enveloped_initialize_on_a_modern_stream_connection_is_32022() {
    let enveloped = r#"{"jsonrpc":"2.0","id":88,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcp","version":"0.1.0"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let out = run(&[req(1, "tools/list", &env("")), enveloped.into()]);
    let v = parse(&out[1]);
    assert_eq!(v["id"], 88);
    assert_eq!(v["error"]["code"], -32022, "{v}");
    assert_eq!(
        v["error"]["data"],
        json!({"supported": ["2026-07-28"], "requested": "2025-11-25"})
    );
}

/// The clock of [`EXPIRING`] (seconds), moved by the test.
static NOW: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1_000);

fn now() -> u64 {
    NOW.load(std::sync::atomic::Ordering::SeqCst)
}

/// The bookshop whose request state lives 300 s.
static EXPIRING: picomcp::Server<'static, common::shop::Shop> =
    common::shop::server_in(0, common::shop::DEFAULT_STATE_KEY, &common::shop::CHANGES)
        .request_state_ttl(300, now);

#[test]
fn sealed_state_expires_after_its_ttl() {
    let run_at = |at: u64, line: String| {
        NOW.store(at, std::sync::atomic::Ordering::SeqCst);
        common::serve_with(
            &EXPIRING,
            (line + "\n").as_bytes(),
            64 * 1024,
            16 * 1024,
            4096,
        )
    };
    let first = run_at(1_000, reserve(1, "Dune", None, None));
    let state = state_of(&first[0]);
    // Within the TTL: taken, as often as the client likes (a replay within
    // the TTL is the same request again).
    let out = run_at(1_299, reserve(2, "Dune", Some(&state), Some("accept")));
    assert_eq!(
        parse(&out[0])["result"]["content"][0]["text"],
        "Reserved Dune"
    );
    // Past it: refused like a tampered state.
    let out = run_at(1_301, reserve(3, "Dune", Some(&state), Some("accept")));
    assert_eq!(
        out[0],
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid requestState: it was altered, or issued for another request"}}"#
    );
    // A state sealed without an issue time (a server without a TTL, same
    // key) is not taken either.
    let untimed = state_of(&run(&[reserve(4, "Dune", None, None)])[0]);
    let out = run_at(1_000, reserve(5, "Dune", Some(&untimed), Some("accept")));
    assert_eq!(parse(&out[0])["error"]["code"], -32602);
}

/// One request on a 2026-07-28 connection the caller authenticated as
/// `subject` (or as nobody).
fn as_subject(subject: Option<&[u8]>, line: &str) -> String {
    let mut conn = picomcp::Connection::modern();
    let mut frame = line.as_bytes().to_vec();
    let mut out = vec![0u8; 16 * 1024];
    let n = match subject {
        Some(s) => BOOKSHOP.handle_as(&mut conn, s, &mut frame, &mut out),
        None => BOOKSHOP.handle(&mut conn, &mut frame, &mut out),
    };
    let line = String::from_utf8(out[..n].to_vec()).unwrap();
    line.strip_suffix('\n').unwrap_or(&line).to_owned()
}

#[test]
fn sealed_state_is_bound_to_the_authenticated_subject() {
    let refused = |id: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"Invalid requestState: it was altered, or issued for another request"}}}}"#
        )
    };
    let alice = Some(&b"alice"[..]);
    let state = state_of(&as_subject(alice, &reserve(1, "Dune", None, None)));
    // Replayed by another subject, or by an unauthenticated request.
    for (id, who) in [(2, Some(&b"bob"[..])), (3, None), (4, Some(&b"alice "[..]))] {
        assert_eq!(
            as_subject(who, &reserve(id, "Dune", Some(&state), Some("accept"))),
            refused(id)
        );
    }
    // Taken back from its subject.
    let out = as_subject(alice, &reserve(5, "Dune", Some(&state), Some("accept")));
    assert_eq!(
        parse(&out)["result"]["content"][0]["text"],
        "Reserved Dune",
        "{out}"
    );
    // A state issued to nobody is not taken from a subject (a stream
    // connection's state cannot be lifted into an authenticated one).
    let unbound = state_of(&as_subject(None, &reserve(6, "Dune", None, None)));
    assert_eq!(
        as_subject(alice, &reserve(7, "Dune", Some(&unbound), Some("accept"))),
        refused(7)
    );
    assert_eq!(
        parse(&as_subject(
            None,
            &reserve(8, "Dune", Some(&unbound), Some("accept"))
        ))["result"]["content"][0]["text"],
        "Reserved Dune"
    );
}
