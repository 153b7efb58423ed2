//! Async tools over HTTP (`Http::begin` / `Http::finish`): the bookshop's
//! tools as async twins answer with the very responses (status, headers,
//! body) the sync bookshop gives through `Http::handle`, on both eras; the
//! output buffer can move between the steps; many calls are in flight at
//! once, each with its own buffers, while the session table is free.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use common::shop::Shop;
use common::twins::{SYNC_SHOP, TWIN_SHOP, Twins};
use picomcp::asynch::block_on;
use picomcp::http::call::Begun;
use picomcp::http::{Http, Request, Response, Sessions};

const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");
const CT: (&str, &str) = ("Content-Type", "application/json");
const HOST: (&str, &str) = ("Host", "localhost:8080");
const MV: (&str, &str) = ("MCP-Protocol-Version", "2026-07-28");
const ENV: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

#[derive(Debug, PartialEq)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    /// The `Mcp-Session-Id` an `initialize` answer issued.
    fn session_id(&self) -> String {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id"))
            .map(|(_, v)| v.clone())
            .expect("a session")
    }

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

struct Endpoint {
    http: Http<'static, Shop>,
    sessions: Sessions<4>,
    next_id: u8,
    now: u64,
}

impl Endpoint {
    fn new(twins: bool) -> Self {
        Self {
            http: Http::new(if twins { &TWIN_SHOP } else { &SYNC_SHOP }),
            sessions: Sessions::new(),
            next_id: 0,
            now: 0,
        }
    }

    /// Through `handle` (sync), or `begin` + `finish` (async); `moved`: the
    /// open answer is copied into a fresh buffer between the steps.
    fn send(&mut self, mode: Mode, method: &str, headers: &[(&str, &str)], body: &str) -> Answer {
        let mut body = body.as_bytes().to_vec();
        let mut out = vec![0u8; 16 * 1024];
        self.now += 1;
        let next = &mut self.next_id;
        let mut random = |id: &mut [u8; 16]| {
            *next += 1;
            *id = [0; 16];
            id[15] = *next;
        };
        let request = Request::new(method, headers, &mut body, self.now);
        match mode {
            Mode::Sync => {
                let r = self
                    .http
                    .handle(&mut self.sessions, &mut random, request, &mut out);
                Answer::of(&r, &out)
            }
            Mode::Async | Mode::Moved => {
                match self
                    .http
                    .begin(&mut self.sessions, &mut random, request, &mut out)
                {
                    Begun::Response(r) => Answer::of(&r, &out),
                    Begun::Call(call) => {
                        let mut out = if mode == Mode::Moved {
                            let mut fresh = vec![0u8; 16 * 1024];
                            fresh[..call.written()].copy_from_slice(&out[..call.written()]);
                            fresh
                        } else {
                            out
                        };
                        let r = block_on(self.http.finish(call, &mut body, &mut out, &Twins));
                        Answer::of(&r, &out)
                    }
                }
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Sync,
    Async,
    Moved,
}

fn call(id: u32, name: &str, args: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{args}}}}}"#
    )
}

fn modern_call(id: u32, name: &str, args: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{args},{ENV}}}}}"#
    )
}

