//! `transport::serve_async` answers byte for byte what the blocking
//! `transport::serve` answers, over an in-memory async pipe that returns
//! `Pending` some of the time, driven by a hand-written `block_on` (a noop
//! waker and a poll loop: no runtime).
//!
//! The request mix is the one of `tests/no_alloc.rs` (read from that file, so
//! the two cannot drift apart), plus an oversized line and a last line
//! without a newline.

mod common;

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use picomcp::error::Error;
use picomcp::transport::{serve, serve_async};

/// Poll `fut` to completion with a waker that does nothing; returns the output
/// and how many times the future was polled.
fn block_on<F: Future>(fut: F) -> (F::Output, usize) {
    let mut fut = pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    for polls in 1..=10_000_000 {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return (out, polls);
        }
    }
    panic!("the future never finished");
}

/// How often the pipe's operations ran, and how many returned `Pending`.
#[derive(Default)]
struct Ticks {
    ops: usize,
    pendings: usize,
}

/// Ready at once, or (every `every`-th operation) `Pending` once first, after
/// waking the task.
struct MaybePending<'a> {
    ticks: &'a mut Ticks,
    every: usize,
    counted: bool,
}

impl Future for MaybePending<'_> {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.counted || self.every == 0 {
            return Poll::Ready(());
        }
        self.counted = true;
        self.ticks.ops += 1;
        if self.ticks.ops.is_multiple_of(self.every) {
            self.ticks.pendings += 1;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        Poll::Ready(())
    }
}

/// An in-memory async pipe: reads `input` at most `chunk` bytes at a time,
/// writes at most `chunk` bytes at a time into `output`; every
/// `pending_every`-th operation returns `Pending` once before it completes.
struct AsyncPipe<'a> {
    input: &'a [u8],
    chunk: usize,
    output: Vec<u8>,
    pending_every: usize,
    ticks: Ticks,
    fail: Option<Fail>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fail {
    Read,
    Write,
    /// `write` returns `Ok(0)`.
    WriteZero,
    /// `write` claims one byte more than it was given.
    WriteTooMuch,
}

/// The pipe's error: `ErrorKind` is an `embedded_io::Error` itself.
type PipeError = embedded_io_async::ErrorKind;
const PIPE_ERROR: PipeError = embedded_io_async::ErrorKind::Other;

impl<'a> AsyncPipe<'a> {
    fn new(input: &'a [u8], chunk: usize, pending_every: usize) -> Self {
        Self {
            input,
            chunk,
            output: Vec::new(),
            pending_every,
            ticks: Ticks::default(),
            fail: None,
        }
    }

    async fn maybe_pending(&mut self) {
        MaybePending {
            ticks: &mut self.ticks,
            every: self.pending_every,
            counted: false,
        }
        .await;
    }
}

impl embedded_io_async::ErrorType for AsyncPipe<'_> {
    type Error = PipeError;
}

impl embedded_io_async::Read for AsyncPipe<'_> {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, PipeError> {
        self.maybe_pending().await;
        if self.fail == Some(Fail::Read) {
            return Err(PIPE_ERROR);
        }
        let n = buf.len().min(self.input.len()).min(self.chunk);
        buf[..n].copy_from_slice(&self.input[..n]);
        self.input = &self.input[n..];
        Ok(n)
    }
}

impl embedded_io_async::Write for AsyncPipe<'_> {
    async fn write(&mut self, buf: &[u8]) -> Result<usize, PipeError> {
        self.maybe_pending().await;
        match self.fail {
            Some(Fail::Write) => return Err(PIPE_ERROR),
            Some(Fail::WriteZero) => return Ok(0),
            Some(Fail::WriteTooMuch) => return Ok(buf.len() + 1),
            _ => {}
        }
        let n = buf.len().min(self.chunk);
        self.output.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    async fn flush(&mut self) -> Result<(), PipeError> {
        self.maybe_pending().await;
        Ok(())
    }
}

/// The string literals of `const NAME: &[&str] = &[ ... ];` in
/// `tests/no_alloc.rs`, one per line (`r#"..."#,` or `"...",`).
fn no_alloc_requests(name: &str) -> Vec<&'static str> {
    const SOURCE: &str = include_str!("no_alloc.rs");
    let head = format!("const {name}: &[&str] = &[\n");
    let start = SOURCE
        .find(&head)
        .unwrap_or_else(|| panic!("{name} not found in tests/no_alloc.rs"))
        + head.len();
    let body = &SOURCE[start..];
    let body = &body[..body.find("\n];").expect("end of the request list")];
    body.lines()
        .map(|line| {
            let line = line.trim();
            line.strip_prefix("r#\"")
                .and_then(|l| l.strip_suffix("\"#,"))
                .or_else(|| line.strip_prefix('"').and_then(|l| l.strip_suffix("\",")))
                .filter(|l| !l.contains('\\') || line.starts_with("r#"))
                .unwrap_or_else(|| panic!("cannot read request line {line:?} of {name}"))
        })
        .collect()
}

