//! The derive macros (feature `derive`): the schema text for every supported
//! type and attribute, the output writers, prompt arguments, `tool!`, and
//! that derived validation rejects exactly what the schema says.
#![cfg(feature = "derive")]

use picomcp::derive_support::{ContentExt, HasSchema, PromptArguments, ReplyExt, WriteJson};
use picomcp::schema::{Keywords, Property, Schema};
use picomcp::tool::{Reply, Tool, ToolDescriptor, ToolOutcome};
use picomcp::wire::emit::Writer;
use picomcp::wire::json::{Limits, Value};
use picomcp::{PromptArgs, ServerInfo, ToolArgs, ToolOutput};
use proptest::prelude::*;

fn schema_text(s: &Schema<'_>) -> String {
    let mut buf = [0u8; 4096];
    let mut w = Writer::new(&mut buf);
    s.write(&mut w);
    let n = w.finish().unwrap();
    String::from_utf8(buf[..n].to_vec()).unwrap()
}

fn output_text<T: WriteJson + ?Sized>(value: &T) -> String {
    let mut buf = [0u8; 4096];
    let mut w = Writer::new(&mut buf);
    value.write_json(w.value());
    let n = w.finish().unwrap();
    String::from_utf8(buf[..n].to_vec()).unwrap()
}

fn check(s: &Schema<'_>, json: &str) -> Result<(), String> {
    let v = Value::parse(json.as_bytes(), &Limits::DEFAULT).unwrap();
    s.validate(&v).map_err(|e| e.to_string())
}

/// Every supported scalar: `&str`, `heapless::String<N>`, each integer
/// width, floats, `bool`.
#[derive(ToolArgs, serde::Deserialize)]
#[allow(dead_code)]
struct Scalars<'a> {
    s: &'a str,
    fixed: heapless::String<8>,
    a: u8,
    b: u16,
    c: u32,
    d: u64,
    e: usize,
    f: i8,
    g: i16,
    h: i32,
    i: i64,
    j: isize,
    x: f32,
    y: f64,
    t: bool,
}

#[test]
fn scalar_schemas() {
    assert_eq!(
        schema_text(&Scalars::SCHEMA),
        concat!(
            r#"{"type":"object","properties":{"#,
            r#""s":{"type":"string"},"#,
            r#""fixed":{"type":"string","maxLength":8},"#,
            r#""a":{"type":"integer","minimum":0,"maximum":255},"#,
            r#""b":{"type":"integer","minimum":0,"maximum":65535},"#,
            r#""c":{"type":"integer","minimum":0,"maximum":4294967295},"#,
            r#""d":{"type":"integer","minimum":0,"maximum":18446744073709551615},"#,
            r#""e":{"type":"integer","minimum":0,"maximum":18446744073709551615},"#,
            r#""f":{"type":"integer","minimum":-128,"maximum":127},"#,
            r#""g":{"type":"integer","minimum":-32768,"maximum":32767},"#,
            r#""h":{"type":"integer","minimum":-2147483648,"maximum":2147483647},"#,
            r#""i":{"type":"integer","minimum":-9223372036854775808,"maximum":9223372036854775807},"#,
            r#""j":{"type":"integer","minimum":-9223372036854775808,"maximum":9223372036854775807},"#,
            r#""x":{"type":"number"},"#,
            r#""y":{"type":"number"},"#,
            r#""t":{"type":"boolean"}},"#,
            r#""required":["s","fixed","a","b","c","d","e","f","g","h","i","j","x","y","t"]}"#
        )
    );
}

/// A unit-variant enum: a string `enum`.
#[derive(ToolArgs, serde::Deserialize, Debug, PartialEq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum Format {
    PlainText,
    Json,
    #[serde(rename = "md")]
    Markdown,
}

