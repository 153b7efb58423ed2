//! Transcript tests for subscriptions and change notifications (DESIGN.md
//! "Server-initiated traffic → Subscriptions and change notifications"):
//! `resources/subscribe` / `unsubscribe`, unknown URIs, the per-session
//! bound, `notifications/resources/updated` after a change made inside a
//! request (`buy`) and outside any request (a restock while the loop waits
//! for input), `list_changed`, and 2026-07-28's `subscriptions/listen` with
//! each filter and its cancellation; through the blocking loop
//! (`serve_subscribed`, the change learnt through `ReadReady`) and the async
//! loop (`serve_async_subscribed`, the change awaited beside the read) and
//! the async-tools loop (`serve_async_tools_subscribed`), which must write
//! the same bytes.

mod common;

use std::collections::VecDeque;
use std::future::Future;
use std::pin::{Pin, pin};
use std::task::{Context, Poll, Waker};

use common::shop::{self, Shop};
use picomcp::Server;
use picomcp::changes::{Changes, Subscriptions};
use picomcp::server::Waiting;
use picomcp::transport::{serve_async_subscribed, serve_async_tools_subscribed, serve_subscribed};
use serde_json::{Value, json};

const MODERN: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// A step of a scripted client: bytes the client sends, or something that
/// happens outside any request while the server waits for input.
enum Step {
    Send(String),
    Outside(fn(&Server<'static, Shop>)),
}

fn send(line: &str) -> Step {
    Step::Send(format!("{line}\n"))
}

/// A bookshop of its own (its own stock and change registry: tests run in
/// parallel).
fn bookshop(changes: Changes) -> &'static Server<'static, Shop> {
    let changes: &'static Changes = Box::leak(Box::new(changes));
    Box::leak(Box::new(shop::server_in(
        0,
        shop::DEFAULT_STATE_KEY,
        changes,
    )))
}

/// A blocking stream: `read_ready` is false between steps, and the loop's
/// idle hook runs the next `Outside` step there.
struct Scripted {
    steps: VecDeque<Step>,
    current: Vec<u8>,
    output: Vec<u8>,
}

impl Scripted {
    fn new(steps: Vec<Step>) -> Self {
        Self {
            steps: steps.into(),
            current: Vec::new(),
            output: Vec::new(),
        }
    }

    /// Move to the next `Send` (running nothing); true when input is ready
    /// or the script is over (a read then returns 0).
    fn ready(&mut self) -> bool {
        if !self.current.is_empty() {
            return true;
        }
        match self.steps.front() {
            None => true,
            Some(Step::Send(_)) => {
                let Some(Step::Send(s)) = self.steps.pop_front() else {
                    unreachable!()
                };
                self.current = s.into_bytes();
                true
            }
            Some(Step::Outside(_)) => false,
        }
    }

    fn outside(&mut self, server: &Server<'static, Shop>) {
        if let Some(Step::Outside(f)) = self.steps.front() {
            f(server);
            self.steps.pop_front();
        }
    }

    fn take(&mut self, buf: &mut [u8]) -> usize {
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current[..n]);
        self.current.drain(..n);
        n
    }

    fn lines(&self) -> Vec<Value> {
        String::from_utf8(self.output.clone())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }
}

impl embedded_io::ErrorType for Scripted {
    type Error = core::convert::Infallible;
}

impl embedded_io::Read for Scripted {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        assert!(self.ready(), "read while no input is ready");
        Ok(self.take(buf))
    }
}

impl embedded_io::ReadReady for Scripted {
    fn read_ready(&mut self) -> Result<bool, Self::Error> {
        Ok(self.ready())
    }
}

impl embedded_io::Write for Scripted {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        self.output.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// The async twin: a read is `Pending` while an `Outside` step is next; the
/// loop's change future runs that step (as a sensor task would) and wakes.
struct AsyncScripted(std::cell::RefCell<Scripted>, &'static Server<'static, Shop>);

impl embedded_io_async::ErrorType for &AsyncScripted {
    type Error = core::convert::Infallible;
}

impl embedded_io_async::Read for &AsyncScripted {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        std::future::poll_fn(|_| {
            let mut s = self.0.borrow_mut();
            if s.ready() {
                Poll::Ready(Ok(s.take(buf)))
            } else {
                Poll::Pending
            }
        })
        .await
    }
}

