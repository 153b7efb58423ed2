//! Transcript tests: raw bytes in, exact JSON out.
//!
//! One `#[test]` per rule of the behaviour contract in `DESIGN.md`
//! ("Framing and JSON-RPC", "Lifecycle", "Tools", "Resources", "The bookshop
//! example"). The server's output is deterministic, so most tests compare whole
//! output lines as strings, in our own key order
//! (`{"jsonrpc":"2.0","id":ID,"result":...}` /
//! `{"jsonrpc":"2.0","id":ID,"error":{"code":..,"message":..,"data":..}}`).
//! Where the contract fixes only the code, the id and the message of an error
//! (parse errors, invalid envelopes), [`assert_error`] pins exactly those and
//! lets `data` (a diagnostic) vary.

mod common;

use common::{BOOKSHOP, MemIo, bookshop, init, serve_with, session, session_v};
use picomcp::resource::{
    Contents, ReadRequest, Resource, ResourceDescriptor, ResourceOutcome, ResourceTemplate,
    TemplateDescriptor,
};
use picomcp::schema::{Property, Schema};
use picomcp::tool::{Arguments, Reply, Tool, ToolAnnotations, ToolDescriptor, ToolOutcome};
use picomcp::{Server, ServerInfo};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------
// Helpers

const HANDSHAKE_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

const INSTRUCTIONS: &str = "A small bookshop: look up authors with get_author, list titles with top, read books://{title}.";

const NOT_INITIALIZED: &str = "session not initialized: send initialize first";

/// A request line.
fn req(id: &str, method: &str, params: Option<&str>) -> String {
    match params {
        Some(p) => {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{p}}}"#)
        }
        None => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"}}"#),
    }
}

fn ping(id: &str) -> String {
    req(id, "ping", None)
}

/// A `tools/call` line with raw `params`.
fn call(id: &str, params: &str) -> String {
    req(id, "tools/call", Some(params))
}

/// A `resources/read` line with raw `params`.
fn read(id: &str, params: &str) -> String {
    req(id, "resources/read", Some(params))
}

/// A result line.
fn ok(id: &str, result: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
}

/// An error line without `data`.
fn err(id: &str, code: i32, message: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":{}}}}}"#,
        json_str(message)
    )
}

/// An error line with raw JSON `data`.
fn err_data(id: &str, code: i32, message: &str, data: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":{},"data":{data}}}}}"#,
        json_str(message)
    )
}