/// A nested struct.
#[derive(ToolArgs, serde::Deserialize, Debug, PartialEq)]
#[mcp(description = "A page range.")]
struct Range {
    from: u16,
    #[mcp(maximum = 500)]
    to: u16,
}

#[derive(ToolArgs, serde::Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
struct Containers<'a> {
    /// Optional: not required.
    maybe: Option<u8>,
    #[serde(borrow)]
    tags: heapless::Vec<&'a str, 4>,
    point: [i32; 2],
    nullable_items: heapless::Vec<Option<bool>, 2>,
    range: Range,
    ranges: heapless::Vec<Range, 3>,
    format: Format,
    maybe_format: Option<Format>,
}

#[test]
fn container_schemas() {
    assert_eq!(
        schema_text(&Format::SCHEMA),
        r#"{"type":"string","enum":["plain_text","json","md"]}"#
    );
    assert_eq!(
        schema_text(&Range::SCHEMA),
        concat!(
            r#"{"type":"object","description":"A page range.","properties":{"#,
            r#""from":{"type":"integer","minimum":0,"maximum":65535},"#,
            r#""to":{"type":"integer","minimum":0,"maximum":500}},"required":["from","to"]}"#
        )
    );
    let range = r#"{"type":"object","description":"A page range.","properties":{"from":{"type":"integer","minimum":0,"maximum":65535},"to":{"type":"integer","minimum":0,"maximum":500}},"required":["from","to"]}"#;
    let format = r#"{"type":"string","enum":["plain_text","json","md"]}"#;
    assert_eq!(
        schema_text(&Containers::SCHEMA),
        format!(
            concat!(
                r#"{{"type":"object","properties":{{"#,
                r#""maybe":{{"type":"integer","description":"Optional: not required.","minimum":0,"maximum":255}},"#,
                r#""tags":{{"type":"array","items":{{"type":"string"}},"maxItems":4}},"#,
                r#""point":{{"type":"array","items":{{"type":"integer","minimum":-2147483648,"maximum":2147483647}},"minItems":2,"maxItems":2}},"#,
                r#""nullable_items":{{"type":"array","items":{{"type":["boolean","null"]}},"maxItems":2}},"#,
                r#""range":{range},"#,
                r#""ranges":{{"type":"array","items":{range},"maxItems":3}},"#,
                r#""format":{format},"#,
                r#""maybe_format":{format}}},"#,
                r#""required":["tags","point","nullable_items","range","ranges","format"],"additionalProperties":false}}"#
            ),
            range = range,
            format = format
        )
    );
    // The nested schema is the child's const, by value.
    assert_eq!(Containers::SCHEMA.properties[4].schema, Range::SCHEMA);
    assert_eq!(
        Containers::SCHEMA.properties[5].schema.items,
        Some(&Range::SCHEMA)
    );
}

#[test]
fn container_validation_and_parse() {
    let s = &Containers::SCHEMA;
    let ok = r#"{"tags":["a","b"],"point":[1,-2],"nullable_items":[true,null],"range":{"from":1,"to":2},"ranges":[],"format":"md"}"#;
    assert_eq!(check(s, ok), Ok(()));
    let bad = |json: &str, msg: &str| assert_eq!(check(s, json).unwrap_err(), msg, "{json}");
    bad(
        r#"{"tags":["a","b","c","d","e"],"point":[1,2],"nullable_items":[],"range":{"from":1,"to":2},"ranges":[],"format":"md"}"#,
        "/tags must have at most 4 items",
    );
    bad(
        r#"{"tags":[],"point":[1],"nullable_items":[],"range":{"from":1,"to":2},"ranges":[],"format":"md"}"#,
        "/point must have at least 2 items",
    );
    bad(
        r#"{"tags":[],"point":[1,2],"nullable_items":[],"range":{"from":1,"to":501},"ranges":[],"format":"md"}"#,
        "/range/to must be <= 500",
    );
    bad(
        r#"{"tags":[],"point":[1,2],"nullable_items":[],"range":{"from":1,"to":2},"ranges":[],"format":"markdown"}"#,
        r#"/format must be one of "plain_text", "json", "md""#,
    );
    bad(
        r#"{"tags":[],"point":[1,2],"nullable_items":[],"range":{"from":1,"to":2},"ranges":[],"format":"md","x":1}"#,
        "/x is not an allowed property",
    );
    bad(
        r#"{"tags":[],"point":[1,2],"nullable_items":[],"ranges":[],"format":"md"}"#,
        "/range is required",
    );

    // The same text deserializes (serde, in place, borrowing).
    let mut raw = ok.as_bytes().to_vec();
    let c: Containers<'_> = picomcp::wire::de::from_slice_in_place(&mut raw).unwrap();
    assert_eq!(c.tags.as_slice(), &["a", "b"]);
    assert_eq!(c.format, Format::Markdown);
    assert_eq!(c.maybe, None);
    assert_eq!(c.range, Range { from: 1, to: 2 });
}

