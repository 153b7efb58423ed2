//! DESIGN.md "Server-initiated traffic → Input requests": handlers that ask
//! the client for input (elicitation, sampling, roots) on every era. On the
//! handshake era the server sends the client JSON-RPC requests and the call
//! waits in a caller-owned `Waiting` store; on 2026-07-28 it answers
//! `input_required` (MRTR).

mod common;

use common::{BOOKSHOP, shop};
use picomcp::mrtr::{Sampling, SamplingContent, SamplingMessage};
use picomcp::schema::Schema;
use picomcp::server::{MAX_ROUNDS, Waiting};
use picomcp::tool::{Arguments, Reply, Tool, ToolDescriptor, ToolOutcome};
use picomcp::{Connection, Server, ServerInfo};
use serde_json::{Value, json};

/// A handshake-era client: one connection and its waiting store.
struct Client<'s, S, const N: usize, const B: usize> {
    server: &'s Server<'s, S>,
    conn: Connection,
    waiting: Waiting<N, B>,
}

impl<'s, S, const N: usize, const B: usize> Client<'s, S, N, B> {
    fn new(server: &'s Server<'s, S>, version: &str, capabilities: Value) -> Self {
        let mut c = Client {
            server,
            conn: Connection::new(),
            waiting: Waiting::new(),
        };
        let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion": version, "capabilities": capabilities,
            "clientInfo": {"name":"t","version":"1"}}});
        let out = c.send(&init);
        assert_eq!(out[0]["result"]["protocolVersion"], version, "{out:?}");
        assert!(
            c.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
                .is_empty()
        );
        c
    }

    /// Send one message; every line the server writes back.
    fn send(&mut self, message: &Value) -> Vec<Value> {
        self.send_raw(&message.to_string())
    }

    fn send_raw(&mut self, line: &str) -> Vec<Value> {
        let mut frame = line.as_bytes().to_vec();
        let mut out = vec![0u8; 8192];
        let n = self
            .server
            .handle_waiting(&mut self.conn, &mut self.waiting, &mut frame, &mut out);
        let text = std::str::from_utf8(&out[..n]).unwrap();
        assert!(text.is_empty() || text.ends_with('\n'), "{text:?}");
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }
}

fn call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":arguments}})
}

fn answer(id: &Value, result: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"result":result})
}

fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{answer}"))
}

const ELICITING: [&str; 2] = ["2025-06-18", "2025-11-25"];

#[test]
fn reserve_asks_through_an_elicitation_request_and_answers_with_its_own_id() {
    for version in ELICITING {
        for (action, content, expected) in [
            ("accept", json!({"confirm": true}), "Reserved Dune"),
            ("accept", json!({"confirm": false}), "Not reserved: Dune"),
            ("decline", json!(null), "Not reserved: Dune"),
            ("cancel", json!(null), "Not reserved: Dune"),
        ] {
            let mut c = Client::<_, 2, 2048>::new(&BOOKSHOP, version, json!({"elicitation":{}}));
            let out = c.send(&call(41, "reserve", json!({"title":"Dune"})));
            // One request to the client, and no answer yet.
            assert_eq!(out.len(), 1, "{out:?}");
            let ask = &out[0];
            assert_eq!(ask["method"], "elicitation/create");
            assert_eq!(ask["params"]["mode"], "form");
            assert_eq!(ask["params"]["message"], "Reserve Dune?");
            assert_eq!(
                ask["params"]["requestedSchema"]["required"],
                json!(["confirm"])
            );
            assert_eq!(
                ask["params"]["requestedSchema"]["properties"]["confirm"]["type"],
                "boolean"
            );
            assert!(ask["id"].is_string(), "{ask}");
            assert_eq!(c.waiting.len(), 1);
            let mut result = json!({"action": action});
            if !content.is_null() {
                result["content"] = content;
            }
            let out = c.send(&answer(&ask["id"], result));
            assert_eq!(out.len(), 1, "{out:?}");
            assert_eq!(out[0]["id"], 41);
            assert_eq!(text(&out[0]), expected, "{version} {action}");
            assert_eq!(out[0]["result"]["isError"], false);
            assert!(c.waiting.is_empty());
        }
    }
}

