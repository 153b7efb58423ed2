//! The official MCP conformance suite's "everything server" fixture
//! (`@modelcontextprotocol/conformance` 0.2.0-alpha.12), on picomcp over the
//! same Streamable HTTP mapping and hyper adapter as `http_bookshop`.
//!
//! ```sh
//! cargo run --release --example conformance_fixture -- --port 3001
//! scripts/conformance.sh   # builds this, runs the suite, checks every check
//! cargo run --release --example conformance_fixture -- --stdio   # stdin/stdout
//! ```
//!
//! Every `test_*` tool, resource, template and prompt the suite's server
//! scenarios call is here, for both eras: the handshake-era scenarios
//! (2025-06-18, 2025-11-25: sampling and elicitation asked for real on the
//! POST's SSE stream) and the 2026-07-28 ones (the diagnostic tools of
//! `server-stateless`, the `input-required-result-*` tools and prompt, a
//! tool whose arguments are mirrored into `Mcp-Param-*` headers). What it
//! does not serve is listed, with the reason, in
//! `tests/conformance/expected-failures.yml`.

#[path = "http/serve.rs"]
mod serve;

use std::sync::{Mutex, OnceLock};

use picomcp::changes::{Changes, Subscriptions};
use picomcp::completion::{CompleteOutcome, CompleteRequest, CompletionRef, Completions};
use picomcp::http::Sessions;
use picomcp::mrtr::{ElicitAction, InputResponse, Sampling, SamplingContent, SamplingMessage};
use picomcp::prompt::{
    Messages, Prompt, PromptArgument, PromptDescriptor, PromptOutcome, PromptRequest, Role,
};
use picomcp::resource::{
    Contents, ReadRequest, Resource, ResourceDescriptor, ResourceOutcome, ResourceTemplate,
    TemplateDescriptor,
};
use picomcp::schema::{Composition, DRAFT_2020_12, Def, Keywords, Literal, Property, Schema};
use picomcp::server::Waiting;
use picomcp::tool::{Arguments, Reply, Tool, ToolDescriptor, ToolOutcome};
use picomcp::transport::{Stdio, StdioWaker, serve_subscribed};
use picomcp::wire::json::{JsonStr, Kind};
use picomcp::{LogLevel, ResourceNotFound, Server, ServerInfo, ToolError};

/// A 1x1 red PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x08, 0xd7, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
    0x00, 0x03, 0x01, 0x01, 0x00, 0x18, 0xdd, 0x8d, 0xb0, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A minimal WAV: 8 kHz, 8-bit mono, 8 samples of silence.
const WAV: &[u8] = &[
    b'R', b'I', b'F', b'F', 44, 0, 0, 0, b'W', b'A', b'V', b'E', b'f', b'm', b't', b' ', 16, 0, 0,
    0, 1, 0, 1, 0, 0x40, 0x1f, 0, 0, 0x40, 0x1f, 0, 0, 1, 0, 8, 0, b'd', b'a', b't', b'a', 8, 0, 0,
    0, 128, 128, 128, 128, 128, 128, 128, 128,
];

const NO_ARGS: Schema = Schema::object(&[]);
const PROMPT_ARG: Schema =
    Schema::object(&[Property::new("prompt", Schema::string())]).required(&["prompt"]);
const MESSAGE_ARG: Schema =
    Schema::object(&[Property::new("message", Schema::string())]).required(&["message"]);

/// The `json-schema-2020-12` scenario's `inputSchema` (suite source
/// `src/scenarios/server/json-schema-2020-12.ts`): `$schema`, `$defs` with
/// an `$anchor`, a `$ref`, `allOf`/`anyOf`, `if`/`then`/`else` and
/// `additionalProperties: false`. picomcp lists it with every keyword and
/// checks the arguments against all of them before the handler runs.
pub const JSON_SCHEMA_2020_12: Schema = Schema::object(&[
    Property::new("name", Schema::string()),
    Property::new(
        "address",
        Schema::ANY.composition(&Composition::new().reference("#/$defs/address")),
    ),
    Property::new(
        "contactMethod",
        Schema::string()
            .with(&Keywords::new().enum_values(&[Literal::Str("phone"), Literal::Str("email")])),
    ),
    Property::new("phone", Schema::string()),
    Property::new("email", Schema::string()),
])
.additional_properties(false)
.composition(
    &Composition::new()
        .dialect(DRAFT_2020_12)
        .defs(&[Def::new("address", &ADDRESS)])
        .all_of(&[Schema::ANY.composition(&Composition::new().any_of(&[
            Schema::ANY.required(&["phone"]),
            Schema::ANY.required(&["email"]),
        ]))])
        .if_(
            &Schema::ANY
                .properties(&[Property::new(
                    "contactMethod",
                    Schema::ANY.with(&Keywords::new().const_value(Literal::Str("phone"))),
                )])
                .required(&["contactMethod"]),
        )
        .then(&Schema::ANY.required(&["phone"]))
        .else_(&Schema::ANY.required(&["email"])),
);