fn input_of(lines: &[&str], terminator: &str) -> Vec<u8> {
    let mut input = Vec::new();
    for line in lines {
        input.extend_from_slice(line.as_bytes());
        input.extend_from_slice(terminator.as_bytes());
    }
    input
}

fn blocking<S>(
    server: &picomcp::Server<'_, S>,
    input: &[u8],
    in_cap: usize,
    out_cap: usize,
    chunk: usize,
) -> Vec<u8> {
    let mut io = common::MemIo {
        input,
        chunk,
        output: Vec::new(),
    };
    let (mut inb, mut outb) = (vec![0u8; in_cap], vec![0u8; out_cap]);
    serve(server, &mut io, &mut inb, &mut outb).unwrap();
    io.output
}

/// The async loop's output, and how many `Pending`s the pipe returned.
fn asynchronous<S>(
    server: &picomcp::Server<'_, S>,
    input: &[u8],
    in_cap: usize,
    out_cap: usize,
    chunk: usize,
    pending_every: usize,
) -> (Vec<u8>, usize) {
    let mut pipe = AsyncPipe::new(input, chunk, pending_every);
    let (mut inb, mut outb) = (vec![0u8; in_cap], vec![0u8; out_cap]);
    let (result, polls) = block_on(serve_async(server, &mut pipe, &mut inb, &mut outb));
    result.unwrap();
    assert!(
        polls > pipe.ticks.pendings,
        "polled {polls} times for {} pendings",
        pipe.ticks.pendings
    );
    (pipe.output, pipe.ticks.pendings)
}

fn assert_same<S>(server: &picomcp::Server<'_, S>, input: &[u8], in_cap: usize, out_cap: usize) {
    for chunk in [1, 7, 64, usize::MAX] {
        let want = blocking(server, input, in_cap, out_cap, chunk);
        assert!(!want.is_empty());
        for pending_every in [0, 1, 2, 3, 5] {
            let (got, pendings) =
                asynchronous(server, input, in_cap, out_cap, chunk, pending_every);
            if pending_every != 0 {
                assert!(
                    pendings > 0,
                    "chunk {chunk}: the pipe never returned Pending"
                );
            }
            if got != want {
                panic!(
                    "chunk {chunk}, Pending every {pending_every}: async output differs\n--- blocking\n{}\n--- async\n{}",
                    String::from_utf8_lossy(&want),
                    String::from_utf8_lossy(&got)
                );
            }
        }
    }
}

#[test]
fn the_request_mix_is_read() {
    let session = no_alloc_requests("SESSION");
    assert!(session.len() > 30, "{} lines", session.len());
    assert!(
        session
            .iter()
            .any(|l| l.contains("\"count\"") && l.contains("progressToken"))
    );
    assert!(session.contains(&""));
    assert_eq!(no_alloc_requests("BATCH_SESSION").len(), 4);
}

#[test]
fn same_bytes_as_the_blocking_loop() {
    let session = no_alloc_requests("SESSION");
    // As in no_alloc.rs: a 512-byte input buffer (the x line overflows it)
    // and a 4 KiB output buffer; CRLF and LF line ends.
    assert_same(&common::BOOKSHOP, &input_of(&session, "\r\n"), 512, 4096);
    assert_same(&common::BOOKSHOP, &input_of(&session, "\n"), 512, 4096);
}

#[test]
fn same_bytes_for_batches_and_pages() {
    static PAGED: picomcp::Server<'static, common::shop::Shop> =
        common::shop::server_with_page_size(1);
    assert_same(
        &common::BOOKSHOP,
        &input_of(&no_alloc_requests("BATCH_SESSION"), "\n"),
        512,
        4096,
    );
    let paged = input_of(
        &[
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"prompts/list"}"#,
        ],
        "\n",
    );
    assert_same(&PAGED, &paged, 512, 4096);
}

