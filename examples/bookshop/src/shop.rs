//! The bookshop of DESIGN.md: the handlers, shared by the stdio example and
//! the firmware. `#![no_std]`-clean: no allocation, no std.

use picomcp::completion::{CompleteOutcome, CompleteRequest, CompletionRef, Completions};
use picomcp::derive_support::{ContentExt, HasSchema, PromptArguments, WriteJson};
use picomcp::error::Message;
use picomcp::mrtr::{ElicitAction, Sampling, SamplingContent, SamplingMessage};
use picomcp::prompt::{Messages, Prompt, PromptDescriptor, PromptOutcome, PromptRequest};
use picomcp::resource::{
    Contents, ReadRequest, Resource, ResourceDescriptor, ResourceOutcome, ResourceTemplate,
    TemplateDescriptor,
};
use picomcp::schema::{Property, Schema};
use picomcp::tool::{Reply, Tool, ToolFailure, ToolOutcome};
use picomcp::wire::emit::{Decimal, ValueWriter};
use picomcp::{
    INVALID_PARAMS, LogLevel, PromptArgs, ProtocolError, ResourceNotFound, Server, ServerInfo,
    ToolArgs, ToolError, ToolOutput,
};

/// The bookshop's state: its catalog.
pub struct Shop {
    /// `(title, author)` in catalog order.
    pub catalog: &'static [(&'static str, &'static str)],
}

/// Dune and Neuromancer.
pub const CATALOG: &[(&str, &str)] =
    &[("Dune", "Frank Herbert"), ("Neuromancer", "William Gibson")];

impl Shop {
    fn author(&self, title: &str) -> Option<&'static str> {
        self.catalog
            .iter()
            .find(|(t, _)| *t == title)
            .map(|(_, a)| *a)
    }
}

// Each tool's arguments and output are one type: the derive gives the JSON
// Schema (checked before the handler runs, listed by `tools/list`), serde the
// parsing, `ToolOutput` the `structuredContent` writer.

#[derive(ToolArgs, serde::Deserialize)]
struct TitleArgs<'a> {
    title: &'a str,
}

#[derive(ToolArgs, serde::Deserialize)]
struct TopArgs {
    #[mcp(minimum = 0, maximum = 50)]
    n: usize,
}

#[derive(ToolArgs, serde::Deserialize)]
struct CountArgs {
    #[mcp(minimum = 1, maximum = 10)]
    n: u64,
}

#[derive(ToolOutput)]
struct AuthorOutput<'a> {
    result: &'a str,
}

#[derive(ToolOutput)]
struct TopOutput<'a> {
    result: Titles<'a>,
}

/// The first `n` titles of a catalog, written straight from it as a JSON
/// array of strings (a hand-written `HasSchema` + `WriteJson` field type).
struct Titles<'a> {
    catalog: &'a [(&'static str, &'static str)],
    n: usize,
}

impl HasSchema for Titles<'_> {
    const SCHEMA: Schema<'static> = Schema::array(&Schema::string());
}

impl WriteJson for Titles<'_> {
    fn write_json(&self, v: ValueWriter<'_, '_>) {
        let mut list = v.array();
        for (t, _) in self.catalog.iter().take(self.n) {
            list.str(t);
        }
    }
}

#[derive(PromptArgs)]
struct RecommendArgs<'a> {
    /// The genre to recommend a book from.
    genre: &'a str,
}

/// Genres `recommend` knows, for completion.
pub const GENRES: &[&str] = &["science fiction", "cyberpunk", "fantasy"];

/// The elicitation form of `reserve` (a hand-written schema).
const CONFIRM_FORM: Schema = Schema::object(&[Property::new(
    "confirm",
    Schema::boolean().description("Reserve this book?"),
)])
.required(&["confirm"]);

fn not_found(title: &str) -> ToolError<'static> {
    ToolError::format(format_args!("No book titled '{title}' in the catalog."))
}

fn get_author<'a>(shop: &'a Shop, args: TitleArgs<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    let TitleArgs { title } = args;
    let author = shop.author(title).ok_or_else(|| not_found(title))?;
    let mut content = reply.content();
    content.text(author);
    content.finish_output(&AuthorOutput { result: author })
}

fn get_author_strict<'a>(
    shop: &'a Shop,
    TitleArgs { title }: TitleArgs<'a>,
    reply: Reply<'_>,
) -> ToolOutcome<'a> {
    let Some(author) = shop.author(title) else {
        // Deliberately the protocol channel: the host, not the model, sees it.
        return Err(ToolFailure::protocol(ProtocolError::format(
            INVALID_PARAMS,
            format_args!("No book titled '{title}' in the catalog."),
        )));
    };
    let mut content = reply.content();
    content.text(author);
    content.finish_output(&AuthorOutput { result: author })
}

