//! Zero heap allocations: a counting global allocator (per thread, so the
//! test harness's own threads do not count) around full request/response
//! cycles of every kind the server answers.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use picomcp::Connection;
use picomcp::wire::frame::{LineFramer, Status};

struct Counting;

thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn allocations() -> usize {
    ALLOCS.with(Cell::get)
}

/// Every kind of message the server answers (or deliberately does not).
const SESSION: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":"pre","method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":"early","method":"tools/list"}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}"#,
    r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"N\u00e9ant \ud83d\ude00"}}}"#,
    r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"get_author_strict","arguments":{"title":"Nothing"}}}"#,
    r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"top","arguments":{"n":2}}}"#,
    r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"top","arguments":{"n":99}}}"#,
    r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"nope","arguments":{}}}"#,
    r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"arguments":{}}}"#,
    r#"{"jsonrpc":"2.0","id":11,"method":"resources/list"}"#,
    r#"{"jsonrpc":"2.0","id":12,"method":"resources/templates/list"}"#,
    r#"{"jsonrpc":"2.0","id":13,"method":"resources/read","params":{"uri":"books://Dune"}}"#,
    r#"{"jsonrpc":"2.0","id":14,"method":"resources/read","params":{"uri":"books://Dune%20Messiah"}}"#,
    r#"{"jsonrpc":"2.0","id":15,"method":"resources/read","params":{"uri":"nobooks://x"}}"#,
    r#"{"jsonrpc":"2.0","id":16,"method":"resources/read","params":{"uri":"books://catalog"}}"#,
    r#"{"jsonrpc":"2.0","id":17,"method":"books/frobnicate"}"#,
    r#"{"jsonrpc":"2.0","id":18,"method":"ping","params":[]}"#,
    r#"{not json"#,
    r#"[{"jsonrpc":"2.0","id":19,"method":"ping"}]"#,
    r#"{"jsonrpc":"2.0","id":42,"result":{}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}"#,
    "",
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    r#"{"jsonrpc":"2.0","id":20,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":21,"method":"prompts/list"}"#,
    r#"{"jsonrpc":"2.0","id":22,"method":"prompts/get","params":{"name":"recommend","arguments":{"genre":"cyb\u0065rpunk"}}}"#,
    r#"{"jsonrpc":"2.0","id":23,"method":"prompts/get","params":{"name":"recommend"}}"#,
    r#"{"jsonrpc":"2.0","id":24,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"recommend"},"argument":{"name":"genre","value":"f"}}}"#,
    r#"{"jsonrpc":"2.0","id":25,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"books://{title}"},"argument":{"name":"title","value":"D"}}}"#,
    r#"{"jsonrpc":"2.0","id":26,"method":"logging/setLevel","params":{"level":"debug"}}"#,
    r#"{"jsonrpc":"2.0","id":27,"method":"tools/call","params":{"name":"count","arguments":{"n":3},"_meta":{"progressToken":7}}}"#,
    r#"{"jsonrpc":"2.0","id":28,"method":"tools/list","params":{"cursor":"bogus"}}"#,
    r#"{"jsonrpc":"2.0","id":29,"method":"logging/setLevel","params":{"level":"loud"}}"#,
];

/// A 2025-03-26 session: batches.
const BATCH_SESSION: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    r#"[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"top","arguments":{"n":2}}}]"#,
    r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#,
    r#"[]"#,
];

/// Runs the session through a framer and the server with stack buffers only;
/// returns (bytes answered, answers).
fn run_session(input: &[u8]) -> (usize, usize) {
    run_session_on(&common::BOOKSHOP, input)
}

fn run_session_on<S>(server: &picomcp::Server<'_, S>, input: &[u8]) -> (usize, usize) {
    run_frames(
        input,
        |conn, line, out| server.handle(conn, line, out),
        |limit, out| server.handle_overflow(limit, out),
    )
}

/// Frame `input` with stack buffers only and answer each frame with
/// `handle` (an oversized one with `overflow`); returns (bytes answered,
/// answers).
fn run_frames(
    input: &[u8],
    mut handle: impl FnMut(&mut Connection, &mut [u8], &mut [u8]) -> usize,
    overflow: impl Fn(usize, &mut [u8]) -> usize,
) -> (usize, usize) {
    let mut inbuf = [0u8; 512];
    let mut out = [0u8; 4096];
    let mut framer = LineFramer::new(&mut inbuf[..]);
    let mut conn = Connection::new();
    let (mut bytes, mut answers) = (0, 0);
    let mut rest = input;
    loop {
        loop {
            let n = match framer.next_frame() {
                Status::Partial => break,
                Status::Complete(line) => handle(&mut conn, line, &mut out),
                Status::Overflow { limit } => overflow(limit, &mut out),
                _ => 0,
            };
            if n > 0 {
                bytes += n;
                answers += out[..n].iter().filter(|&&b| b == b'\n').count();
            }
        }
        if rest.is_empty() {
            return (bytes, answers);
        }
        let n = framer.feed(rest);
        rest = &rest[n..];
    }
}