/// `$defs.address`, with its `$anchor`.
const ADDRESS: Schema = Schema::object(&[
    Property::new("street", Schema::string()),
    Property::new("city", Schema::string()),
])
.composition(&Composition::new().anchor("addressDef"));

/// The `json-schema-2020-12` scenario's tool.
pub const JSON_SCHEMA_2020_12_TOOL: Tool<()> = Tool::new(
    tool(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features",
        &JSON_SCHEMA_2020_12,
    ),
    contact,
);

fn contact<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    // Only called with arguments that passed every keyword of the schema.
    reply.text("Contact details accepted")
}

/// What the server announces: its tool and prompt lists can change (the
/// conformance suite's `test_trigger_*_change` hooks announce a change), and
/// resource updates. Announcing wakes the open HTTP streams, or the stdio
/// loop.
static CHANGES: Changes = Changes::new()
    .tools_list_changes()
    .prompts_list_changes()
    .on_change(wake);

static STDIO_WAKER: OnceLock<StdioWaker> = OnceLock::new();

fn wake() {
    serve::wake();
    if let Some(w) = STDIO_WAKER.get() {
        w.wake();
    }
}

fn trigger_tool_change<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    CHANGES.tools_changed();
    reply.text("Announced a change of the tool list.")
}

fn trigger_prompt_change<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    CHANGES.prompts_changed();
    reply.text("Announced a change of the prompt list.")
}

fn trigger_resource_update<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    CHANGES.resource_updated("test://watched-resource");
    reply.text("Announced an update of test://watched-resource.")
}

fn simple_text<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    reply.text("This is a simple text response for testing.")
}

fn image<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    let mut c = reply.content();
    c.image("image/png", PNG);
    c.finish()
}

fn audio<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    let mut c = reply.content();
    c.audio("audio/wav", WAV);
    c.finish()
}

fn embedded<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    let mut c = reply.content();
    c.embedded_text(
        "test://embedded-resource",
        Some("text/plain"),
        "This is an embedded resource content.",
    );
    c.finish()
}

fn mixed<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    let mut c = reply.content();
    c.text("Multiple content types test:")
        .image("image/png", PNG)
        .embedded_text(
            "test://mixed-content-resource",
            Some("application/json"),
            r#"{"test":"data","value":123}"#,
        );
    c.finish()
}

fn with_logging<'a>(_: &'a (), _: Arguments<'a>, mut reply: Reply<'_>) -> ToolOutcome<'a> {
    for msg in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ] {
        reply.log(LogLevel::Info, Some("conformance"), msg);
    }
    reply.text("Tool with logging executed successfully")
}

fn with_progress<'a>(_: &'a (), _: Arguments<'a>, mut reply: Reply<'_>) -> ToolOutcome<'a> {
    for p in [0, 50, 100] {
        reply.progress(p, Some(100), None);
    }
    reply.text("Tool with progress executed successfully")
}

fn error_handling<'a>(_: &'a (), _: Arguments<'a>, _: Reply<'_>) -> ToolOutcome<'a> {
    Err(ToolError::new("This tool intentionally returns an error for testing").into())
}

/// `test_sampling`: asks the client's model (`sampling/createMessage`),
/// then answers `LLM response: TEXT`.
fn sampling<'a>(_: &'a (), args: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    #[derive(serde::Deserialize)]
    struct Args<'x> {
        prompt: &'x str,
    }
    if let Some(answer) = reply.input_response("llm") {
        let text = answer
            .value()
            .get("content")
            .and_then(|c| c.get("text"))
            .and_then(|t| t.as_str());
        return match text {
            Some(text) => reply.text_fmt(format_args!("LLM response: {text}")),
            None => reply.text("LLM response: (no text)"),
        };
    }
    let Args { prompt } = args.parse()?;
    let messages = [SamplingMessage::user(SamplingContent::Text(prompt))];
    let mut ask = reply.input_required();
    ask.sample("llm", &Sampling::new(&messages, 100));
    ask.finish()
}

/// `test_elicitation`'s form: a username and an email.
const USER_FORM: Schema = Schema::object(&[
    Property::new("username", Schema::string().description("User's response")),
    Property::new(
        "email",
        Schema::string().description("User's email address"),
    ),
])
.required(&["username", "email"]);

