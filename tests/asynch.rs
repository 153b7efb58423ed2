//! Async tools (`picomcp::asynch`): the bookshop's tools as async twins
//! answer byte for byte as the sync ones through `Server::handle_async`,
//! on every era; notifications reach the sink while a handler awaits; a
//! dropped future answers nothing and the connection goes on; a server
//! that does not await refuses an async tool.

mod common;

use std::cell::RefCell;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use common::twins::{SYNC_SHOP, TWIN_SHOP, Twins, Yield};
use common::{init, init_with};
use picomcp::asynch::block_on;
use picomcp::tool::{Arguments, Reply, Tool, ToolDescriptor, ToolOutcome};
use picomcp::{Connection, LogLevel, Server, ServerInfo};

const ENV: &str = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{}}"#;

fn call(id: u32, name: &str, args: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{args}}}}}"#
    )
}

fn modern_call(id: u32, name: &str, args: &str, extra: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{args}{extra},"_meta":{{{ENV},"progressToken":"p{id}"}}}}}}"#
    )
}

/// The calls of every tool, good and bad, both eras' shapes.
fn calls() -> Vec<String> {
    vec![
        call(1, "get_author", r#"{"title":"Dune"}"#),
        call(2, "get_author", r#"{"title":"Nothing"}"#),
        call(3, "get_author", r#"{"title":7}"#),
        call(4, "get_author", r#"{}"#),
        call(5, "get_author_strict", r#"{"title":"Nothing"}"#),
        call(6, "top", r#"{"n":2}"#),
        call(7, "reserve", r#"{"title":"Dune"}"#),
        call(8, "blurb", r#"{"title":"Dune"}"#),
        call(9, "buy", r#"{"title":"Neuromancer"}"#),
        call(10, "buy", r#"{"title":"Neuromancer"}"#),
        r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"count","arguments":{"n":3},"_meta":{"progressToken":7}}}"#.into(),
        call(12, "get_author", r#"{"title":"Dune\u0020Messiah"}"#),
        call(13, "nope", "{}"),
        r#"{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"top"}}"#.into(),
        r#"{"jsonrpc":"2.0","id":15,"method":"tools/list"}"#.into(),
        r#"{"jsonrpc":"2.0","id":16,"method":"ping"}"#.into(),
        r#"{"jsonrpc":"2.0","id":17,"method":"resources/read","params":{"uri":"books://stock"}}"#.into(),
        r#"{"jsonrpc":"2.0","id":171,"method":"resources/read","params":{"uri":"books://catalog"}}"#.into(),
        r#"{"jsonrpc":"2.0","id":172,"method":"resources/read","params":{"uri":"books://Dune"}}"#.into(),
        r#"{"jsonrpc":"2.0","id":173,"method":"resources/read","params":{"uri":"books://Dune%20Messiah"}}"#.into(),
        r#"{"jsonrpc":"2.0","id":174,"method":"resources/read","params":{"uri":"books://\u0044une"}}"#.into(),
        r#"{"jsonrpc":"2.0","id":175,"method":"resources/read","params":{"uri":"nobooks://x"}}"#.into(),
        r#"{"jsonrpc":"2.0","id":176,"method":"prompts/get","params":{"name":"recommend","arguments":{"genre":"cyb\u0065rpunk"}}}"#.into(),
        r#"{"jsonrpc":"2.0","id":177,"method":"prompts/get","params":{"name":"recommend"}}"#.into(),
        r#"{"jsonrpc":"2.0","id":178,"method":"prompts/get","params":{"name":"recommend","arguments":{"genre":7}}}"#.into(),
        r#"{"jsonrpc":"2.0","id":179,"method":"prompts/get","params":{"name":"nope"}}"#.into(),
        r#"{"jsonrpc":"2.0","id":180,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"recommend"},"argument":{"name":"genre","value":"f"}}}"#.into(),
        r#"{"jsonrpc":"2.0","id":181,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"books://{title}"},"argument":{"name":"title","value":"D"}}}"#.into(),
        r#"{"jsonrpc":"2.0","id":182,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"genre","value":"f"}}}"#.into(),
        r#"{"jsonrpc":"2.0","id":18,"method":"logging/setLevel","params":{"level":"debug"}}"#.into(),
        r#"{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"count","arguments":{"n":2},"_meta":{"progressToken":"t"}}}"#.into(),
    ]
}

fn modern_calls() -> Vec<String> {
    vec![
        modern_call(1, "get_author", r#"{"title":"Dune"}"#, ""),
        modern_call(2, "get_author", r#"{"title":"Nothing"}"#, ""),
        modern_call(3, "get_author", r#"{"title":[]}"#, ""),
        modern_call(4, "get_author_strict", r#"{"title":"Nothing"}"#, ""),
        modern_call(5, "top", r#"{"n":1}"#, ""),
        modern_call(6, "reserve", r#"{"title":"Dune"}"#, ""),
        modern_call(7, "blurb", r#"{"title":"Dune"}"#, ""),
        modern_call(8, "count", r#"{"n":2}"#, ""),
        modern_call(9, "buy", r#"{"title":"Dune"}"#, ""),
        modern_call(
            10,
            "reserve",
            r#"{"title":"Dune"}"#,
            r#","requestState":"bogus""#,
        ),
        modern_call(11, "nope", r#"{}"#, ""),
        format!(
            r#"{{"jsonrpc":"2.0","id":12,"method":"resources/read","params":{{"uri":"books://Dune","_meta":{{{ENV}}}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":13,"method":"resources/read","params":{{"uri":"books://Nothing","_meta":{{{ENV}}}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":14,"method":"resources/read","params":{{"uri":"books://catalog","_meta":{{{ENV}}}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":15,"method":"prompts/get","params":{{"name":"recommend","arguments":{{"genre":"fantasy"}},"_meta":{{{ENV}}}}}}}"#
        ),
    ]
}

/// Answer `lines` through the sync bookshop (`handle_with`) and through the
/// twins (`handle_async_with`), each with its own connection; the answers
/// and the notifications, side by side.
/// Each line's answer and the notifications sent while it was handled.
type Answers = Vec<(String, Vec<String>)>;

fn both(lines: &[String]) -> (Answers, Answers) {
    both_with(lines, 8192, true)
}

/// [`both`] with an output buffer of `out_cap` bytes, and with the sink
/// (`handle_with`, `handle_async_with`) or without (`handle`,
/// `handle_async`: the notifications come first in the output).
fn both_with(lines: &[String], out_cap: usize, with_sink: bool) -> (Answers, Answers) {
    let run = |twins: bool| {
        let mut conn = Connection::new();
        let mut out = vec![0u8; out_cap];
        lines
            .iter()
            .map(|line| {
                let mut frame = line.clone().into_bytes();
                let mut seen: Vec<String> = Vec::new();
                let mut sink = |m: &[u8]| seen.push(String::from_utf8(m.to_vec()).unwrap());
                let n = match (twins, with_sink) {
                    (true, true) => block_on(
                        TWIN_SHOP
                            .handle_async_with(&mut conn, &mut frame, &mut out, &mut sink, &Twins),
                    ),
                    (true, false) => {
                        block_on(TWIN_SHOP.handle_async(&mut conn, &mut frame, &mut out, &Twins))
                    }
                    (false, true) => {
                        SYNC_SHOP.handle_with(&mut conn, &mut frame, &mut out, &mut sink)
                    }
                    (false, false) => SYNC_SHOP.handle(&mut conn, &mut frame, &mut out),
                };
                (String::from_utf8(out[..n].to_vec()).unwrap(), seen)
            })
            .collect::<Vec<_>>()
    };
    (run(false), run(true))
}

fn assert_same(lines: &[String]) {
    let (sync, twins) = both(lines);
    for (i, (s, t)) in sync.iter().zip(&twins).enumerate() {
        assert_eq!(s, t, "line {i}: {}", lines[i]);
    }
    assert_eq!(sync.len(), twins.len());
}

fn handshake(version: &str, capabilities: &str) -> Vec<String> {
    let mut lines = vec![
        init_with(version, capabilities),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string(),
    ];
    lines.extend(calls());
    lines
}

/// One test for both eras: the two servers' stock must move in step (a
/// `buy` in a test running alongside would race with the other server's).
#[test]
fn async_twins_answer_byte_for_byte_on_every_era() {
    every_handshake_version();
    on_2026_07_28();
    without_a_sink_notifications_come_first_in_out_as_with_handle();
    batches_await_their_async_calls_in_turn();
}

/// 2025-03-26 batches whose elements are async tools' calls (and
/// resources, prompts, completions): each awaited in turn, the batch going
/// on after it, the whole answer byte for byte the sync bookshop's, with a
/// sink and without one (then notifications come first in `out`).
fn batches_await_their_async_calls_in_turn() {
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let note = r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#;
    let dune = r#"{"title":"Dune"}"#;
    let mut lines = vec![init("2025-03-26"), initialized.to_string()];
    // Every call of `calls()` in one batch.
    lines.push(format!("[{}]", calls().join(",")));
    // An async call alone; first; last, then a notification; two in a row;
    // amid whitespace; one with no answer room of its own (a notification
    // of `tools/call`: nothing is answered for it).
    lines.push(format!("[{}]", call(30, "get_author", dune)));
    lines.push(format!("[{},{}]", call(31, "get_author", dune), note));
    lines.push(format!(
        "[{note},{}]",
        r#"{"jsonrpc":"2.0","id":32,"method":"ping"}"#
    ));
    lines.push(format!(
        "[ {} ,\n {} , {} ]",
        call(33, "count", r#"{"n":2}"#),
        call(34, "get_author", r#"{"title":"Nothing"}"#),
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}"#,
    ));
    for with_sink in [true, false] {
        let (sync, twins) = both_with(&lines, 64 * 1024, with_sink);
        for (i, (s, t)) in sync.iter().zip(&twins).enumerate() {
            assert_eq!(s, t, "sink {with_sink}, line {i}: {}", lines[i]);
        }
        assert_eq!(sync.len(), twins.len());
        // Real answers, not errors across the board.
        let all = &twins[2].0;
        assert!(!all.contains("-32603"), "{all}");
        assert!(all.contains("Frank Herbert"), "{all}");
        assert!(
            all.contains("\"id\":19,"),
            "the last element's answer: {all}"
        );
        let ids = serde_json::from_str::<serde_json::Value>(all.lines().last().unwrap())
            .unwrap()
            .as_array()
            .map_or(0, Vec::len);
        assert_eq!(ids, calls().len(), "{all}");
        assert_eq!(
            twins[3].0,
            "[{\"jsonrpc\":\"2.0\",\"id\":30,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"Frank Herbert\"}],\"isError\":false}}]\n"
        );
        assert!(
            twins[4].0.starts_with("[{") && twins[4].0.ends_with("}]\n"),
            "{}",
            twins[4].0
        );
        assert!(twins[6].0.contains("\"id\":34,"), "{}", twins[6].0);
        if with_sink {
            assert_eq!(twins[6].1.len(), sync[6].1.len());
            assert!(!twins[6].1.is_empty(), "count's progress");
        }
    }
}

fn every_handshake_version() {
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        assert_same(&handshake(version, "{}"));
        // A client that can answer: the calls that ask cannot wait here
        // (no waiting store), the same way for both.
        assert_same(&handshake(version, r#"{"elicitation":{},"sampling":{}}"#));
    }
    // The answers are real ones, not errors across the board.
    let (_, twins) = both(&handshake("2025-11-25", "{}"));
    assert!(twins[2].0.contains("Frank Herbert"), "{}", twins[2].0);
    assert!(
        twins[12].1.len() == 4,
        "count sends 3 progress + 1 log: {:?}",
        twins[12].1
    );
    assert!(
        twins[20].0.contains("Dune by Frank Herbert"),
        "{}",
        twins[20].0
    );
    assert!(twins[21].0.contains("\"code\":-32602"), "{}", twins[21].0);
    assert!(twins[24].0.contains("cyberpunk"), "{}", twins[24].0);
    assert!(
        twins[28].0.contains("\"values\":[\"fantasy\"]"),
        "{}",
        twins[28].0
    );
}

fn on_2026_07_28() {
    let lines = modern_calls();
    assert_same(&lines);
    // The input_required answer carries sealed state; the retry with the
    // client's answer completes the call, the same way for both.
    let (sync, _) = both(&lines);
    let asked: serde_json::Value = serde_json::from_str(&sync[5].0).unwrap();
    let state = asked["result"]["requestState"]
        .as_str()
        .expect("requestState")
        .to_owned();
    let key = asked["result"]["inputRequests"]
        .as_object()
        .and_then(|o| o.keys().next().cloned())
        .expect("an input request");
    let retry = modern_call(
        20,
        "reserve",
        r#"{"title":"Dune"}"#,
        &format!(
            r#","requestState":"{state}","inputResponses":{{"{key}":{{"action":"accept","content":{{"confirm":true}}}}}}"#
        ),
    );
    assert_same(std::slice::from_ref(&retry));
    let (_, twins) = both(std::slice::from_ref(&retry));
    assert!(twins[0].0.contains("Reserved Dune"), "{}", twins[0].0);
}

fn without_a_sink_notifications_come_first_in_out_as_with_handle() {
    let lines = handshake("2025-11-25", "{}");
    let mut c1 = Connection::new();
    let mut c2 = Connection::new();
    let (mut o1, mut o2) = (vec![0u8; 8192], vec![0u8; 8192]);
    for line in &lines {
        let (mut f1, mut f2) = (line.clone().into_bytes(), line.clone().into_bytes());
        let n1 = SYNC_SHOP.handle(&mut c1, &mut f1, &mut o1);
        let n2 = block_on(TWIN_SHOP.handle_async(&mut c2, &mut f2, &mut o2, &Twins));
        assert_eq!(o1[..n1], o2[..n2], "{line}");
    }
}

#[test]
fn a_server_that_does_not_await_refuses_an_async_tool_in_a_batch_too() {
    let mut conn = Connection::new();
    let mut out = [0u8; 1024];
    for line in [
        init("2025-03-26"),
        call(1, "get_author", r#"{"title":"Dune"}"#),
    ] {
        let mut frame = line.into_bytes();
        let n = TWIN_SHOP.handle(&mut conn, &mut frame, &mut out);
        let text = std::str::from_utf8(&out[..n]).unwrap();
        if text.contains("\"id\":1") {
            assert_eq!(
                text,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32603,\"message\":\"tool get_author is async: this server does not await handlers\"}}\n"
            );
        }
    }
    // An async resource too.
    let mut frame =
        br#"{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"books://Dune"}}"#
            .to_vec();
    let n = TWIN_SHOP.handle(&mut conn, &mut frame, &mut out);
    assert_eq!(
        std::str::from_utf8(&out[..n]).unwrap(),
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-32603,\"message\":\"resource books://Dune is async: this server does not await handlers\"}}\n"
    );
    let mut frame = br#"{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"recommend","arguments":{"genre":"fantasy"}}}"#.to_vec();
    let n = TWIN_SHOP.handle(&mut conn, &mut frame, &mut out);
    assert!(
        std::str::from_utf8(&out[..n])
            .unwrap()
            .contains("prompt recommend is async: this server does not await handlers"),
    );
    let mut frame = br#"{"jsonrpc":"2.0","id":6,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"recommend"},"argument":{"name":"genre","value":"f"}}}"#.to_vec();
    let n = TWIN_SHOP.handle(&mut conn, &mut frame, &mut out);
    assert!(
        std::str::from_utf8(&out[..n])
            .unwrap()
            .contains("completion is async: this server does not await handlers"),
    );
    // Inside a batch (2025-03-26), `handle` does not await either.
    let mut frame = format!(
        "[{},{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}}]",
        call(2, "get_author", r#"{"title":"Dune"}"#)
    )
    .into_bytes();
    let n = TWIN_SHOP.handle(&mut conn, &mut frame, &mut out);
    assert_eq!(
        std::str::from_utf8(&out[..n]).unwrap(),
        "[{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32603,\"message\":\"tool get_author is async: this server does not await handlers\"}},{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}]\n"
    );
}

// A tool that really awaits between its notifications.

struct Slow;

async fn slow<'a>(_: &'a Slow, _: Arguments<'a>, mut reply: Reply<'_>) -> ToolOutcome<'a> {
    reply.progress(1, Some(2), None);
    Yield(1).await;
    reply.log(LogLevel::Info, None, "halfway");
    Yield(1).await;
    reply.progress(2, Some(2), None);
    Yield(1).await;
    reply.text("done")
}

/// Derived: the schema comes from the type, the descriptor from
/// `tool_descriptor!`.
#[derive(picomcp::ToolArgs, serde::Deserialize)]
struct Wait {
    n: u32,
}

/// The typed form: the arguments are parsed into `Wait` first.
async fn wait<'a>(_: &'a Slow, Wait { n }: Wait, reply: Reply<'_>) -> ToolOutcome<'a> {
    Yield(n).await;
    reply.text_fmt(format_args!("waited {n}"))
}

picomcp::async_tools! {
    struct SlowTools for Slow {
        SLOW: ToolDescriptor::new("slow", &picomcp::schema::Schema::object(&[])) => slow,
        WAIT: picomcp::tool_descriptor! { name: "wait", args: Wait, description: "Waits n polls." },
            args: Wait => wait,
    }
}

static SLOW_TOOLS: [Tool<Slow>; 2] = [SlowTools::SLOW, SlowTools::WAIT];
static SLOW_SERVER: Server<'static, Slow> = Server::new(ServerInfo::new("slow", "1"), Slow)
    .tools(&SLOW_TOOLS)
    .logging();

fn ready(conn: &mut Connection) {
    common::ready_at(&SLOW_SERVER, conn, "2025-11-25");
}

const SLOW_CALL: &[u8] = br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":1}}}"#;

#[test]
fn notifications_reach_the_sink_while_the_handler_awaits() {
    let mut conn = Connection::new();
    ready(&mut conn);
    let seen: RefCell<Vec<String>> = RefCell::new(Vec::new());
    let mut sink = |m: &[u8]| {
        seen.borrow_mut()
            .push(String::from_utf8(m.to_vec()).unwrap())
    };
    let mut frame = SLOW_CALL.to_vec();
    let mut out = [0u8; 1024];
    let mut cx = Context::from_waker(Waker::noop());
    let n = {
        let mut fut = pin!(
            SLOW_SERVER.handle_async_with(&mut conn, &mut frame, &mut out, &mut sink, &SlowTools)
        );
        let mut counts = Vec::new();
        let n = loop {
            match fut.as_mut().poll(&mut cx) {
                Poll::Ready(n) => break n,
                Poll::Pending => counts.push(seen.borrow().len()),
            }
        };
        // One notification more at each await, each before the answer.
        assert_eq!(counts, [1, 2, 3]);
        n
    };
    let seen = seen.into_inner();
    assert_eq!(
        seen,
        [
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1,\"total\":2}}\n",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"halfway\"}}\n",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":2,\"total\":2}}\n",
        ]
    );
    assert_eq!(
        std::str::from_utf8(&out[..n]).unwrap(),
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}],\"isError\":false}}\n"
    );
}

#[test]
fn a_dropped_future_answers_nothing_and_the_connection_goes_on() {
    let mut conn = Connection::new();
    ready(&mut conn);
    let mut out = [0u8; 1024];
    let mut cx = Context::from_waker(Waker::noop());
    {
        let mut frame = SLOW_CALL.to_vec();
        let mut fut = pin!(SLOW_SERVER.handle_async(&mut conn, &mut frame, &mut out, &SlowTools));
        assert!(fut.as_mut().poll(&mut cx).is_pending());
        // Dropped here, mid-handler.
    }
    let mut ping = br#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#.to_vec();
    let n = block_on(SLOW_SERVER.handle_async(&mut conn, &mut ping, &mut out, &SlowTools));
    assert_eq!(&out[..n], b"{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n");
    let mut frame = SLOW_CALL.to_vec();
    let n = block_on(SLOW_SERVER.handle_async(&mut conn, &mut frame, &mut out, &SlowTools));
    let text = std::str::from_utf8(&out[..n]).unwrap();
    assert!(text.ends_with("{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}],\"isError\":false}}\n"), "{text}");
}

/// What a call's future costs: the sizes are the compiler's, stated here so
/// a change that grows them is seen (the README quotes them).
#[test]
fn the_future_of_a_call_is_a_bounded_value() {
    let mut conn = Connection::new();
    let mut frame = [0u8; 8];
    let mut out = [0u8; 8];
    let twins = TWIN_SHOP.handle_async(&mut conn, &mut frame, &mut out, &Twins);
    let twins_size = std::mem::size_of_val(&twins);
    drop(twins);
    let slow = SLOW_SERVER.handle_async(&mut conn, &mut frame, &mut out, &SlowTools);
    let slow_size = std::mem::size_of_val(&slow);
    drop(slow);
    println!("handle_async future: bookshop twins {twins_size} B, slow {slow_size} B");
    assert!(twins_size <= 2480, "{twins_size}");
    assert!(slow_size <= 1928, "{slow_size}");
}

#[test]
fn the_typed_form_parses_the_arguments_first() {
    let mut conn = Connection::new();
    ready(&mut conn);
    let mut out = [0u8; 1024];
    let mut frame = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait","arguments":{"n":3}}}"#.to_vec();
    let n = block_on(SLOW_SERVER.handle_async(&mut conn, &mut frame, &mut out, &SlowTools));
    assert_eq!(
        std::str::from_utf8(&out[..n]).unwrap(),
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"waited 3\"}],\"isError\":false}}\n"
    );
    // The derived schema is checked before the handler: a tool error.
    let mut frame = br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"wait","arguments":{"n":-1}}}"#.to_vec();
    let n = block_on(SLOW_SERVER.handle_async(&mut conn, &mut frame, &mut out, &SlowTools));
    let text = std::str::from_utf8(&out[..n]).unwrap();
    assert_eq!(
        text,
        "{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"Invalid arguments for tool wait: /n must be >= 0\"}],\"isError\":true}}\n",
        "{text}"
    );
}

// The derived parse (`#[mcp(parse)]`) builds from the derived check's word
// ("these arguments surely match"); a deferred call does not carry that
// word, so an async tool's typed arguments take serde (README, "The
// derived parse"). Raw handlers that report whether the word reached them.

#[derive(picomcp::ToolArgs, serde::Deserialize)]
struct Word<'a> {
    #[allow(dead_code)]
    w: &'a str,
}

fn word_reached(args: Arguments<'_>) -> &'static str {
    let check = <Word<'_> as picomcp::derive_support::HasSchema>::ARGS_CHECK;
    match args.vouched_by(check.expect("derived").schema) {
        Ok(_) => "vouched",
        Err(_) => "not vouched",
    }
}

async fn word_async<'a>(_: &'a Slow, args: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    reply.text(word_reached(args))
}

fn word_sync<'a>(_: &'a Slow, args: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    reply.text(word_reached(args))
}

picomcp::async_tools! {
    struct WordTools for Slow {
        WORD: picomcp::tool_descriptor! { name: "word_async", args: Word } => word_async,
    }
}

static WORD_TOOLS: [Tool<Slow>; 2] = [
    WordTools::WORD,
    Tool::new(
        picomcp::tool_descriptor! { name: "word_sync", args: Word },
        word_sync,
    ),
];
static WORD_SERVER: Server<'static, Slow> =
    Server::new(ServerInfo::new("word", "1"), Slow).tools(&WORD_TOOLS);

#[test]
fn an_async_tool_gets_no_word_from_the_check_a_sync_one_does() {
    let mut conn = Connection::new();
    common::ready_at(&WORD_SERVER, &mut conn, "2025-11-25");
    let mut out = [0u8; 1024];
    let mut said = |name: &str| {
        let mut frame = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}","arguments":{{"w":"plain"}}}}}}"#
        )
        .into_bytes();
        let n = block_on(WORD_SERVER.handle_async(&mut conn, &mut frame, &mut out, &WordTools));
        std::str::from_utf8(&out[..n]).unwrap().to_string()
    };
    // Derived checks vouch on 64-bit targets only (small ones link none).
    let sync = if cfg!(target_pointer_width = "64") {
        "vouched"
    } else {
        "not vouched"
    };
    assert!(said("word_sync").contains(&format!(r#""text":"{sync}""#)));
    let answer = said("word_async");
    assert!(answer.contains(r#""text":"not vouched""#), "{answer}");
}