/// [`run_session_on`] through `Server::handle_async` and the async twins
/// of the bookshop's handlers, each future polled on the stack.
fn run_session_async(input: &[u8]) -> (usize, usize) {
    use common::twins::{TWIN_SHOP, Twins};
    run_frames(
        input,
        |conn, line, out| {
            picomcp::asynch::block_on(TWIN_SHOP.handle_async(conn, line, out, &Twins))
        },
        |limit, out| TWIN_SHOP.handle_overflow(limit, out),
    )
}

#[test]
fn async_tools_allocate_nothing() {
    let input = lines(SESSION);
    let sync = run_session(&input);
    assert_eq!(
        run_session_async(&input),
        sync,
        "the twins answer as the bookshop"
    );
    let before = allocations();
    for _ in 0..50 {
        assert_eq!(run_session_async(&input), sync);
    }
    assert_eq!(
        allocations() - before,
        0,
        "heap allocations through handle_async"
    );
}

/// An in-memory async transport that allocates nothing: input from a
/// slice, output counted.
struct CountingIo<'a> {
    input: &'a [u8],
    chunk: usize,
    bytes: usize,
    lines: usize,
}

impl embedded_io_async::ErrorType for CountingIo<'_> {
    type Error = core::convert::Infallible;
}

impl embedded_io_async::Read for CountingIo<'_> {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        let n = buf.len().min(self.input.len()).min(self.chunk);
        buf[..n].copy_from_slice(&self.input[..n]);
        self.input = &self.input[n..];
        Ok(n)
    }
}

impl embedded_io_async::Write for CountingIo<'_> {
    async fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        self.bytes += buf.len();
        self.lines += buf.iter().filter(|&&b| b == b'\n').count();
        Ok(buf.len())
    }

    async fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

fn serve_tools_session(input: &[u8]) -> (usize, usize) {
    use common::twins::{TWIN_SHOP, Twins};
    let mut io = CountingIo {
        input,
        chunk: 100,
        bytes: 0,
        lines: 0,
    };
    let (mut inb, mut outb, mut notes) = ([0u8; 512], [0u8; 4096], [0u8; 512]);
    picomcp::asynch::block_on(picomcp::transport::serve_async_tools(
        &TWIN_SHOP, &mut io, &mut inb, &mut outb, &mut notes, &Twins,
    ))
    .unwrap();
    (io.bytes, io.lines)
}

#[test]
fn the_async_serve_loop_with_async_tools_allocates_nothing() {
    let input = lines(SESSION);
    let expected = serve_tools_session(&input);
    // The same bytes as the sync bookshop frame by frame.
    assert_eq!(expected, run_session(&input));
    let before = allocations();
    for _ in 0..20 {
        assert_eq!(serve_tools_session(&input), expected);
    }
    assert_eq!(
        allocations() - before,
        0,
        "heap allocations in serve_async_tools"
    );
}

#[test]
fn the_counter_is_live() {
    let before = allocations();
    let v = std::hint::black_box(vec![1u8; 10]);
    drop(v);
    assert!(allocations() > before);
}

#[test]
fn full_cycles_allocate_nothing() {
    let mut input = Vec::new();
    for line in SESSION {
        input.extend_from_slice(line.as_bytes());
        input.extend_from_slice(b"\r\n");
    }
    // Warm up once (thread-local init and the like), then count.
    let (bytes, answers) = run_session(&input);
    let before = allocations();
    for _ in 0..100 {
        assert_eq!(run_session(&input), (bytes, answers));
    }
    let after = allocations();
    assert_eq!(after - before, 0, "heap allocations during 100 sessions");
    // Every request was answered: all lines but the 2 notifications, the
    // client response and the empty line.
    // Plus 3 progress notifications and 1 log message from `count`.
    assert_eq!(answers, SESSION.len() - 4 + 4);
    assert!(bytes > 2000);
}