/// Write `User response: action=ACTION, content=CONTENT` (the suites'
/// wording) from an elicitation answer.
fn elicited<'a>(
    lead: &str,
    answer: picomcp::mrtr::InputResponse<'_>,
    reply: Reply<'_>,
) -> ToolOutcome<'a> {
    let value = answer.value();
    let action = value.get("action").and_then(|a| a.as_str());
    let content = value
        .get("content")
        .map_or("{}", |c| core::str::from_utf8(c.raw()).unwrap_or("{}"));
    match action {
        Some(action) => reply.text_fmt(format_args!("{lead}: action={action}, content={content}")),
        None => reply.text_fmt(format_args!("{lead}: content={content}")),
    }
}

fn elicitation<'a>(_: &'a (), args: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    #[derive(serde::Deserialize)]
    struct Args<'x> {
        message: &'x str,
    }
    if let Some(answer) = reply.input_response("user") {
        return elicited("User response", answer, reply);
    }
    let Args { message } = args.parse()?;
    let mut ask = reply.input_required();
    ask.elicit("user", format_args!("{message}"), &USER_FORM);
    ask.finish()
}

/// SEP-1034: a default for every primitive type.
const DEFAULTS_FORM: &str = r#"{"type":"object","properties":{"name":{"type":"string","description":"User name","default":"John Doe"},"age":{"type":"integer","description":"User age","default":30},"score":{"type":"number","description":"User score","default":95.5},"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},"verified":{"type":"boolean","description":"Verification status","default":true}},"required":[]}"#;

/// SEP-1330: the five enum shapes.
const ENUMS_FORM: &str = r#"{"type":"object","properties":{"untitledSingle":{"type":"string","description":"Untitled single-select","enum":["option1","option2","option3"]},"titledSingle":{"type":"string","description":"Titled single-select","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},"legacyEnum":{"type":"string","description":"Legacy titled enum","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},"untitledMulti":{"type":"array","description":"Untitled multi-select","items":{"type":"string","enum":["option1","option2","option3"]}},"titledMulti":{"type":"array","description":"Titled multi-select","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}},"required":[]}"#;

fn elicit_form<'a>(message: &str, form: &str, reply: Reply<'_>) -> ToolOutcome<'a> {
    if let Some(answer) = reply.input_response("form") {
        return elicited("Elicitation completed", answer, reply);
    }
    let mut ask = reply.input_required();
    ask.elicit_json("form", format_args!("{message}"), form);
    ask.finish()
}

fn elicitation_defaults<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    elicit_form(
        "Please review and update the form fields with defaults",
        DEFAULTS_FORM,
        reply,
    )
}

fn elicitation_enums<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    elicit_form(
        "Please select options from the enum fields",
        ENUMS_FORM,
        reply,
    )
}

fn reconnection<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    // No SSE resumability here: the answer comes on the POST's own response.
    reply.text("Reconnection test completed successfully")
}

// ---------------------------------------------------------------------------
// 2026-07-28 scenarios: the diagnostic tools of `server-stateless`, the
// `input-required-result-*` tools and prompt (SEP-2322), and a tool with
// `x-mcp-header` parameters (`http-custom-header-server-validation`). The
// asking tools work on every era (the one asking API); the suite calls them
// at 2026-07-28.
// ---------------------------------------------------------------------------

/// `test_missing_capability`: needs the client's model, so a client that
/// did not declare `sampling` is answered `-32021` by the core.
fn missing_capability<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    if reply.input_response("answer").is_some() {
        return reply.text("Sampling answered");
    }
    let messages = [SamplingMessage::user(SamplingContent::Text("Say hello"))];
    let mut ask = reply.input_required();
    ask.sample("answer", &Sampling::new(&messages, 20));
    ask.finish()
}

/// `test_streaming_elicitation`: its answer is an `input_required` result
/// on the request's own response, never a request of the server's.
fn streaming_elicitation<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    if let Some(answer) = reply.input_response("user") {
        return elicited("User response", answer, reply);
    }
    let mut ask = reply.input_required();
    ask.elicit("user", format_args!("Please provide your name"), &NAME_FORM);
    ask.finish()
}

/// `test_logging_tool`: logs, which reaches the client only when the
/// request's `_meta` asked for a log level.
fn logging_tool<'a>(_: &'a (), _: Arguments<'a>, mut reply: Reply<'_>) -> ToolOutcome<'a> {
    reply.log(LogLevel::Info, Some("conformance"), "test_logging_tool ran");
    reply.text("Logged (if the request asked for a log level)")
}