const HANDSHAKE: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

#[test]
fn sampling_and_roots_ask_on_every_handshake_version() {
    for version in HANDSHAKE {
        let mut c = Client::<_, 1, 2048>::new(&BOOKSHOP, version, json!({"sampling":{}}));
        let ask = c.send(&call(1, "blurb", json!({"title":"Dune"})))[0].clone();
        assert_eq!(ask["method"], "sampling/createMessage", "{version}");
        let out = c.send(&answer(
            &ask["id"],
            json!({"role":"assistant","content":{"type":"text","text":"Spice."},"model":"m"}),
        ));
        assert_eq!(text(&out[0]), "Spice.", "{version}");
        let mut c = Client::<_, 1, 1024>::new(&ASKER, version, json!({"roots":{}}));
        let ask = c.send(&call(2, "roots", json!({"rounds": 1})))[0].clone();
        assert_eq!(ask["method"], "roots/list", "{version}");
        let out = c.send(&answer(&ask["id"], json!({"roots":[{"uri":"file:///x"}]})));
        assert_eq!(text(&out[0]), "1 roots after 1 rounds", "{version}");
    }
}

#[test]
fn blurb_asks_the_clients_model() {
    let mut c = Client::<_, 1, 2048>::new(&BOOKSHOP, "2025-11-25", json!({"sampling":{}}));
    let out = c.send(&call(7, "blurb", json!({"title":"Neuromancer"})));
    assert_eq!(out.len(), 1);
    let ask = &out[0];
    assert_eq!(ask["method"], "sampling/createMessage");
    assert_eq!(
        ask["params"],
        json!({"messages":[{"role":"user","content":{"type":"text","text":"Write a one-line blurb for Neuromancer by William Gibson."}}],"maxTokens":100})
    );
    let out = c.send(&answer(
        &ask["id"],
        json!({"role":"assistant","content":{"type":"text","text":"Cyberspace, \"jacked in\"."},"model":"m","stopReason":"endTurn"}),
    ));
    assert_eq!(out[0]["id"], 7);
    assert_eq!(text(&out[0]), "Cyberspace, \"jacked in\".");
    // An unknown title is the tool's own error, before anything is asked.
    let out = c.send(&call(8, "blurb", json!({"title":"Nothing"})));
    assert_eq!(
        text(&out[0]),
        "Error executing tool blurb: No book titled 'Nothing' in the catalog."
    );
    assert_eq!(out[0]["result"]["isError"], true);
}

#[test]
fn other_requests_are_served_while_a_call_waits() {
    let mut c = Client::<_, 2, 2048>::new(&BOOKSHOP, "2025-11-25", json!({"elicitation":{}}));
    let ask = c.send(&call(1, "reserve", json!({"title":"Dune"})))[0].clone();
    let out = c.send(&call(2, "get_author", json!({"title":"Dune"})));
    assert_eq!(text(&out[0]), "Frank Herbert");
    let out = c.send(&json!({"jsonrpc":"2.0","id":3,"method":"ping"}));
    assert_eq!(out[0], json!({"jsonrpc":"2.0","id":3,"result":{}}));
    // Two calls wait at once; each is answered with its own id.
    let ask2 = c.send(&call(4, "reserve", json!({"title":"Neuromancer"})))[0].clone();
    assert_ne!(ask["id"], ask2["id"]);
    let out = c.send(&answer(
        &ask2["id"],
        json!({"action":"accept","content":{"confirm":true}}),
    ));
    assert_eq!(
        (out[0]["id"].clone(), text(&out[0])),
        (json!(4), "Reserved Neuromancer")
    );
    let out = c.send(&answer(
        &ask["id"],
        json!({"action":"accept","content":{"confirm":true}}),
    ));
    assert_eq!(
        (out[0]["id"].clone(), text(&out[0])),
        (json!(1), "Reserved Dune")
    );
}

