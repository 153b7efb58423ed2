//! `transport::serve_async_tools`: the async serve loop with async tools.
//! A handler's notifications are written while it is still running; a
//! `notifications/cancelled` read while it runs drops it (no answer, the
//! stream goes on); requests read meanwhile are answered in order after it;
//! and the bookshop's twins answer as `serve` answers the bookshop.

mod common;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};

use common::twins::{SYNC_SHOP, TWIN_SHOP, Twins, Yield};
use picomcp::asynch::block_on;
use picomcp::tool::{Arguments, Reply, Tool, ToolDescriptor, ToolOutcome};
use picomcp::transport::serve_async_tools;
use picomcp::{LogLevel, Server, ServerInfo};

/// Input in chunks (one per read), then end of input; every write recorded
/// with whether the slow handler had finished by then.
struct Script {
    chunks: VecDeque<Vec<u8>>,
    writes: Vec<(String, bool)>,
}

impl embedded_io_async::ErrorType for Script {
    type Error = core::convert::Infallible;
}

impl embedded_io_async::Read for Script {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        let Some(mut chunk) = self.chunks.pop_front() else {
            return Ok(0);
        };
        let n = chunk.len().min(buf.len());
        buf[..n].copy_from_slice(&chunk[..n]);
        if n < chunk.len() {
            chunk.drain(..n);
            self.chunks.push_front(chunk);
        }
        Ok(n)
    }
}

impl embedded_io_async::Write for Script {
    async fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        self.writes.push((
            String::from_utf8(buf.to_vec()).unwrap(),
            DONE.load(Ordering::SeqCst),
        ));
        Ok(buf.len())
    }

    async fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

static DONE: AtomicBool = AtomicBool::new(false);

struct Slow;

async fn slow<'a>(_: &'a Slow, _: Arguments<'a>, mut reply: Reply<'_>) -> ToolOutcome<'a> {
    reply.progress(1, Some(2), None);
    Yield(1).await;
    reply.log(LogLevel::Info, None, "halfway");
    Yield(1).await;
    reply.progress(2, Some(2), None);
    Yield(1).await;
    DONE.store(true, Ordering::SeqCst);
    reply.text("done")
}

picomcp::async_tools! {
    struct SlowTools for Slow {
        SLOW: ToolDescriptor::new("slow", &picomcp::schema::Schema::object(&[])) => slow,
    }
}

static SLOW_TOOLS: [Tool<Slow>; 1] = [SlowTools::SLOW];
static SLOW_SERVER: Server<'static, Slow> = Server::new(ServerInfo::new("slow", "1"), Slow)
    .tools(&SLOW_TOOLS)
    .logging();

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const SLOW_CALL: &str = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":1}}}"#;
const PING: &str = r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#;

fn lines(ls: &[&str]) -> Vec<u8> {
    ls.iter()
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect()
}

fn run<S, A: picomcp::asynch::AsyncHandlers<S>>(
    server: &Server<'_, S>,
    tools: &A,
    chunks: Vec<Vec<u8>>,
) -> Vec<(String, bool)> {
    run_with_notes(server, tools, chunks, 512)
}

/// [`run`] with a `notes` staging buffer of `notes` bytes.
fn run_with_notes<S, A: picomcp::asynch::AsyncHandlers<S>>(
    server: &Server<'_, S>,
    tools: &A,
    chunks: Vec<Vec<u8>>,
    notes: usize,
) -> Vec<(String, bool)> {
    let mut io = Script {
        chunks: chunks.into(),
        writes: Vec::new(),
    };
    let (mut input, mut output, mut notes) = ([0u8; 1024], [0u8; 2048], vec![0u8; notes]);
    block_on(serve_async_tools(
        server,
        &mut io,
        &mut input,
        &mut output,
        &mut notes,
        tools,
    ))
    .unwrap();
    io.writes
}