const NAME_FORM: Schema =
    Schema::object(&[Property::new("name", Schema::string())]).required(&["name"]);
const OK_FORM: Schema = Schema::object(&[Property::new("ok", Schema::boolean())]).required(&["ok"]);
const COLOR_FORM: Schema =
    Schema::object(&[Property::new("color", Schema::string())]).required(&["color"]);
const CONTEXT_FORM: Schema =
    Schema::object(&[Property::new("context", Schema::string())]).required(&["context"]);

/// An accepted elicitation's string field `field` (`None`: no answer, not
/// accepted, or not a string there: the handler asks again).
fn accepted_str<'r>(answer: Option<InputResponse<'r>>, field: &str) -> Option<JsonStr<'r>> {
    let answer = answer?;
    if answer.action() != Some(ElicitAction::Accept) {
        return None;
    }
    answer.content()?.get(field)?.as_str()
}

/// `test_input_required_result_elicitation`: asks `user_name` for a name,
/// then answers `Hello, NAME!`. An answer that is missing, under another
/// key or not an accepted form with a string `name` is asked again (extra
/// keys are ignored).
fn irr_elicitation<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    if let Some(name) = accepted_str(reply.input_response("user_name"), "name") {
        return reply.text_fmt(format_args!("Hello, {name}!"));
    }
    let mut ask = reply.input_required();
    ask.elicit("user_name", format_args!("What is your name?"), &NAME_FORM);
    ask.finish()
}

/// The text of a `CreateMessageResult`'s content.
fn sampled_text<'r>(answer: Option<InputResponse<'r>>) -> Option<JsonStr<'r>> {
    answer?.value().get("content")?.get("text")?.as_str()
}

/// `test_input_required_result_sampling`: asks the client's model, then
/// answers with what it said.
fn irr_sampling<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    if let Some(text) = sampled_text(reply.input_response("capital_question")) {
        return reply.text_fmt(format_args!("Sampling response: {text}"));
    }
    let messages = [SamplingMessage::user(SamplingContent::Text(
        "What is the capital of France?",
    ))];
    let mut ask = reply.input_required();
    ask.sample("capital_question", &Sampling::new(&messages, 100));
    ask.finish()
}

/// How many roots a `ListRootsResult` lists (`None`: no `roots` array).
fn root_count(answer: Option<InputResponse<'_>>) -> Option<usize> {
    let roots = answer?.value().get("roots")?;
    (roots.kind() == Kind::Array).then(|| roots.items().count())
}

/// `test_input_required_result_list_roots`: asks for the client's roots,
/// then names them.
fn irr_list_roots<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    let answer = reply.input_response("client_roots");
    if let Some(n) = root_count(answer) {
        let roots = answer.map(|a| a.value()).and_then(|v| v.get("roots"));
        let mut c = reply.content();
        c.text_fmt(format_args!("Client has {n} root(s)"));
        for root in roots.into_iter().flat_map(|r| r.items()) {
            if let Some(uri) = root.get("uri").and_then(|u| u.as_str()) {
                c.text_fmt(format_args!("root: {uri}"));
            }
        }
        return c.finish();
    }
    let mut ask = reply.input_required();
    ask.roots("client_roots");
    ask.finish()
}

/// `test_input_required_result_request_state`: asks `confirm` with sealed
/// state; the retry must carry both (the answer says `state-ok`).
fn irr_request_state<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    let confirmed = reply
        .input_response("confirm")
        .filter(|a| a.action() == Some(ElicitAction::Accept))
        .and_then(|a| a.content()?.get("ok")?.as_bool());
    if let (Some(b"confirm-pending"), Some(ok)) = (reply.request_state(), confirmed) {
        return reply.text_fmt(format_args!("state-ok: confirmed={ok}"));
    }
    let mut ask = reply.input_required();
    ask.elicit("confirm", format_args!("Please confirm"), &OK_FORM)
        .state(b"confirm-pending");
    ask.finish()
}

/// `test_input_required_result_multiple_inputs`: an elicitation, a sampling
/// request and a roots request at once, with state; all three answers
/// complete it.
fn irr_multiple_inputs<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    let name = accepted_str(reply.input_response("user_name"), "name");
    let greeting = sampled_text(reply.input_response("greeting"));
    let roots = root_count(reply.input_response("client_roots"));
    if let (Some(b"three-inputs"), Some(name), Some(greeting), Some(roots)) =
        (reply.request_state(), name, greeting, roots)
    {
        return reply.text_fmt(format_args!(
            "name={name}, greeting={greeting}, roots={roots}"
        ));
    }
    let messages = [SamplingMessage::user(SamplingContent::Text(
        "Generate a greeting",
    ))];
    let mut ask = reply.input_required();
    ask.elicit("user_name", format_args!("What is your name?"), &NAME_FORM)
        .sample("greeting", &Sampling::new(&messages, 50))
        .roots("client_roots")
        .state(b"three-inputs");
    ask.finish()
}