/// One conversation: a handshake session's calls (JSON and SSE answers,
/// errors of both channels), then stateless 2026-07-28 calls.
fn conversation(e: &mut Endpoint, mode: Mode) -> Vec<Answer> {
    let mut answers = Vec::new();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let a = e.send(mode, "POST", &[HOST, ACCEPT, CT], init);
    let sid = a.session_id();
    answers.push(a);
    let hs = [HOST, ACCEPT, CT, ("Mcp-Session-Id", sid.as_str())];
    for body in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string(),
        call(2, "get_author", r#"{"title":"Dune"}"#),
        call(3, "get_author", r#"{"title":"Nothing"}"#),
        call(4, "get_author_strict", r#"{"title":"Nothing"}"#),
        call(5, "get_author", r#"{"title":5}"#),
        call(6, "top", r#"{"n":2}"#),
        call(7, "reserve", r#"{"title":"Dune"}"#),
        call(8, "buy", r#"{"title":"Neuromancer"}"#),
        call(9, "nope", "{}"),
        r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"count","arguments":{"n":2},"_meta":{"progressToken":"p"}}}"#.into(),
        r#"{"jsonrpc":"2.0","id":11,"method":"tools/list"}"#.into(),
        r#"{"jsonrpc":"2.0","id":12,"method":"resources/read","params":{"uri":"books://Dune"}}"#.into(),
        r#"{"jsonrpc":"2.0","id":13,"method":"resources/read","params":{"uri":"books://Nothing"}}"#.into(),
        r#"{"jsonrpc":"2.0","id":14,"method":"resources/read","params":{"uri":"books://stock"}}"#.into(),
        r#"{"jsonrpc":"2.0","id":15,"method":"prompts/get","params":{"name":"recommend","arguments":{"genre":"fantasy"}}}"#.into(),
    ] {
        answers.push(e.send(mode, "POST", &hs, &body));
    }
    for (name, args) in [
        ("get_author", r#"{"title":"Dune"}"#),
        ("get_author", r#"{"title":"Nothing"}"#),
        ("get_author_strict", r#"{"title":"Nothing"}"#),
        ("top", r#"{"n":1}"#),
        ("reserve", r#"{"title":"Dune"}"#),
    ] {
        let headers = [
            HOST,
            ACCEPT,
            CT,
            MV,
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", name),
        ];
        answers.push(e.send(mode, "POST", &headers, &modern_call(20, name, args)));
    }
    answers.push(e.send(mode, "DELETE", &hs, ""));
    answers
}

/// Over HTTP a 2025-03-26 batch is answered by `begin` whole: an async
/// tool's call in it is `-32603` saying the tool is async (documented in
/// `http::call`), the other elements are answered, nothing is deferred.
#[test]
fn a_batch_over_http_is_answered_whole_by_begin() {
    let mut e = Endpoint::new(true);
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let sid = e
        .send(Mode::Async, "POST", &[HOST, ACCEPT, CT], init)
        .session_id();
    let hs = [HOST, ACCEPT, CT, ("Mcp-Session-Id", sid.as_str())];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(e.send(Mode::Async, "POST", &hs, initialized).status, 202);
    let batch = format!(
        r#"[{},{{"jsonrpc":"2.0","id":3,"method":"ping"}}]"#,
        call(2, "get_author", r#"{"title":"Dune"}"#)
    );
    let mut body = batch.into_bytes();
    let mut out = vec![0u8; 4096];
    let mut random = |id: &mut [u8; 16]| *id = [9; 16];
    let request = Request::new("POST", &hs, &mut body, 10);
    let Begun::Response(r) = e
        .http
        .begin(&mut e.sessions, &mut random, request, &mut out)
    else {
        panic!("a batch's async call was deferred");
    };
    let a = Answer::of(&r, &out);
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        a.body,
        "[{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32603,\"message\":\"tool get_author is async: this server does not await handlers\"}},{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}]"
    );
}

#[test]
fn async_twins_give_the_responses_of_the_sync_bookshop() {
    let sync = conversation(&mut Endpoint::new(false), Mode::Sync);
    let twins = conversation(&mut Endpoint::new(true), Mode::Async);
    assert_eq!(sync.len(), twins.len());
    for (i, (s, t)) in sync.iter().zip(&twins).enumerate() {
        assert_eq!(s, t, "request {i}");
    }
    // Real answers: a result, an SSE stream of notifications, a 2026-07-28 one.
    assert!(twins[2].body.contains("Frank Herbert"), "{:?}", twins[2]);
    assert!(
        twins[10].body.starts_with("event: message"),
        "{:?}",
        twins[10]
    );
    assert!(
        twins[12].body.contains("Dune by Frank Herbert"),
        "{:?}",
        twins[12]
    );
    assert!(twins[13].body.contains("-32602"), "{:?}", twins[13]);
    assert!(twins[15].body.contains("fantasy"), "{:?}", twins[15]);
    assert!(
        twins[16].body.contains("\"resultType\":\"complete\""),
        "{:?}",
        twins[16]
    );
    // The open answer can move to another buffer between the two steps.
    let moved = conversation(&mut Endpoint::new(true), Mode::Moved);
    for (i, (t, m)) in twins.iter().zip(&moved).enumerate() {
        if i != 8 && i != 14 {
            // (`buy` has sold the last copy on the first run: its answer
            // and the stock differ.)
            assert_eq!(t, m, "request {i}");
        }
    }
    // A server that does not await: -32603 for the async tool.
    let mut plain = Endpoint::new(true);
    let a = plain.send(
        Mode::Sync,
        "POST",
        &[
            HOST,
            ACCEPT,
            CT,
            MV,
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "top"),
        ],
        &modern_call(1, "top", r#"{"n":1}"#),
    );
    assert_eq!(a.status, 200, "{a:?}");
    assert!(a.body.contains("tool top is async"), "{a:?}");
}

#[test]
fn many_calls_are_in_flight_at_once_with_the_session_table_free() {
    let http = Http::new(&TWIN_SHOP);
    let mut sessions = Sessions::<4>::new();
    let mut random = |id: &mut [u8; 16]| *id = [7; 16];
    let headers = [
        HOST,
        ACCEPT,
        CT,
        MV,
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "top"),
    ];
    // Begin every call first (the table is lent only for that step)...
    let mut buffers = Vec::new();
    let mut pending = Vec::new();
    for id in 0..8u32 {
        let mut body = modern_call(id, "top", &format!(r#"{{"n":{}}}"#, id % 3)).into_bytes();
        let mut out = vec![0u8; 4096];
        let request = Request::new("POST", &headers, &mut body, 1);
        match http.begin(&mut sessions, &mut random, request, &mut out) {
            Begun::Call(call) => pending.push(call),
            Begun::Response(r) => panic!("answered at once: {r:?}"),
        }
        buffers.push((body, out));
    }
    // ...then poll all their handlers in turn: each is pending at first.
    type Finish<'a> = Pin<Box<dyn Future<Output = Response> + 'a>>;
    let mut futures: Vec<(usize, Finish<'_>)> = buffers
        .iter_mut()
        .zip(pending)
        .enumerate()
        .map(|(i, ((body, out), call))| {
            let f: Finish<'_> = Box::pin(http.finish(call, body, out, &Twins));
            (i, f)
        })
        .collect();
    let mut cx = Context::from_waker(Waker::noop());
    let mut done = Vec::new();
    let mut rounds = 0;
    while !futures.is_empty() {
        rounds += 1;
        futures.retain_mut(|(i, f)| match f.as_mut().poll(&mut cx) {
            Poll::Ready(r) => {
                done.push((*i, r));
                false
            }
            Poll::Pending => true,
        });
    }
    drop(futures);
    // The twins are pending twice: all 8 were in flight together.
    assert_eq!(rounds, 3);
    assert_eq!(done.len(), 8);
    for (i, r) in &done {
        let out = &buffers[*i].1;
        let body = std::str::from_utf8(&out[..r.body_len]).unwrap();
        assert_eq!(r.status, 200);
        assert!(
            body.starts_with(&format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"result\":")),
            "{body}"
        );
    }
}

/// Request state sealed for a subject (`Request::subject`) is bound to it
/// through an async tool's call as through a sync one.
#[test]
fn request_state_stays_bound_to_its_subject_through_an_async_call() {
    let headers = [
        HOST,
        ACCEPT,
        CT,
        MV,
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "reserve"),
    ];
    let env = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#;
    let send = |twins: bool, subject: Option<&str>, body: &str| -> Answer {
        let mut e = Endpoint::new(twins);
        let mut body = body.as_bytes().to_vec();
        let mut out = vec![0u8; 8192];
        let mut random = |id: &mut [u8; 16]| *id = [1; 16];
        let mut request = Request::new("POST", &headers, &mut body, 1);
        if let Some(s) = subject {
            request = request.subject(s.as_bytes());
        }
        if twins {
            match e
                .http
                .begin(&mut e.sessions, &mut random, request, &mut out)
            {
                Begun::Response(r) => Answer::of(&r, &out),
                Begun::Call(call) => {
                    let r = block_on(e.http.finish(call, &mut body, &mut out, &Twins));
                    Answer::of(&r, &out)
                }
            }
        } else {
            let r = e
                .http
                .handle(&mut e.sessions, &mut random, request, &mut out);
            Answer::of(&r, &out)
        }
    };
    let first = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"reserve","arguments":{{"title":"Dune"}},{env}}}}}"#
    );
    for issuer in [false, true] {
        let asked = send(issuer, Some("alice"), &first);
        let v: serde_json::Value = serde_json::from_str(&asked.body).unwrap();
        let state = v["result"]["requestState"]
            .as_str()
            .expect("requestState")
            .to_owned();
        let retry = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"reserve","arguments":{{"title":"Dune"}},"requestState":"{state}","inputResponses":{{"confirm":{{"action":"accept","content":{{"confirm":true}}}}}},{env}}}}}"#
        );
        for twins in [false, true] {
            let alice = send(twins, Some("alice"), &retry);
            assert!(
                alice.body.contains("Reserved Dune"),
                "{issuer} {twins}: {alice:?}"
            );
            for other in [Some("bob"), None] {
                let refused = send(twins, other, &retry);
                assert!(
                    refused.body.contains("\"code\":-32602")
                        && refused.body.contains("Invalid requestState"),
                    "issued by twins={issuer}, retried by twins={twins} as {other:?}: {refused:?}"
                );
            }
        }
    }
}