#[test]
fn same_bytes_for_a_last_line_without_newline() {
    let mut input = input_of(&no_alloc_requests("SESSION")[..4], "\n");
    input.extend_from_slice(br#"{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"count","arguments":{"n":2},"_meta":{"progressToken":"p"}}}"#);
    let out = blocking(&common::BOOKSHOP, &input, 512, 4096, usize::MAX);
    assert!(String::from_utf8_lossy(&out).ends_with("\"id\":\"last\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"counted 2\"}],\"isError\":false}}\n"));
    assert_same(&common::BOOKSHOP, &input, 512, 4096);
}

#[test]
fn same_bytes_with_small_buffers() {
    // The firmware's sizes: 2 KiB in, 2 KiB out; a 3 KiB line overflows.
    let mut lines = no_alloc_requests("SESSION");
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":99,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "y".repeat(3000)
    );
    lines.push(&long);
    lines.push(r#"{"jsonrpc":"2.0","id":100,"method":"ping"}"#);
    let input = input_of(&lines, "\n");
    let out = blocking(&common::BOOKSHOP, &input, 2048, 2048, usize::MAX);
    assert!(String::from_utf8_lossy(&out).contains("message too large: limit 2048 bytes"));
    assert_same(&common::BOOKSHOP, &input, 2048, 2048);
}

#[test]
fn transport_errors_end_the_loop() {
    let input = input_of(&[r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#], "\n");
    for (fail, pending_every) in [
        (Fail::Read, 0),
        (Fail::Read, 1),
        (Fail::Write, 0),
        (Fail::Write, 2),
        (Fail::WriteZero, 0),
        (Fail::WriteTooMuch, 1),
    ] {
        let mut pipe = AsyncPipe::new(&input, usize::MAX, pending_every);
        pipe.fail = Some(fail);
        let (mut inb, mut outb) = ([0u8; 256], [0u8; 256]);
        let (result, _) = block_on(serve_async(
            &common::BOOKSHOP,
            &mut pipe,
            &mut inb,
            &mut outb,
        ));
        match (fail, result) {
            (Fail::Read, Err(Error::Read(PIPE_ERROR)))
            | (Fail::Write, Err(Error::Write(PIPE_ERROR)))
            | (Fail::WriteZero | Fail::WriteTooMuch, Err(Error::WriteZero)) => {}
            (fail, other) => panic!("{fail:?}: got {other:?}"),
        }
    }
}

/// How many bytes a `write` claims: from the index of the write and its bytes.
type WriteAnswer = fn(usize, &[u8]) -> usize;

/// A blocking transport that reads like `MemIo` but whose `write` answers
/// `answer(index of the write, bytes)`: `Ok(0)`, or more bytes than it was
/// given, where embedded-io's `write_all` would panic. The loop must stop
/// with `Error::WriteZero`.
struct BadWriter<'a> {
    mem: common::MemIo<'a>,
    answer: WriteAnswer,
    writes: usize,
}

impl embedded_io::ErrorType for BadWriter<'_> {
    type Error = core::convert::Infallible;
}

impl embedded_io::Read for BadWriter<'_> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        self.mem.read(buf)
    }
}

impl embedded_io::Write for BadWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        self.writes += 1;
        Ok((self.answer)(self.writes - 1, buf))
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