/// `test_input_required_result_multi_round`: a name (state `round-1`),
/// then a colour (state `round-2:NAME`, so it differs), then the answer.
fn irr_multi_round<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    let state = reply.request_state();
    if let Some(name) = state.and_then(|s| s.strip_prefix(b"round-2:"))
        && let Some(color) = accepted_str(reply.input_response("step2"), "color")
    {
        let name = core::str::from_utf8(name).unwrap_or("?");
        return reply.text_fmt(format_args!("{name} likes {color}"));
    }
    if state == Some(&b"round-1"[..])
        && let Some(name) = accepted_str(reply.input_response("step1"), "name")
    {
        // The name goes into the sealed state for the last round (a name
        // too long for it is dropped).
        let mut buf = [0u8; 72];
        buf[..8].copy_from_slice(b"round-2:");
        let n = 8 + name.decode_into(&mut buf[8..]).map_or(0, str::len);
        let mut ask = reply.input_required();
        ask.elicit(
            "step2",
            format_args!("Step 2: What is your favorite color?"),
            &COLOR_FORM,
        )
        .state(&buf[..n]);
        return ask.finish();
    }
    let mut ask = reply.input_required();
    ask.elicit(
        "step1",
        format_args!("Step 1: What is your name?"),
        &NAME_FORM,
    )
    .state(b"round-1");
    ask.finish()
}

/// `test_input_required_result_tampered_state`: asks with sealed state; a
/// retry whose state was altered is refused (`-32602`) by the core before
/// this runs.
fn irr_tampered_state<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    if reply.request_state() == Some(&b"untampered"[..])
        && reply.input_response("confirm").is_some()
    {
        return reply.text("State verified");
    }
    let mut ask = reply.input_required();
    ask.elicit("confirm", format_args!("Please confirm"), &OK_FORM)
        .state(b"untampered");
    ask.finish()
}

/// `test_input_required_result_capabilities`: asks only for what the
/// request's envelope says the client can do (a form if it declared
/// `elicitation`, the model if `sampling`); with neither it asks the model,
/// which the core answers `-32021`.
fn irr_capabilities<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    if reply.input_response("form").is_some() || reply.input_response("model").is_some() {
        return reply.text("Input received");
    }
    let client = reply.client_capabilities();
    let messages = [SamplingMessage::user(SamplingContent::Text("Say hello"))];
    let sampling = Sampling::new(&messages, 20);
    let mut ask = reply.input_required();
    if client.elicitation {
        ask.elicit("form", format_args!("What is your name?"), &NAME_FORM);
    }
    if client.sampling || !client.elicitation {
        ask.sample("model", &sampling);
    }
    ask.finish()
}

/// `http-custom-header-server-validation`: `region` (required) and `limit`
/// are mirrored into `Mcp-Param-Region` and `Mcp-Param-Limit`, which the
/// HTTP mapping checks against the body before this runs.
const CUSTOM_HEADER_ARGS: Schema = Schema::object(&[
    Property::new(
        "region",
        Schema::string()
            .description("Where to run (mirrored into Mcp-Param-Region)")
            .header("Region"),
    ),
    Property::new(
        "limit",
        Schema::integer()
            .description("At most this many rows (mirrored into Mcp-Param-Limit)")
            .header("Limit"),
    ),
    Property::new("query", Schema::string().description("Not mirrored")),
])
.required(&["region"]);

fn custom_headers<'a>(_: &'a (), args: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    #[derive(serde::Deserialize)]
    struct Args<'x> {
        region: &'x str,
    }
    let Args { region } = args.parse()?;
    reply.text_fmt(format_args!("Ran in region {region}"))
}

/// `test_input_required_result_prompt`: `prompts/get` asks for context
/// first (MRTR is not only for tools).
fn irr_prompt<'a>(_: &'a (), _: PromptRequest<'a>, mut m: Messages<'_>) -> PromptOutcome<'a> {
    if let Some(context) = accepted_str(m.input_response("user_context"), "context") {
        m.message(Role::User)
            .text_fmt(format_args!("Answer using this context: {context}"));
        return m.finish(Some("A prompt built from elicited context"));
    }
    let mut ask = m.input_required();
    ask.elicit(
        "user_context",
        format_args!("What context should the prompt use?"),
        &CONTEXT_FORM,
    );
    ask.finish()
}