impl embedded_io_async::Write for &AsyncScripted {
    async fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        self.0.borrow_mut().output.extend_from_slice(buf);
        Ok(buf.len())
    }

    async fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1_000_000 {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
    }
    panic!("the serve loop never finished");
}

/// Ready once the script's next `Outside` step has run.
struct Outside<'a>(&'a AsyncScripted);

impl Future for Outside<'_> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        let mut s = self.0.0.borrow_mut();
        if s.current.is_empty() && matches!(s.steps.front(), Some(Step::Outside(_))) {
            s.outside(self.0.1);
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// Run the script through both loops (the same server kind, each its own
/// state); assert they wrote the same bytes; the lines.
fn run<const K: usize, const U: usize>(
    changes: fn() -> Changes,
    steps: fn() -> Vec<Step>,
) -> Vec<Value> {
    let mut inb = [0u8; 4096];
    let mut outb = [0u8; 4096];

    let server = bookshop(changes());
    let mut blocking = Scripted::new(steps());
    let io = &mut blocking;
    let mut waiting = Waiting::<2, 1024>::new();
    let mut subs = Subscriptions::<K, U>::new();
    serve_subscribed(
        server,
        io,
        &mut inb,
        &mut outb,
        &mut waiting,
        &mut subs,
        |io| io.outside(server),
    )
    .unwrap();

    let server = bookshop(changes());
    let pipe = AsyncScripted(std::cell::RefCell::new(Scripted::new(steps())), server);
    let mut waiting = Waiting::<2, 1024>::new();
    let mut subs = Subscriptions::<K, U>::new();
    let mut io = &pipe;
    block_on(serve_async_subscribed(
        server,
        &mut io,
        &mut inb,
        &mut outb,
        &mut waiting,
        &mut subs,
        || Outside(&pipe),
    ))
    .unwrap();
    let async_out = pipe.0.borrow().output.clone();
    assert_eq!(
        String::from_utf8(async_out).unwrap(),
        String::from_utf8(blocking.output.clone()).unwrap(),
        "async and blocking loops differ"
    );

    // The async-tools loop with a store and subscriptions (no async tool
    // here): the same bytes again.
    let server = bookshop(changes());
    let pipe = AsyncScripted(std::cell::RefCell::new(Scripted::new(steps())), server);
    let mut waiting = Waiting::<2, 1024>::new();
    let mut subs = Subscriptions::<K, U>::new();
    let mut notes = [0u8; 256];
    let mut io = &pipe;
    block_on(serve_async_tools_subscribed(
        server,
        &mut io,
        &mut inb,
        &mut outb,
        &mut notes,
        &(),
        &mut waiting,
        &mut subs,
        || Outside(&pipe),
    ))
    .unwrap();
    let tools_out = pipe.0.borrow().output.clone();
    assert_eq!(
        String::from_utf8(tools_out).unwrap(),
        String::from_utf8(blocking.output.clone()).unwrap(),
        "the async-tools loop and the blocking loop differ"
    );
    blocking.lines()
}

fn init() -> Step {
    send(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    )
}

fn initialized() -> Step {
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
}

fn modern(id: u32, method: &str, params: &str) -> Step {
    let sep = if params.is_empty() { "" } else { "," };
    send(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params}{sep}{MODERN}}}}}"#
    ))
}

fn req(id: u32, method: &str, params: &str) -> Step {
    send(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
    ))
}

fn buy(id: u32, title: &str) -> Step {
    req(
        id,
        "tools/call",
        &format!(r#"{{"name":"buy","arguments":{{"title":"{title}"}}}}"#),
    )
}

fn cancel(id: u32) -> Step {
    send(&format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#
    ))
}

fn restock() -> Step {
    Step::Outside(|s| assert!(s.state().restock()))
}

fn ok(id: u32, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn err(id: u32, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn text(id: u32, text: &str) -> Value {
    ok(
        id,
        json!({"content": [{"type": "text", "text": text}], "isError": false}),
    )
}

fn updated(uri: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}})
}

fn stamp() -> Value {
    json!({"io.modelcontextprotocol/serverInfo": {"name": "Bookshop", "version": "0.1.0"}})
}