/// Every field attribute.
#[derive(ToolArgs, serde::Deserialize)]
#[allow(dead_code)]
struct Attrs<'a> {
    /// Doc comments become the description,
    /// lines joined.
    ///
    /// Paragraphs too.
    #[mcp(minimum = 0, maximum = 50)]
    n: u32,
    #[mcp(minimum = -5)]
    low: i8,
    #[mcp(minimum = 0.5, maximum = 2.5, description = "explicit wins over docs")]
    /// ignored
    ratio: f64,
    #[mcp(exclusive_minimum = 0, exclusive_maximum = 1.5)]
    open: f32,
    #[mcp(minimum = -1_000.25, maximum = 1e-7, exclusive_minimum = -(2.5e3))]
    tiny: f64,
    #[mcp(multiple_of = 5)]
    step: u8,
    #[mcp(min_length = 2, max_length = 10, default = "\"json\"", title = "Name")]
    name: &'a str,
    #[mcp(min_length = 1)]
    fixed: heapless::String<4>,
    #[mcp(min_items = 1, max_items = 3)]
    #[serde(borrow)]
    list: heapless::Vec<&'a str, 8>,
    #[serde(rename = "type")]
    #[mcp(rename = "type")]
    kind: &'a str,
    #[serde(default)]
    defaulted: bool,
    #[serde(skip)]
    skipped: u8,
}

#[test]
fn attribute_schemas() {
    assert_eq!(
        schema_text(&Attrs::SCHEMA),
        concat!(
            r#"{"type":"object","properties":{"#,
            r#""n":{"type":"integer","description":"Doc comments become the description, lines joined.\n\nParagraphs too.","minimum":0,"maximum":50},"#,
            r#""low":{"type":"integer","minimum":-5,"maximum":127},"#,
            r#""ratio":{"type":"number","description":"explicit wins over docs","minimum":0.5,"maximum":2.5},"#,
            r#""open":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1.5},"#,
            r#""tiny":{"type":"number","minimum":-1000.25,"maximum":1e-7,"exclusiveMinimum":-2500.0},"#,
            r#""step":{"type":"integer","minimum":0,"maximum":255,"multipleOf":5},"#,
            r#""name":{"type":"string","title":"Name","minLength":2,"maxLength":10,"default":"json"},"#,
            r#""fixed":{"type":"string","minLength":1,"maxLength":4},"#,
            r#""list":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":3},"#,
            r#""type":{"type":"string"},"#,
            r#""defaulted":{"type":"boolean"}},"#,
            r#""required":["n","low","ratio","open","tiny","step","name","fixed","list","type"]}"#
        )
    );
    assert_eq!(
        check(&Attrs::SCHEMA, r#"{}"#).unwrap_err(),
        "/n is required"
    );
}

/// Container rename rules and `mcp(rename_all)`.
#[derive(ToolOutput)]
#[mcp(rename_all = "camelCase", title = "Renamed")]
struct Renamed {
    first_field: u8,
    #[mcp(rename = "other")]
    second_field: bool,
}

#[derive(ToolOutput)]
struct BoundedOut {
    #[mcp(maximum = 5)]
    n: u8,
}

#[derive(ToolOutput)]
struct Wrapper<'a> {
    renamed: Renamed,
    list: heapless::Vec<Option<Status>, 2>,
    name: Option<&'a str>,
}

