//! Async handlers that ask the client for input on the handshake era, in
//! the async-tools serve loop with a waiting-call store
//! (`serve_async_tools_subscribed`): a tool over several rounds, a resource
//! and a prompt wait in the store, and each is run again, awaited, with the
//! client's answers (its request and answers read from its slot, not from
//! the frame that brought the last answer). Over HTTP, where the store is
//! shared by the requests in flight, such a call is refused `-32603`
//! (`tests/http_async.rs`).

mod common;

use common::twins::Yield;
use picomcp::prompt::{Messages, Prompt, PromptDescriptor, PromptOutcome, PromptRequest};
use picomcp::resource::{Contents, ReadRequest, Resource, ResourceDescriptor, ResourceOutcome};
use picomcp::schema::{Property, Schema};
use picomcp::tool::{Arguments, Reply, Tool, ToolDescriptor, ToolOutcome};
use picomcp::{Server, ServerInfo};
use serde_json::{Value, json};

/// `common::roots_tool`, after an await.
async fn roots_tool<'a>(state: &'a (), args: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    Yield(2).await;
    common::roots_tool(state, args, reply)
}

/// A resource that needs the client's roots.
async fn roots_resource<'a>(
    _: &'a (),
    req: ReadRequest<'a>,
    mut contents: Contents<'_>,
) -> ResourceOutcome<'a> {
    Yield(1).await;
    if let Some(answer) = contents.input_response("roots") {
        let n = common::roots_in(Some(answer));
        contents.text_fmt(req.uri(), None, format_args!("{n} roots"));
        return contents.finish();
    }
    let mut ask = contents.input_required();
    ask.roots("roots");
    ask.finish()
}

/// A prompt that needs the client's roots.
async fn roots_prompt<'a>(
    _: &'a (),
    _: PromptRequest<'a>,
    mut messages: Messages<'_>,
) -> PromptOutcome<'a> {
    Yield(3).await;
    if let Some(answer) = messages.input_response("roots") {
        let n = common::roots_in(Some(answer));
        messages.user(if n == 2 { "two roots" } else { "other roots" });
        return messages.finish(None);
    }
    let mut ask = messages.input_required();
    ask.roots("roots");
    ask.finish()
}

const ROUNDS: Schema = Schema::object(&[Property::new("rounds", Schema::integer())]);

picomcp::async_handlers! {
    struct Askers for () {
        tools {
            ROOTS: ToolDescriptor::new("roots", &ROUNDS) => roots_tool,
        }
        resources {
            COUNT: ResourceDescriptor::new("roots://count", "count") => roots_resource,
        }
        prompts {
            ASK: PromptDescriptor::new("ask", &[]) => roots_prompt,
        }
    }
}

static TOOLS: [Tool<()>; 1] = [Askers::ROOTS];
static RESOURCES: [Resource<()>; 1] = [Askers::COUNT];
static PROMPTS: [Prompt<()>; 1] = [Askers::ASK];
static SERVER: Server<'static, ()> = Server::new(ServerInfo::new("askers", "1"), ())
    .tools(&TOOLS)
    .resources(&RESOURCES)
    .prompts(&PROMPTS);

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"1"}}}"#;

fn roots_answer(id: &Value) -> String {
    json!({"jsonrpc":"2.0","id":id,"result":{"roots":[{"uri":"file:///a"},{"uri":"file:///b"}]}})
        .to_string()
}

/// A client over the async-tools loop: each step's lines are sent only
/// once the loop has answered everything before them (a fresh loop over
/// the whole transcript so far, as the client cannot know the ids of the
/// server's requests in advance), and what the loop wrote is returned.
fn serve(lines: &[String]) -> Vec<Value> {
    let mut input = Vec::new();
    for line in lines {
        input.extend_from_slice(line.as_bytes());
        input.push(b'\n');
    }
    let mut io = common::MemIo {
        input: &input,
        chunk: 5,
        output: Vec::new(),
    };
    let (mut inb, mut outb, mut notes) = (vec![0u8; 1024], vec![0u8; 4096], [0u8; 256]);
    let mut waiting = picomcp::server::Waiting::<2, 1024>::new();
    let mut subs = picomcp::changes::Subscriptions::<1, 64>::new();
    picomcp::asynch::block_on(picomcp::transport::serve_async_tools_subscribed(
        &SERVER,
        &mut io,
        &mut inb,
        &mut outb,
        &mut notes,
        &Askers,
        &mut waiting,
        &mut subs,
        std::future::pending,
    ))
    .unwrap();
    String::from_utf8(io.output)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Send `request`, then answer each `roots/list` the server sends until
/// the request is answered; every line the server wrote.
fn exchange(request: Value) -> Vec<Value> {
    let mut lines = vec![INIT.to_owned(), request.to_string()];
    for _ in 0..16 {
        let out = serve(&lines);
        let last = out.last().unwrap().clone();
        if last["method"] != "roots/list" {
            return out;
        }
        assert_eq!(last["params"], json!({}), "{out:#?}");
        lines.push(roots_answer(&last["id"]));
    }
    panic!("no answer after 16 rounds");
}

#[test]
fn an_async_tool_waits_round_after_round() {
    for rounds in [1u8, 3] {
        let out = exchange(
            json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"roots","arguments":{"rounds":rounds}}}),
        );
        let requests = out.iter().filter(|l| l["method"] == "roots/list").count();
        assert_eq!(requests, usize::from(rounds), "{out:#?}");
        let last = out.last().unwrap();
        assert_eq!(last["id"], 7, "{out:#?}");
        assert_eq!(
            last["result"]["content"][0]["text"],
            format!("2 roots after {rounds} rounds")
        );
    }
}

#[test]
fn an_async_resource_and_an_async_prompt_wait_for_their_answers() {
    let out = exchange(
        json!({"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":"roots://count"}}),
    );
    let last = out.last().unwrap();
    assert_eq!(last["id"], 8, "{out:#?}");
    assert_eq!(
        last["result"]["contents"],
        json!([{"uri":"roots://count","text":"2 roots"}])
    );

    let out =
        exchange(json!({"jsonrpc":"2.0","id":9,"method":"prompts/get","params":{"name":"ask"}}));
    let last = out.last().unwrap();
    assert_eq!(last["id"], 9, "{out:#?}");
    assert_eq!(
        last["result"]["messages"][0]["content"]["text"],
        "two roots"
    );
}