/// A modern result: `resultType` and the server stamp added.
fn modern_ok(id: u32, mut result: Value) -> Value {
    result["resultType"] = json!("complete");
    result["_meta"] = stamp();
    ok(id, result)
}

/// A notification of the listen request `sub`.
fn tagged(method: &str, mut params: Value, sub: u32) -> Value {
    params["_meta"] = json!({"io.modelcontextprotocol/subscriptionId": sub});
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// The answers after `initialize` (checked: `subscribe: true`).
fn session<const K: usize, const U: usize>(
    changes: fn() -> Changes,
    steps: fn() -> Vec<Step>,
) -> Vec<Value> {
    let mut out = run::<K, U>(changes, steps);
    let init = out.remove(0);
    assert_eq!(
        init["result"]["capabilities"]["resources"]["subscribe"],
        true
    );
    out
}

fn handshake(mut steps: Vec<Step>) -> Vec<Step> {
    steps.insert(0, initialized());
    steps.insert(0, init());
    steps
}

#[test]
fn subscribe_then_changes_inside_and_outside_requests() {
    let out = session::<4, 64>(Changes::new, || {
        handshake(vec![
            req(1, "resources/subscribe", r#"{"uri":"books://stock"}"#),
            buy(2, "Dune"),
            // A delivery while the server waits for input: told without
            // asking anything.
            restock(),
            req(3, "ping", "{}"),
            req(4, "resources/unsubscribe", r#"{"uri":"books://stock"}"#),
            buy(5, "Dune"),
            restock(),
            req(6, "ping", "{}"),
        ])
    });
    assert_eq!(
        out,
        [
            ok(1, json!({})),
            text(2, "Bought Dune (2 left)"),
            updated("books://stock"),
            updated("books://stock"),
            ok(3, json!({})),
            ok(4, json!({})),
            text(5, "Bought Dune (2 left)"),
            ok(6, json!({})),
        ]
    );
}

#[test]
fn one_notification_per_change_and_only_for_subscribed_uris() {
    let out = session::<4, 64>(Changes::new, || {
        handshake(vec![
            // Twice the same URI: one subscription, one notification.
            req(1, "resources/subscribe", r#"{"uri":"books://stock"}"#),
            req(2, "resources/subscribe", r#"{"uri":"books://stock"}"#),
            // A template URI can be subscribed; nothing ever changes it here.
            req(3, "resources/subscribe", r#"{"uri":"books://Dune"}"#),
            buy(4, "Neuromancer"),
            buy(5, "Neuromancer"),
            // Two changes before the server looks: one notification (it
            // says "read again"; README, "Subscriptions").
            Step::Outside(|s| {
                assert!(s.state().restock());
                s.change_registry()
                    .unwrap()
                    .resource_updated("books://stock");
            }),
            req(6, "ping", "{}"),
        ])
    });
    assert_eq!(
        out,
        [
            ok(1, json!({})),
            ok(2, json!({})),
            ok(3, json!({})),
            text(4, "Bought Neuromancer (0 left)"),
            updated("books://stock"),
            ok(
                5,
                json!({"content": [{"type": "text", "text": "Error executing tool buy: Neuromancer is out of stock."}], "isError": true})
            ),
            updated("books://stock"),
            ok(6, json!({})),
        ]
    );
}

#[test]
fn unknown_uri_and_bad_params_are_invalid_params() {
    let out = session::<4, 64>(Changes::new, || {
        handshake(vec![
            req(1, "resources/subscribe", r#"{"uri":"nobooks://x"}"#),
            req(2, "resources/unsubscribe", r#"{"uri":"nobooks://x"}"#),
            req(3, "resources/subscribe", r#"{}"#),
            req(4, "resources/subscribe", r#"{"uri":7}"#),
            // Escaped, and repeated (the first counts, as `Value::get` finds).
            req(
                5,
                "resources/subscribe",
                r#"{"uri":"nobooks:\/\/x","uri":"books://stock"}"#,
            ),
            req(6, "resources/unsubscribe", r#"{"uri":"books:\/\/stock"}"#),
        ])
    });
    let unknown = |id| json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "Unknown resource: nobooks://x", "data": {"uri": "nobooks://x"}}});
    assert_eq!(out[..2], [unknown(1), unknown(2)]);
    assert_eq!(out[2]["error"]["code"], -32602);
    assert_eq!(out[3]["error"]["code"], -32602);
    assert_eq!(out[4], unknown(5));
    assert_eq!(out[5], json!({"jsonrpc": "2.0", "id": 6, "result": {}}));
    assert_eq!(out.len(), 6);
}

#[test]
fn the_bound_is_an_error_naming_it_and_keeps_what_is_there() {
    let out = session::<2, 16>(Changes::new, || {
        handshake(vec![
            req(1, "resources/subscribe", r#"{"uri":"books://stock"}"#),
            req(2, "resources/subscribe", r#"{"uri":"books://Dune"}"#),
            req(3, "resources/subscribe", r#"{"uri":"books://catalog"}"#),
            buy(4, "Dune"),
            // Room again after an unsubscribe; 17 bytes are longer than the
            // 16-byte slot, 15 fit.
            req(5, "resources/unsubscribe", r#"{"uri":"books://Dune"}"#),
            req(6, "resources/subscribe", r#"{"uri":"books://Neuromanc"}"#),
            req(7, "resources/subscribe", r#"{"uri":"books://catalog"}"#),
        ])
    });
    assert_eq!(
        out,
        [
            ok(1, json!({})),
            ok(2, json!({})),
            err(
                3,
                -32603,
                "cannot subscribe to books://catalog: all 2 subscriptions of this session are in use"
            ),
            text(4, "Bought Dune (2 left)"),
            updated("books://stock"),
            ok(5, json!({})),
            err(
                6,
                -32603,
                "cannot subscribe to books://Neuromanc: the URI is longer than the 16-byte subscription slot"
            ),
            ok(7, json!({})),
        ]
    );
}

#[test]
fn list_changes_reach_initialized_sessions_where_announced() {
    let out = run::<4, 64>(
        || Changes::new().tools_list_changes().prompts_list_changes(),
        || {
            vec![
                // Before the handshake: nothing is sent.
                Step::Outside(|s| s.change_registry().unwrap().tools_changed()),
                init(),
                initialized(),
                Step::Outside(|s| {
                    let c = s.change_registry().unwrap();
                    c.tools_changed();
                    c.prompts_changed();
                    // Not advertised: not sent.
                    c.resources_changed();
                }),
                req(1, "ping", "{}"),
            ]
        },
    );
    let caps = &out[0]["result"]["capabilities"];
    assert_eq!(caps["tools"]["listChanged"], true);
    assert_eq!(caps["prompts"]["listChanged"], true);
    assert_eq!(caps["resources"]["listChanged"], false);
    let method = |m: &str| json!({"jsonrpc": "2.0", "method": m});
    assert_eq!(
        out[1..],
        [
            method("notifications/tools/list_changed"),
            method("notifications/prompts/list_changed"),
            ok(1, json!({})),
        ]
    );
}

#[test]
fn handshake_era_has_no_listen_and_modern_has_no_subscribe() {
    let out = session::<4, 64>(Changes::new, || {
        handshake(vec![req(
            1,
            "subscriptions/listen",
            r#"{"notifications":{"toolsListChanged":true}}"#,
        )])
    });
    assert_eq!(out[0]["error"]["code"], -32601);
    let out = run::<4, 64>(Changes::new, || {
        vec![
            modern(1, "resources/subscribe", r#""uri":"books://stock""#),
            modern(2, "resources/unsubscribe", r#""uri":"books://stock""#),
        ]
    });
    assert_eq!(out[0]["error"]["code"], -32601);
    assert_eq!(out[1]["error"]["code"], -32601);
}

#[test]
fn listen_acknowledges_tags_serves_others_and_ends_on_cancel() {
    let out = run::<4, 64>(
        || Changes::new().tools_list_changes(),
        || {
            vec![
                modern(
                    1,
                    "subscriptions/listen",
                    r#""notifications":{"toolsListChanged":true,"resourceSubscriptions":["books://stock"]}"#,
                ),
                modern(
                    2,
                    "tools/call",
                    r#""name":"buy","arguments":{"title":"Dune"}"#,
                ),
                Step::Outside(|s| s.change_registry().unwrap().tools_changed()),
                restock(),
                cancel(1),
                // After the cancel: nothing more is sent for it.
                modern(
                    3,
                    "tools/call",
                    r#""name":"buy","arguments":{"title":"Dune"}"#,
                ),
            ]
        },
    );
    let mut end = stamp();
    end["io.modelcontextprotocol/subscriptionId"] = json!(1);
    assert_eq!(
        out,
        [
            tagged(
                "notifications/subscriptions/acknowledged",
                json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["books://stock"]}}),
                1
            ),
            modern_ok(
                2,
                json!({"content": [{"type": "text", "text": "Bought Dune (2 left)"}], "isError": false})
            ),
            tagged(
                "notifications/resources/updated",
                json!({"uri": "books://stock"}),
                1
            ),
            tagged("notifications/tools/list_changed", json!({}), 1),
            tagged(
                "notifications/resources/updated",
                json!({"uri": "books://stock"}),
                1
            ),
            ok(1, json!({"resultType": "complete", "_meta": end})),
            // The restock brought Dune back to 3.
            modern_ok(
                3,
                json!({"content": [{"type": "text", "text": "Bought Dune (2 left)"}], "isError": false})
            ),
        ]
    );
}

#[test]
fn listen_filters_deliver_only_what_was_asked() {
    // Only the tool list: resource changes are not sent.
    let out = run::<4, 64>(
        || Changes::new().tools_list_changes().prompts_list_changes(),
        || {
            vec![
                modern(
                    7,
                    "subscriptions/listen",
                    r#""notifications":{"toolsListChanged":true}"#,
                ),
                Step::Outside(|s| {
                    let c = s.change_registry().unwrap();
                    c.prompts_changed();
                    c.resource_updated("books://stock");
                    c.tools_changed();
                }),
                cancel(7),
            ]
        },
    );
    assert_eq!(out.len(), 3, "{out:?}");
    assert_eq!(
        out[0]["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    assert_eq!(
        out[1],
        tagged("notifications/tools/list_changed", json!({}), 7)
    );
    assert_eq!(out[2]["id"], 7);

    // Only prompts; and a resource subscription alone.
    let out = run::<4, 64>(
        || Changes::new().tools_list_changes().prompts_list_changes(),
        || {
            vec![
                modern(
                    8,
                    "subscriptions/listen",
                    r#""notifications":{"promptsListChanged":true,"toolsListChanged":false}"#,
                ),
                Step::Outside(|s| {
                    let c = s.change_registry().unwrap();
                    c.tools_changed();
                    c.prompts_changed();
                }),
                cancel(8),
                modern(
                    9,
                    "subscriptions/listen",
                    r#""notifications":{"resourceSubscriptions":["books://stock"]}"#,
                ),
                Step::Outside(|s| {
                    let c = s.change_registry().unwrap();
                    c.tools_changed();
                    c.resource_updated("books://catalog");
                    c.resource_updated("books://stock");
                }),
                cancel(9),
            ]
        },
    );
    assert_eq!(
        out[1],
        tagged("notifications/prompts/list_changed", json!({}), 8)
    );
    assert_eq!(out[2]["id"], 8);
    assert_eq!(
        out[3]["params"]["notifications"],
        json!({"resourceSubscriptions": ["books://stock"]})
    );
    assert_eq!(
        out[4],
        tagged(
            "notifications/resources/updated",
            json!({"uri": "books://stock"}),
            9
        )
    );
    assert_eq!(out[5]["id"], 9);
    assert_eq!(out.len(), 6, "{out:?}");
}

#[test]
fn listen_validation() {
    let out = run::<4, 64>(Changes::new, || {
        vec![
            modern(1, "subscriptions/listen", ""),
            modern(2, "subscriptions/listen", r#""notifications":[]"#),
            modern(
                3,
                "subscriptions/listen",
                r#""notifications":{"resourceSubscriptions":["nobooks://x"]}"#,
            ),
            // In a batch: not served there.
            send(&format!(
                r#"[{{"jsonrpc":"2.0","id":4,"method":"subscriptions/listen","params":{{"notifications":{{}},{MODERN}}}}}]"#
            )),
        ]
    });
    for (i, line) in out.iter().take(3).enumerate() {
        assert_eq!(line["id"], i + 1, "{line}");
        assert_eq!(line["error"]["code"], -32602, "{line}");
    }
    assert_eq!(out.len(), 4, "{out:?}");
}