/// Both tests below use `DONE`: one test, two parts.
#[test]
fn notifications_go_out_while_the_handler_runs_and_a_cancel_drops_it() {
    DONE.store(false, Ordering::SeqCst);
    let writes = run(
        &SLOW_SERVER,
        &SlowTools,
        vec![lines(&[INIT, INITIALIZED, SLOW_CALL, PING])],
    );
    let texts: Vec<&str> = writes.iter().map(|(t, _)| t.as_str()).collect();
    assert!(texts[0].contains("\"id\":0,\"result\""));
    let answer = texts
        .iter()
        .position(|t| t.contains("\"id\":5,"))
        .expect("an answer for id 5");
    // Every notification was written before the handler finished...
    let notes: String = texts[1..answer].concat();
    assert_eq!(
        notes,
        concat!(
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1,\"total\":2}}\n",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"halfway\"}}\n",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":2,\"total\":2}}\n",
        )
    );
    assert!(
        answer >= 2 && writes[1..answer].iter().all(|(_, done)| !done),
        "{writes:#?}"
    );
    // ...then the answer, then the ping read meanwhile.
    assert_eq!(
        texts[answer],
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}],\"isError\":false}}\n"
    );
    assert!(
        writes[answer].1,
        "the answer comes once the handler is done"
    );
    assert_eq!(
        texts[answer + 1..].concat(),
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n"
    );

    // The cancel arrives while the call runs: no answer for it, ever; the
    // ping after it is answered.
    DONE.store(false, Ordering::SeqCst);
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"user"}}"#;
    let writes = run(
        &SLOW_SERVER,
        &SlowTools,
        vec![
            lines(&[INIT, INITIALIZED, SLOW_CALL]),
            lines(&[cancel, PING]),
        ],
    );
    let all: String = writes.iter().map(|(t, _)| t.as_str()).collect();
    assert!(!all.contains("\"id\":5,"), "{all}");
    assert!(!DONE.load(Ordering::SeqCst), "the handler was dropped");
    assert!(
        all.ends_with("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n"),
        "{all}"
    );
    // The watched id's bound, at its edge: a string id of 64 bytes as
    // written (62 characters and the quotes) is cancelled; one of 65 is
    // not watched, and its call runs to its answer.
    for (len, cancelled) in [
        (picomcp::transport::MAX_CANCEL_ID, true),
        (picomcp::transport::MAX_CANCEL_ID + 1, false),
    ] {
        DONE.store(false, Ordering::SeqCst);
        let id = format!("\"{}\"", "i".repeat(len - 2));
        let call = SLOW_CALL.replace("\"id\":5", &format!("\"id\":{id}"));
        let cancel = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#
        );
        let writes = run(
            &SLOW_SERVER,
            &SlowTools,
            vec![lines(&[INIT, INITIALIZED, &call]), lines(&[&cancel, PING])],
        );
        let all: String = writes.iter().map(|(t, _)| t.as_str()).collect();
        let answered = all.contains(&format!("\"id\":{id},\"result\""));
        assert_eq!(answered, !cancelled, "id of {len} bytes: {all}");
        assert_eq!(DONE.load(Ordering::SeqCst), !cancelled);
    }
    // A cancel for another id leaves the call alone.
    let other = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}"#;
    let writes = run(
        &SLOW_SERVER,
        &SlowTools,
        vec![
            lines(&[INIT, INITIALIZED, SLOW_CALL]),
            lines(&[other, PING]),
        ],
    );
    let all: String = writes.iter().map(|(t, _)| t.as_str()).collect();
    assert!(all.contains("\"id\":5,\"result\""), "{all}");
    assert!(
        all.ends_with("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n"),
        "{all}"
    );
}

#[test]
fn the_twins_answer_as_serve_answers_the_bookshop() {
    let session = [
        INIT,
        INITIALIZED,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count","arguments":{"n":3},"_meta":{"progressToken":"c"}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"top","arguments":{"n":"x"}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Nothing"}}}"#,
        PING,
    ];
    as_serve_answers(&session);
}