#[test]
fn a_transport_that_accepts_no_bytes_ends_the_loop_without_a_panic() {
    let ping = input_of(&[r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#], "\n");
    let init = common::init("2025-11-25");
    let count = input_of(
        &[
            &init,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count","arguments":{"n":2},"_meta":{"progressToken":"p"}}}"#,
        ],
        "\n",
    );
    let cases: [(&[u8], WriteAnswer, usize); 4] = [
        (&ping, |_, _| 0, 1),
        (&ping, |_, b| b.len() + 1, 1),
        // The 37-byte answer in short writes of 4 bytes, then a write that
        // takes nothing of the last byte.
        (&ping, |_, b| if b.len() > 4 { 4 } else { 0 }, 10),
        // The initialize answer goes out; the first progress notification,
        // written while the handler runs, does not: the loop stops there,
        // without writing the response after it.
        (&count, |i, b| if i == 0 { b.len() } else { 0 }, 2),
    ];
    for (input, answer, writes) in cases {
        let mut io = BadWriter {
            mem: common::MemIo {
                input,
                chunk: usize::MAX,
                output: Vec::new(),
            },
            answer,
            writes: 0,
        };
        let (mut inb, mut outb) = ([0u8; 512], [0u8; 512]);
        let result = serve(&common::BOOKSHOP, &mut io, &mut inb, &mut outb);
        assert_eq!(result, Err(Error::WriteZero));
        assert_eq!(io.writes, writes);
    }
}

/// Calls that ask the client (handshake era): `serve_async_waiting` answers
/// byte for byte what `serve_waiting` does, requests to the client and the
/// final answers included.
#[test]
fn asking_the_client_gives_the_same_bytes_as_the_blocking_loop() {
    let input = input_of(
        &[
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{},"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"reserve","arguments":{"title":"Dune"}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":"picomcp-0-1-0","result":{"action":"accept","content":{"confirm":true}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"blurb","arguments":{"title":"Dune"}}}"#,
            r#"{"jsonrpc":"2.0","id":"picomcp-0-2-0","result":{"role":"assistant","content":{"type":"text","text":"Sand."},"model":"m"}}"#,
        ],
        "\n",
    );
    for chunk in [1, 7, usize::MAX] {
        let mut io = common::MemIo {
            input: &input,
            chunk,
            output: Vec::new(),
        };
        let (mut inb, mut outb) = (vec![0u8; 1024], vec![0u8; 4096]);
        let mut waiting = picomcp::server::Waiting::<1, 1024>::new();
        picomcp::transport::serve_waiting(
            &common::BOOKSHOP,
            &mut io,
            &mut inb,
            &mut outb,
            &mut waiting,
        )
        .unwrap();
        let want = io.output;
        let text = String::from_utf8_lossy(&want);
        assert!(
            text.contains("Reserved Dune") && text.contains("\"text\":\"Sand.\""),
            "{text}"
        );
        for pending_every in [0, 1, 3] {
            let mut pipe = AsyncPipe::new(&input, chunk, pending_every);
            let mut waiting = picomcp::server::Waiting::<1, 1024>::new();
            let (result, _) = block_on(picomcp::transport::serve_async_waiting(
                &common::BOOKSHOP,
                &mut pipe,
                &mut inb,
                &mut outb,
                &mut waiting,
            ));
            result.unwrap();
            assert_eq!(
                String::from_utf8_lossy(&pipe.output),
                text,
                "chunk {chunk}, Pending every {pending_every}"
            );
            // The async-tools loop with a store and subscriptions: the one
            // difference, this connection keeps subscriptions. Without
            // async tools, and with the async twins (`reserve` and `blurb`
            // async tools that ask: they wait as the sync handlers do, and
            // are run again, awaited, when the client's answers are in).
            let with_subs = text.replacen("\"subscribe\":false", "\"subscribe\":true", 1);
            let plain = tools_loop::<1, _, _>(&common::BOOKSHOP, &(), &input, chunk, pending_every);
            assert_eq!(
                plain, with_subs,
                "no async tool: chunk {chunk}, Pending every {pending_every}"
            );
            let twins = tools_loop::<1, _, _>(
                &common::twins::TWIN_SHOP,
                &common::twins::Twins,
                &input,
                chunk,
                pending_every,
            );
            assert_eq!(
                twins, with_subs,
                "the async twins: chunk {chunk}, Pending every {pending_every}"
            );
        }
    }
}

/// What `serve_async_tools_subscribed` writes for `input` (a store of `N`
/// calls, one subscription), read `chunk` bytes at a time.
fn tools_loop<const N: usize, S, A: picomcp::asynch::AsyncHandlers<S>>(
    server: &picomcp::Server<'_, S>,
    tools: &A,
    input: &[u8],
    chunk: usize,
    pending_every: usize,
) -> String {
    let mut pipe = AsyncPipe::new(input, chunk, pending_every);
    let (mut inb, mut outb, mut notes) = (vec![0u8; 1024], vec![0u8; 4096], [0u8; 256]);
    let mut waiting = picomcp::server::Waiting::<N, 1024>::new();
    let mut subs = picomcp::changes::Subscriptions::<1, 64>::new();
    let (result, _) = block_on(picomcp::transport::serve_async_tools_subscribed(
        server,
        &mut pipe,
        &mut inb,
        &mut outb,
        &mut notes,
        tools,
        &mut waiting,
        &mut subs,
        std::future::pending,
    ));
    result.unwrap();
    String::from_utf8(pipe.output).unwrap()
}

/// The async-tools loop with a store: a sync tool and an async one that
/// ask wait side by side, each answered once its client's answer is in (the
/// async one run again and awaited); with no free slot, the async call is
/// refused as a sync one is, and the stream goes on.
#[test]
fn in_the_async_tools_loop_sync_and_async_calls_wait_side_by_side() {
    use common::twins::Twins;
    use picomcp::tool::Tool;
    // The twins' server with `reserve` sync again (`blurb` async).
    static MIXED_TOOLS: [Tool<common::shop::Shop>; 2] = [
        Tool::new(
            common::shop::TOOLS[3].descriptor,
            common::shop::TOOLS[3].handler,
        ),
        Twins::BLURB,
    ];
    static MIXED: picomcp::Server<'static, common::shop::Shop> =
        common::shop::server().tools(&MIXED_TOOLS);
    let input = input_of(
        &[
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{},"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"reserve","arguments":{"title":"Dune"}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"blurb","arguments":{"title":"Dune"}}}"#,
            r#"{"jsonrpc":"2.0","id":"picomcp-1-2-0","result":{"role":"assistant","content":{"type":"text","text":"Sand."},"model":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":"picomcp-0-1-0","result":{"action":"accept","content":{"confirm":true}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
        ],
        "\n",
    );
    let run = |slots: usize| {
        let out = if slots == 2 {
            tools_loop::<2, _, _>(&MIXED, &Twins, &input, 7, 3)
        } else {
            tools_loop::<1, _, _>(&MIXED, &Twins, &input, 7, 3)
        };
        out.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect::<Vec<serde_json::Value>>()
    };
    let ids =
        |lines: &[serde_json::Value]| lines.iter().map(|l| l["id"].clone()).collect::<Vec<_>>();
    use serde_json::json;

    let lines = run(2);
    // initialize; reserve's elicitation; blurb's sampling request; blurb
    // answered (its answer came first); reserve answered; ping.
    assert_eq!(
        ids(&lines),
        [
            json!(0),
            json!("picomcp-0-1-0"),
            json!("picomcp-1-2-0"),
            json!(2),
            json!(1),
            json!(3)
        ],
        "{lines:#?}"
    );
    assert_eq!(lines[1]["method"], "elicitation/create");
    assert_eq!(lines[2]["method"], "sampling/createMessage");
    assert_eq!(lines[3]["result"]["content"][0]["text"], "Sand.");
    assert_eq!(lines[4]["result"]["content"][0]["text"], "Reserved Dune");

    // One slot, taken by `reserve`: `blurb` cannot wait; the answer to its
    // (never sent) request is ignored.
    let lines = run(1);
    assert_eq!(
        ids(&lines),
        [
            json!(0),
            json!("picomcp-0-1-0"),
            json!(2),
            json!(1),
            json!(3)
        ],
        "{lines:#?}"
    );
    assert_eq!(
        lines[2]["error"],
        json!({"code":-32603,"message":"cannot wait for the client's input: all 1 waiting-call slots are in use"})
    );
    assert_eq!(lines[3]["result"]["content"][0]["text"], "Reserved Dune");
}

/// `reserve`, async, and slow only when run again with the client's answer.
async fn slow_retry<'a>(
    shop: &'a common::shop::Shop,
    args: picomcp::tool::Arguments<'a>,
    reply: picomcp::tool::Reply<'_>,
) -> picomcp::tool::ToolOutcome<'a> {
    if reply.request_state().is_some() {
        common::twins::Yield(400).await;
    }
    (common::shop::TOOLS[3].handler)(shop, args, reply)
}