/// A derived output claims its schema (so the server skips re-checking it)
/// only when every value of the type matches it.
#[test]
fn exact_output_schemas() {
    fn claim<T: WriteJson + ?Sized>() -> Option<&'static Schema<'static>> {
        T::EXACT_SCHEMA
    }
    assert_eq!(claim::<Renamed>(), Some(&Renamed::SCHEMA));
    assert_eq!(claim::<Status>(), Some(&Status::SCHEMA));
    assert_eq!(claim::<Wrapper<'_>>(), Some(&Wrapper::SCHEMA));
    assert_eq!(claim::<&Renamed>(), Some(&Renamed::SCHEMA));
    // A value constraint the type does not enforce, a float (NaN is written
    // as null), or a part that is not exact: checked by the server.
    assert_eq!(claim::<BoundedOut>(), None);
    assert_eq!(claim::<Book<'_>>(), None);
    assert_eq!(claim::<Report<'_>>(), None);
    assert_eq!(claim::<str>(), None);
}

#[test]
fn rename_rules() {
    assert_eq!(
        schema_text(&Renamed::SCHEMA),
        concat!(
            r#"{"type":"object","title":"Renamed","properties":{"firstField":{"type":"integer","minimum":0,"maximum":255},"#,
            r#""other":{"type":"boolean"}},"required":["firstField","other"]}"#
        )
    );
    assert_eq!(
        output_text(&Renamed {
            first_field: 7,
            second_field: true
        }),
        r#"{"firstField":7,"other":true}"#
    );
}

#[derive(ToolOutput, Clone, Copy)]
#[mcp(rename_all = "kebab-case")]
enum Status {
    InStock,
    SoldOut,
}

#[derive(ToolOutput)]
struct Book<'a> {
    title: &'a str,
    pages: u16,
    price: f64,
    status: Status,
}

/// Output: every writer.
#[derive(ToolOutput)]
struct Report<'a> {
    name: heapless::String<16>,
    count: i64,
    ok: bool,
    note: Option<&'a str>,
    missing: Option<u8>,
    books: &'a [Book<'a>],
    top: heapless::Vec<u8, 3>,
    pair: [Option<bool>; 2],
}

#[test]
fn output_schema_and_writer() {
    let books = [
        Book {
            title: "Dune \"1\"",
            pages: 412,
            price: 9.5,
            status: Status::InStock,
        },
        Book {
            title: "Neuromancer",
            pages: 271,
            price: 8.0,
            status: Status::SoldOut,
        },
    ];
    let report = Report {
        name: heapless::String::try_from("shop").unwrap(),
        count: -3,
        ok: true,
        note: Some("n"),
        missing: None,
        books: &books,
        top: heapless::Vec::from_slice(&[1, 2]).unwrap(),
        pair: [Some(false), None],
    };
    let text = output_text(&report);
    assert_eq!(
        text,
        concat!(
            r#"{"name":"shop","count":-3,"ok":true,"note":"n","#,
            r#""books":[{"title":"Dune \"1\"","pages":412,"price":9.5,"status":"in-stock"},"#,
            r#"{"title":"Neuromancer","pages":271,"price":8,"status":"sold-out"}],"#,
            r#""top":[1,2],"pair":[false,null]}"#
        )
    );
    // What the writer writes, the schema accepts.
    assert_eq!(check(&Report::SCHEMA, &text), Ok(()));
    assert_eq!(
        schema_text(&Report::SCHEMA),
        concat!(
            r#"{"type":"object","properties":{"name":{"type":"string","maxLength":16},"#,
            r#""count":{"type":"integer","minimum":-9223372036854775808,"maximum":9223372036854775807},"#,
            r#""ok":{"type":"boolean"},"note":{"type":"string"},"#,
            r#""missing":{"type":"integer","minimum":0,"maximum":255},"#,
            r#""books":{"type":"array","items":{"type":"object","properties":{"title":{"type":"string"},"#,
            r#""pages":{"type":"integer","minimum":0,"maximum":65535},"price":{"type":"number"},"#,
            r#""status":{"type":"string","enum":["in-stock","sold-out"]}},"required":["title","pages","price","status"]}},"#,
            r#""top":{"type":"array","items":{"type":"integer","minimum":0,"maximum":255},"maxItems":3},"#,
            r#""pair":{"type":"array","items":{"type":["boolean","null"]},"minItems":2,"maxItems":2}},"#,
            r#""required":["name","count","ok","books","top","pair"]}"#
        )
    );
}

