//! The bookshop of DESIGN.md: the handlers, shared by the stdio example and
//! the firmware. `#![no_std]`-clean: no allocation, no std.

use core::sync::atomic::{AtomicU32, Ordering};

use picomcp::changes::Changes;
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

/// The bookshop's state: its catalog, the copies left of each title (in
/// atomics: shared by every connection, changed from any context without a
/// lock or an allocation), and where it announces that `books://stock`
/// changed.
pub struct Shop {
    /// `(title, author)` in catalog order.
    pub catalog: &'static [(&'static str, &'static str)],
    /// Copies left, by catalog position.
    stock: [AtomicU32; 2],
    changes: &'static Changes,
}

/// Dune and Neuromancer.
pub const CATALOG: &[(&str, &str)] =
    &[("Dune", "Frank Herbert"), ("Neuromancer", "William Gibson")];

/// The copies a new shop starts with, by catalog position.
pub const START_STOCK: [u32; 2] = [3, 1];

/// The URI whose subscribers are told when the stock changes.
pub const STOCK_URI: &str = "books://stock";

/// Where the default bookshop announces its changes.
pub static CHANGES: Changes = Changes::new();

impl Shop {
    /// A shop selling `catalog`, announcing stock changes to `changes`.
    pub const fn new(
        catalog: &'static [(&'static str, &'static str)],
        changes: &'static Changes,
    ) -> Self {
        Self {
            catalog,
            stock: [
                AtomicU32::new(START_STOCK[0]),
                AtomicU32::new(START_STOCK[1]),
            ],
            changes,
        }
    }

    /// Copies left of the title at catalog position `i`.
    pub fn copies(&self, i: usize) -> u32 {
        self.stock.get(i).map_or(0, |c| c.load(Ordering::Acquire))
    }

    /// Sell one copy of the title at position `i`: the copies left after,
    /// or `None` when there were none.
    fn sell(&self, i: usize) -> Option<u32> {
        let left = self
            .stock
            .get(i)?
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| c.checked_sub(1))
            .ok()?
            - 1;
        self.changes.resource_updated(STOCK_URI);
        Some(left)
    }

    /// A delivery (a timer on the firmware): one more copy of the first
    /// title below its starting stock, announced to `books://stock`'s
    /// subscribers; `false` when every title is fully stocked.
    pub fn restock(&self) -> bool {
        for (c, start) in self.stock.iter().zip(START_STOCK) {
            if c.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < start).then_some(n + 1)
            })
            .is_ok()
            {
                self.changes.resource_updated(STOCK_URI);
                return true;
            }
        }
        false
    }

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

// `parse`: the derive also builds it from arguments its check vouched for
// (serde's derive for the rest: escaped titles).
#[derive(ToolArgs, serde::Deserialize)]
#[mcp(parse)]
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

// `concat` rather than `format_args!`: the same text without core::fmt
// (a miss is a common answer; about 400 instructions less).
fn not_found(title: &str) -> ToolError<'static> {
    ToolError::concat(&["No book titled '", title, "' in the catalog."])
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

fn buy<'a>(
    shop: &'a Shop,
    TitleArgs { title }: TitleArgs<'a>,
    reply: Reply<'_>,
) -> ToolOutcome<'a> {
    let Some(i) = shop.catalog.iter().position(|(t, _)| *t == title) else {
        return Err(not_found(title).into());
    };
    let Some(left) = shop.sell(i) else {
        return Err(ToolError::format(format_args!("{title} is out of stock.")).into());
    };
    reply.text_fmt(format_args!(
        "Bought {title} ({} left)",
        Decimal::from(u64::from(left))
    ))
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

/// Completion: genres for `recommend`, titles for `books://{title}`.
pub fn complete<'a>(
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
    // Written piece by piece (no core::fmt), as `format_args!("{t} by
    // {author}")` would write it.
    contents.text_with(req.uri(), Some("text/plain"), |w| {
        w.str(t).str(" by ").str(author);
    });
    contents.finish()
}

fn stock<'a>(
    shop: &'a Shop,
    req: ReadRequest<'a>,
    mut contents: Contents<'_>,
) -> ResourceOutcome<'a> {
    contents.json(req.uri(), Some("application/json"), |v| {
        let mut o = v.object();
        for (i, (t, _)) in shop.catalog.iter().enumerate() {
            o.u64(t, u64::from(shop.copies(i)));
        }
    });
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
        name: "buy",
        description: "Buy one copy of a book; books://stock shows the copies left.",
        args: TitleArgs,
        handler: buy,
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
pub const RESOURCES: &[Resource<Shop>] = &[
    Resource::new(
        ResourceDescriptor::new("books://catalog", "catalog")
            .description("All titles in the catalog, as a JSON array.")
            .mime_type("application/json"),
        catalog,
    ),
    Resource::new(
        ResourceDescriptor::new(STOCK_URI, "stock")
            .description("The copies left of each title, as a JSON object; subscribe to be told when it changes.")
            .mime_type("application/json"),
        stock,
    ),
];

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
    server_in(page_size, state_key, &CHANGES)
}

/// The bookshop server announcing its changes to `changes` (a test's own).
pub const fn server_in(
    page_size: usize,
    state_key: &'static [u8],
    changes: &'static Changes,
) -> Server<'static, Shop> {
    Server::new(ServerInfo::new("Bookshop", env!("CARGO_PKG_VERSION")), Shop::new(CATALOG, changes))
        .instructions("A small bookshop: look up authors with get_author, list titles with top, read books://{title}.")
        .tools(TOOLS)
        .resources(RESOURCES)
        .templates(TEMPLATES)
        .prompts(PROMPTS)
        .completion(complete)
        .logging()
        .page_size(page_size)
        .request_state_key(state_key)
        .changes(changes)
}

/// The bookshop server with unlimited page size.
#[allow(dead_code)] // used by tests and the firmware, not by every includer
pub const fn server() -> Server<'static, Shop> {
    server_with_page_size(0)
}