/// `session`'s lines through `serve_async_tools` with the twins, in small
/// reads (so frames arrive while calls run): the lines `serve` writes for
/// the bookshop. Returns them.
fn as_serve_answers(session: &[&str]) -> Vec<String> {
    let input = lines(session);
    let sync = common::serve_with(&SYNC_SHOP, &input, 1024, 4096, 64);
    let chunks: Vec<Vec<u8>> = input.chunks(64).map(<[u8]>::to_vec).collect();
    let writes = run(&TWIN_SHOP, &Twins, chunks);
    let all: String = writes.iter().map(|(t, _)| t.as_str()).collect();
    let twins: Vec<String> = all.lines().map(str::to_owned).collect();
    assert_eq!(twins, sync);
    twins
}

/// A 2025-03-26 batch of async tools' calls: each awaited in turn (its
/// progress written while it runs), the batch going on after it; the
/// lines are those `serve` writes for the bookshop. A cancel of a batch's
/// call does not drop it: the batch is one answer.
#[test]
fn a_batch_of_async_calls_is_answered_as_serve_answers_it() {
    let init = INIT.replace("2025-11-25", "2025-03-26");
    let batch = concat!(
        r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}},"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"},"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"count","arguments":{"n":2},"_meta":{"progressToken":"c"}}},"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}},"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Nothing"}}}]"#,
    );
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}"#;
    let twins = as_serve_answers(&[init.as_str(), INITIALIZED, batch, cancel, PING]);
    let answer = twins
        .iter()
        .find(|l| l.starts_with('['))
        .expect("the batch's answer");
    for id in 1..=4 {
        assert!(answer.contains(&format!("\"id\":{id},")), "{answer}");
    }
    assert!(
        answer.contains("Frank Herbert") && !answer.contains("-32603"),
        "{answer}"
    );
    assert_eq!(
        twins
            .iter()
            .filter(|l| l.contains("notifications/progress"))
            .count(),
        2
    );
}

/// A last line without a newline is answered at the end of input, as
/// `serve` answers it: a list, and an async tool's call (awaited, as its
/// sync twin is run).
#[test]
fn a_last_line_without_a_newline_is_answered_as_serve_answers_it() {
    for (last, answer) in [
        (
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#,
            r#""id":9,"result":{"tools""#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}"#,
            r#""id":9,"result":{"content""#,
        ),
    ] {
        let mut input = lines(&[INIT, INITIALIZED, PING]);
        input.extend_from_slice(last.as_bytes());
        let sync = common::serve_with(&SYNC_SHOP, &input, 1024, 4096, 64);
        let writes = run(&TWIN_SHOP, &Twins, vec![input]);
        let all: String = writes.iter().map(|(t, _)| t.as_str()).collect();
        let twins: Vec<&str> = all.lines().collect();
        assert_eq!(twins, sync);
        assert!(twins.last().is_some_and(|l| l.contains(answer)), "{all}");
    }
}

/// What does not fit the `notes` staging buffer between two awaits is
/// dropped; the answer is not.
#[test]
fn notifications_that_do_not_fit_the_staging_buffer_are_dropped() {
    let count = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"count","arguments":{"n":2},"_meta":{"progressToken":1}}}"#;
    let session = lines(&[INIT, INITIALIZED, count]);
    // 200 bytes hold one progress notification (about 100), not two: the
    // twin's handler sends both (and its log) without awaiting between.
    let writes = run_with_notes(&TWIN_SHOP, &Twins, vec![session.clone()], 200);
    let all: String = writes.iter().map(|(t, _)| t.as_str()).collect();
    assert!(all.contains("\"progress\":1,"), "{all}");
    assert!(!all.contains("\"progress\":2,"), "{all}");
    assert!(
        all.contains(
            "\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"counted 2\"}]"
        ),
        "{all}"
    );
    // With room for all of them, all arrive.
    let writes = run_with_notes(&TWIN_SHOP, &Twins, vec![session], 512);
    let all: String = writes.iter().map(|(t, _)| t.as_str()).collect();
    assert!(
        all.contains("\"progress\":2,") && all.contains("counting done"),
        "{all}"
    );
}