const fn tool(
    name: &'static str,
    description: &'static str,
    schema: &'static Schema<'static>,
) -> ToolDescriptor<'static> {
    ToolDescriptor::new(name, schema).description(description)
}

static TOOLS: &[Tool<()>] = &[
    Tool::new(
        tool("test_simple_text", "Returns simple text content", &NO_ARGS),
        simple_text,
    ),
    Tool::new(
        tool(
            "test_trigger_tool_change",
            "Announces a change of the tool list (notifications/tools/list_changed)",
            &NO_ARGS,
        ),
        trigger_tool_change,
    ),
    Tool::new(
        tool(
            "test_trigger_prompt_change",
            "Announces a change of the prompt list (notifications/prompts/list_changed)",
            &NO_ARGS,
        ),
        trigger_prompt_change,
    ),
    Tool::new(
        tool(
            "test_trigger_resource_update",
            "Announces an update of test://watched-resource (notifications/resources/updated)",
            &NO_ARGS,
        ),
        trigger_resource_update,
    ),
    Tool::new(
        tool("test_image_content", "Returns image content", &NO_ARGS),
        image,
    ),
    Tool::new(
        tool("test_audio_content", "Returns audio content", &NO_ARGS),
        audio,
    ),
    Tool::new(
        tool(
            "test_embedded_resource",
            "Returns an embedded resource",
            &NO_ARGS,
        ),
        embedded,
    ),
    Tool::new(
        tool(
            "test_multiple_content_types",
            "Returns text, image and resource content",
            &NO_ARGS,
        ),
        mixed,
    ),
    Tool::new(
        tool(
            "test_tool_with_logging",
            "Sends three log notifications while it runs",
            &NO_ARGS,
        ),
        with_logging,
    ),
    Tool::new(
        tool(
            "test_tool_with_progress",
            "Reports progress 0, 50, 100 of 100",
            &NO_ARGS,
        ),
        with_progress,
    ),
    Tool::new(
        tool(
            "test_error_handling",
            "Always returns a tool error",
            &NO_ARGS,
        ),
        error_handling,
    ),
    Tool::new(
        tool(
            "test_sampling",
            "Requests LLM sampling from the client",
            &PROMPT_ARG,
        ),
        sampling,
    ),
    Tool::new(
        tool(
            "test_elicitation",
            "Requests user input from the client",
            &MESSAGE_ARG,
        ),
        elicitation,
    ),
    Tool::new(
        tool(
            "test_elicitation_sep1034_defaults",
            "Elicits with a default for every primitive type",
            &NO_ARGS,
        ),
        elicitation_defaults,
    ),
    Tool::new(
        tool(
            "test_elicitation_sep1330_enums",
            "Elicits with every enum schema shape",
            &NO_ARGS,
        ),
        elicitation_enums,
    ),
    Tool::new(
        tool(
            "test_reconnection",
            "Answers on the POST response (no SSE resumability)",
            &NO_ARGS,
        ),
        reconnection,
    ),
    JSON_SCHEMA_2020_12_TOOL,
    Tool::new(
        tool(
            "test_missing_capability",
            "Needs the client's sampling capability (-32021 without it)",
            &NO_ARGS,
        ),
        missing_capability,
    ),
    Tool::new(
        tool(
            "test_streaming_elicitation",
            "Asks for a name: an input_required result, never a server request",
            &NO_ARGS,
        ),
        streaming_elicitation,
    ),
    Tool::new(
        tool(
            "test_logging_tool",
            "Logs once (sent only when the request asked for a log level)",
            &NO_ARGS,
        ),
        logging_tool,
    ),
    Tool::new(
        tool(
            "test_input_required_result_elicitation",
            "Asks user_name for a name, then greets",
            &NO_ARGS,
        ),
        irr_elicitation,
    ),
    Tool::new(
        tool(
            "test_input_required_result_sampling",
            "Asks the client's model the capital of France",
            &NO_ARGS,
        ),
        irr_sampling,
    ),
    Tool::new(
        tool(
            "test_input_required_result_list_roots",
            "Asks for the client's roots",
            &NO_ARGS,
        ),
        irr_list_roots,
    ),
    Tool::new(
        tool(
            "test_input_required_result_request_state",
            "Asks for a confirmation with sealed requestState",
            &NO_ARGS,
        ),
        irr_request_state,
    ),
    Tool::new(
        tool(
            "test_input_required_result_multiple_inputs",
            "Asks for a form, a model answer and the roots at once",
            &NO_ARGS,
        ),
        irr_multiple_inputs,
    ),
    Tool::new(
        tool(
            "test_input_required_result_multi_round",
            "Asks twice, with a new requestState each round",
            &NO_ARGS,
        ),
        irr_multi_round,
    ),
    Tool::new(
        tool(
            "test_input_required_result_tampered_state",
            "Asks with sealed requestState; an altered one is refused",
            &NO_ARGS,
        ),
        irr_tampered_state,
    ),
    Tool::new(
        tool(
            "test_input_required_result_capabilities",
            "Asks only for what the client declared it can answer",
            &NO_ARGS,
        ),
        irr_capabilities,
    ),
    Tool::new(
        tool(
            "test_custom_headers",
            "Arguments mirrored into Mcp-Param-* headers (x-mcp-header)",
            &CUSTOM_HEADER_ARGS,
        ),
        custom_headers,
    ),
];