/// A handshake-era async handler that asks the client, through
/// `begin_streams` (which has a waiting store) but finished with `finish`
/// (no `keep`): answered as a call that cannot wait, never an unfinished
/// body.
#[test]
fn an_async_call_that_asks_on_the_handshake_era_cannot_wait() {
    use picomcp::http::Streams;
    use picomcp::server::Waiting;
    let http = Http::new(&TWIN_SHOP);
    let mut sessions = Sessions::<4>::new();
    let mut waiting = Waiting::<2, 4096>::new();
    let mut streams = Streams::<2, 2, 64>::new();
    let mut random = |id: &mut [u8; 16]| *id = [3; 16];
    let mut send = |headers: &[(&str, &str)], body: &str| -> Answer {
        let mut body = body.as_bytes().to_vec();
        let mut out = vec![0u8; 8192];
        let request = Request::new("POST", headers, &mut body, 1);
        match http.begin_streams(
            &mut sessions,
            &mut random,
            &mut waiting,
            &mut streams,
            request,
            &mut out,
        ) {
            Begun::Response(r) => Answer::of(&r, &out),
            Begun::Call(call) => {
                let r = block_on(http.finish(call, &mut body, &mut out, &Twins));
                Answer::of(&r, &out)
            }
        }
    };
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}"#;
    let a = send(&[HOST, ACCEPT, CT], init);
    let sid = a.session_id();
    let hs = [HOST, ACCEPT, CT, ("Mcp-Session-Id", sid.as_str())];
    send(
        &hs,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    let a = send(&hs, &call(2, "reserve", r#"{"title":"Dune"}"#));
    assert_eq!(a.status, 200);
    assert_eq!(
        a.body,
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32603,\"message\":\"cannot wait for the client's input in an async handler on this protocol version\"}}"
    );
    // The store was not taken: a sync-style call still works after it.
    let a = send(&hs, &call(3, "get_author", r#"{"title":"Dune"}"#));
    assert!(a.body.contains("Frank Herbert"), "{a:?}");
}

/// What a response says about waiting calls, beside its bytes.
#[derive(Debug, PartialEq)]
struct Waited {
    answer: Answer,
    hold: Option<u64>,
    deliver: Option<(u64, bool)>,
    /// The request id a cancellation names, for the adapter's async calls.
    cancels: Option<String>,
}

/// A handshake-era endpoint with a waiting-call store of `N` slots:
/// the sync bookshop through `handle_streams`, or its async twins through
/// `begin_streams`, `keep` and `finish_waiting` (the open answer and the
/// kept bytes moved to fresh buffers between the steps, as an adapter that
/// runs the handler elsewhere does).
struct Asking<const N: usize> {
    http: Http<'static, Shop>,
    sessions: Sessions<4>,
    waiting: picomcp::server::Waiting<N, 2048>,
    streams: picomcp::http::Streams<2, 2, 64>,
    twins: bool,
    now: u64,
}

impl<const N: usize> Asking<N> {
    fn new(twins: bool) -> Self {
        Self {
            http: Http::new(if twins { &TWIN_SHOP } else { &SYNC_SHOP }),
            sessions: Sessions::new(),
            waiting: picomcp::server::Waiting::new(),
            streams: picomcp::http::Streams::new(),
            twins,
            now: 0,
        }
    }

    fn send(&mut self, headers: &[(&str, &str)], body: &str) -> Waited {
        let mut body = body.as_bytes().to_vec();
        let mut out = vec![0u8; 16 * 1024];
        self.now += 1;
        let now = self.now;
        let mut random = |id: &mut [u8; 16]| *id = [5; 16];
        let request = Request::new("POST", headers, &mut body, now);
        let (r, out) = if self.twins {
            match self.http.begin_streams(
                &mut self.sessions,
                &mut random,
                &mut self.waiting,
                &mut self.streams,
                request,
                &mut out,
            ) {
                Begun::Response(r) => (r, out),
                Begun::Call(mut call) => {
                    let mut kept = vec![0u8; call.kept_len()];
                    let copied = self.http.keep(&mut call, &mut self.waiting, &mut kept);
                    assert_eq!(copied, call.kept_len() > 0);
                    let mut own = vec![0u8; 16 * 1024];
                    own[..call.written()].copy_from_slice(&out[..call.written()]);
                    drop(out);
                    let mut body = body.clone();
                    let mut kept = kept.clone();
                    let waiting = &mut self.waiting;
                    let mut lock =
                        |f: &mut dyn FnMut(&mut picomcp::server::Waiting<N, 2048>, u64)| {
                            f(waiting, now)
                        };
                    let r =
                        block_on(self.http.finish_waiting(
                            call, &mut body, &mut kept, &mut own, &Twins, &mut lock,
                        ));
                    (r, own)
                }
            }
        } else {
            let r = self.http.handle_streams(
                &mut self.sessions,
                &mut random,
                &mut self.waiting,
                &mut self.streams,
                request,
                &mut out,
            );
            (r, out)
        };
        Waited {
            answer: Answer::of(&r, &out),
            hold: r.hold.map(|c| c.0),
            deliver: r.deliver.map(|d| (d.call.0, d.last)),
            cancels: r
                .cancels
                .map(|(start, end)| String::from_utf8_lossy(&body[start..end]).into_owned()),
        }
    }

    /// Phase 1 of an async call (`body`, on the session's `headers`) and
    /// `keep`: the call, what it keeps, the body as phase 1 left it and the
    /// output buffer with the open answer.
    fn begin_call(
        &mut self,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (picomcp::http::call::PendingCall, Vec<u8>, Vec<u8>, Vec<u8>) {
        let mut body = body.as_bytes().to_vec();
        let mut out = vec![0u8; 16 * 1024];
        let mut random = |id: &mut [u8; 16]| *id = [5; 16];
        let request = Request::new("POST", headers, &mut body, 10);
        let Begun::Call(mut pending) = self.http.begin_streams(
            &mut self.sessions,
            &mut random,
            &mut self.waiting,
            &mut self.streams,
            request,
            &mut out,
        ) else {
            panic!("an async tool's call");
        };
        let mut kept = vec![0u8; pending.kept_len()];
        assert!(self.http.keep(&mut pending, &mut self.waiting, &mut kept));
        (pending, kept, body, out)
    }

    /// A session whose client can answer elicitations and sampling.
    fn session(&mut self) -> String {
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{},"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}"#;
        let sid = self.send(&[HOST, ACCEPT, CT], init).answer.session_id();
        let hs = [HOST, ACCEPT, CT, ("Mcp-Session-Id", sid.as_str())];
        self.send(
            &hs,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        );
        sid
    }
}

/// The id of the first request to the client in an SSE answer.
fn asked_id(w: &Waited) -> String {
    let at = w
        .answer
        .body
        .find("\"id\":\"picomcp-")
        .expect("a request to the client")
        + 5;
    let end = at + 1 + w.answer.body[at + 1..].find('"').unwrap();
    w.answer.body[at..=end].to_string()
}

/// One conversation of calls that ask: accepted, declined, sampled,
/// cancelled while waiting, and a call that asks while every slot is taken.
fn asking_conversation<const N: usize>(e: &mut Asking<N>) -> Vec<Waited> {
    let sid = e.session();
    let hs = [HOST, ACCEPT, CT, ("Mcp-Session-Id", sid.as_str())];
    let mut seen = Vec::new();
    let answer =
        |id: &str, result: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
    // Accepted.
    let asked = e.send(&hs, &call(2, "reserve", r#"{"title":"Dune"}"#));
    let id = asked_id(&asked);
    seen.push(asked);
    seen.push(e.send(
        &hs,
        &answer(&id, r#"{"action":"accept","content":{"confirm":true}}"#),
    ));
    // Declined.
    let asked = e.send(&hs, &call(3, "reserve", r#"{"title":"Neuromancer"}"#));
    let id = asked_id(&asked);
    seen.push(asked);
    seen.push(e.send(&hs, &answer(&id, r#"{"action":"decline"}"#)));
    // Sampling.
    let asked = e.send(&hs, &call(4, "blurb", r#"{"title":"Dune"}"#));
    let id = asked_id(&asked);
    seen.push(asked);
    seen.push(e.send(
        &hs,
        &answer(
            &id,
            r#"{"role":"assistant","content":{"type":"text","text":"A desert epic."},"model":"m"}"#,
        ),
    ));
    // A refusal from the client.
    let asked = e.send(&hs, &call(5, "reserve", r#"{"title":"Dune"}"#));
    let id = asked_id(&asked);
    seen.push(asked);
    seen.push(e.send(
        &hs,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-1,"message":"no"}}}}"#),
    ));
    // Cancelled while it waits; its late answer is not taken.
    let asked = e.send(&hs, &call(6, "reserve", r#"{"title":"Dune"}"#));
    let id = asked_id(&asked);
    seen.push(asked);
    seen.push(e.send(
        &hs,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6}}"#,
    ));
    seen.push(e.send(
        &hs,
        &answer(&id, r#"{"action":"accept","content":{"confirm":true}}"#),
    ));
    // Every slot taken by a waiting call: one more that asks cannot wait;
    // a call that does not ask is answered.
    let mut waiting = Vec::new();
    for k in 0..N {
        let asked = e.send(&hs, &call(10 + k as u32, "reserve", r#"{"title":"Dune"}"#));
        waiting.push(asked_id(&asked));
        seen.push(asked);
    }
    seen.push(e.send(&hs, &call(20, "reserve", r#"{"title":"Dune"}"#)));
    seen.push(e.send(&hs, &call(21, "get_author", r#"{"title":"Dune"}"#)));
    for id in waiting {
        seen.push(e.send(
            &hs,
            &answer(&id, r#"{"action":"accept","content":{"confirm":false}}"#),
        ));
    }
    seen
}

/// A handshake-era async handler that asks waits as a sync one does: the
/// very responses (requests on a held stream, the answer delivered to it,
/// refusals, cancellation, a full store) of the sync bookshop.
#[test]
fn async_twins_that_ask_wait_as_sync_handlers_do() {
    let sync = asking_conversation(&mut Asking::<2>::new(false));
    let twins = asking_conversation(&mut Asking::<2>::new(true));
    assert_eq!(sync.len(), twins.len());
    for (i, (s, t)) in sync.iter().zip(&twins).enumerate() {
        assert_eq!(s, t, "exchange {i}");
    }
    // Real exchanges: the request on a held stream, the answer delivered.
    assert!(twins[0].hold.is_some(), "{:?}", twins[0]);
    assert!(
        twins[0].answer.body.contains("elicitation/create"),
        "{:?}",
        twins[0]
    );
    assert_eq!(twins[1].answer.status, 202);
    assert_eq!(twins[1].deliver, Some((twins[0].hold.unwrap(), true)));
    // What each exchange carried.
    for (i, said) in [
        (1, "Reserved Dune"),
        (3, "Not reserved: Neuromancer"),
        (4, "sampling/createMessage"),
        (5, "A desert epic."),
        (7, "refused"),
        (13, "all 2 waiting-call slots are in use"),
        (14, "Frank Herbert"),
        (16, "Not reserved: Dune"),
    ] {
        assert!(twins[i].answer.body.contains(said), "{i}: {:?}", twins[i]);
    }
    // Cancelled: the stream ends with nothing; the late answer is ignored.
    assert_eq!(twins[9].deliver.map(|d| d.1), Some(true));
    assert_eq!(twins[10].deliver, None);
}

/// A call run again whose waiting call ends while its async handler runs
/// (the store is free meanwhile), by `end` (given the endpoint and the
/// session's headers): its answer goes nowhere, and its slot, freed, is
/// not touched again when the handler is over.
fn a_call_run_again_that_ends_meanwhile(end: impl FnOnce(&mut Asking<1>, &[(&str, &str)])) {
    use picomcp::server::Waiting;
    let mut e = Asking::<1>::new(true);
    let sid = e.session();
    let hs = [HOST, ACCEPT, CT, ("Mcp-Session-Id", sid.as_str())];
    let asked = e.send(&hs, &call(2, "reserve", r#"{"title":"Dune"}"#));
    let id = asked_id(&asked);
    // The client's answer: phase 1 of the call run again.
    let (pending, mut kept, mut body, mut out) = e.begin_call(
        &hs,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"action":"accept","content":{{"confirm":true}}}}}}"#),
    );
    assert!(pending.runs_again());
    // Its output would go to the stream the first response held.
    assert!(asked.hold.is_some(), "{asked:?}");
    assert_eq!(pending.held(&kept).map(|c| c.0), asked.hold);
    end(&mut e, &hs);
    assert_eq!(e.waiting.len(), 0);
    // A new call takes the freed slot and waits.
    let other = e.send(&hs, &call(3, "reserve", r#"{"title":"Neuromancer"}"#));
    assert!(other.hold.is_some(), "{other:?}");
    let waiting = &mut e.waiting;
    let mut lock = |f: &mut dyn FnMut(&mut Waiting<1, 2048>, u64)| f(waiting, 11);
    let r = block_on(
        e.http
            .finish_waiting(pending, &mut body, &mut kept, &mut out, &Twins, &mut lock),
    );
    assert_eq!(
        (r.status, r.body_len, r.deliver, r.hold),
        (202, 0, None, None)
    );
    // The new call still waits, and is answered when its client answers.
    assert_eq!(e.waiting.len(), 1);
    let id = asked_id(&other);
    let done = e.send(
        &hs,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"action":"accept","content":{{"confirm":true}}}}}}"#),
    );
    assert!(
        done.answer.body.contains("Reserved Neuromancer"),
        "{done:?}"
    );
    assert_eq!(done.deliver, Some((other.hold.unwrap(), true)));
}

/// Cancelled by its client while its handler runs again.
#[test]
fn a_call_cancelled_while_its_handler_runs_again_delivers_nothing() {
    a_call_run_again_that_ends_meanwhile(|e, hs| {
        let cancelled = e.send(
            hs,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#,
        );
        assert_eq!(cancelled.deliver.map(|d| d.1), Some(true));
        // The adapter is told, to drop the handler running again.
        assert_eq!(cancelled.cancels.as_deref(), Some("2"));
    });
}

/// Past the round's time limit while its handler runs again (the limit
/// counts until the call is over): answered `-32603` on its stream by the
/// adapter's sweep, and its handler's answer is dropped.
#[test]
fn a_call_past_its_time_limit_while_its_handler_runs_again_delivers_nothing() {
    a_call_run_again_that_ends_meanwhile(|e, _| {
        let mut out = vec![0u8; 4096];
        let r = e
            .http
            .expire_waiting(&mut e.waiting, 100, 30, &mut out)
            .expect("the call is past its limit");
        let body = std::str::from_utf8(&out[..r.body_len]).unwrap();
        assert!(
            body.contains("no answer within the waiting-call time limit"),
            "{body}"
        );
        assert_eq!(r.deliver.map(|d| d.last), Some(true));
    });
}

/// A caller whose `lock` never gives the store: a first run that asks is
/// answered as a call that cannot wait (one answer, never an unfinished
/// body), and the store is untouched.
#[test]
fn a_lock_that_gives_no_store_answers_a_call_that_asks_as_one_that_cannot_wait() {
    let mut e = Asking::<1>::new(true);
    let sid = e.session();
    let hs = [HOST, ACCEPT, CT, ("Mcp-Session-Id", sid.as_str())];
    let (pending, mut kept, mut body, mut out) =
        e.begin_call(&hs, &call(2, "reserve", r#"{"title":"Dune"}"#));
    assert!(!pending.runs_again());
    assert_eq!(pending.held(&kept), None, "a first run holds no stream yet");
    let mut lock = |_: &mut dyn FnMut(&mut picomcp::server::Waiting<1, 2048>, u64)| {};
    let r = block_on(
        e.http
            .finish_waiting(pending, &mut body, &mut kept, &mut out, &Twins, &mut lock),
    );
    let answer = std::str::from_utf8(&out[..r.body_len]).unwrap();
    assert_eq!(r.status, 200);
    assert!(
        answer.starts_with(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"cannot wait for the client's input in an async handler"#),
        "{answer}"
    );
    assert_eq!((r.hold, r.deliver), (None, None));
    assert_eq!(e.waiting.len(), 0);
}

/// No slot is held while a first run's handler runs: of two async calls
/// that ask, in flight at once with one slot, the one whose handler ends
/// first waits in it, and the other is then answered as a call that cannot
/// wait (`-32603` naming the limit, as a sync handler's call would be).
#[test]
fn a_first_run_takes_a_slot_only_once_its_handler_has_asked() {
    use picomcp::server::Waiting;
    let mut e = Asking::<1>::new(true);
    let sid = e.session();
    let hs = [HOST, ACCEPT, CT, ("Mcp-Session-Id", sid.as_str())];
    let (first, mut first_kept, mut first_body, mut first_out) =
        e.begin_call(&hs, &call(2, "reserve", r#"{"title":"Dune"}"#));
    let (second, mut second_kept, mut second_body, mut second_out) =
        e.begin_call(&hs, &call(3, "reserve", r#"{"title":"Neuromancer"}"#));
    // Both in flight, the store free.
    assert_eq!(e.waiting.len(), 0);
    let waiting = &mut e.waiting;
    let mut lock = |f: &mut dyn FnMut(&mut Waiting<1, 2048>, u64)| f(waiting, 11);
    let r = block_on(e.http.finish_waiting(
        second,
        &mut second_body,
        &mut second_kept,
        &mut second_out,
        &Twins,
        &mut lock,
    ));
    assert!(
        r.hold.is_some(),
        "the second call's handler ended first: it waits"
    );
    let r = block_on(e.http.finish_waiting(
        first,
        &mut first_body,
        &mut first_kept,
        &mut first_out,
        &Twins,
        &mut lock,
    ));
    let answer = std::str::from_utf8(&first_out[..r.body_len]).unwrap();
    assert_eq!((r.hold, r.deliver), (None, None));
    assert!(
        answer.contains(r#""id":2,"error":{"code":-32603"#)
            && answer.contains("all 1 waiting-call slots are in use"),
        "{answer}"
    );
    assert_eq!(e.waiting.len(), 1);
}