/// Prompt arguments.
#[derive(PromptArgs)]
struct Recommend<'a> {
    /// The genre.
    genre: &'a str,
    #[mcp(rename = "max-pages", title = "Longest")]
    max_pages: Option<&'a str>,
}

#[test]
fn prompt_arguments() {
    use picomcp::prompt::PromptArgument;
    assert_eq!(
        Recommend::ARGUMENTS,
        &[
            PromptArgument::new("genre")
                .description("The genre.")
                .required(),
            PromptArgument::new("max-pages").title("Longest"),
        ]
    );
}

/// Prompt arguments named by serde: listed and read under the name serde
/// deserializes them from (through a server below).
#[derive(PromptArgs, serde::Deserialize)]
struct Search<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    #[serde(rename = "max-results", borrow)]
    max_results: Option<&'a str>,
}

#[test]
fn prompt_arguments_follow_serde_renames() {
    use picomcp::prompt::PromptArgument;
    assert_eq!(
        Search::ARGUMENTS,
        &[
            PromptArgument::new("type").required(),
            PromptArgument::new("max-results"),
        ]
    );
    let Search { kind, max_results } =
        serde_json::from_str(r#"{"type":"book","max-results":"5"}"#).unwrap();
    assert_eq!((kind, max_results), ("book", Some("5")));
}

/// Raw identifiers are named without their `r#`, for fields and variants
/// alike, as serde names them.
#[derive(ToolOutput, serde::Serialize)]
#[allow(non_camel_case_types)]
enum Keyword {
    r#match,
    r#Loop,
}

#[derive(ToolOutput, serde::Serialize)]
struct Raw {
    r#type: Keyword,
    r#loop: Keyword,
}

#[test]
fn raw_identifiers_lose_their_prefix() {
    assert_eq!(
        schema_text(&Raw::SCHEMA),
        concat!(
            r#"{"type":"object","properties":{"type":{"type":"string","enum":["match","Loop"]},"#,
            r#""loop":{"type":"string","enum":["match","Loop"]}},"required":["type","loop"]}"#
        )
    );
    let value = Raw {
        r#type: Keyword::r#match,
        r#loop: Keyword::r#Loop,
    };
    assert_eq!(output_text(&value), serde_json::to_string(&value).unwrap());
    assert_eq!(output_text(&value), r#"{"type":"match","loop":"Loop"}"#);
}

// ---- tool! with derived and hand-written schemas, through a server ----

struct Shop;

#[derive(ToolArgs, serde::Deserialize)]
struct TitleArgs<'a> {
    /// A title in the catalog.
    #[mcp(max_length = 64)]
    title: &'a str,
    #[serde(default)]
    format: Option<Format>,
}

#[derive(ToolOutput)]
struct AuthorOut<'a> {
    author: &'a str,
}