/// `-32602 Invalid request parameters` (the SDK's answer for malformed params).
fn invalid_params(id: &str) -> String {
    err_data(id, -32602, "Invalid request parameters", r#""""#)
}

/// A tool error result: `isError: true`, one text block, no structuredContent.
fn tool_error(id: &str, text: &str) -> String {
    ok(
        id,
        &format!(
            r#"{{"content":[{{"type":"text","text":{}}}],"isError":true}}"#,
            json_str(text)
        ),
    )
}

/// A JSON string literal (serde_json escaping: `"` `\` and control characters).
fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// Assert that `line` is exactly an error with this id, code and message,
/// optionally followed by `data`, and that the line is one JSON object.
#[track_caller]
fn assert_error(line: &str, id: &str, code: i32, message: &str) {
    let head = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":{}"#,
        json_str(message)
    );
    assert!(
        line.starts_with(&head),
        "expected an error starting with\n  {head}\ngot\n  {line}"
    );
    let rest = &line[head.len()..];
    assert!(
        rest == "}}" || (rest.starts_with(r#","data":"#) && rest.ends_with("}}")),
        "unexpected tail after the message: {line}"
    );
    let v: Value = serde_json::from_str(line).expect("the error line is JSON");
    assert_eq!(v.as_object().unwrap().len(), 3, "{line}");
}

/// Every line is one complete JSON object (never a partial message).
#[track_caller]
fn assert_all_json(lines: &[String]) {
    for l in lines {
        let v: Value = serde_json::from_str(l)
            .unwrap_or_else(|e| panic!("output line is not JSON ({e}): {l}"));
        assert!(v.is_object(), "output line is not an object: {l}");
        assert_eq!(v["jsonrpc"], "2.0", "{l}");
    }
}

/// Serve raw bytes and return the raw output (to see `\r` and control bytes,
/// which `str::lines` would hide).
fn raw<S>(server: &Server<'_, S>, input: &[u8], chunk: usize) -> String {
    let mut io = MemIo {
        input,
        chunk,
        output: Vec::new(),
    };
    let mut inb = vec![0u8; 64 * 1024];
    let mut outb = vec![0u8; 16 * 1024];
    picomcp::transport::serve(server, &mut io, &mut inb, &mut outb).unwrap();
    String::from_utf8(io.output).expect("output is UTF-8")
}

/// An `initialize` line with a given id and version.
fn init_id(id: &str, version: &str) -> String {
    init(version).replacen(r#""id":0"#, &format!(r#""id":{id}"#), 1)
}

/// Our answer with this id among output lines.
fn by_id(lines: &[String], id: i64) -> Value {
    let hits: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["id"] == id)
        .collect();
    assert_eq!(hits.len(), 1, "answers for id {id}: {lines:?}");
    hits[0].clone()
}

/// The capabilities the bookshop must advertise at `version` ("exactly what
/// this server has, with accurate sub-flags"): `tools` and `resources` with
/// these sub-flags, plus `completions`, `logging`, `prompts` exactly when
/// the bookshop serves `completion/complete`, `logging/setLevel`,
/// `prompts/list` at that version (anything but `-32601`).
fn expected_caps(version: &str) -> Value {
    let out = session_v(
        version,
        &[
            &req("1", "prompts/list", None),
            &req("2", "logging/setLevel", Some(r#"{"level":"emergency"}"#)),
            &req(
                "3",
                "completion/complete",
                Some(
                    r#"{"ref":{"type":"ref/prompt","name":"recommend"},"argument":{"name":"genre","value":""}}"#,
                ),
            ),
        ],
    );
    let served = |id: i64| by_id(&out, id)["error"]["code"] != -32601;
    let mut caps = serde_json::Map::new();
    // `completions` is a capability from 2025-03-26 on (2024-11-05 had the
    // method but no capability for it).
    if served(3) && version != "2024-11-05" {
        caps.insert("completions".into(), json!({}));
    }
    if served(2) {
        caps.insert("logging".into(), json!({}));
    }
    if served(1) {
        caps.insert("prompts".into(), json!({"listChanged": false}));
    }
    caps.insert(
        "resources".into(),
        json!({"subscribe": false, "listChanged": false}),
    );
    caps.insert("tools".into(), json!({"listChanged": false}));
    Value::Object(caps)
}

/// `line` is exactly the bookshop's `initialize` result for `version`:
/// `protocolVersion`, then `capabilities` (compared as JSON with
/// [`expected_caps`]; `tools` and `resources` also byte for byte), then
/// `serverInfo` and `instructions`.
#[track_caller]
fn assert_init(line: &str, id: &str, version: &str) {
    let head = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":"{version}","capabilities":{{"#
    );
    let info = format!(
        r#","serverInfo":{{"name":"Bookshop","version":"0.1.0"}},"instructions":{}}}}}"#,
        json_str(INSTRUCTIONS)
    );
    let tail = format!(
        r#""resources":{{"subscribe":false,"listChanged":false}},"tools":{{"listChanged":false}}}}{info}"#
    );
    assert!(
        line.starts_with(&head) && line.ends_with(&tail),
        "not the initialize result for {version}:\n  {line}"
    );
    let caps: Value = serde_json::from_str(&line[head.len() - 1..line.len() - info.len()]).unwrap();
    assert_eq!(caps, expected_caps(version), "capabilities at {version}");
}

const GET_AUTHOR_OLD: &str = r#"{"name":"get_author","description":"Look up the author of a book in the catalog.","inputSchema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}}"#;
const GET_AUTHOR_STRICT_OLD: &str = r#"{"name":"get_author_strict","description":"Look up the author of a book in the catalog; an unknown title is a protocol error.","inputSchema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}}"#;
const TOP_OLD: &str = r#"{"name":"top","description":"Top n books.","inputSchema":{"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":50}},"required":["n"]}}"#;
const AUTHOR_SCHEMA: &str = r#","outputSchema":{"type":"object","properties":{"result":{"type":"string"}},"required":["result"]}}"#;
const TOP_SCHEMA: &str = r#","outputSchema":{"type":"object","properties":{"result":{"type":"array","items":{"type":"string"}}},"required":["result"]}}"#;

/// The first three tools of `tools/list`, exactly, in registration order;
/// `new`: 2025-06-18 and later (with `outputSchema`).
fn three_tools(new: bool) -> String {
    if !new {
        return format!("{GET_AUTHOR_OLD},{GET_AUTHOR_STRICT_OLD},{TOP_OLD}");
    }
    let with = |tool: &str, schema: &str| format!("{}{schema}", &tool[..tool.len() - 1]);
    format!(
        "{},{},{}",
        with(GET_AUTHOR_OLD, AUTHOR_SCHEMA),
        with(GET_AUTHOR_STRICT_OLD, AUTHOR_SCHEMA),
        with(TOP_OLD, TOP_SCHEMA)
    )
}

/// The bookshop tools DESIGN.md adds after the first three.
const LATER_TOOLS: [&str; 4] = ["count", "reserve", "blurb", "buy"];

/// `line` is the bookshop's `tools/list` answer: `get_author`,
/// `get_author_strict`, `top` exactly (shaped for the version), followed only
/// by the other DESIGN.md bookshop tools, none with a field the version
/// lacks, and no `nextCursor` (the default page is unlimited).
#[track_caller]
fn assert_tools_list(line: &str, id: &str, new: bool) {
    let head = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{}"#,
        three_tools(new)
    );
    assert!(
        line.starts_with(&head),
        "tools/list:\n  {line}\nexpected a start of\n  {head}"
    );
    let rest = &line[head.len()..];
    assert!(rest == "]}}" || rest.starts_with(','), "{line}");
    let v: Value = serde_json::from_str(line).unwrap();
    assert!(v["result"].get("nextCursor").is_none(), "{line}");
    let tools = v["result"]["tools"].as_array().unwrap();
    for t in &tools[3..] {
        let name = t["name"].as_str().unwrap();
        assert!(LATER_TOOLS.contains(&name), "unexpected tool {name}");
    }
    for t in tools {
        assert!(t.get("title").is_none(), "{t}");
        if !new {
            assert!(t.get("outputSchema").is_none(), "{t}");
        }
    }
}

/// An error with this id and code; returns the message.
#[track_caller]
fn error_code(line: &str, id: &str, code: i32) -> String {
    let head = format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":"#);
    assert!(line.starts_with(&head), "expected {head}...\ngot {line}");
    let v: Value = serde_json::from_str(line).unwrap();
    v["error"]["message"].as_str().unwrap().to_owned()
}

const AUTHOR_DUNE: &str = r#"{"content":[{"type":"text","text":"Frank Herbert"}],"structuredContent":{"result":"Frank Herbert"},"isError":false}"#;

// ===========================================================================
// Framing and JSON-RPC

#[test]
fn malformed_json_is_parse_error_with_null_id() {
    let bad = [
        "{not json",
        r#"{"jsonrpc":"2.0","id":5,"method":"ping""#, // truncated object
        "tru",
        r#"{"jsonrpc":"2.0","id":5,"method":"ping"} x"#, // trailing garbage
        r#"{"jsonrpc":"2.0","id":5,"method":"ping"}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"ping",}"#,
        r#"{'jsonrpc':'2.0'}"#,
        r#"{"jsonrpc":"2.0","id":05,"method":"ping"}"#,
    ];
    for line in bad {
        // Before and after initialize: same answer, and serving continues.
        let pre = bookshop(&format!("{line}\n{}\n", ping("1")));
        assert_eq!(pre.len(), 2, "{line}: {pre:?}");
        assert_error(&pre[0], "null", -32700, "Parse error");
        assert_eq!(pre[1], ok("1", "{}"));
        let post = session(&[line, &ping("2")]);
        assert_eq!(post.len(), 2, "{line}: {post:?}");
        assert_error(&post[0], "null", -32700, "Parse error");
        assert_eq!(post[1], ok("2", "{}"));
    }
}

#[test]
fn invalid_utf8_is_parse_error() {
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"\xff\"}\n");
    input.extend_from_slice(
        b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":{\"a\":\"\xc3\"}}\n",
    );
    input.extend_from_slice(ping("5").as_bytes());
    input.push(b'\n');
    let out = serve_with(&BOOKSHOP, &input, 4096, 4096, 4096);
    assert_eq!(out.len(), 3, "{out:?}");
    assert_error(&out[0], "null", -32700, "Parse error");
    assert_error(&out[1], "null", -32700, "Parse error");
    assert_eq!(out[2], ok("5", "{}"));
}

#[test]
fn invalid_envelopes_are_invalid_request_with_readable_id() {
    // (line, the id to echo)
    let cases: &[(&str, &str)] = &[
        (r#"{"jsonrpc":"1.0","id":10,"method":"ping"}"#, "10"),
        (r#"{"jsonrpc":"1.0","id":"s","method":"ping"}"#, r#""s""#),
        (r#"{"id":11,"method":"ping"}"#, "11"),
        (r#"{"jsonrpc":2.0,"id":11,"method":"ping"}"#, "11"),
        (r#"{"jsonrpc":null,"id":11,"method":"ping"}"#, "11"),
        (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, "null"),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, "null"),
        (r#"{"jsonrpc":"2.0","id":1.0,"method":"ping"}"#, "null"),
        (r#"{"jsonrpc":"2.0","id":1e3,"method":"ping"}"#, "null"),
        (r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, "null"),
        (r#"{"jsonrpc":"2.0","id":false,"method":"ping"}"#, "null"),
        (r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#, "null"),
        (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, "null"),
        (r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, "null"),
        (r#"{"jsonrpc":"2.0","id":[],"method":"ping"}"#, "null"),
        (r#"{"jsonrpc":"2.0","id":12}"#, "12"),
        (r#"{"jsonrpc":"2.0","id":12,"method":5}"#, "12"),
        (r#"{"jsonrpc":"2.0","id":12,"method":null}"#, "12"),
        (r#"{"jsonrpc":"2.0","id":12,"method":["ping"]}"#, "12"),
        (
            r#"{"jsonrpc":"2.0","id":13,"method":"ping","params":[]}"#,
            "13",
        ),
        (
            r#"{"jsonrpc":"2.0","id":13,"method":"ping","params":[1]}"#,
            "13",
        ),
        (
            r#"{"jsonrpc":"2.0","id":13,"method":"ping","params":"x"}"#,
            "13",
        ),
        (
            r#"{"jsonrpc":"2.0","id":13,"method":"ping","params":5}"#,
            "13",
        ),
        (
            r#"{"jsonrpc":"2.0","id":13,"method":"ping","params":true}"#,
            "13",
        ),
        // Not an object at all.
        ("5", "null"),
        (r#""ping""#, "null"),
        ("null", "null"),
        ("true", "null"),
    ];
    for &(line, id) in cases {
        let pre = bookshop(&format!("{line}\n{}\n", ping("99")));
        assert_eq!(pre.len(), 2, "{line}: {pre:?}");
        assert_error(&pre[0], id, -32600, "Invalid Request");
        assert_eq!(pre[1], ok("99", "{}"), "{line}");
        let post = session(&[line]);
        assert_eq!(post.len(), 1, "{line}: {post:?}");
        assert_error(&post[0], id, -32600, "Invalid Request");
    }
}

#[test]
fn invalid_notification_envelope_is_invalid_request_with_null_id() {
    // No id: a would-be notification, but not a valid one → answered, id null.
    for line in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":[]}"#,
        r#"{"jsonrpc":"1.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":7}"#,
        r#"{"jsonrpc":"2.0"}"#,
    ] {
        let out = session(&[line]);
        assert_eq!(out.len(), 1, "{line}: {out:?}");
        assert_error(&out[0], "null", -32600, "Invalid Request");
    }
}

#[test]
fn params_null_is_accepted_as_absent() {
    let out = session(&[
        r#"{"jsonrpc":"2.0","id":14,"method":"ping","params":null}"#,
        r#"{"jsonrpc":"2.0","id":15,"method":"tools/list","params":null}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":null}"#,
    ]);
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(out[0], ok("14", "{}"));
    assert_tools_list(&out[1], "15", true);
    let pre = bookshop(&format!(
        "{}\n",
        r#"{"jsonrpc":"2.0","id":"p","method":"ping","params":null}"#
    ));
    assert_eq!(pre, [ok(r#""p""#, "{}")]);
}

#[test]
fn ids_are_echoed_verbatim_with_their_type() {
    let ids = [
        r#""abc""#,
        r#""""#,
        "0",
        "-1",
        "9007199254740993",
        "-9007199254740993",
        "18446744073709551616",
        "-92233720368547758089",
        "123456789012345678901234567890",
        r#""a\u0062""#,
        r#""x\"y""#,
        r#""\\""#,
        r#""é""#,
        r#""\ud83d\udcda""#,
        r#""📚""#,
        r#""tools\/call""#,
    ];
    for id in ids {
        // A result, a protocol error and an envelope error all echo the id.
        let lines = [
            ping(id),
            call(id, r#"{"name":"nope"}"#),
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":[]}}"#),
        ];
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let out = session(&refs);
        assert_eq!(out.len(), 3, "{id}: {out:?}");
        assert_eq!(out[0], ok(id, "{}"));
        assert_eq!(out[1], err(id, -32602, "Unknown tool: nope"));
        assert_error(&out[2], id, -32600, "Invalid Request");
        // Before initialize, too.
        assert_eq!(bookshop(&format!("{}\n", ping(id))), [ok(id, "{}")]);
    }
}

const PAD_PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"PAD"}}"#;
const TOO_LARGE_256: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"message too large: limit 256 bytes"}}"#;

/// A ping line padded to 1000 bytes.
fn oversized_line() -> String {
    let line = PAD_PING.replace("PAD", &"x".repeat(1000));
    assert!(line.len() > 1000);
    line
}

#[test]
fn oversized_line_is_answered_and_serving_continues() {
    let mut input = String::new();
    input.push_str(&init("2025-11-25"));
    input.push('\n');
    input.push_str(&oversized_line());
    input.push('\n');
    input.push_str(&ping("2"));
    input.push('\n');
    input.push_str(&call(
        "3",
        r#"{"name":"get_author","arguments":{"title":"Dune"}}"#,
    ));
    input.push('\n');
    // 1 byte at a time; chunks that split the oversized line across reads in
    // various places; chunks as large as and larger than the buffer.
    for chunk in [1, 2, 7, 100, 255, 256, 257, 999, 1000, 1001, 4096] {
        let out = serve_with(&BOOKSHOP, input.as_bytes(), 256, 4096, chunk);
        assert_eq!(out.len(), 4, "chunk {chunk}: {out:?}");
        assert_init(&out[0], "0", "2025-11-25");
        assert_eq!(out[1], TOO_LARGE_256, "chunk {chunk}");
        assert_eq!(out[2], ok("2", "{}"), "chunk {chunk}");
        assert_eq!(out[3], ok("3", AUTHOR_DUNE), "chunk {chunk}");
    }
}

#[test]
fn oversized_lines_in_a_row_and_crlf_and_at_eof() {
    let big = oversized_line();
    // Two oversized lines in a row, one CRLF-terminated; then a good line.
    let input = format!("{big}\r\n{big}\n{}\n", ping("2"));
    for chunk in [1, 13, 256, 4096] {
        let out = serve_with(&BOOKSHOP, input.as_bytes(), 256, 4096, chunk);
        assert_eq!(
            out,
            [TOO_LARGE_256, TOO_LARGE_256, &ok("2", "{}")],
            "chunk {chunk}"
        );
    }
    // An oversized last line without a newline: answered once.
    let input = format!("{}\n{big}", ping("2"));
    for chunk in [1, 300, 4096] {
        let out = serve_with(&BOOKSHOP, input.as_bytes(), 256, 4096, chunk);
        assert_eq!(out, [&ok("2", "{}"), TOO_LARGE_256], "chunk {chunk}");
    }
}

#[test]
fn line_limit_does_not_count_the_terminator() {
    // A ping padded with whitespace to exactly `len` bytes (before the
    // terminator).
    fn padded(len: usize) -> String {
        let head = r#"{"jsonrpc":"2.0","id":1,"method":"ping""#;
        format!("{head}{}}}", " ".repeat(len - head.len() - 1))
    }
    for term in ["\n", "\r\n"] {
        for chunk in [1, 64, 255, 256, 257, 4096] {
            // 256 bytes, then the terminator: served by a 256-byte buffer.
            let input = format!("{}{term}{}{term}", padded(256), ping("2"));
            let out = serve_with(&BOOKSHOP, input.as_bytes(), 256, 4096, chunk);
            assert_eq!(
                out,
                [ok("1", "{}"), ok("2", "{}")],
                "{term:?} chunk {chunk}"
            );
            // 257 bytes: too large, and the limit named is 256.
            let input = format!("{}{term}{}{term}", padded(257), ping("2"));
            let out = serve_with(&BOOKSHOP, input.as_bytes(), 256, 4096, chunk);
            assert_eq!(
                out,
                [TOO_LARGE_256, &ok("2", "{}")],
                "{term:?} chunk {chunk}"
            );
        }
    }
    // At end of input, without a terminator: the same edge.
    for chunk in [1, 256, 4096] {
        let out = serve_with(&BOOKSHOP, padded(256).as_bytes(), 256, 4096, chunk);
        assert_eq!(out, [ok("1", "{}")], "chunk {chunk}");
        let out = serve_with(&BOOKSHOP, padded(257).as_bytes(), 256, 4096, chunk);
        assert_eq!(out, [TOO_LARGE_256], "chunk {chunk}");
    }
}

#[test]
fn deep_nesting_is_an_error_without_recursion() {
    // 256 KiB of stack: a recursive descent over 100 000 levels would overflow.
    let t = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let mut input = String::new();
            input.push_str(&"[".repeat(100_000));
            input.push('\n');
            input.push_str(&ping("1"));
            input.push('\n');
            input.push_str(&"{\"a\":".repeat(50_000));
            input.push('\n');
            // Deep nesting inside the params of an otherwise valid request.
            input.push_str(r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"a":"#);
            input.push_str(&"[".repeat(100_000));
            input.push_str(&"]".repeat(100_000));
            input.push_str("}}\n");
            input.push_str(&ping("3"));
            input.push('\n');
            serve_with(&BOOKSHOP, input.as_bytes(), 512 * 1024, 4096, 4096)
        })
        .unwrap();
    let out = t.join().expect("no stack overflow");
    assert_eq!(out.len(), 5, "{out:?}");
    assert_error(&out[0], "null", -32700, "Parse error");
    assert_eq!(out[1], ok("1", "{}"));
    assert_error(&out[2], "null", -32700, "Parse error");
    // The contract allows -32700 or -32600 for nesting beyond the limit.
    let v: Value = serde_json::from_str(&out[3]).unwrap();
    let code = v["error"]["code"].as_i64().unwrap();
    assert!(code == -32700 || code == -32600, "{}", out[3]);
    assert_eq!(out[4], ok("3", "{}"));
}

#[test]
fn nesting_within_the_default_limit_is_accepted() {
    // Depth 32 is the default limit: a ping whose params nest a little is fine.
    let params = format!("{{\"a\":{}1{}}}", "[".repeat(20), "]".repeat(20));
    let out = session(&[&req("1", "ping", Some(&params))]);
    assert_eq!(out, [ok("1", "{}")]);
}

#[test]
fn crlf_line_endings_are_accepted_and_output_uses_lf() {
    let input = format!(
        "{}\r\n{}\r\n{}\r\n{}\r\n",
        init("2025-11-25"),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ping("1"),
        call("2", r#"{"name":"get_author","arguments":{"title":"Dune"}}"#),
    );
    for chunk in [1, 3, 4096] {
        let out = raw(&BOOKSHOP, input.as_bytes(), chunk);
        assert!(!out.contains('\r'), "chunk {chunk}: {out:?}");
        assert!(out.ends_with('\n'), "chunk {chunk}");
        let lines: Vec<&str> = out.split_terminator('\n').collect();
        assert_eq!(lines.len(), 3, "chunk {chunk}: {out:?}");
        assert_init(lines[0], "0", "2025-11-25");
        assert_eq!(lines[1], ok("1", "{}"), "chunk {chunk}");
        assert_eq!(lines[2], ok("2", AUTHOR_DUNE), "chunk {chunk}");
    }
}

#[test]
fn empty_and_whitespace_only_lines_produce_nothing() {
    let blank = "\n\n   \n\t\n \t \r\n\r\n";
    assert_eq!(raw(&BOOKSHOP, blank.as_bytes(), 1), "");
    assert_eq!(raw(&BOOKSHOP, blank.as_bytes(), 4096), "");
    assert_eq!(raw(&BOOKSHOP, b"   ", 4096), "", "whitespace at EOF");
    let input = format!("\n{}\n\n  \n{}\n\t\n", init("2025-11-25"), ping("1"));
    let out = bookshop(&input);
    assert_eq!(out.len(), 2, "{out:?}");
    assert_init(&out[0], "0", "2025-11-25");
    assert_eq!(out[1], ok("1", "{}"));
    // Whitespace around a message is fine.
    let out = bookshop(&format!("  \t{}  \n", ping("2")));
    assert_eq!(out, [ok("2", "{}")]);
}

#[test]
fn last_line_without_newline_is_answered() {
    let input = format!("{}\n{}", init("2025-11-25"), ping("1"));
    for chunk in [1, 5, 4096] {
        let out = raw(&BOOKSHOP, input.as_bytes(), chunk);
        let lines: Vec<&str> = out.split_terminator('\n').collect();
        assert!(
            out.ends_with('\n') && lines.len() == 2,
            "chunk {chunk}: {out:?}"
        );
        assert_init(lines[0], "0", "2025-11-25");
        assert_eq!(lines[1], ok("1", "{}"), "chunk {chunk}");
    }
    // Also with a lone `\r` before EOF.
    let out = raw(&BOOKSHOP, format!("{}\r", ping("2")).as_bytes(), 4096);
    assert_eq!(out, format!("{}\n", ok("2", "{}")));
    // And a request whose answer needs the session.
    let input = format!(
        "{}\n{}",
        init("2025-11-25"),
        call("3", r#"{"name":"get_author","arguments":{"title":"Dune"}}"#)
    );
    let out = bookshop(&input);
    assert_eq!(out[1], ok("3", AUTHOR_DUNE));
}

#[test]
fn escaped_method_and_tool_names_are_unescaped() {
    let out = session(&[
        r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_au\u0074hor","arguments":{"title":"Dune"}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"\u0070ing"}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"\u006eame":"get_author","\u0061rguments":{"\u0074itle":"Dune"}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#,
    ]);
    assert_eq!(out.len(), 5, "{out:?}");
    assert_eq!(
        out[..4],
        [
            ok("1", AUTHOR_DUNE),
            ok("2", AUTHOR_DUNE),
            ok("3", "{}"),
            ok("4", AUTHOR_DUNE),
        ]
    );
    assert_tools_list(&out[4], "5", true);
}

#[test]
fn escaped_and_non_ascii_argument_strings() {
    let out = session(&[
        &call(
            "1",
            r#"{"name":"get_author","arguments":{"title":"D\u0075ne"}}"#,
        ),
        &call(
            "2",
            r#"{"name":"get_author","arguments":{"title":"\u0044\u0075\u006e\u0065"}}"#,
        ),
        &call(
            "3",
            r#"{"name":"get_author","arguments":{"title":"Néant"}}"#,
        ),
        &call(
            "4",
            r#"{"name":"get_author","arguments":{"title":"N\u00e9ant"}}"#,
        ),
        &call(
            "5",
            r#"{"name":"get_author","arguments":{"title":"\ud83d\udcda x"}}"#,
        ),
        &call("6", r#"{"name":"get_author","arguments":{"title":"📚 x"}}"#),
        &call(
            "7",
            r#"{"name":"get_author_strict","arguments":{"title":"\ud83d\ude00"}}"#,
        ),
    ]);
    assert_eq!(out[0], ok("1", AUTHOR_DUNE));
    assert_eq!(out[1], ok("2", AUTHOR_DUNE));
    // Non-ASCII is written as raw UTF-8, not re-escaped.
    let neant = "Error executing tool get_author: No book titled 'Néant' in the catalog.";
    assert_eq!(out[2], tool_error("3", neant));
    assert_eq!(out[3], tool_error("4", neant));
    let books = "Error executing tool get_author: No book titled '📚 x' in the catalog.";
    assert_eq!(out[4], tool_error("5", books));
    assert_eq!(out[5], tool_error("6", books));
    assert_eq!(
        out[6],
        err("7", -32602, "No book titled '😀' in the catalog.")
    );
    assert!(out[4].contains("'📚 x'"), "raw UTF-8 in the output");
}

#[test]
fn control_characters_are_escaped_in_output() {
    let input = format!(
        "{}\n{}\n{}\n{}\n",
        init("2025-11-25"),
        call(
            "1",
            r#"{"name":"get_author","arguments":{"title":"a\u0001b\"c\\d\ne\tf\u001f\u007f"}}"#
        ),
        read("2", r#"{"uri":"books://x\u0000y"}"#),
        call("3", r#"{"name":"no\npe"}"#),
    );
    let out = raw(&BOOKSHOP, input.as_bytes(), 4096);
    // Only the line terminators are raw control bytes.
    assert_eq!(out.matches('\n').count(), 4, "{out:?}");
    assert!(
        out.bytes().all(|b| b >= 0x20 || b == b'\n'),
        "raw control byte in output: {out:?}"
    );
    let lines: Vec<String> = out.lines().map(str::to_owned).collect();
    assert_all_json(&lines);
    assert_eq!(
        lines[1],
        tool_error(
            "1",
            "Error executing tool get_author: No book titled 'a\u{1}b\"c\\d\ne\tf\u{1f}\u{7f}' in the catalog."
        )
    );
    assert_eq!(
        lines[2],
        err_data(
            "2",
            -32602,
            "No book titled 'x\u{0}y' in the catalog.",
            r#"{"uri":"books://x\u0000y"}"#
        )
    );
    assert_eq!(lines[3], err("3", -32602, "Unknown tool: no\npe"));
}

#[test]
fn notifications_are_never_answered() {
    let notes = [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"stop"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/frobnicated","params":{"x":1}}"#,
        r#"{"jsonrpc":"2.0","method":"books/frobnicate"}"#,
        // Request methods sent as notifications: still no answer.
        r#"{"jsonrpc":"2.0","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"nope"}}"#,
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}"#,
        r#"{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    ];
    // Before initialize.
    let mut input = notes.join("\n");
    input.push('\n');
    assert_eq!(raw(&BOOKSHOP, input.as_bytes(), 4096), "");
    // After initialize: nothing but the final ping's answer, and the
    // notification `initialize` did not re-negotiate.
    let mut lines: Vec<&str> = notes.to_vec();
    let p = ping("1");
    let list = req("2", "tools/list", None);
    lines.push(&p);
    lines.push(&list);
    let out = session(&lines);
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(out[0], ok("1", "{}"));
    assert_tools_list(&out[1], "2", true);
}

#[test]
fn client_responses_are_ignored() {
    let responses = [
        r#"{"jsonrpc":"2.0","id":42,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"x","result":{"roots":[]}}"#,
        r#"{"jsonrpc":"2.0","id":43,"error":{"code":-1,"message":"no"}}"#,
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25"}}"#,
    ];
    let mut input = responses.join("\n");
    input.push('\n');
    assert_eq!(
        raw(&BOOKSHOP, input.as_bytes(), 4096),
        "",
        "before initialize"
    );
    let mut lines = responses.to_vec();
    let p = ping("2");
    lines.push(&p);
    assert_eq!(session(&lines), [ok("2", "{}")]);
}

#[test]
fn client_error_response_with_null_id_is_ignored() {
    // JSON-RPC error responses carry `"id": null` when the id was unreadable
    // (e.g. the client could not parse something we sent). It is a response
    // from the client that matches nothing: ignored, never answered.
    let out = session(&[
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
        &ping("2"),
    ]);
    assert_eq!(out, [ok("2", "{}")]);
}

#[test]
fn batches_are_rejected_by_versions_without_batching() {
    let batch = format!(
        "[{},{},{}]",
        ping("1"),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        req("2", "tools/list", None)
    );
    let notes_only = r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#;
    for version in ["2024-11-05", "2025-06-18", "2025-11-25"] {
        let out = session_v(version, &[&batch, notes_only, &ping("3")]);
        let rejected = err(
            "null",
            -32600,
            &format!("batches are not supported by protocol version {version}"),
        );
        assert_eq!(
            out,
            [rejected.clone(), rejected, ok("3", "{}")],
            "{version}"
        );
    }
    // Before initialize no version is negotiated: still one -32600, id null.
    let out = bookshop(&format!("{batch}\n{}\n", ping("3")));
    assert_eq!(out.len(), 2, "{out:?}");
    assert_error(
        &out[0],
        "null",
        -32600,
        "batches are not supported before initialization",
    );
    assert_eq!(out[1], ok("3", "{}"));
}

#[test]
fn empty_batch_is_invalid_request() {
    // `[]` is -32600 with id null on every version (the message may say that
    // the batch is empty or that batches are not supported).
    for version in HANDSHAKE_VERSIONS {
        let out = session_v(version, &["[]", " [ ] ", &ping("1")]);
        assert_eq!(out.len(), 3, "{version}: {out:?}");
        error_code(&out[0], "null", -32600);
        error_code(&out[1], "null", -32600);
        assert_eq!(out[2], ok("1", "{}"));
    }
    let out = bookshop("[]\n");
    assert_eq!(out.len(), 1);
    error_code(&out[0], "null", -32600);
}

#[test]
fn batches_are_served_on_2025_03_26() {
    // DESIGN.md: batches are served on a session that negotiated 2025-03-26:
    // one array of the responses, notifications produce no element, nothing
    // at all when every element is a notification.
    let batch = format!(
        "[{},{},{}]",
        ping("1"),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        call("2", r#"{"name":"get_author","arguments":{"title":"Dune"}}"#)
    );
    let notes_only = r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#;
    let out = session_v("2025-03-26", &[&batch, notes_only, &ping("3")]);
    assert_eq!(out.len(), 2, "{out:?}");
    let v: Value = serde_json::from_str(&out[0]).unwrap();
    assert_eq!(
        v,
        json!([
            {"jsonrpc":"2.0","id":1,"result":{}},
            {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Frank Herbert"}],"isError":false}}
        ])
    );
    assert_eq!(out[1], ok("3", "{}"));
}

// ===========================================================================
// Lifecycle

#[test]
fn ping_before_initialize_is_answered() {
    let out = bookshop(&format!(
        "{}\n{}\n{}\n",
        ping("1"),
        ping(r#""p-1""#),
        req("2", "ping", Some(r#"{"_meta":{"progressToken":1}}"#))
    ));
    assert_eq!(out, [ok("1", "{}"), ok(r#""p-1""#, "{}"), ok("2", "{}")]);
}

#[test]
fn requests_before_initialize_are_refused() {
    let lines = [
        req("1", "tools/list", None),
        call("2", r#"{"name":"get_author","arguments":{"title":"Dune"}}"#),
        read("3", r#"{"uri":"books://Dune"}"#),
        req("4", "resources/list", None),
        req("5", "resources/templates/list", None),
        req("6", "books/frobnicate", None),
        req(r#""s""#, "prompts/list", None),
    ];
    let mut input = lines.join("\n");
    input.push('\n');
    let out = bookshop(&input);
    let expected: Vec<String> = ["1", "2", "3", "4", "5", "6", r#""s""#]
        .iter()
        .map(|id| err(id, -32600, NOT_INITIALIZED))
        .collect();
    assert_eq!(out, expected);
    assert!(NOT_INITIALIZED.contains("initializ"));
}

#[test]
fn initialized_notification_alone_does_not_open_the_session() {
    // Unlike the SDK (vector initialized_only_no_initialize): only a
    // successful `initialize` opens the session.
    let out = bookshop(&format!(
        "{}\n{}\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        req("1", "tools/list", None)
    ));
    assert_eq!(out, [err("1", -32600, NOT_INITIALIZED)]);
}

#[test]
fn initialize_with_missing_params_is_invalid_params() {
    let bad = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":null}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":20251125,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":[],"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":"t"}}"#,
    ];
    for line in bad {
        // A failed initialize leaves the session uninitialized.
        let out = bookshop(&format!("{line}\n{}\n", req("2", "tools/list", None)));
        assert_eq!(
            out,
            [invalid_params("1"), err("2", -32600, NOT_INITIALIZED)],
            "{line}"
        );
    }
}

#[test]
fn initialize_result_is_exact() {
    // The DESIGN.md bookshop has tools, resources, a prompt, completions and
    // logging: the capabilities list exactly those, with these sub-flags.
    let out = bookshop(&format!("{}\n", init("2025-11-25")));
    assert_eq!(
        out,
        [concat!(
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","#,
            r#""capabilities":{"completions":{},"logging":{},"prompts":{"listChanged":false},"#,
            r#""resources":{"subscribe":false,"listChanged":false},"tools":{"listChanged":false}},"#,
            r#""serverInfo":{"name":"Bookshop","version":"0.1.0"},"#,
            r#""instructions":"A small bookshop: look up authors with get_author, list titles with top, read books://{title}."}}"#
        )]
    );
    assert_init(&out[0], "0", "2025-11-25");
    // 2024-11-05 has no `completions` capability.
    let out = bookshop(&format!("{}\n", init("2024-11-05")));
    assert_eq!(
        out,
        [concat!(
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2024-11-05","#,
            r#""capabilities":{"logging":{},"prompts":{"listChanged":false},"#,
            r#""resources":{"subscribe":false,"listChanged":false},"tools":{"listChanged":false}},"#,
            r#""serverInfo":{"name":"Bookshop","version":"0.1.0"},"#,
            r#""instructions":"A small bookshop: look up authors with get_author, list titles with top, read books://{title}."}}"#
        )]
    );
    assert_init(&out[0], "0", "2024-11-05");
}

#[test]
fn supported_versions_are_echoed() {
    for version in HANDSHAKE_VERSIONS {
        let out = bookshop(&format!("{}\n", init_id(r#""init""#, version)));
        assert_eq!(out.len(), 1, "{version}: {out:?}");
        assert_init(&out[0], r#""init""#, version);
    }
}

#[test]
fn other_versions_get_the_latest_handshake_version() {
    for version in [
        "1999-01-01",
        "2026-07-28",
        "",
        "2025-11-25 ",
        "2025-11-2",
        "DRAFT",
    ] {
        let out = bookshop(&format!(
            "{}\n{}\n",
            init(version),
            req("1", "tools/list", None)
        ));
        assert_eq!(out.len(), 2, "{version:?}: {out:?}");
        assert_init(&out[0], "0", "2025-11-25");
        assert_tools_list(&out[1], "1", true);
    }
}

#[test]
fn repeated_initialize_renegotiates() {
    let out = bookshop(&format!(
        "{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n",
        init_id("1", "2025-11-25"),
        req("2", "tools/list", None),
        init_id("3", "2024-11-05"),
        req("4", "tools/list", None),
        call("5", r#"{"name":"get_author","arguments":{"title":"Dune"}}"#),
        init_id("6", "2025-06-18"),
        req("7", "tools/list", None),
        call("8", r#"{"name":"get_author","arguments":{"title":"Dune"}}"#),
    ));
    assert_eq!(out.len(), 8, "{out:?}");
    assert_init(&out[0], "1", "2025-11-25");
    assert_tools_list(&out[1], "2", true);
    assert_init(&out[2], "3", "2024-11-05");
    assert_tools_list(&out[3], "4", false);
    assert_eq!(
        out[4],
        ok(
            "5",
            r#"{"content":[{"type":"text","text":"Frank Herbert"}],"isError":false}"#
        )
    );
    assert_init(&out[5], "6", "2025-06-18");
    assert_tools_list(&out[6], "7", true);
    assert_eq!(out[7], ok("8", AUTHOR_DUNE));
}

#[test]
fn failed_reinitialize_keeps_the_session() {
    let out = bookshop(&format!(
        "{}\n{}\n{}\n",
        init_id("1", "2024-11-05"),
        r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
        req("3", "tools/list", None),
    ));
    assert_eq!(out.len(), 3, "{out:?}");
    assert_init(&out[0], "1", "2024-11-05");
    assert_eq!(out[1], invalid_params("2"));
    assert_tools_list(&out[2], "3", false);
}

#[test]
fn initialize_answered_with_an_error_does_not_open_the_session() {
    // The initialize result (about 330 bytes) does not fit a 256-byte output
    // buffer: the answer is -32603, so initialize did not succeed and the
    // session must stay uninitialized.
    let input = format!(
        "{}\n{}\n",
        init("2025-11-25"),
        req("2", "resources/templates/list", None)
    );
    let out = serve_with(&BOOKSHOP, input.as_bytes(), 4096, 256, 4096);
    assert_all_json(&out);
    assert_eq!(
        out,
        [
            err("0", -32603, "response exceeds the 256-byte output buffer"),
            err("2", -32600, NOT_INITIALIZED),
        ]
    );
}

#[test]
fn tools_list_is_shaped_per_version() {
    for version in ["2024-11-05", "2025-03-26"] {
        let out = session_v(version, &[&req("1", "tools/list", None)]);
        assert_eq!(out.len(), 1, "{version}: {out:?}");
        assert_tools_list(&out[0], "1", false);
        assert!(!out[0].contains("outputSchema"));
    }
    for version in ["2025-06-18", "2025-11-25"] {
        let out = session_v(version, &[&req("1", "tools/list", None)]);
        assert_eq!(out.len(), 1, "{version}: {out:?}");
        assert_tools_list(&out[0], "1", true);
    }
}

#[test]
fn tool_results_are_shaped_per_version() {
    let lines = [
        call("1", r#"{"name":"get_author","arguments":{"title":"Dune"}}"#),
        call("2", r#"{"name":"top","arguments":{"n":2}}"#),
        call("3", r#"{"name":"top","arguments":{"n":0}}"#),
    ];
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    for version in ["2024-11-05", "2025-03-26"] {
        let out = session_v(version, &refs);
        assert_eq!(
            out,
            [
                ok(
                    "1",
                    r#"{"content":[{"type":"text","text":"Frank Herbert"}],"isError":false}"#
                ),
                ok(
                    "2",
                    r#"{"content":[{"type":"text","text":"Dune"},{"type":"text","text":"Neuromancer"}],"isError":false}"#
                ),
                // The handler wrote no text: the text block carrying the JSON stays.
                ok(
                    "3",
                    r#"{"content":[{"type":"text","text":"{\"result\":[]}"}],"isError":false}"#
                ),
            ],
            "{version}"
        );
    }
    for version in ["2025-06-18", "2025-11-25"] {
        let out = session_v(version, &refs);
        assert_eq!(out[0], ok("1", AUTHOR_DUNE), "{version}");
        assert!(out[1].contains(r#""structuredContent":{"result":["Dune","Neuromancer"]}"#));
    }
}

// A server with every optional descriptor field set, to see the shaping.
const ANY_ARGS: Schema = Schema::object(&[]);
const RESULT_OUT: Schema =
    Schema::object(&[Property::new("result", Schema::string())]).required(&["result"]);

fn shaped_tool<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    reply.structured(|v| {
        v.object().str("result", "ok");
    })
}

fn shaped_resource<'a>(
    _: &'a (),
    req: ReadRequest<'a>,
    mut contents: Contents<'_>,
) -> ResourceOutcome<'a> {
    contents.text(req.uri(), Some("text/plain"), "hello");
    contents.finish()
}

static SHAPED: Server<'static, ()> = Server::new(ServerInfo::new("Shaped", "1"), ())
    .tools(&[Tool::new(
        ToolDescriptor::new("shaped", &ANY_ARGS)
            .title("Shaped Tool")
            .description("d")
            .output_schema(&RESULT_OUT)
            .annotations(ToolAnnotations::new().title("Shaped").read_only(true)),
        shaped_tool,
    )])
    .resources(&[Resource::new(
        ResourceDescriptor::new("s://r", "r").title("R"),
        shaped_resource,
    )])
    .templates(&[ResourceTemplate::new(
        TemplateDescriptor::new("s://t/{x}", "t").title("T"),
        shaped_resource,
    )]);

fn shaped_session(version: &str) -> Vec<String> {
    let input = format!(
        "{}\n{}\n{}\n{}\n{}\n",
        init(version),
        req("1", "tools/list", None),
        call("2", r#"{"name":"shaped"}"#),
        req("3", "resources/list", None),
        req("4", "resources/templates/list", None),
    );
    let out = serve_with(&SHAPED, input.as_bytes(), 4096, 4096, 4096);
    assert_all_json(&out);
    out
}

#[test]
fn optional_fields_are_sent_only_to_versions_that_define_them() {
    let inputs = r#""inputSchema":{"type":"object","properties":{}}"#;
    let out = shaped_session("2024-11-05");
    assert_eq!(
        out[1],
        ok(
            "1",
            &format!(r#"{{"tools":[{{"name":"shaped","description":"d",{inputs}}}]}}"#)
        )
    );
    assert_eq!(
        out[2],
        ok(
            "2",
            r#"{"content":[{"type":"text","text":"{\"result\":\"ok\"}"}],"isError":false}"#
        )
    );
    assert_eq!(
        out[3],
        ok("3", r#"{"resources":[{"uri":"s://r","name":"r"}]}"#)
    );
    assert_eq!(
        out[4],
        ok(
            "4",
            r#"{"resourceTemplates":[{"uriTemplate":"s://t/{x}","name":"t"}]}"#
        )
    );

    // 2025-03-26 adds tool annotations, still no title / outputSchema.
    let out = shaped_session("2025-03-26");
    assert_eq!(
        out[1],
        ok(
            "1",
            &format!(
                r#"{{"tools":[{{"name":"shaped","description":"d",{inputs},"annotations":{{"title":"Shaped","readOnlyHint":true}}}}]}}"#
            )
        )
    );
    assert!(!out[2].contains("structuredContent"));
    assert!(!out[3].contains("\"title\"") && !out[4].contains("\"title\""));

    // 2025-06-18 and later: everything.
    for version in ["2025-06-18", "2025-11-25"] {
        let out = shaped_session(version);
        let v: Value = serde_json::from_str(&out[1]).unwrap();
        assert_eq!(
            v["result"]["tools"][0],
            json!({
                "name": "shaped",
                "title": "Shaped Tool",
                "description": "d",
                "inputSchema": {"type": "object", "properties": {}},
                "outputSchema": {"type":"object","properties":{"result":{"type":"string"}},"required":["result"]},
                "annotations": {"title": "Shaped", "readOnlyHint": true}
            }),
            "{version}"
        );
        let v: Value = serde_json::from_str(&out[2]).unwrap();
        assert_eq!(v["result"]["structuredContent"], json!({"result": "ok"}));
        assert_eq!(
            v["result"]["content"],
            json!([{"type": "text", "text": "{\"result\":\"ok\"}"}])
        );
        let v: Value = serde_json::from_str(&out[3]).unwrap();
        assert_eq!(v["result"]["resources"][0]["title"], "R");
        let v: Value = serde_json::from_str(&out[4]).unwrap();
        assert_eq!(v["result"]["resourceTemplates"][0]["title"], "T");
    }
}

// ===========================================================================
// Tools

#[test]
fn tools_list_is_exact_in_registration_order() {
    let out = session(&[
        &req("1", "tools/list", None),
        &req("2", "tools/list", Some("{}")),
    ]);
    assert_eq!(out.len(), 2, "{out:?}");
    assert_tools_list(&out[0], "1", true);
    assert_tools_list(&out[1], "2", true);
    assert_eq!(out[0].replacen("\"id\":1", "\"id\":2", 1), out[1]);
}

#[test]
fn unknown_tool_is_invalid_params() {
    let out = session(&[
        &call("1", r#"{"name":"nope","arguments":{}}"#),
        &call("2", r#"{"name":"nope"}"#),
        &call("3", r#"{"name":""}"#),
        &call("4", r#"{"name":"GET_AUTHOR","arguments":{"title":"Dune"}}"#),
        &call(
            "5",
            r#"{"name":"get_author ","arguments":{"title":"Dune"}}"#,
        ),
    ]);
    assert_eq!(
        out,
        [
            err("1", -32602, "Unknown tool: nope"),
            err("2", -32602, "Unknown tool: nope"),
            err("3", -32602, "Unknown tool: "),
            err("4", -32602, "Unknown tool: GET_AUTHOR"),
            err("5", -32602, "Unknown tool: get_author "),
        ]
    );
}

#[test]
fn malformed_tool_calls_are_invalid_params() {
    let out = session(&[
        &call("1", r#"{"arguments":{}}"#),
        &call("2", "{}"),
        &call("3", r#"{"name":7}"#),
        &call("4", r#"{"name":null}"#),
        &call("5", r#"{"name":["top"]}"#),
        &call("6", r#"{"name":"top","arguments":[1]}"#),
        &call("7", r#"{"name":"top","arguments":"{\"n\":1}"}"#),
        &call("8", r#"{"name":"top","arguments":5}"#),
        &call("9", r#"{"name":"top","arguments":true}"#),
        &req("10", "tools/call", None),
        &req("11", "tools/call", Some("null")),
    ]);
    let expected: Vec<String> = (1..=11).map(|i| invalid_params(&i.to_string())).collect();
    assert_eq!(out, expected);
}

#[test]
fn absent_or_null_arguments_meet_the_schema() {
    let out = session(&[
        &call("1", r#"{"name":"get_author"}"#),
        &call("2", r#"{"name":"get_author","arguments":null}"#),
        &call("3", r#"{"name":"top"}"#),
        &call("4", r#"{"name":"top","arguments":null}"#),
    ]);
    assert_eq!(
        out,
        [
            tool_error(
                "1",
                "Invalid arguments for tool get_author: /title is required"
            ),
            tool_error(
                "2",
                "Invalid arguments for tool get_author: /title is required"
            ),
            tool_error("3", "Invalid arguments for tool top: /n is required"),
            tool_error("4", "Invalid arguments for tool top: /n is required"),
        ]
    );
}

#[test]
fn schema_violations_are_tool_errors() {
    let cases: &[(&str, &str)] = &[
        (
            r#"{"name":"top","arguments":{"n":51}}"#,
            "top: /n must be <= 50",
        ),
        (
            r#"{"name":"top","arguments":{"n":99}}"#,
            "top: /n must be <= 50",
        ),
        (
            r#"{"name":"top","arguments":{"n":-1}}"#,
            "top: /n must be >= 0",
        ),
        (
            r#"{"name":"top","arguments":{"n":"3"}}"#,
            "top: /n must be of type integer",
        ),
        (
            r#"{"name":"top","arguments":{"n":2.5}}"#,
            "top: /n must be of type integer",
        ),
        (
            r#"{"name":"top","arguments":{"n":null}}"#,
            "top: /n must be of type integer",
        ),
        (
            r#"{"name":"top","arguments":{"n":true}}"#,
            "top: /n must be of type integer",
        ),
        (
            r#"{"name":"top","arguments":{"n":[1]}}"#,
            "top: /n must be of type integer",
        ),
        (r#"{"name":"top","arguments":{}}"#, "top: /n is required"),
        (
            r#"{"name":"top","arguments":{"N":1}}"#,
            "top: /n is required",
        ),
        (
            r#"{"name":"get_author","arguments":{"title":5}}"#,
            "get_author: /title must be of type string",
        ),
        (
            r#"{"name":"get_author","arguments":{"title":null}}"#,
            "get_author: /title must be of type string",
        ),
        (
            r#"{"name":"get_author","arguments":{}}"#,
            "get_author: /title is required",
        ),
        (
            r#"{"name":"get_author_strict","arguments":{"title":{}}}"#,
            "get_author_strict: /title must be of type string",
        ),
    ];
    for (i, &(params, text)) in cases.iter().enumerate() {
        let id = (i + 1).to_string();
        let out = session(&[&call(&id, params)]);
        assert_eq!(
            out,
            [tool_error(
                &id,
                &format!("Invalid arguments for tool {text}")
            )],
            "{params}"
        );
    }
}

#[test]
fn duplicated_argument_is_rejected() {
    let out = session(&[
        &call("1", r#"{"name":"top","arguments":{"n":1,"n":2}}"#),
        &call(
            "2",
            r#"{"name":"get_author","arguments":{"title":"Dune","title":"Dune"}}"#,
        ),
    ]);
    assert_eq!(out.len(), 2);
    for (line, id, tool, prop) in [
        (&out[0], "1", "top", "n"),
        (&out[1], "2", "get_author", "title"),
    ] {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["id"], id.parse::<i64>().unwrap());
        assert_eq!(v["result"]["isError"], true, "{line}");
        assert!(v["result"].get("structuredContent").is_none(), "{line}");
        let text = v["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.starts_with(&format!("Invalid arguments for tool {tool}: /{prop} ")),
            "{text}"
        );
    }
    assert_eq!(
        out[0],
        tool_error(
            "1",
            "Invalid arguments for tool top: /n appears more than once"
        )
    );
}

#[test]
fn extra_arguments_are_accepted() {
    let out = session(&[
        &call(
            "1",
            r#"{"name":"get_author","arguments":{"title":"Dune","extra":1}}"#,
        ),
        &call(
            "2",
            r#"{"name":"top","arguments":{"x":[{}],"n":1,"y":null}}"#,
        ),
    ]);
    assert_eq!(
        out,
        [
            ok("1", AUTHOR_DUNE),
            ok(
                "2",
                r#"{"content":[{"type":"text","text":"Dune"}],"structuredContent":{"result":["Dune"]},"isError":false}"#
            ),
        ]
    );
}

// additionalProperties: false rejects unknown properties (custom server).
const CLOSED_ARGS: Schema = Schema::object(&[Property::new("a", Schema::integer())])
    .required(&["a"])
    .additional_properties(false);

fn closed_tool<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    reply.text("fine")
}

static CLOSED: Server<'static, ()> =
    Server::new(ServerInfo::new("Closed", "1"), ()).tools(&[Tool::new(
        ToolDescriptor::new("closed", &CLOSED_ARGS),
        closed_tool,
    )]);

#[test]
fn additional_properties_false_rejects_unknown_properties() {
    let input = format!(
        "{}\n{}\n{}\n",
        init("2025-11-25"),
        call("1", r#"{"name":"closed","arguments":{"a":1}}"#),
        call("2", r#"{"name":"closed","arguments":{"a":1,"b":2}}"#),
    );
    let out = serve_with(&CLOSED, input.as_bytes(), 4096, 4096, 4096);
    assert_eq!(
        out[1],
        ok(
            "1",
            r#"{"content":[{"type":"text","text":"fine"}],"isError":false}"#
        )
    );
    assert_eq!(
        out[2],
        tool_error(
            "2",
            "Invalid arguments for tool closed: /b is not an allowed property"
        )
    );
}

#[test]
fn tool_error_carries_the_message() {
    let out = session(&[
        &call(
            "1",
            r#"{"name":"get_author","arguments":{"title":"Nothing"}}"#,
        ),
        &call("2", r#"{"name":"get_author","arguments":{"title":""}}"#),
    ]);
    assert_eq!(
        out,
        [
            tool_error(
                "1",
                "Error executing tool get_author: No book titled 'Nothing' in the catalog."
            ),
            tool_error(
                "2",
                "Error executing tool get_author: No book titled '' in the catalog."
            ),
        ]
    );
    assert!(!out[0].contains("structuredContent"));
}

#[test]
fn handler_protocol_error_is_a_jsonrpc_error() {
    let out = session(&[
        &call(
            "1",
            r#"{"name":"get_author_strict","arguments":{"title":"Nothing"}}"#,
        ),
        &call(
            "2",
            r#"{"name":"get_author_strict","arguments":{"title":"Neuromancer"}}"#,
        ),
    ]);
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"No book titled 'Nothing' in the catalog."}}"#.to_owned(),
            ok(
                "2",
                r#"{"content":[{"type":"text","text":"William Gibson"}],"structuredContent":{"result":"William Gibson"},"isError":false}"#
            ),
        ]
    );
}

#[test]
fn get_author_success() {
    let out = session(&[
        &call("1", r#"{"name":"get_author","arguments":{"title":"Dune"}}"#),
        &call(
            "2",
            r#"{"name":"get_author","arguments":{"title":"Neuromancer"}}"#,
        ),
    ]);
    assert_eq!(
        out,
        [
            ok("1", AUTHOR_DUNE),
            ok(
                "2",
                r#"{"content":[{"type":"text","text":"William Gibson"}],"structuredContent":{"result":"William Gibson"},"isError":false}"#
            ),
        ]
    );
}

#[test]
fn top_success() {
    let both = r#"{"content":[{"type":"text","text":"Dune"},{"type":"text","text":"Neuromancer"}],"structuredContent":{"result":["Dune","Neuromancer"]},"isError":false}"#;
    let out = session(&[
        &call("0", r#"{"name":"top","arguments":{"n":0}}"#),
        &call("1", r#"{"name":"top","arguments":{"n":1}}"#),
        &call("2", r#"{"name":"top","arguments":{"n":2}}"#),
        &call("50", r#"{"name":"top","arguments":{"n":50}}"#),
    ]);
    assert_eq!(out.len(), 4);
    // n = 0: no titles, so the handler wrote no text block; the result carries
    // a text block with the structured JSON (the contract's rule). Compared
    // semantically: the key order of this case is not the usual one.
    let v: Value = serde_json::from_str(&out[0]).unwrap();
    assert_eq!(
        v,
        json!({"jsonrpc":"2.0","id":0,"result":{
            "content":[{"type":"text","text":"{\"result\":[]}"}],
            "structuredContent":{"result":[]},
            "isError":false}})
    );
    assert!(out[0].starts_with(r#"{"jsonrpc":"2.0","id":0,"result":{"#));
    assert_eq!(
        out[1],
        ok(
            "1",
            r#"{"content":[{"type":"text","text":"Dune"}],"structuredContent":{"result":["Dune"]},"isError":false}"#
        )
    );
    assert_eq!(out[2], ok("2", both));
    assert_eq!(out[3], ok("50", both));
}

// ===========================================================================
// Resources

#[test]
fn resources_list_is_exact() {
    let out = session(&[&req("1", "resources/list", None)]);
    assert_eq!(
        out,
        [ok(
            "1",
            r#"{"resources":[{"uri":"books://catalog","name":"catalog","description":"All titles in the catalog, as a JSON array.","mimeType":"application/json"},{"uri":"books://stock","name":"stock","description":"The copies left of each title, as a JSON object; subscribe to be told when it changes.","mimeType":"application/json"}]}"#
        )]
    );
}

#[test]
fn resource_templates_list_is_exact() {
    let out = session(&[&req("1", "resources/templates/list", None)]);
    assert_eq!(
        out,
        [ok(
            "1",
            r#"{"resourceTemplates":[{"uriTemplate":"books://{title}","name":"book","description":"The catalog entry for one book.","mimeType":"text/plain"}]}"#
        )]
    );
}

#[test]
fn read_books() {
    let out = session(&[
        &read("1", r#"{"uri":"books://Dune"}"#),
        &read("2", r#"{"uri":"books://Neuromancer"}"#),
        &read("3", r#"{"uri":"books://catalog"}"#),
        &read("4", r#"{"uri":"books://%44une"}"#),
    ]);
    assert_eq!(
        out,
        [
            ok(
                "1",
                r#"{"contents":[{"uri":"books://Dune","mimeType":"text/plain","text":"Dune by Frank Herbert"}]}"#
            ),
            ok(
                "2",
                r#"{"contents":[{"uri":"books://Neuromancer","mimeType":"text/plain","text":"Neuromancer by William Gibson"}]}"#
            ),
            ok(
                "3",
                r#"{"contents":[{"uri":"books://catalog","mimeType":"application/json","text":"[\"Dune\",\"Neuromancer\"]"}]}"#
            ),
            // {title} is percent-decoded; the uri is echoed as requested.
            ok(
                "4",
                r#"{"contents":[{"uri":"books://%44une","mimeType":"text/plain","text":"Dune by Frank Herbert"}]}"#
            ),
        ]
    );
    // The catalog text is itself a JSON array of the titles.
    let v: Value = serde_json::from_str(&out[2]).unwrap();
    let text = v["result"]["contents"][0]["text"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        json!(["Dune", "Neuromancer"])
    );
}

#[test]
fn resource_not_found_is_invalid_params_with_uri() {
    let out = session(&[
        &read("1", r#"{"uri":"books://Nothing"}"#),
        &read("2", r#"{"uri":"books://Dune%20Messiah"}"#),
        &read("3", r#"{"uri":"books://N%C3%A9ant"}"#),
    ]);
    assert_eq!(
        out,
        [
            err_data(
                "1",
                -32602,
                "No book titled 'Nothing' in the catalog.",
                r#"{"uri":"books://Nothing"}"#
            ),
            err_data(
                "2",
                -32602,
                "No book titled 'Dune Messiah' in the catalog.",
                r#"{"uri":"books://Dune%20Messiah"}"#
            ),
            err_data(
                "3",
                -32602,
                "No book titled 'Néant' in the catalog.",
                r#"{"uri":"books://N%C3%A9ant"}"#
            ),
        ]
    );
}

#[test]
fn unknown_resource_is_invalid_params_with_uri() {
    let out = session(&[
        &read("1", r#"{"uri":"nobooks://x"}"#),
        &read("2", r#"{"uri":"books://a/b"}"#),
        &read("3", r#"{"uri":"not a uri"}"#),
        &read("4", r#"{"uri":""}"#),
        &read("5", r#"{"uri":"books://"}"#),
        &read("6", r#"{"uri":"BOOKS://Dune"}"#),
    ]);
    let unknown = |id: &str, uri: &str| {
        err_data(
            id,
            -32602,
            &format!("Unknown resource: {uri}"),
            &format!(r#"{{"uri":{}}}"#, json_str(uri)),
        )
    };
    assert_eq!(
        out,
        [
            unknown("1", "nobooks://x"),
            unknown("2", "books://a/b"),
            unknown("3", "not a uri"),
            unknown("4", ""),
            unknown("5", "books://"),
            unknown("6", "BOOKS://Dune"),
        ]
    );
}

#[test]
fn malformed_resource_reads_are_invalid_params() {
    let out = session(&[
        &read("1", "{}"),
        &read("2", r#"{"uri":5}"#),
        &read("3", r#"{"uri":null}"#),
        &read("4", r#"{"uri":["books://Dune"]}"#),
        &read("5", r#"{"URI":"books://Dune"}"#),
        &req("6", "resources/read", None),
    ]);
    let expected: Vec<String> = (1..=6).map(|i| invalid_params(&i.to_string())).collect();
    assert_eq!(out, expected);
}

#[test]
fn escaped_uri_is_unescaped() {
    let out = session(&[
        &read("1", r#"{"uri":"books:\/\/Dune"}"#),
        &read("2", r#"{"uri":"\u0062ooks://catalog"}"#),
        &read("3", r#"{"\u0075ri":"books://Dune"}"#),
    ]);
    assert_eq!(
        out,
        [
            ok(
                "1",
                r#"{"contents":[{"uri":"books://Dune","mimeType":"text/plain","text":"Dune by Frank Herbert"}]}"#
            ),
            ok(
                "2",
                r#"{"contents":[{"uri":"books://catalog","mimeType":"application/json","text":"[\"Dune\",\"Neuromancer\"]"}]}"#
            ),
            ok(
                "3",
                r#"{"contents":[{"uri":"books://Dune","mimeType":"text/plain","text":"Dune by Frank Herbert"}]}"#
            ),
        ]
    );
}

#[test]
fn unknown_methods_are_method_not_found() {
    let out = session(&[
        &req("1", "books/frobnicate", None),
        &req("2", "server/discover", None),
        &req(
            "3",
            "resources/subscribe",
            Some(r#"{"uri":"books://Dune"}"#),
        ),
        &req(
            "4",
            "resources/unsubscribe",
            Some(r#"{"uri":"books://Dune"}"#),
        ),
        &req("5", "tasks/list", None),
        &req("6", "Ping", None),
        &req("7", "notifications/initialized", None),
    ]);
    let expected: Vec<String> = [
        "books/frobnicate",
        "server/discover",
        "resources/subscribe",
        "resources/unsubscribe",
        "tasks/list",
        "Ping",
        "notifications/initialized",
    ]
    .iter()
    .enumerate()
    .map(|(i, m)| {
        err_data(
            &(i + 1).to_string(),
            -32601,
            "Method not found",
            &json_str(m),
        )
    })
    .collect();
    assert_eq!(out, expected);
}

// ===========================================================================
// Output-buffer limits

const NO_ARGS: Schema = Schema::object(&[]);
const BIG_OUT: Schema =
    Schema::object(&[Property::new("result", Schema::string())]).required(&["result"]);

fn big_text<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    reply.text(&"x".repeat(4000))
}

fn big_structured<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    let text = "y".repeat(4000);
    reply.structured(|v| {
        v.object().str("result", &text);
    })
}

fn small_text<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    reply.text("small")
}

fn big_resource<'a>(
    _: &'a (),
    req: ReadRequest<'a>,
    mut contents: Contents<'_>,
) -> ResourceOutcome<'a> {
    contents.text(req.uri(), Some("text/plain"), &"z".repeat(4000));
    contents.finish()
}

/// A server whose big answers do not fit a small output buffer.
static TINY: Server<'static, ()> = Server::new(ServerInfo::new("T", "1"), ())
    .tools(&[
        Tool::new(ToolDescriptor::new("big", &NO_ARGS), big_text),
        Tool::new(
            ToolDescriptor::new("big_structured", &NO_ARGS).output_schema(&BIG_OUT),
            big_structured,
        ),
        Tool::new(ToolDescriptor::new("small", &NO_ARGS), small_text),
    ])
    .resources(&[Resource::new(
        ResourceDescriptor::new("tiny://big", "big"),
        big_resource,
    )]);

const TINY_INIT: &str = r#"{"protocolVersion":"2025-11-25","capabilities":{"resources":{"subscribe":false,"listChanged":false},"tools":{"listChanged":false}},"serverInfo":{"name":"T","version":"1"}}"#;

/// initialize (2025-11-25) + `lines` through `server` with an `out_cap`-byte
/// output buffer; checks that every line is whole JSON and returns the
/// answers after initialize's.
fn limited<S>(server: &Server<'_, S>, out_cap: usize, lines: &[&str]) -> Vec<String> {
    let mut input = init("2025-11-25");
    input.push('\n');
    for l in lines {
        input.push_str(l);
        input.push('\n');
    }
    let out = serve_with(server, input.as_bytes(), 16 * 1024, out_cap, 4096);
    assert_all_json(&out);
    assert!(out[0].contains(r#""result""#), "initialize: {}", out[0]);
    out[1..].to_vec()
}

#[test]
fn tool_result_too_large_is_a_tool_error() {
    let lines = [
        call("1", r#"{"name":"big"}"#),
        call("2", r#"{"name":"big_structured"}"#),
        call("3", r#"{"name":"small"}"#),
    ];
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let out = limited(&TINY, 1024, &refs);
    assert_eq!(
        out,
        [
            tool_error(
                "1",
                "Error executing tool big: result exceeds the 1024-byte response buffer"
            ),
            tool_error(
                "2",
                "Error executing tool big_structured: result exceeds the 1024-byte response buffer"
            ),
            ok(
                "3",
                r#"{"content":[{"type":"text","text":"small"}],"isError":false}"#
            ),
        ]
    );
    // With room, the same tools succeed.
    let out = limited(&TINY, 16 * 1024, &refs);
    assert!(out[0].contains(&"x".repeat(4000)) && out[0].ends_with(r#""isError":false}}"#));
    assert!(out[1].contains(&"y".repeat(4000)) && out[1].ends_with(r#""isError":false}}"#));
    // The initialize result of this server, exactly.
    let all = serve_with(
        &TINY,
        format!("{}\n", init("2025-11-25")).as_bytes(),
        4096,
        1024,
        4096,
    );
    assert_eq!(all, [ok("0", TINY_INIT)]);
}

const LONG_NAME: &str = concat!(
    "a_tool_with_a_long_name_so_that_even_its_error_does_not_fit_the_buffer_",
    "a_tool_with_a_long_name_so_that_even_its_error_does_not_fit_the_buffer_",
    "a_tool_with_a_long_name_so_that_even_its_error_does_not_fit_the_buffer"
);

/// One tool with a name so long that its tool error alone overflows 256 bytes.
static LONG: Server<'static, ()> = Server::new(ServerInfo::new("L", "1"), ()).tools(&[Tool::new(
    ToolDescriptor::new(LONG_NAME, &NO_ARGS),
    big_text,
)]);

#[test]
fn tool_error_that_does_not_fit_is_internal_error() {
    let out = limited(
        &LONG,
        256,
        &[
            &call("1", &format!(r#"{{"name":"{LONG_NAME}"}}"#)),
            &ping("2"),
        ],
    );
    assert_eq!(
        out,
        [
            err("1", -32603, "response exceeds the 256-byte output buffer"),
            ok("2", "{}")
        ]
    );
}

const WIDE_DESCRIPTION: &str = concat!(
    "A tool whose description alone is longer than the output buffer. ",
    "A tool whose description alone is longer than the output buffer. ",
    "A tool whose description alone is longer than the output buffer. ",
    "A tool whose description alone is longer than the output buffer. ",
    "A tool whose description alone is longer than the output buffer. ",
    "A tool whose description alone is longer than the output buffer. ",
    "A tool whose description alone is longer than the output buffer. ",
    "A tool whose description alone is longer than the output buffer. ",
    "A tool whose description alone is longer than the output buffer."
);

/// One tool whose descriptor does not fit a 512-byte output buffer.
static WIDE: Server<'static, ()> = Server::new(ServerInfo::new("W", "1"), ()).tools(&[Tool::new(
    ToolDescriptor::new("wide", &NO_ARGS).description(WIDE_DESCRIPTION),
    small_text,
)]);

#[test]
fn list_that_does_not_fit_is_internal_error() {
    // Not even one descriptor fits: -32603 naming the buffer size, and the
    // next request is still served.
    let out = limited(&WIDE, 512, &[&req("1", "tools/list", None), &ping("2")]);
    assert_eq!(
        out,
        [
            err("1", -32603, "response exceeds the 512-byte output buffer"),
            ok("2", "{}")
        ]
    );
    let out = limited(&WIDE, 4096, &[&req("1", "tools/list", None)]);
    assert!(out[0].contains(WIDE_DESCRIPTION));
}

#[test]
fn bookshop_list_larger_than_the_buffer_is_never_partial() {
    // The bookshop's tools/list does not fit 700 bytes (its initialize result
    // does). Either -32603, or (pagination) a page of whole descriptors that
    // fits, with `nextCursor`.
    let out = limited(&BOOKSHOP, 700, &[&req("1", "tools/list", None), &ping("2")]);
    assert_eq!(out.len(), 2, "{out:?}");
    assert!(out[0].len() < 700);
    let v: Value = serde_json::from_str(&out[0]).unwrap();
    if v.get("error").is_some() {
        error_code(&out[0], "1", -32603);
    } else {
        let page = v["result"]["tools"].as_array().unwrap();
        assert!(!page.is_empty(), "{}", out[0]);
        assert!(v["result"]["nextCursor"].is_string(), "{}", out[0]);
        assert_eq!(page[0]["name"], "get_author");
    }
    assert_eq!(out[1], ok("2", "{}"));
}

#[test]
fn resource_that_does_not_fit_is_internal_error() {
    let out = limited(
        &TINY,
        1024,
        &[&read("1", r#"{"uri":"tiny://big"}"#), &ping("2")],
    );
    assert_eq!(out.len(), 2);
    let message = error_code(&out[0], "1", -32603);
    assert!(message.contains("1024"), "{message}");
    assert_eq!(out[1], ok("2", "{}"));
    let out = limited(&TINY, 8192, &[&read("1", r#"{"uri":"tiny://big"}"#)]);
    assert!(out[0].contains(&"z".repeat(4000)));
}

#[test]
fn never_a_partial_line_whatever_the_output_buffer() {
    // A transcript with answers of many sizes, through many buffer sizes:
    // every request gets exactly one answer, and every line is whole JSON
    // that fits the buffer.
    let long_name = "n".repeat(900);
    let lines = [
        init("2025-11-25"),
        req("1", "tools/list", None),
        call("2", r#"{"name":"get_author","arguments":{"title":"Dune"}}"#),
        call("3", r#"{"name":"top","arguments":{"n":50}}"#),
        call(
            "4",
            r#"{"name":"get_author","arguments":{"title":"Nothing"}}"#,
        ),
        call("5", &format!(r#"{{"name":"{long_name}"}}"#)),
        read("6", r#"{"uri":"books://catalog"}"#),
        read("7", &format!(r#"{{"uri":"books://{long_name}"}}"#)),
        req("8", "resources/templates/list", None),
        "{not json".to_owned(),
        ping("9"),
    ];
    let mut input = lines.join("\n");
    input.push('\n');
    for out_cap in (256..2048).step_by(61) {
        let out = serve_with(&BOOKSHOP, input.as_bytes(), 8192, out_cap, 4096);
        assert_all_json(&out);
        assert_eq!(out.len(), lines.len(), "out_cap {out_cap}: {out:?}");
        for l in &out {
            assert!(l.len() < out_cap, "out_cap {out_cap}: {l}");
        }
        let ids: Vec<Value> = out
            .iter()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].clone())
            .collect();
        let expected: Vec<Value> = (0..=8)
            .map(|i| json!(i))
            .chain([Value::Null, json!(9)])
            .collect();
        assert_eq!(ids, expected, "out_cap {out_cap}");
    }
}