fn top<'a>(shop: &'a Shop, TopArgs { n }: TopArgs, reply: Reply<'_>) -> ToolOutcome<'a> {
    let mut content = reply.content();
    for (t, _) in shop.catalog.iter().take(n) {
        content.text(t);
    }
    content.finish_output(&TopOutput {
        result: Titles {
            catalog: shop.catalog,
            n,
        },
    })
}

fn count<'a>(_: &'a Shop, CountArgs { n }: CountArgs, mut reply: Reply<'_>) -> ToolOutcome<'a> {
    for i in 1..=n {
        // Sent only when the request carried a progress token.
        reply.progress(i, Some(n), None);
    }
    reply.log(LogLevel::Info, Some("bookshop"), "counting done");
    // `Decimal` rather than `{n}`: core's integer formatting costs flash.
    reply.text_fmt(format_args!("counted {}", Decimal::from(n)))
}

/// 2026-07-28 only: asks the user to confirm through an elicitation form
/// (MRTR `input_required`), then answers `Reserved TITLE`.
fn reserve<'a>(
    shop: &'a Shop,
    TitleArgs { title }: TitleArgs<'a>,
    reply: Reply<'_>,
) -> ToolOutcome<'a> {
    let Some((title, _)) = shop.catalog.iter().find(|(t, _)| *t == title) else {
        return Err(not_found(title).into());
    };
    if reply.request_state() == Some(b"confirm") {
        // The retry: the state is ours (verified by the server), so the
        // user has been asked; read the answer.
        let accepted = reply
            .input_response("confirm")
            .filter(|r| r.action() == Some(ElicitAction::Accept))
            .and_then(|r| r.content())
            .and_then(|c| c.get("confirm"))
            .and_then(|v| v.as_bool())
            == Some(true);
        return if accepted {
            reply.text_fmt(format_args!("Reserved {title}"))
        } else {
            reply.text_fmt(format_args!("Not reserved: {title}"))
        };
    }
    // Asking needs the client's `elicitation` capability: without it the
    // server answers -32021 (on every era).
    let mut ask = reply.input_required();
    ask.elicit("confirm", format_args!("Reserve {title}?"), &CONFIRM_FORM)
        .state(b"confirm");
    ask.finish()
}

fn blurb<'a>(
    shop: &'a Shop,
    TitleArgs { title }: TitleArgs<'a>,
    reply: Reply<'_>,
) -> ToolOutcome<'a> {
    let Some(author) = shop.author(title) else {
        return Err(not_found(title).into());
    };
    if let Some(answer) = reply.input_response("blurb") {
        // A `CreateMessageResult`: the model's text is its content's text.
        let text = answer
            .value()
            .get("content")
            .and_then(|c| c.get("text"))
            .and_then(|t| t.as_str());
        let mut content = reply.content();
        match text {
            Some(text) => content.text_with(|w| {
                for c in text.chars() {
                    let _ = core::fmt::Write::write_char(w, c);
                }
            }),
            None => content.text("(the model answered without text)"),
        };
        return content.finish();
    }
    let prompt = Message::format(format_args!(
        "Write a one-line blurb for {title} by {author}."
    ));
    let messages = [SamplingMessage::user(SamplingContent::Text(
        prompt.as_str(),
    ))];
    let mut ask = reply.input_required();
    ask.sample("blurb", &Sampling::new(&messages, 100));
    ask.finish()
}

fn recommend<'a>(
    _: &'a Shop,
    req: PromptRequest<'a>,
    mut messages: Messages<'_>,
) -> PromptOutcome<'a> {
    // `genre` is required: the server has checked it is present.
    let RecommendArgs { genre } = RecommendArgs::from_request(&req);
    messages
        .message(picomcp::prompt::Role::User)
        .text_fmt(format_args!("Recommend a {genre} book from the catalog."));
    messages.finish(None)
}

fn complete<'a>(
    shop: &'a Shop,
    req: CompleteRequest<'a>,
    mut out: Completions<'_>,
) -> CompleteOutcome<'a> {
    let prefix = req.value;
    let starts = |candidate: &str| {
        candidate.len() >= prefix.len()
            && candidate
                .get(..prefix.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
    };
    match (req.reference, req.argument) {
        (CompletionRef::Prompt("recommend"), "genre") => {
            for g in GENRES.iter().filter(|g| starts(g)) {
                out.value(g);
            }
        }
        (CompletionRef::ResourceTemplate("books://{title}"), "title") => {
            for (t, _) in shop.catalog.iter().filter(|(t, _)| starts(t)) {
                out.value(t);
            }
        }
        _ => {}
    }
    out.finish()
}