fn get_author<'a>(_: &'a Shop, args: TitleArgs<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    let author = match args.title {
        "Dune" => "Frank Herbert",
        t => {
            return Err(picomcp::ToolError::format(format_args!("No book titled '{t}'.")).into());
        }
    };
    match args.format {
        Some(Format::PlainText) => {
            let mut content = reply.content();
            content.text(author);
            content.finish_output(&AuthorOut { author })
        }
        _ => reply.output(&AuthorOut { author }),
    }
}

/// A hand-written schema still works, with or without `tool!`.
const HAND_ARGS: Schema<'static> = Schema::object(&[Property::new(
    "n",
    Schema::integer().with(&Keywords::new().minimum(1).maximum(3)),
)])
.required(&["n"]);

struct HandArgs {
    n: u8,
}
impl HasSchema for HandArgs {
    const SCHEMA: Schema<'static> = HAND_ARGS;
}
impl<'de> serde::Deserialize<'de> for HandArgs {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        struct Raw {
            n: u8,
        }
        Raw::deserialize(d).map(|r| HandArgs { n: r.n })
    }
}

fn repeat<'a>(_: &'a Shop, args: HandArgs, reply: Reply<'_>) -> ToolOutcome<'a> {
    reply.text_fmt(format_args!("{}", "x".repeat(args.n as usize)))
}

fn plain<'a>(_: &'a Shop, args: picomcp::tool::Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    let v = args.value();
    reply.text_fmt(format_args!(
        "{}",
        v.get("n")
            .and_then(|n| n.as_number())
            .and_then(|n| n.as_i64())
            .unwrap_or(0)
    ))
}

static TOOLS: &[Tool<Shop>] = &[
    picomcp::tool! {
        name: "get_author",
        description: "Look up an author.",
        args: TitleArgs,
        output: AuthorOut,
        handler: get_author,
    },
    picomcp::tool! {
        handler: repeat,
        args: HandArgs,
        title: "Repeat",
        name: "repeat"
    },
    Tool::new(ToolDescriptor::new("plain", &HAND_ARGS), plain),
];

fn recommend<'a>(
    _: &'a Shop,
    req: picomcp::prompt::PromptRequest<'a>,
    mut messages: picomcp::prompt::Messages<'_>,
) -> picomcp::prompt::PromptOutcome<'a> {
    let Recommend { genre, max_pages } = Recommend::from_request(&req);
    messages.user(&format!("{genre} / {}", max_pages.unwrap_or("any")));
    messages.finish(None)
}

fn search<'a>(
    _: &'a Shop,
    req: picomcp::prompt::PromptRequest<'a>,
    mut messages: picomcp::prompt::Messages<'_>,
) -> picomcp::prompt::PromptOutcome<'a> {
    let Search { kind, max_results } = Search::from_request(&req);
    messages.user(&format!("{kind} / {}", max_results.unwrap_or("all")));
    messages.finish(None)
}

static PROMPTS: &[picomcp::prompt::Prompt<Shop>] = &[
    picomcp::prompt::Prompt::new(
        picomcp::prompt::PromptDescriptor::new("recommend", Recommend::ARGUMENTS),
        recommend,
    ),
    picomcp::prompt::Prompt::new(
        picomcp::prompt::PromptDescriptor::new("search", Search::ARGUMENTS),
        search,
    ),
];

static SERVER: picomcp::Server<'static, Shop> =
    picomcp::Server::new(ServerInfo::new("t", "1"), Shop)
        .tools(TOOLS)
        .prompts(PROMPTS);