#[test]
fn cancelling_a_waiting_call_drops_it_and_its_late_answer_is_ignored() {
    let mut c = Client::<_, 1, 2048>::new(&BOOKSHOP, "2025-11-25", json!({"elicitation":{}}));
    let ask = c.send(&call(9, "reserve", json!({"title":"Dune"})))[0].clone();
    let out = c.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"user"}}));
    assert!(out.is_empty());
    assert!(c.waiting.is_empty());
    let out = c.send(&answer(
        &ask["id"],
        json!({"action":"accept","content":{"confirm":true}}),
    ));
    assert!(out.is_empty(), "{out:?}");
    // A cancellation for another id leaves a waiting call alone.
    let ask = c.send(&call(10, "reserve", json!({"title":"Dune"})))[0].clone();
    assert!(
        c.send(
            &json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"10"}})
        )
        .is_empty()
    );
    assert_eq!(c.waiting.len(), 1);
    let out = c.send(&answer(&ask["id"], json!({"action":"decline"})));
    assert_eq!(text(&out[0]), "Not reserved: Dune");
}

#[test]
fn a_client_error_answer_fails_the_original_request() {
    let mut c = Client::<_, 1, 2048>::new(&BOOKSHOP, "2025-06-18", json!({"elicitation":{}}));
    let ask = c.send(&call(5, "reserve", json!({"title":"Dune"})))[0].clone();
    let out = c.send(
        &json!({"jsonrpc":"2.0","id":ask["id"],"error":{"code":-1,"message":"User rejected"}}),
    );
    assert_eq!(
        out,
        [
            json!({"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"the client refused input request confirm (elicitation/create): User rejected"}})
        ]
    );
    assert!(c.waiting.is_empty());
}

#[test]
fn answers_with_unknown_ids_are_ignored() {
    let mut c = Client::<_, 1, 2048>::new(&BOOKSHOP, "2025-11-25", json!({"elicitation":{}}));
    let ask = c.send(&call(5, "reserve", json!({"title":"Dune"})))[0].clone();
    let stale = ask["id"]
        .as_str()
        .unwrap()
        .replace("-0\"", "-9\"")
        .replace("-0", "-9");
    for id in [
        json!(5),
        json!("picomcp-0-999-0"),
        json!(stale),
        json!("x"),
        json!(null),
    ] {
        let out = c.send(&answer(
            &id,
            json!({"action":"accept","content":{"confirm":true}}),
        ));
        assert!(out.is_empty(), "{id}: {out:?}");
    }
    assert_eq!(c.waiting.len(), 1);
    let out = c.send(&answer(
        &ask["id"],
        json!({"action":"accept","content":{"confirm":true}}),
    ));
    assert_eq!(text(&out[0]), "Reserved Dune");
}

#[test]
fn a_full_store_refuses_the_new_call_and_keeps_the_waiting_one() {
    let mut c = Client::<_, 1, 2048>::new(&BOOKSHOP, "2025-11-25", json!({"elicitation":{}}));
    let ask = c.send(&call(1, "reserve", json!({"title":"Dune"})))[0].clone();
    let out = c.send(&call(2, "reserve", json!({"title":"Neuromancer"})));
    assert_eq!(
        out,
        [
            json!({"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"cannot wait for the client's input: all 1 waiting-call slots are in use"}})
        ]
    );
    let out = c.send(&answer(
        &ask["id"],
        json!({"action":"accept","content":{"confirm":true}}),
    ));
    assert_eq!(text(&out[0]), "Reserved Dune");
    // Without any store, nothing can wait.
    let mut conn = Connection::new();
    let mut out = vec![0u8; 4096];
    for line in [
        common::init_with("2025-11-25", r#"{"elicitation":{}}"#),
        call(3, "reserve", json!({"title":"Dune"})).to_string(),
    ] {
        let mut frame = line.into_bytes();
        let n = BOOKSHOP.handle(&mut conn, &mut frame, &mut out);
        let v: Value = serde_json::from_slice(&out[..n]).unwrap();
        if v["id"] == 3 {
            assert_eq!(
                v["error"]["message"],
                "cannot wait for the client's input: all 0 waiting-call slots are in use"
            );
        }
    }
}

#[test]
fn a_request_larger_than_a_slot_cannot_wait() {
    let mut c = Client::<_, 1, 100>::new(&BOOKSHOP, "2025-11-25", json!({"elicitation":{}}));
    let out = c.send(&call(1, "reserve", json!({"title":"Dune"})));
    assert_eq!(
        out[0]["error"]["message"],
        "cannot wait for the client's input: it does not fit the 100-byte waiting-call slot"
    );
    // An answer too large for the slot fails the call, naming the slot.
    let mut c = Client::<_, 1, 320>::new(&BOOKSHOP, "2025-11-25", json!({"sampling":{}}));
    let ask = c.send(&call(2, "blurb", json!({"title":"Dune"})))[0].clone();
    let long = "x".repeat(400);
    let out = c.send(&answer(
        &ask["id"],
        json!({"role":"assistant","content":{"type":"text","text":long},"model":"m"}),
    ));
    assert_eq!(
        out[0],
        json!({"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"cannot wait for the client's input: it does not fit the 320-byte waiting-call slot"}})
    );
    assert!(c.waiting.is_empty());
}

#[test]
fn a_missing_capability_is_32021_on_every_era() {
    let missing = |cap: &str| json!({"code":-32021,"message":format!("Missing required client capability: {cap}"),"data":{"requiredCapabilities":{cap:{}}}});
    // Elicitation exists from 2025-06-18 on: declared on older versions, it
    // does not count.
    for (version, caps) in [
        ("2024-11-05", json!({"elicitation":{}})),
        ("2025-03-26", json!({"elicitation":{}})),
        ("2025-06-18", json!({"sampling":{}})),
        ("2025-11-25", json!({})),
    ] {
        let mut c = Client::<_, 1, 2048>::new(&BOOKSHOP, version, caps);
        let out = c.send(&call(1, "reserve", json!({"title":"Dune"})));
        assert_eq!(out[0]["error"], missing("elicitation"), "{version}");
        assert!(c.waiting.is_empty());
    }
    let mut c = Client::<_, 1, 2048>::new(&BOOKSHOP, "2025-11-25", json!({"elicitation":{}}));
    let out = c.send(&call(1, "blurb", json!({"title":"Dune"})));
    assert_eq!(out[0]["error"], missing("sampling"));
    // 2026-07-28: from the request's envelope.
    let mut conn = Connection::new();
    let mut out = vec![0u8; 4096];
    let mut frame = modern_call(
        1,
        "blurb",
        json!({"title":"Dune"}),
        json!({"elicitation":{}}),
    )
    .into_bytes();
    let n = BOOKSHOP.handle(&mut conn, &mut frame, &mut out);
    let v: Value = serde_json::from_slice(&out[..n]).unwrap();
    assert_eq!(v["error"], missing("sampling"));
}

fn modern_call(id: u64, tool: &str, arguments: Value, capabilities: Value) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":arguments,
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":capabilities}}})
    .to_string()
}

#[test]
fn on_2026_07_28_the_same_handler_answers_input_required() {
    let mut conn = Connection::new();
    let mut out = vec![0u8; 4096];
    let mut frame =
        modern_call(3, "blurb", json!({"title":"Dune"}), json!({"sampling":{}})).into_bytes();
    let n = BOOKSHOP.handle(&mut conn, &mut frame, &mut out);
    let v: Value = serde_json::from_slice(&out[..n]).unwrap();
    assert_eq!(v["result"]["resultType"], "input_required");
    let request = &v["result"]["inputRequests"]["blurb"];
    assert_eq!(request["method"], "sampling/createMessage");
    assert_eq!(request["params"]["maxTokens"], 100);
    let mut retry: Value = serde_json::from_str(&modern_call(
        4,
        "blurb",
        json!({"title":"Dune"}),
        json!({"sampling":{}}),
    ))
    .unwrap();
    retry["params"]["inputResponses"] =
        json!({"blurb":{"role":"assistant","content":{"type":"text","text":"Spice."},"model":"m"}});
    let mut frame = retry.to_string().into_bytes();
    let n = BOOKSHOP.handle(&mut conn, &mut frame, &mut out);
    let v: Value = serde_json::from_slice(&out[..n]).unwrap();
    assert_eq!(text(&v), "Spice.");
}

// A tool that asks for two things at once.
fn two_tool<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    if let (Some(a), Some(b)) = (reply.input_response("name"), reply.input_response("model")) {
        let name = a
            .content()
            .and_then(|c| c.get("name"))
            .and_then(|n| n.as_str());
        let model = b.value().get("model").and_then(|m| m.as_str());
        if let (Some(name), Some(model)) = (name, model) {
            return reply.text_fmt(format_args!("{name} {model}"));
        }
        return reply.text("missing");
    }
    let messages = [SamplingMessage::user(SamplingContent::Text("hi"))];
    let mut ask = reply.input_required();
    ask.elicit("name", format_args!("Name?"), &NAME_FORM)
        .sample(
            "model",
            &Sampling::new(&messages, 5).system_prompt("be brief"),
        );
    ask.finish()
}

const NAME_FORM: Schema =
    Schema::object(&[picomcp::schema::Property::new("name", Schema::string())]);
static ROOTS_TOOLS: [Tool<()>; 2] = [
    Tool::new(
        ToolDescriptor::new(
            "roots",
            &Schema::object(&[picomcp::schema::Property::new("rounds", Schema::integer())]),
        ),
        common::roots_tool,
    ),
    Tool::new(ToolDescriptor::new("two", &Schema::object(&[])), two_tool),
];
static ASKER: Server<'static, ()> =
    Server::new(ServerInfo::new("asker", "1"), ()).tools(&ROOTS_TOOLS);

#[test]
fn several_rounds_then_the_answer_and_past_eight_rounds_an_error() {
    let roots = json!({"roots":[{"uri":"file:///a"},{"uri":"file:///b"}]});
    for rounds in [1u8, 3, MAX_ROUNDS] {
        let mut c = Client::<_, 1, 1024>::new(&ASKER, "2025-11-25", json!({"roots":{}}));
        let mut out = c.send(&call(11, "roots", json!({"rounds": rounds})));
        for _ in 0..rounds {
            assert_eq!(out[0]["method"], "roots/list", "{out:?}");
            assert_eq!(out[0]["params"], json!({}));
            out = c.send(&answer(&out[0]["id"], roots.clone()));
        }
        assert_eq!(out[0]["id"], 11);
        assert_eq!(text(&out[0]), format!("2 roots after {rounds} rounds"));
    }
    let mut c = Client::<_, 1, 1024>::new(&ASKER, "2025-11-25", json!({"roots":{}}));
    let mut out = c.send(&call(12, "roots", json!({"rounds": MAX_ROUNDS + 1})));
    for _ in 0..MAX_ROUNDS {
        out = c.send(&answer(&out[0]["id"], roots.clone()));
    }
    assert_eq!(
        out,
        [
            json!({"jsonrpc":"2.0","id":12,"error":{"code":-32603,"message":"the handler asked for input more than 8 times"}})
        ]
    );
    assert!(c.waiting.is_empty());
}

#[test]
fn two_input_requests_at_once_both_answered_in_any_order() {
    let mut c = Client::<_, 1, 2048>::new(
        &ASKER,
        "2025-11-25",
        json!({"elicitation":{},"sampling":{}}),
    );
    let out = c.send(&call(1, "two", json!({})));
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(out[0]["method"], "elicitation/create");
    assert_eq!(out[1]["method"], "sampling/createMessage");
    assert_eq!(out[1]["params"]["systemPrompt"], "be brief");
    assert!(
        c.send(&answer(
            &out[1]["id"],
            json!({"role":"assistant","content":{"type":"text","text":"x"},"model":"m1"})
        ))
        .is_empty()
    );
    let done = c.send(&answer(
        &out[0]["id"],
        json!({"action":"accept","content":{"name":"Ada"}}),
    ));
    assert_eq!(text(&done[0]), "Ada m1");
}

#[test]
fn the_stdio_loop_asks_on_the_same_stream() {
    // The whole exchange through `serve_waiting`: requests, the client's
    // answer, other requests in between.
    let ask_id = r#""picomcp-0-1-0""#;
    let input = [
        common::init_with("2025-11-25", r#"{"elicitation":{}}"#),
        call(1, "reserve", json!({"title":"Dune"})).to_string(),
        json!({"jsonrpc":"2.0","id":2,"method":"ping"}).to_string(),
        format!(r#"{{"jsonrpc":"2.0","id":{ask_id},"result":{{"action":"accept","content":{{"confirm":true}}}}}}"#),
    ]
    .join("\n")
        + "\n";
    let mut io = common::MemIo {
        input: input.as_bytes(),
        chunk: 7,
        output: Vec::new(),
    };
    let (mut inb, mut outb) = (vec![0u8; 4096], vec![0u8; 4096]);
    let mut waiting = Waiting::<1, 2048>::new();
    picomcp::transport::serve_waiting(&shop::server(), &mut io, &mut inb, &mut outb, &mut waiting)
        .unwrap();
    let lines: Vec<Value> = String::from_utf8(io.output)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert_eq!(lines[1]["method"], "elicitation/create");
    assert_eq!(lines[1]["id"].to_string(), ask_id);
    assert_eq!(lines[2], json!({"jsonrpc":"2.0","id":2,"result":{}}));
    assert_eq!(
        (lines[3]["id"].clone(), text(&lines[3])),
        (json!(1), "Reserved Dune")
    );
}

/// The waiting rules, version by version, with a call that asks for roots
/// (roots and sampling exist on every handshake version): other requests
/// served meanwhile, unknown ids ignored, a client error fails the call,
/// cancellation drops it, a full store refuses, more than 8 rounds fail.
#[test]
fn the_waiting_rules_hold_on_every_handshake_version() {
    let roots = json!({"roots":[{"uri":"file:///a"}]});
    let ping = json!({"jsonrpc":"2.0","id":99,"method":"ping"});
    for version in HANDSHAKE {
        let mut c = Client::<_, 1, 1024>::new(&ASKER, version, json!({"roots":{}}));
        // Served while waiting; unknown ids ignored; then the answer.
        let ask = c.send(&call(1, "roots", json!({"rounds": 1})))[0].clone();
        assert_eq!(c.send(&ping)[0]["result"], json!({}), "{version}");
        assert!(
            c.send(&answer(&json!("picomcp-0-999-0"), roots.clone()))
                .is_empty()
        );
        let out = c.send(&answer(&ask["id"], roots.clone()));
        assert_eq!(
            (out[0]["id"].clone(), text(&out[0])),
            (json!(1), "1 roots after 1 rounds"),
            "{version}"
        );
        // A client error fails the call.
        let ask = c.send(&call(2, "roots", json!({"rounds": 1})))[0].clone();
        let out = c.send(
            &json!({"jsonrpc":"2.0","id":ask["id"],"error":{"code":-32601,"message":"no roots"}}),
        );
        assert_eq!(
            out[0]["error"],
            json!({"code":-32603,"message":"the client refused input request roots (roots/list): no roots"}),
            "{version}"
        );
        // Cancelled: no answer, ever; the late answer is ignored.
        let ask = c.send(&call(3, "roots", json!({"rounds": 1})))[0].clone();
        assert!(c.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}})).is_empty());
        assert!(
            c.send(&answer(&ask["id"], roots.clone())).is_empty(),
            "{version}"
        );
        // The store holds one call: a second one is refused, the first kept.
        let ask = c.send(&call(4, "roots", json!({"rounds": 1})))[0].clone();
        let out = c.send(&call(5, "roots", json!({"rounds": 1})));
        assert_eq!(
            out[0]["error"]["message"],
            "cannot wait for the client's input: all 1 waiting-call slots are in use",
            "{version}"
        );
        assert_eq!(
            text(&c.send(&answer(&ask["id"], roots.clone()))[0]),
            "1 roots after 1 rounds"
        );
        // More than 8 rounds.
        let mut out = c.send(&call(6, "roots", json!({"rounds": MAX_ROUNDS + 1})));
        for _ in 0..MAX_ROUNDS {
            out = c.send(&answer(&out[0]["id"], roots.clone()));
        }
        assert_eq!(
            out[0]["error"]["message"], "the handler asked for input more than 8 times",
            "{version}"
        );
        assert!(c.waiting.is_empty());
    }
}

/// Asks for the roots with `n` bytes of state (`{"n": n}`); run again with
/// its state, tells how many bytes came back.
fn stash_tool<'a>(_: &'a (), args: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    #[derive(serde::Deserialize)]
    struct Args {
        n: usize,
    }
    let Args { n } = args.parse()?;
    if let Some(state) = reply.request_state() {
        let same = state.iter().all(|&b| b == b's');
        return reply.text_fmt(format_args!(
            "{} bytes of state back, same: {same}",
            state.len()
        ));
    }
    let payload = [b's'; 2 * picomcp::mrtr::MAX_STATE];
    let mut ask = reply.input_required();
    ask.roots("roots")
        .state(payload.get(..n).unwrap_or(&payload));
    ask.finish()
}

static STASH_TOOLS: [Tool<()>; 1] = [Tool::new(
    ToolDescriptor::new(
        "stash",
        &Schema::object(&[picomcp::schema::Property::new("n", Schema::integer())]),
    ),
    stash_tool,
)];
/// A test key (not a secret: it seals nothing outside this test).
static STASHER: Server<'static, ()> = Server::new(ServerInfo::new("stasher", "1"), ())
    .tools(&STASH_TOOLS)
    .request_state_key(b"picomcp test key: asking.rs, not a secret");

const STATE_REFUSED: &str = "a handler answered input_required without inputRequests or requestState, or its requestState could not be sealed (is a request-state key set? at most 96 bytes)";

/// `mrtr::MAX_STATE` at its edge, on both eras: a handler's state of
/// exactly that many bytes comes back whole on the retry (kept with the
/// waiting call on the handshake era, sealed into `requestState` on
/// 2026-07-28); one byte more is the handler's bug, `-32603`, and nothing
/// waits.
#[test]
fn request_state_at_the_limit_and_one_past_on_both_eras() {
    let max = picomcp::mrtr::MAX_STATE;
    assert_eq!(max, 96, "the README's limits table says 96");
    let roots = json!({"roots":[{"uri":"file:///a"}]});
    // The handshake era: the store keeps the state.
    let mut c = Client::<_, 1, 1024>::new(&STASHER, "2025-11-25", json!({"roots":{}}));
    let out = c.send(&call(1, "stash", json!({"n": max})));
    assert_eq!(out[0]["method"], "roots/list", "{out:?}");
    let out = c.send(&answer(&out[0]["id"], roots.clone()));
    assert_eq!(out[0]["id"], 1);
    assert_eq!(text(&out[0]), "96 bytes of state back, same: true");
    assert!(c.waiting.is_empty());
    let out = c.send(&call(2, "stash", json!({"n": max + 1})));
    assert_eq!(
        out,
        [json!({"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":STATE_REFUSED}})]
    );
    assert!(c.waiting.is_empty());

    // 2026-07-28: the state goes to the client sealed, and comes back.
    let handle = |frame: String| -> Value {
        let mut conn = Connection::new();
        let mut frame = frame.into_bytes();
        let mut out = vec![0u8; 4096];
        let n = STASHER.handle(&mut conn, &mut frame, &mut out);
        serde_json::from_slice(&out[..n]).unwrap()
    };
    let v = handle(modern_call(
        3,
        "stash",
        json!({"n": max}),
        json!({"roots":{}}),
    ));
    assert_eq!(v["result"]["resultType"], "input_required", "{v}");
    let state = v["result"]["requestState"].clone();
    assert!(state.is_string(), "{v}");
    let mut retry: Value = serde_json::from_str(&modern_call(
        4,
        "stash",
        json!({"n": max}),
        json!({"roots":{}}),
    ))
    .unwrap();
    retry["params"]["requestState"] = state;
    retry["params"]["inputResponses"] = json!({"roots": roots});
    let v = handle(retry.to_string());
    assert_eq!(text(&v), "96 bytes of state back, same: true", "{v}");
    let v = handle(modern_call(
        5,
        "stash",
        json!({"n": max + 1}),
        json!({"roots":{}}),
    ));
    assert_eq!(
        v,
        json!({"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":STATE_REFUSED}})
    );
}
