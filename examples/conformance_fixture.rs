//! The official MCP conformance suite's "everything server" fixture
//! (`@modelcontextprotocol/conformance` 0.1.16), on picomcp over the same
//! Streamable HTTP mapping and hyper adapter as `http_bookshop`.
//!
//! ```sh
//! cargo run --release --example conformance_fixture -- --port 3001
//! scripts/conformance.sh   # builds this, runs the suite, checks every check
//! ```
//!
//! Every `test_*` tool, resource, template and prompt the suite's active
//! server scenarios call is here. The sampling and elicitation tools cannot
//! do what the suite wants: picomcp sends no server-to-client requests in the
//! handshake era, so they answer with a tool error saying so (listed in
//! `tests/conformance/expected-failures.yml`).

#[path = "http/serve.rs"]
mod serve;

use std::sync::Mutex;

use picomcp::completion::{CompleteOutcome, CompleteRequest, CompletionRef, Completions};
use picomcp::http::Sessions;
use picomcp::mrtr::{Sampling, SamplingContent, SamplingMessage};
use picomcp::prompt::{
    Messages, Prompt, PromptArgument, PromptDescriptor, PromptOutcome, PromptRequest, Role,
};
use picomcp::resource::{
    Contents, ReadRequest, Resource, ResourceDescriptor, ResourceOutcome, ResourceTemplate,
    TemplateDescriptor,
};
use picomcp::schema::{Composition, DRAFT_2020_12, Def, Literal, Property, Schema};
use picomcp::tool::{Arguments, Reply, Tool, ToolDescriptor, ToolOutcome};
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
        Schema::string().enum_values(&[Literal::Str("phone"), Literal::Str("email")]),
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
                    Schema::ANY.const_value(Literal::Str("phone")),
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

static SERVER: Server<'static, ()> =
    Server::new(ServerInfo::new("picomcp-conformance-fixture", "0.1.0"), ())
        .tools(TOOLS)
        .resources(RESOURCES)
        .templates(TEMPLATES)
        .prompts(PROMPTS)
        .completion(complete)
        .logging();

static SESSIONS: Mutex<Sessions<256>> = Mutex::new(Sessions::new());

fn main() {
    let (port, limits) = serve::args(
        "usage: conformance_fixture [--port N] [--max-body BYTES] [--max-response BYTES] [--session-idle-s N]",
        3001,
    );
    serve::run("conformance_fixture", &SERVER, &SESSIONS, port, limits);
}