fn call(lines: &[&str]) -> Vec<String> {
    let mut conn = picomcp::Connection::new();
    let mut out = vec![0u8; 8192];
    lines
        .iter()
        .map(|l| {
            let mut line = l.as_bytes().to_vec();
            let n = SERVER.handle(&mut conn, &mut line, &mut out);
            String::from_utf8(out[..n].to_vec()).unwrap()
        })
        .collect()
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
const READY: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

#[test]
fn prompt_arguments_through_server() {
    let out = call(&[
        INIT,
        READY,
        r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"recommend","arguments":{"genre":"sf","max-pages":"300"}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"recommend","arguments":{"genre":"sf"}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"recommend","arguments":{}}}"#,
    ]);
    assert!(out[2].contains(r#""text":"sf / 300""#), "{}", out[2]);
    assert!(out[3].contains(r#""text":"sf / any""#), "{}", out[3]);
    assert!(out[4].contains(r#""error""#), "{}", out[4]);
}

#[test]
fn serde_renamed_prompt_arguments_through_server() {
    let out = call(&[
        INIT,
        READY,
        r#"{"jsonrpc":"2.0","id":1,"method":"prompts/list"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"search","arguments":{"type":"book","max-results":"5"}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"search","arguments":{"kind":"book","max_results":"5"}}}"#,
    ]);
    assert!(
        out[2].contains(r#""arguments":[{"name":"type","required":true},{"name":"max-results","required":false}]"#),
        "{}",
        out[2]
    );
    assert!(out[3].contains(r#""text":"book / 5""#), "{}", out[3]);
    assert!(out[4].contains(r#""error""#), "{}", out[4]);
}

#[test]
fn tool_macro_through_server() {
    let out = call(&[
        INIT,
        READY,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune","format":"plain_text"}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"X"}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune","format":"html"}}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"repeat","arguments":{"n":3}}}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"repeat","arguments":{"n":4}}}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"plain","arguments":{"n":2}}}"#,
    ]);
    assert_eq!(
        out[2],
        concat!(
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":["#,
            r#"{"name":"get_author","description":"Look up an author.","inputSchema":{"type":"object","properties":{"title":{"type":"string","description":"A title in the catalog.","maxLength":64},"format":{"type":"string","enum":["plain_text","json","md"]}},"required":["title"]},"outputSchema":{"type":"object","properties":{"author":{"type":"string"}},"required":["author"]}},"#,
            r#"{"name":"repeat","title":"Repeat","inputSchema":{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":3}},"required":["n"]}},"#,
            r#"{"name":"plain","inputSchema":{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":3}},"required":["n"]}}]}}"#,
            "\n"
        )
    );
    assert_eq!(
        out[3],
        concat!(
            r#"{"jsonrpc":"2.0","id":2,"result":{"structuredContent":{"author":"Frank Herbert"},"content":[{"type":"text","text":"{\"author\":\"Frank Herbert\"}"}],"isError":false}}"#,
            "\n"
        )
    );
    assert_eq!(
        out[4],
        concat!(
            r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Frank Herbert"}],"structuredContent":{"author":"Frank Herbert"},"isError":false}}"#,
            "\n"
        )
    );
    assert!(out[5].contains(r#"No book titled 'X'."#), "{}", out[5]);
    assert!(out[5].contains(r#""isError":true"#), "{}", out[5]);
    assert!(
        out[6].contains(r#"/format must be one of \"plain_text\", \"json\", \"md\""#),
        "{}",
        out[6]
    );
    assert!(out[7].contains(r#""text":"xxx""#), "{}", out[7]);
    assert!(out[8].contains("/n must be <= 3"), "{}", out[8]);
    assert!(out[9].contains(r#""text":"2""#), "{}", out[9]);
}

// ---- derived validation rejects exactly what the schema says ----

#[derive(ToolArgs, serde::Deserialize)]
#[allow(dead_code)]
struct Bounded<'a> {
    #[mcp(minimum = -20, maximum = 50)]
    n: i32,
    small: u8,
    wide: i16,
    #[mcp(min_length = 2, max_length = 5)]
    s: &'a str,
    fixed: heapless::String<3>,
}

const BOUNDED_OK: &str = r#""n":0,"small":0,"wide":0,"s":"ab","fixed":"""#;

fn with(key: &str, value: &str) -> String {
    // Replace one member of the accepted object.
    let mut members: Vec<String> = BOUNDED_OK.split(',').map(str::to_string).collect();
    for m in &mut members {
        if m.starts_with(&format!("\"{key}\":")) {
            *m = format!("\"{key}\":{value}");
        }
    }
    format!("{{{}}}", members.join(","))
}

fn string_literal(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

proptest! {
    #[test]
    fn integer_bounds_exact(n in -100i64..100, small in -300i64..600, wide in -70000i64..70000) {
        let s = &Bounded::SCHEMA;
        prop_assert_eq!(check(s, &with("n", &n.to_string())).is_ok(), (-20..=50).contains(&n));
        prop_assert_eq!(check(s, &with("small", &small.to_string())).is_ok(), (0..=255).contains(&small));
        prop_assert_eq!(
            check(s, &with("wide", &wide.to_string())).is_ok(),
            (i16::MIN as i64..=i16::MAX as i64).contains(&wide)
        );
        // Whatever the schema accepts, serde turns into the field type.
        let text = with("wide", &wide.to_string());
        if check(s, &text).is_ok() {
            let mut raw = text.into_bytes();
            let b: Bounded<'_> = picomcp::wire::de::from_slice_in_place(&mut raw).unwrap();
            prop_assert_eq!(b.wide as i64, wide);
        }
    }

    #[test]
    fn string_bounds_exact(s in "\\PC{0,8}", fixed in "[a-zé\u{1F600}]{0,6}") {
        let schema = &Bounded::SCHEMA;
        let chars = s.chars().count();
        prop_assert_eq!(
            check(schema, &with("s", &string_literal(&s))).is_ok(),
            (2..=5).contains(&chars)
        );
        let fixed_chars = fixed.chars().count();
        prop_assert_eq!(
            check(schema, &with("fixed", &string_literal(&fixed))).is_ok(),
            fixed_chars <= 3
        );
    }

    #[test]
    fn full_range_u64_accepts_every_u64(d in any::<u64>(), over in 1u64..1000) {
        #[derive(ToolArgs, serde::Deserialize)]
        struct Wide { d: u64 }
        let text = format!("{{\"d\":{d}}}");
        prop_assert!(check(&Wide::SCHEMA, &text).is_ok());
        prop_assert_eq!(
            check(&Wide::SCHEMA, &format!("{{\"d\":-{over}}}")).unwrap_err(),
            "/d must be >= 0"
        );
        let mut raw = format!("{{\"d\":{d}}}").into_bytes();
        let w: Wide = picomcp::wire::de::from_slice_in_place(&mut raw).unwrap();
        prop_assert_eq!(w.d, d);
    }
}

/// Keys the derive writes as JSON literals (`"name":`) and keys it leaves
/// to the writer to escape (a quote, a backslash, a control character,
/// non-ASCII) come out the same as any JSON writer's.
#[derive(ToolOutput)]
struct Keys {
    plain: u8,
    #[mcp(rename = "say \"hi\"")]
    quoted: u8,
    #[mcp(rename = "back\\slash")]
    backslash: u8,
    #[mcp(rename = "tab\there")]
    tab: u8,
    #[mcp(rename = "café")]
    accent: u8,
    #[mcp(rename = "with space-and:colon")]
    spaced: u8,
}

#[test]
fn output_keys_escaped_or_written_as_literals() {
    let text = output_text(&Keys {
        plain: 1,
        quoted: 2,
        backslash: 3,
        tab: 4,
        accent: 5,
        spaced: 6,
    });
    assert_eq!(
        text,
        r#"{"plain":1,"say \"hi\"":2,"back\\slash":3,"tab\there":4,"café":5,"with space-and:colon":6}"#
    );
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["say \"hi\""], 2);
    assert_eq!(v["tab\there"], 4);
}