/// The bookshop with its lists kept and its tools indexed.
static LISTS: picomcp::server::ListCache<4096, 24> = picomcp::server::ListCache::new();
static INDEX: picomcp::server::ToolIndex<64> = picomcp::server::ToolIndex::new();
static CACHED: picomcp::Server<'static, common::shop::Shop> =
    common::shop::server().list_cache(&LISTS).tool_index(&INDEX);

#[test]
fn list_cache_and_tool_index_allocate_nothing() {
    let mut input = Vec::new();
    for line in SESSION {
        input.extend_from_slice(line.as_bytes());
        input.extend_from_slice(b"\n");
    }
    // The first session builds the index and keeps the pages; it counts too.
    let before = allocations();
    let first = run_session_on(&CACHED, &input);
    for _ in 0..100 {
        assert_eq!(run_session_on(&CACHED, &input), first);
    }
    assert_eq!(
        allocations() - before,
        0,
        "heap allocations during 101 sessions"
    );
    assert_eq!(
        first,
        run_session(&input),
        "the same answers as the plain bookshop"
    );
    assert!(INDEX.is_ready() && LISTS.kept().0 > 0);
}

fn lines(session: &[&str]) -> Vec<u8> {
    let mut input = Vec::new();
    for line in session {
        input.extend_from_slice(line.as_bytes());
        input.push(b'\n');
    }
    input
}

#[test]
fn batches_and_pagination_allocate_nothing() {
    static PAGED: picomcp::Server<'static, common::shop::Shop> =
        common::shop::server_with_page_size(1);
    let batch = lines(BATCH_SESSION);
    let paged = lines(&[
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"prompts/list"}"#,
    ]);
    let expected = (run_session(&batch), run_session_on(&PAGED, &paged));
    let before = allocations();
    for _ in 0..100 {
        assert_eq!(
            (run_session(&batch), run_session_on(&PAGED, &paged)),
            expected
        );
    }
    assert_eq!(allocations() - before, 0);
    // initialize, one batch array, the empty-batch error; 3 answers paged.
    assert_eq!(expected.0.1, 3);
    assert_eq!(expected.1.1, 3);
}

const MODERN_ENV: &str = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}"#;

fn modern(id: u32, method: &str, params: &str) -> String {
    let sep = if params.is_empty() { "" } else { "," };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params}{sep}"_meta":{{{MODERN_ENV},"progressToken":{id},"io.modelcontextprotocol/logLevel":"debug"}}}}}}"#
    )
}

#[test]
fn modern_paths_allocate_nothing() {
    // The sealed state for the reserve retry, computed outside the count.
    let first = modern(
        1,
        "tools/call",
        r#""name":"reserve","arguments":{"title":"Dune"}"#,
    );
    let mut line = first.clone().into_bytes();
    let mut out = vec![0u8; 4096];
    let n = common::BOOKSHOP.handle(&mut picomcp::Connection::modern(), &mut line, &mut out);
    let answer: serde_json::Value = serde_json::from_slice(&out[..n]).unwrap();
    let state = answer["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let session = [
        modern(1, "server/discover", ""),
        modern(2, "tools/list", ""),
        modern(3, "tools/call", r#""name":"get_author","arguments":{"title":"Dune"}"#),
        modern(4, "tools/call", r#""name":"count","arguments":{"n":2}"#),
        modern(5, "resources/read", r#""uri":"books://Dune""#),
        modern(6, "prompts/get", r#""name":"recommend","arguments":{"genre":"fantasy"}"#),
        modern(7, "completion/complete", r#""ref":{"type":"ref/prompt","name":"recommend"},"argument":{"name":"genre","value":"f"}"#),
        first,
        modern(
            8,
            "tools/call",
            &format!(r#""name":"reserve","arguments":{{"title":"Dune"}},"requestState":"{state}","inputResponses":{{"confirm":{{"action":"accept","content":{{"confirm":true}}}}}}"#),
        ),
        modern(9, "tools/call", &format!(r#""name":"reserve","arguments":{{"title":"Dune"}},"requestState":"x{state}""#)),
        modern(10, "ping", ""),
        r#"{"jsonrpc":"2.0","id":11,"method":"tools/list","params":{"_meta":{}}}"#.into(),
        r#"{"jsonrpc":"2.0","id":12,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#.into(),
    ];
    let input = lines(&session.iter().map(String::as_str).collect::<Vec<_>>());
    let expected = run_session(&input);
    let before = allocations();
    for _ in 0..50 {
        assert_eq!(run_session(&input), expected);
    }
    assert_eq!(
        allocations() - before,
        0,
        "heap allocations on 2026-07-28 paths"
    );
    // 13 answers, plus progress (2) and log (1) notifications from count.
    assert_eq!(expected.1, 13 + 3);
}

/// A handshake session whose calls ask the client (elicitation, sampling):
/// the requests to the client, the answers, a retry, a cancellation, a
/// client error, a full store. The waiting store is on the stack.
const ASKING_SESSION: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{},"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"reserve","arguments":{"title":"Dune"}}}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":"picomcp-0-1-0","result":{"action":"accept","content":{"confirm":true}}}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"blurb","arguments":{"title":"Neuromancer"}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}"#,
    r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"blurb","arguments":{"title":"Dune"}}}"#,
    r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"reserve","arguments":{"title":"Dune"}}}"#,
    r#"{"jsonrpc":"2.0","id":"picomcp-0-3-0","result":{"role":"assistant","content":{"type":"text","text":"Spice \u00e9."},"model":"m"}}"#,
    r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"reserve","arguments":{"title":"Neuromancer"}}}"#,
    r#"{"jsonrpc":"2.0","id":"picomcp-0-4-0","error":{"code":-1,"message":"no"}}"#,
    r#"{"jsonrpc":"2.0","id":"unknown","result":{}}"#,
];

