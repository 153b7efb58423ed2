//! DESIGN.md "Framing and JSON-RPC": an answer that cannot be written whole
//! is still exactly one answer. An id that cannot be echoed within the
//! output buffer is refused before the handler runs (`-32600`,
//! `"id": null`); every other request gets one answer with its own id.

use std::cell::Cell;

use picomcp::http::{Http, Request, Sessions};
use picomcp::schema::{Property, Schema};
use picomcp::tool::{Arguments, Reply, Tool, ToolDescriptor, ToolOutcome};
use picomcp::{Connection, Server, ServerInfo};
use proptest::prelude::*;
use serde_json::Value;

thread_local! {
    /// Handler runs on this test's thread (tests run in parallel).
    static RUNS: Cell<usize> = const { Cell::new(0) };
}

fn echo<'a>(_: &'a (), args: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    RUNS.with(|r| r.set(r.get() + 1));
    #[derive(serde::Deserialize)]
    struct Args<'x> {
        text: &'x str,
    }
    let Args { text } = args.parse()?;
    reply.text(text)
}

static TOOLS: [Tool<()>; 1] = [Tool::new(
    ToolDescriptor::new(
        "echo",
        &Schema::object(&[Property::new("text", Schema::string())]),
    ),
    echo,
)];
static ECHO: Server<'static, ()> = Server::new(ServerInfo::new("echo", "1"), ()).tools(&TOOLS);

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// The lines answering one `echo` call with a string id of `id_len` bytes
/// and a reply of `text_len` bytes, with an output buffer of `out_cap`.
fn one_call(id_len: usize, text_len: usize, out_cap: usize) -> (Vec<Value>, String, usize) {
    let mut conn = Connection::new();
    let mut out = vec![0u8; out_cap.max(512)];
    let mut init = INIT.as_bytes().to_vec();
    let n = ECHO.handle(&mut conn, &mut init, &mut out);
    assert!(n > 0);
    let id = "c".repeat(id_len);
    let mut call = format!(
        r#"{{"jsonrpc":"2.0","id":"{id}","method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{}"}}}}}}"#,
        "t".repeat(text_len)
    )
    .into_bytes();
    let before = RUNS.with(Cell::get);
    let mut out = vec![0u8; out_cap];
    let n = ECHO.handle(&mut conn, &mut call, &mut out);
    let ran = RUNS.with(Cell::get) - before;
    let text = String::from_utf8(out[..n].to_vec()).unwrap();
    let lines = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    (lines, id, ran)
}

/// Exactly one answer: with the request's own id (a result, a tool error
/// or a JSON-RPC error), or `null` with the refusal and no handler run.
#[track_caller]
fn exactly_one_answer(id_len: usize, text_len: usize, out_cap: usize) {
    let (lines, id, ran) = one_call(id_len, text_len, out_cap);
    assert_eq!(lines.len(), 1, "id {id_len}, out {out_cap}: {lines:?}");
    let answer = &lines[0];
    if answer["id"] == Value::String(id) {
        assert_eq!(ran, 1, "id {id_len}, out {out_cap}");
        assert!(answer.get("result").is_some() || answer.get("error").is_some());
    } else {
        assert_eq!(
            answer["id"],
            Value::Null,
            "id {id_len}, out {out_cap}: {answer}"
        );
        assert_eq!(
            ran, 0,
            "a refused request's handler ran (id {id_len}, out {out_cap})"
        );
        let code = answer["error"]["code"].as_i64();
        assert!(matches!(code, Some(-32600 | -32603)), "{answer}");
    }
}

#[test]
fn every_id_length_around_the_output_size_gets_exactly_one_answer() {
    for out_cap in [256usize, 300, 1024] {
        for id_len in out_cap.saturating_sub(400)..out_cap + 16 {
            exactly_one_answer(id_len, 5, out_cap);
        }
    }
}

#[test]
fn the_issue_case_an_id_of_950_bytes_with_a_1024_byte_buffer() {
    let (lines, _, ran) = one_call(950, 5, 1024);
    assert_eq!(ran, 0);
    assert_eq!(
        lines,
        [
            serde_json::json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"the id is too long to be echoed within the output buffer"}})
        ]
    );
    // A long id that fits is echoed, and a result too large becomes the
    // tool error that says so, with that id.
    let (lines, id, ran) = one_call(600, 600, 1024);
    assert_eq!((lines.len(), ran), (1, 1));
    assert_eq!(lines[0]["id"], Value::String(id));
    assert_eq!(lines[0]["result"]["isError"], true, "{}", lines[0]);
}

#[test]
fn over_http_a_long_id_is_refused_with_one_json_answer() {
    static BOOK: Server<'static, ()> = Server::new(ServerInfo::new("echo", "1"), ()).tools(&TOOLS);
    let http = Http::new(&BOOK);
    let mut sessions = Sessions::<2>::new();
    let mut random = |id: &mut [u8; 16]| *id = [3; 16];
    let headers = [
        ("Host", "localhost"),
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
    ];
    let mut out = vec![0u8; 1024];
    let mut body = INIT.as_bytes().to_vec();
    let r = http.handle(
        &mut sessions,
        &mut random,
        Request::post(&headers[..], &mut body, 0),
        &mut out,
    );
    let sid = r.session_id.unwrap();
    let with_session = [
        headers[0],
        headers[1],
        headers[2],
        ("Mcp-Session-Id", sid.as_str()),
    ];
    for (id_len, refused) in [
        (900, false),
        (950, true),
        (990, true),
        (1000, true),
        (5000, true),
    ] {
        let mut body = format!(
            r#"{{"jsonrpc":"2.0","id":"{}","method":"tools/call","params":{{"name":"echo","arguments":{{"text":"x"}}}}}}"#,
            "c".repeat(id_len)
        )
        .into_bytes();
        let r = http.handle(
            &mut sessions,
            &mut random,
            Request::post(&with_session[..], &mut body, 0),
            &mut out,
        );
        assert_eq!(r.status, 200, "{id_len}");
        let v: Value = serde_json::from_slice(&out[..r.body_len]).unwrap();
        if refused {
            assert_eq!(v["id"], Value::Null, "{id_len}: {v}");
            assert_eq!(v["error"]["code"], -32600, "{id_len}: {v}");
        } else {
            assert_eq!(v["id"].as_str().map(str::len), Some(id_len), "{v}");
            assert_eq!(v["result"]["content"][0]["text"], "x");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn any_id_length_and_buffer_size_gets_exactly_one_answer(
        out_cap in 200usize..2048,
        id_len in 0usize..2200,
        text_len in 0usize..600,
    ) {
        exactly_one_answer(id_len, text_len, out_cap);
    }
}