fn static_text<'a>(_: &'a (), req: ReadRequest<'a>, mut c: Contents<'_>) -> ResourceOutcome<'a> {
    c.text(
        req.uri(),
        Some("text/plain"),
        "This is the content of the static text resource.",
    );
    c.finish()
}

fn static_binary<'a>(_: &'a (), req: ReadRequest<'a>, mut c: Contents<'_>) -> ResourceOutcome<'a> {
    c.blob(req.uri(), Some("image/png"), PNG);
    c.finish()
}

fn watched<'a>(_: &'a (), req: ReadRequest<'a>, mut c: Contents<'_>) -> ResourceOutcome<'a> {
    c.text(req.uri(), Some("text/plain"), "Watched resource content");
    c.finish()
}

fn template<'a>(_: &'a (), req: ReadRequest<'a>, mut c: Contents<'_>) -> ResourceOutcome<'a> {
    let id = req.var("id").ok_or(ResourceNotFound::new("missing id"))?;
    let Some(id) = id.as_plain() else {
        return Err(ResourceNotFound::new("id must be plain text").into());
    };
    c.text_fmt(
        req.uri(),
        Some("application/json"),
        format_args!(r#"{{"id":"{id}","templateTest":true,"data":"Data for ID: {id}"}}"#),
    );
    c.finish()
}

static RESOURCES: &[Resource<()>] = &[
    Resource::new(
        ResourceDescriptor::new("test://static-text", "Static Text Resource")
            .description("A static text resource for testing")
            .mime_type("text/plain"),
        static_text,
    ),
    Resource::new(
        ResourceDescriptor::new("test://static-binary", "Static Binary Resource")
            .description("A static binary resource (image) for testing")
            .mime_type("image/png"),
        static_binary,
    ),
    Resource::new(
        ResourceDescriptor::new("test://watched-resource", "Watched Resource")
            .description("A resource for subscription tests")
            .mime_type("text/plain"),
        watched,
    ),
];

static TEMPLATES: &[ResourceTemplate<()>] = &[ResourceTemplate::new(
    TemplateDescriptor::new("test://template/{id}/data", "Resource Template")
        .description("A resource template with parameter substitution")
        .mime_type("application/json"),
    template,
)];

fn simple_prompt<'a>(_: &'a (), _: PromptRequest<'a>, mut m: Messages<'_>) -> PromptOutcome<'a> {
    m.user("This is a simple prompt for testing.");
    m.finish(None)
}

fn prompt_with_args<'a>(
    _: &'a (),
    req: PromptRequest<'a>,
    mut m: Messages<'_>,
) -> PromptOutcome<'a> {
    let (a1, a2) = (
        req.get("arg1").unwrap_or_default(),
        req.get("arg2").unwrap_or_default(),
    );
    m.message(Role::User).text_fmt(format_args!(
        "Prompt with arguments: arg1='{a1}', arg2='{a2}'"
    ));
    m.finish(None)
}

fn prompt_with_resource<'a>(
    _: &'a (),
    req: PromptRequest<'a>,
    mut m: Messages<'_>,
) -> PromptOutcome<'a> {
    let uri = req.get("resourceUri").unwrap_or_default();
    m.message(Role::User).embedded_text(
        uri,
        Some("text/plain"),
        "Embedded resource content for testing.",
    );
    m.user("Please process the embedded resource above.");
    m.finish(None)
}

fn prompt_with_image<'a>(
    _: &'a (),
    _: PromptRequest<'a>,
    mut m: Messages<'_>,
) -> PromptOutcome<'a> {
    m.message(Role::User).image("image/png", PNG);
    m.user("Please analyze the image above.");
    m.finish(None)
}