fn book<'a>(
    shop: &'a Shop,
    req: ReadRequest<'a>,
    mut contents: Contents<'_>,
) -> ResourceOutcome<'a> {
    let title = req
        .var("title")
        .ok_or(ResourceNotFound::new("missing title"))?;
    let Some((t, author)) = shop.catalog.iter().find(|(t, _)| title.eq_str(t)) else {
        return Err(ResourceNotFound::format(format_args!(
            "No book titled '{title}' in the catalog."
        ))
        .into());
    };
    contents.text_fmt(
        req.uri(),
        Some("text/plain"),
        format_args!("{t} by {author}"),
    );
    contents.finish()
}

fn catalog<'a>(
    shop: &'a Shop,
    req: ReadRequest<'a>,
    mut contents: Contents<'_>,
) -> ResourceOutcome<'a> {
    contents.json(req.uri(), Some("application/json"), |v| {
        let mut list = v.array();
        for (t, _) in shop.catalog {
            list.str(t);
        }
    });
    contents.finish()
}

/// The tools, in listing order: each declared in one place; the schemas come
/// from the argument and output types.
pub const TOOLS: &[Tool<Shop>] = &[
    picomcp::tool! {
        name: "get_author",
        description: "Look up the author of a book in the catalog.",
        args: TitleArgs,
        output: AuthorOutput,
        handler: get_author,
    },
    picomcp::tool! {
        name: "get_author_strict",
        description: "Look up the author of a book in the catalog; an unknown title is a protocol error.",
        args: TitleArgs,
        output: AuthorOutput,
        handler: get_author_strict,
    },
    picomcp::tool! {
        name: "top",
        description: "Top n books.",
        args: TopArgs,
        output: TopOutput,
        handler: top,
    },
    picomcp::tool! {
        name: "reserve",
        description: "Reserve a book; asks the user to confirm first.",
        args: TitleArgs,
        handler: reserve,
    },
    picomcp::tool! {
        name: "blurb",
        description: "A one-line blurb for a book, written by the client's model.",
        args: TitleArgs,
        handler: blurb,
    },
    picomcp::tool! {
        name: "count",
        description: "Counts to n, reporting progress at each step and logging when done.",
        args: CountArgs,
        handler: count,
    },
];

/// The prompts.
pub const PROMPTS: &[Prompt<Shop>] = &[Prompt::new(
    PromptDescriptor::new("recommend", RecommendArgs::ARGUMENTS)
        .description("Ask for a book recommendation in a genre."),
    recommend,
)];

/// The fixed resources.
pub const RESOURCES: &[Resource<Shop>] = &[Resource::new(
    ResourceDescriptor::new("books://catalog", "catalog")
        .description("All titles in the catalog, as a JSON array.")
        .mime_type("application/json"),
    catalog,
)];

/// The URI templates.
pub const TEMPLATES: &[ResourceTemplate<Shop>] = &[ResourceTemplate::new(
    TemplateDescriptor::new("books://{title}", "book")
        .description("The catalog entry for one book.")
        .mime_type("text/plain"),
    book,
)];

/// The key that seals `reserve`'s request state when the application gives
/// none (tests; the stdio example draws a random one at start).
pub const DEFAULT_STATE_KEY: &[u8] = b"bookshop example key: replace me";

/// The bookshop server; `page_size` 0 means pages end only when the output
/// buffer is full.
pub const fn server_with_page_size(page_size: usize) -> Server<'static, Shop> {
    server_with(page_size, DEFAULT_STATE_KEY)
}

/// The bookshop server with a page size and a request-state key.
pub const fn server_with(page_size: usize, state_key: &'static [u8]) -> Server<'static, Shop> {
    Server::new(ServerInfo::new("Bookshop", env!("CARGO_PKG_VERSION")), Shop { catalog: CATALOG })
        .instructions("A small bookshop: look up authors with get_author, list titles with top, read books://{title}.")
        .tools(TOOLS)
        .resources(RESOURCES)
        .templates(TEMPLATES)
        .prompts(PROMPTS)
        .completion(complete)
        .logging()
        .page_size(page_size)
        .request_state_key(state_key)
}

/// The bookshop server with unlimited page size.
#[allow(dead_code)] // used by tests and the firmware, not by every includer
pub const fn server() -> Server<'static, Shop> {
    server_with_page_size(0)
}