picomcp::async_tools! {
    struct SlowRetry for common::shop::Shop {
        RESERVE: common::shop::TOOLS[3].descriptor => slow_retry,
    }
}

/// A `notifications/cancelled` that comes while an async call runs again
/// with the client's answer drops it (no answer) and frees its slot: the
/// next call that asks waits in the one slot there is.
#[test]
fn cancelling_an_async_call_run_again_frees_its_slot() {
    use serde_json::json;
    static TOOLS: [picomcp::tool::Tool<common::shop::Shop>; 1] = [SlowRetry::RESERVE];
    static SERVER: picomcp::Server<'static, common::shop::Shop> =
        common::shop::server().tools(&TOOLS);
    let input = input_of(
        &[
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"reserve","arguments":{"title":"Dune"}}}"#,
            r#"{"jsonrpc":"2.0","id":"picomcp-0-1-0","result":{"action":"accept","content":{"confirm":true}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"reserve","arguments":{"title":"Dune"}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
        ],
        "\n",
    );
    let lines: Vec<serde_json::Value> = tools_loop::<1, _, _>(&SERVER, &SlowRetry, &input, 7, 0)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<_> = lines.iter().map(|l| l["id"].clone()).collect();
    // No answer for 1; 2 asks (and waits) in the slot 1 had.
    assert_eq!(
        ids,
        [
            json!(0),
            json!("picomcp-0-1-0"),
            json!("picomcp-0-2-0"),
            json!(3)
        ],
        "{lines:#?}"
    );
    assert_eq!(lines[2]["method"], "elicitation/create");
}