#[test]
fn handshake_asking_allocates_nothing() {
    let run = || {
        let mut waiting = picomcp::server::Waiting::<1, 1024>::new();
        let mut conn = Connection::new();
        let mut out = [0u8; 4096];
        let mut frame = [0u8; 512];
        let mut lines = 0;
        for line in ASKING_SESSION {
            let frame = &mut frame[..line.len()];
            frame.copy_from_slice(line.as_bytes());
            let n = common::BOOKSHOP.handle_waiting(&mut conn, &mut waiting, frame, &mut out);
            lines += out[..n].iter().filter(|&&b| b == b'\n').count();
        }
        (lines, waiting.len())
    };
    let first = run();
    let before = allocations();
    for _ in 0..100 {
        assert_eq!(run(), first);
    }
    assert_eq!(
        allocations() - before,
        0,
        "heap allocations during 100 sessions"
    );
    // initialize; reserve's request, ping, reserve's answer; blurb's request
    // (cancelled: no answer); blurb's request; the full store's refusal;
    // blurb's answer; reserve's request and its failure. Nothing waits.
    assert_eq!(first, (10, 0));
}

/// A subscribed session, both eras: subscribe, a change inside a request
/// (`buy`), a change outside any request (a restock), list changes, a
/// listen with its acknowledgment, tagged notifications and its end.
const SUBSCRIBED_SESSION: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"books://stock"}}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"nobooks://x"}}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"buy","arguments":{"title":"Dune"}}}"#,
    "restock",
    r#"{"jsonrpc":"2.0","id":5,"method":"resources/unsubscribe","params":{"uri":"books://stock"}}"#,
];

const LISTEN_SESSION: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["books://stock"]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"buy","arguments":{"title":"Dune"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    "restock",
    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
];

#[test]
fn subscriptions_and_listen_allocate_nothing() {
    let run = |session: &[&str]| {
        let mut subs = picomcp::changes::Subscriptions::<4, 64>::new();
        let mut subscriber = subs.subscriber();
        let mut conn = Connection::new();
        let mut out = [0u8; 4096];
        let mut frame = [0u8; 512];
        let mut lines = 0;
        for line in session {
            if *line == "restock" {
                assert!(common::BOOKSHOP.state().restock());
            } else {
                let frame = &mut frame[..line.len()];
                frame.copy_from_slice(line.as_bytes());
                let n =
                    common::BOOKSHOP.handle_subscribed(&mut conn, &mut subscriber, frame, &mut out);
                lines += out[..n].iter().filter(|&&b| b == b'\n').count();
            }
            let n = common::BOOKSHOP.pending(&conn, &mut subscriber, &mut out);
            lines += out[..n].iter().filter(|&&b| b == b'\n').count();
        }
        lines
    };
    let first = (run(SUBSCRIBED_SESSION), run(LISTEN_SESSION));
    let before = allocations();
    for _ in 0..100 {
        assert_eq!((run(SUBSCRIBED_SESSION), run(LISTEN_SESSION)), first);
    }
    assert_eq!(
        allocations() - before,
        0,
        "heap allocations during 200 subscribed sessions"
    );
    // Handshake: 5 answers and 2 updates; listen: the acknowledgment, the
    // buy's answer, 2 updates and the listen's result.
    assert_eq!(first, (7, 5));
}