static PROMPTS: &[Prompt<()>] = &[
    Prompt::new(
        PromptDescriptor::new("test_simple_prompt", &[])
            .description("A simple prompt without arguments"),
        simple_prompt,
    ),
    Prompt::new(
        PromptDescriptor::new(
            "test_prompt_with_arguments",
            &[
                PromptArgument::new("arg1")
                    .description("First test argument")
                    .required(),
                PromptArgument::new("arg2")
                    .description("Second test argument")
                    .required(),
            ],
        )
        .description("A prompt with required arguments"),
        prompt_with_args,
    ),
    Prompt::new(
        PromptDescriptor::new(
            "test_prompt_with_embedded_resource",
            &[PromptArgument::new("resourceUri")
                .description("URI of the resource to embed")
                .required()],
        )
        .description("A prompt that includes an embedded resource"),
        prompt_with_resource,
    ),
    Prompt::new(
        PromptDescriptor::new("test_prompt_with_image", &[])
            .description("A prompt that includes image content"),
        prompt_with_image,
    ),
    Prompt::new(
        PromptDescriptor::new("test_input_required_result_prompt", &[])
            .description("Asks for context (input_required) before its messages"),
        irr_prompt,
    ),
];

fn complete<'a>(
    _: &'a (),
    req: CompleteRequest<'a>,
    mut out: Completions<'_>,
) -> CompleteOutcome<'a> {
    if let CompletionRef::Prompt("test_prompt_with_arguments") = req.reference {
        for v in ["paris", "park", "party", "test", "testValue1"] {
            if v.starts_with(req.value) {
                out.value(v);
            }
        }
    }
    out.finish()
}

/// The fixture's server; `main` adds the secret that seals request state.
const SERVER: Server<'static, ()> =
    Server::new(ServerInfo::new("picomcp-conformance-fixture", "0.1.0"), ())
        .tools(TOOLS)
        .resources(RESOURCES)
        .templates(TEMPLATES)
        .prompts(PROMPTS)
        .completion(complete)
        .logging()
        .changes(&CHANGES);

static SESSIONS: Mutex<Sessions<256>> = Mutex::new(Sessions::new());

fn main() {
    // `--stdio` (first): the same server on stdin/stdout instead of HTTP.
    let stdio = std::env::args().nth(1).as_deref() == Some("--stdio");
    let (port, limits) = serve::args_from(
        "usage: conformance_fixture [--port N] [--max-body BYTES] [--max-response BYTES] [--session-idle-s N] [--key-file PATH] [--header-timeout-s N] [--body-timeout-s N] [--idle-timeout-s N] [--keep-alive-s N] [--wait-timeout-s N] [--max-connections N] [--state-ttl-s N] [--subject-header NAME]\n       conformance_fixture --stdio [--max-body BYTES] [--max-response BYTES] [--key-file PATH]",
        3001,
        std::env::args().skip(if stdio { 2 } else { 1 }),
    );
    // The input-required-result tools seal their requestState: with the
    // --key-file secret, else a random one for this process (never a key
    // from the source).
    let key = serve::secret("conformance_fixture", limits.key_file);
    let server: &'static Server<'static, ()> = Box::leak(Box::new(serve::with_state_ttl(
        SERVER.request_state_key(key),
        &limits,
    )));
    if stdio {
        serve_stdio(server, limits);
    } else {
        serve::run(
            "conformance_fixture",
            server,
            &SESSIONS,
            port,
            limits,
            |mcp| mcp,
        );
    }
}

/// `--stdio`: one connection on stdin/stdout until EOF. `--max-body` bounds
/// a message, `--max-response` an answer; calls that ask the client on the
/// handshake era (elicitation, sampling, roots) send their requests on
/// stdout and wait here, 4 at once, 16 KiB each.
fn serve_stdio(server: &'static Server<'static, ()>, limits: serve::Limits) {
    let mut input = vec![0u8; limits.max_body];
    let mut output = vec![0u8; limits.max_response];
    let mut waiting = Box::new(Waiting::<4, { 16 << 10 }>::new());
    let mut subs = Box::new(Subscriptions::<8, 256>::new());
    let mut stdio = Stdio::live();
    if let Some(w) = stdio.waker() {
        let _ = STDIO_WAKER.set(w);
    }
    match serve_subscribed(
        server,
        &mut stdio,
        &mut input,
        &mut output,
        &mut waiting,
        &mut subs,
        Stdio::wait,
    ) {
        Ok(()) => {}
        Err(picomcp::error::Error::Write(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            eprintln!("conformance_fixture: {e}");
            std::process::exit(1);
        }
    }
}
