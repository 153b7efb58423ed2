//! The derived arguments check (`derive_support::args`): it only ever says
//! "surely valid" for arguments the schema accepts, it says so for the
//! common valid shapes, types it cannot cover get none, and a tool whose
//! input schema was replaced after `tool!` is checked by the schema alone.
//! The derived parse (`#[mcp(parse)]`) builds exactly what serde builds
//! from every argument object its check vouches for.
#![cfg(all(feature = "derive", target_pointer_width = "64"))]

mod common;

use picomcp::derive_support::HasSchema;
use picomcp::derive_support::args::{DerivedParse, Spans};
use picomcp::schema::{Keywords, Property, Schema};
use picomcp::tool::{Reply, Tool, ToolDescriptor, ToolOutcome};
use picomcp::wire::json::{Limits, Value};
use picomcp::{ServerInfo, ToolArgs};
use proptest::prelude::*;

#[derive(ToolArgs, serde::Deserialize, Debug)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum Order {
    Asc,
    Desc,
}

#[derive(ToolArgs, serde::Deserialize, Debug)]
#[allow(dead_code)]
struct Inner<'a> {
    name: &'a str,
    #[serde(default)]
    count: u16,
}

#[derive(ToolArgs, serde::Deserialize, Debug)]
#[allow(dead_code)]
struct Plain<'a> {
    title: &'a str,
    n: u8,
    delta: i64,
    ratio: f64,
    flag: bool,
    note: Option<&'a str>,
    maybe: Option<Option<i8>>,
    order: Option<Order>,
    inner: Inner<'a>,
    #[serde(rename = "optInner")]
    opt_inner: Option<Option<Inner<'a>>>,
    #[serde(skip)]
    hidden: u8,
}

#[derive(ToolArgs, serde::Deserialize, Debug)]
#[mcp(deny_unknown_fields)]
#[allow(dead_code)]
struct Strict {
    a: u32,
    b: Option<u64>,
}

#[derive(ToolArgs, serde::Deserialize)]
#[allow(dead_code)]
struct Constrained {
    #[mcp(maximum = 3)]
    n: u8,
}

#[derive(ToolArgs, serde::Deserialize)]
#[allow(dead_code)]
struct Listed {
    xs: heapless::Vec<u8, 4>,
}

#[derive(ToolArgs, serde::Deserialize)]
#[allow(dead_code)]
struct HoldsListed {
    inner: Listed,
}

#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct ByHand {
    a: u8,
}

impl HasSchema for ByHand {
    const SCHEMA: Schema<'static> =
        Schema::object(&[Property::new("a", Schema::integer())]).required(&["a"]);
}

fn fast<T: HasSchema>(raw: &str) -> bool {
    let c = T::ARGS_CHECK.expect("a derived check");
    (c.check)(raw.as_bytes(), &mut Spans::default())
}

fn full<T: HasSchema>(raw: &str) -> bool {
    let v = Value::parse(raw.as_bytes(), &Limits::DEFAULT).expect("valid JSON");
    T::SCHEMA.validate(&v).is_ok()
}

const PLAIN_OK: &str = r#"{"title":"Dune","n":255,"delta":-9223372036854775808,"ratio":0.5,"flag":true,"inner":{"name":"x"}}"#;

#[test]
fn accepts_what_it_covers() {
    assert!(fast::<Plain>(PLAIN_OK) && full::<Plain>(PLAIN_OK));
    let all = r#"{ "title" : "a\"b" , "n":0,"delta":1,"ratio":-1e3,"flag":false,"note":"x","maybe":null,"order":"desc","inner":{"count":7,"name":""},"optInner":null,"extra":[1,{"y":2}],"hidden":1}"#;
    assert!(fast::<Plain>(all) && full::<Plain>(all));
    assert!(fast::<Plain>(&PLAIN_OK.replace(
        r#""flag":true"#,
        r#""flag":true,"maybe":-128,"optInner":{"name":"y"}"#
    )));
    assert!(fast::<Strict>(r#"{"a":4294967295}"#));
    assert!(fast::<Strict>(r#"{"b":18446744073709551,"a":0}"#));
    assert!(fast::<Order>(r#""asc""#));
}

/// Names a field's member is not taken as expected by (a byte that is not
/// plain ASCII); and names one is a prefix of another's.
#[derive(ToolArgs, serde::Deserialize, Debug)]
#[allow(dead_code)]
struct Names {
    #[serde(rename = "tí")]
    accented: Option<u8>,
    #[serde(rename = "a\\b")]
    slashed: Option<u8>,
    a: Option<u8>,
    ab: Option<u8>,
}

/// Members in declaration order (taken as expected), out of it, and with
/// names whose member is never taken as expected: the check is sure only
/// of what the schema accepts, and sure of the plain ones.
#[test]
fn members_in_and_out_of_declaration_order() {
    for (raw, sure) in [
        (r#"{"a":1,"ab":2}"#, true),
        (r#"{"ab":2,"a":1}"#, true),
        (r#"{"a":1,"a":2}"#, false),
        (r#"{"ab":1,"ab":2}"#, false),
        (r#"{"a":1,"ab":300}"#, false),
        // Not plain ASCII, or escaped: the full check decides.
        (r#"{"tí":1}"#, false),
        (r#"{"a\\b":1,"a":1}"#, false),
        (r#"{"a\b":1}"#, false),
    ] {
        assert_eq!(fast::<Names>(raw), sure, "{raw}");
        assert!(!fast::<Names>(raw) || full::<Names>(raw), "{raw}");
    }
    let in_order = r#"{"title":"Dune","n":1,"delta":2,"ratio":0.5,"flag":true,"note":"x","maybe":3,"order":"asc","inner":{"name":"x","count":1},"optInner":null}"#;
    assert!(fast::<Plain>(in_order) && full::<Plain>(in_order));
    let reversed = r#"{"optInner":null,"inner":{"count":1,"name":"x"},"order":"asc","maybe":3,"note":"x","flag":true,"ratio":0.5,"delta":2,"n":1,"title":"Dune"}"#;
    assert!(fast::<Plain>(reversed) && full::<Plain>(reversed));
    assert!(!fast::<Plain>(
        &in_order.replace(r#""n":1"#, r#""n":1,"n":2"#)
    ));
}

#[test]
fn not_sure_where_the_full_check_decides() {
    for (raw, schema_says) in [
        (PLAIN_OK.replace(r#""n":255"#, r#""n":256"#), false),
        (PLAIN_OK.replace(r#""n":255"#, r#""n":2.0"#), true),
        (PLAIN_OK.replace(r#""title""#, r#""\u0074itle""#), true),
        (PLAIN_OK.replace(r#""title":"Dune","#, ""), false),
        (
            PLAIN_OK.replace(r#""flag":true"#, r#""flag":true,"n":1"#),
            false,
        ),
        (
            PLAIN_OK.replace(r#""flag":true"#, r#""flag":true,"note":null"#),
            false,
        ),
        (
            PLAIN_OK.replace(r#""flag":true"#, r#""flag":true,"order":"\u0061sc""#),
            true,
        ),
        (
            PLAIN_OK.replace(r#""flag":true"#, r#""flag":true,"order":"up""#),
            false,
        ),
        (
            PLAIN_OK.replace(r#"{"name":"x"}"#, r#"{"name":"x","count":65536}"#),
            false,
        ),
    ] {
        assert!(!fast::<Plain>(&raw), "{raw}");
        assert_eq!(full::<Plain>(&raw), schema_says, "{raw}");
    }
    assert!(!fast::<Strict>(r#"{"a":1,"c":2}"#));
    assert!(!fast::<Strict>("[]"));
}

#[test]
fn types_it_cannot_cover_have_none() {
    assert!(Constrained::ARGS_CHECK.is_none());
    assert!(Listed::ARGS_CHECK.is_none());
    assert!(ByHand::ARGS_CHECK.is_none());
    // A nested type without a check: the outer check is never sure of it.
    assert!(!fast::<HoldsListed>(r#"{"inner":{"xs":[1]}}"#));
    assert!(full::<HoldsListed>(r#"{"inner":{"xs":[1]}}"#));
}

/// Keys and values the generator draws from: declared keys, an escaped
/// one, an unknown one; values of every kind, at the edges of the types.
const KEYS: &[&str] = &[
    "title",
    "n",
    "delta",
    "ratio",
    "flag",
    "note",
    "maybe",
    "order",
    "inner",
    "optInner",
    "hidden",
    "extra",
    r"\u0074itle",
    "a",
    "b",
    "name",
    "count",
];
const VALUES: &[&str] = &[
    r#""Dune""#,
    r#""""#,
    r#""a\"b""#,
    r#""\u0061sc""#,
    r#""asc""#,
    r#""desc""#,
    r#""up""#,
    "0",
    "-0",
    "255",
    "256",
    "-1",
    "-128",
    "-129",
    "65535",
    "65536",
    "1.0",
    "1e2",
    "-2.5",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "true",
    "false",
    "null",
    "{}",
    "[]",
    "[1]",
    r#"{"name":"x"}"#,
    r#"{"name":"x","count":70000}"#,
    r#"{"count":1}"#,
    r#"{"name":"x","name":"y"}"#,
];

fn object(members: &[(usize, usize, bool)]) -> String {
    let body: Vec<String> = members
        .iter()
        .map(|&(k, v, spaced)| {
            let (k, v) = (KEYS[k % KEYS.len()], VALUES[v % VALUES.len()]);
            if spaced {
                format!(" \"{k}\" :\t{v} ")
            } else {
                format!("\"{k}\":{v}")
            }
        })
        .collect();
    format!("{{{}}}", body.join(","))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// Never sure of what the schema rejects.
    #[test]
    fn sure_only_of_what_the_schema_accepts(
        members in proptest::collection::vec((0usize..64, 0usize..64, any::<bool>()), 0..12),
        value in 0usize..64,
    ) {
        let raw = object(&members);
        for (sure, accepted) in [
            (fast::<Plain>(&raw), full::<Plain>(&raw)),
            (fast::<Strict>(&raw), full::<Strict>(&raw)),
            (fast::<Inner>(&raw), full::<Inner>(&raw)),
        ] {
            prop_assert!(!sure || accepted, "{}", raw);
        }
        let v = VALUES[value % VALUES.len()];
        prop_assert!(!fast::<Order>(v) || full::<Order>(v), "{}", v);
        // Valid arguments with one member replaced: sure at least of the
        // plain ones.
        let mut plain = PLAIN_OK.to_string();
        if let Some((k, v, _)) = members.first() {
            let (k, v) = (KEYS[k % KEYS.len()], VALUES[v % VALUES.len()]);
            plain = plain.replacen('{', &format!("{{\"{k}\":{v},"), 1);
        }
        prop_assert!(!fast::<Plain>(&plain) || full::<Plain>(&plain), "{}", plain);
    }
}

// ---- a descriptor whose schema was replaced is checked by the schema ----

struct Shop;

fn echo<'a>(_: &'a Shop, args: Strict, reply: Reply<'_>) -> ToolOutcome<'a> {
    reply.text_fmt(format_args!("{}", args.a))
}

const AT_MOST_TEN: Schema<'static> = Schema::object(&[Property::new(
    "a",
    Schema::integer().with(&Keywords::new().maximum(10)),
)])
.required(&["a"]);

const REPLACED: ToolDescriptor<'static> = {
    let mut d = picomcp::tool_descriptor! { name: "replaced", args: Strict };
    d.input_schema = &AT_MOST_TEN;
    d
};

static TOOLS: &[Tool<Shop>] = &[
    picomcp::tool! { name: "derived", args: Strict, handler: echo },
    Tool::new(REPLACED, |s, a, r| echo(s, a.parse()?, r)),
];

static SERVER: picomcp::Server<'static, Shop> =
    picomcp::Server::new(ServerInfo::new("t", "1"), Shop).tools(TOOLS);

/// A handshake-era session with `server`, initialized: a line in, its
/// answer out.
fn ready(server: &'static picomcp::Server<'static, Shop>) -> impl FnMut(&str) -> String {
    let mut conn = picomcp::Connection::new();
    let mut out = vec![0u8; 4096];
    common::ready_at(server, &mut conn, "2025-06-18");
    move |line: &str| {
        let mut line = line.as_bytes().to_vec();
        let n = server.handle(&mut conn, &mut line, &mut out);
        String::from_utf8(out[..n].to_vec()).unwrap()
    }
}

#[test]
fn a_replaced_schema_is_the_one_checked() {
    assert!(TOOLS[0].descriptor.args_check.is_some());
    assert!(
        TOOLS[1].descriptor.args_check.is_some(),
        "kept from the macro"
    );
    let mut answer = ready(&SERVER);
    let derived = answer(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"derived","arguments":{"a":11}}}"#,
    );
    assert!(derived.contains(r#""text":"11""#), "{derived}");
    let replaced = answer(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"replaced","arguments":{"a":11}}}"#,
    );
    assert!(
        replaced.contains("Invalid arguments for tool replaced: /a must be <= 10"),
        "{replaced}"
    );
    assert!(replaced.contains(r#""isError":true"#), "{replaced}");
}

// ---- the derived parse (`#[mcp(parse)]`) builds what serde builds ----

#[derive(ToolArgs, serde::Deserialize, Debug, PartialEq)]
#[mcp(parse)]
#[serde(rename_all = "lowercase")]
enum POrder {
    Asc,
    Desc,
}

#[derive(ToolArgs, serde::Deserialize, Debug, PartialEq)]
#[mcp(parse)]
struct PInner<'a> {
    name: &'a str,
    #[serde(default)]
    count: u16,
}

/// More than `SPANS` properties: parsed by walking the arguments again.
#[derive(ToolArgs, serde::Deserialize, Debug, PartialEq)]
#[mcp(parse)]
struct Parsed<'a> {
    title: &'a str,
    n: u8,
    delta: i64,
    ratio: f64,
    small: Option<f32>,
    flag: bool,
    note: Option<&'a str>,
    maybe: Option<Option<i8>>,
    order: Option<POrder>,
    inner: PInner<'a>,
    #[serde(rename = "optInner")]
    opt_inner: Option<Option<PInner<'a>>>,
    #[serde(skip)]
    hidden: u8,
}

/// At most `SPANS` properties: parsed from the spans the check recorded.
#[derive(ToolArgs, serde::Deserialize, Debug, PartialEq)]
#[mcp(parse)]
#[serde(deny_unknown_fields)]
struct Spanned<'a> {
    title: &'a str,
    n: Option<u8>,
    #[serde(default)]
    delta: i64,
    note: Option<&'a str>,
    order: Option<POrder>,
    inner: Option<PInner<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    flag: Option<bool>,
    #[serde(skip)]
    hidden: u8,
}

/// What the check says of `raw`, and if sure, what the derived parse
/// builds (from the spans and by walking) against what serde builds.
fn parse_both<'a, T>(raw: &'a str) -> Option<(Option<T>, Option<T>, T)>
where
    T: HasSchema + DerivedParse<'a> + serde::Deserialize<'a>,
{
    let mut spans = Spans::default();
    let sure = (T::ARGS_CHECK.expect("a derived check").check)(raw.as_bytes(), &mut spans);
    if !sure {
        return None;
    }
    // serde's copy (it decodes in place), leaked: a test.
    let copy: &'a mut [u8] = raw.as_bytes().to_vec().leak();
    let by_serde = picomcp::wire::de::from_slice_in_place(copy)
        .expect("serde parses what the check vouched for");
    Some((
        T::parse_plain(raw.as_bytes(), Some(&spans)),
        T::parse_plain(raw.as_bytes(), None),
        by_serde,
    ))
}

fn same_as_serde<'a, T>(raw: &'a str) -> bool
where
    T: HasSchema + DerivedParse<'a> + serde::Deserialize<'a> + PartialEq + core::fmt::Debug,
{
    match parse_both::<T>(raw) {
        None => false,
        Some((spanned, walked, by_serde)) => {
            assert_eq!(spanned.as_ref(), Some(&by_serde), "{raw}");
            assert_eq!(walked.as_ref(), Some(&by_serde), "{raw}");
            true
        }
    }
}

const PARSED_OK: &str = r#"{"title":"Dune","n":255,"delta":-9223372036854775808,"ratio":0.1,"flag":true,"inner":{"name":"x"}}"#;

#[test]
fn the_derived_parse_builds_what_serde_builds() {
    assert!(same_as_serde::<Parsed>(PARSED_OK));
    let all = r#"{ "title" : "Caf\u00e9" , "n":0,"delta":1,"ratio":-1e3,"small":3.4028236e38,"flag":false,"note":"x y","maybe":null,"order":"desc","inner":{"count":7,"name":"é"},"optInner":null,"extra":[1,{"y":2}],"hidden":1}"#;
    // An escaped string: the check is not sure (serde decodes it).
    assert!(!same_as_serde::<Parsed>(all));
    let all = all.replace(r"Caf\u00e9", "Café");
    assert!(same_as_serde::<Parsed>(&all));
    assert!(same_as_serde::<Parsed>(&PARSED_OK.replace(
        r#""flag":true"#,
        r#""flag":true,"maybe":-128,"optInner":{"name":"y"},"small":1e-50"#
    )));
    assert!(same_as_serde::<Spanned>(r#"{"title":""}"#));
    assert!(same_as_serde::<Spanned>(
        r#"{"inner":{"name":"n","count":65535},"order":"asc","note":"","title":"t","delta":-1,"n":3,"flag":false}"#
    ));
    assert!(same_as_serde::<POrder>(r#""asc""#));
    // Repeated, unknown under deny_unknown_fields, missing: not sure.
    assert!(!same_as_serde::<Spanned>(r#"{"title":"a","title":"b"}"#));
    assert!(!same_as_serde::<Spanned>(r#"{"title":"a","x":1}"#));
    assert!(!same_as_serde::<Spanned>(r#"{"n":1}"#));
    let parsed = parse_both::<Spanned>(r#"{"title":"t","hidden":3}"#);
    assert!(
        parsed.is_none(),
        "hidden is unknown to a deny_unknown_fields check"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// Whatever the check vouches for, both ways of the derived parse
    /// build exactly what serde builds.
    #[test]
    fn vouched_arguments_parse_as_serde_parses(
        members in proptest::collection::vec((0usize..64, 0usize..64, any::<bool>()), 0..12),
    ) {
        let raw = object(&members);
        same_as_serde::<Parsed>(&raw);
        same_as_serde::<Spanned>(&raw);
        same_as_serde::<PInner>(&raw);
        let mut plain = PARSED_OK.to_string();
        if let Some((k, v, _)) = members.first() {
            let (k, v) = (KEYS[k % KEYS.len()], VALUES[v % VALUES.len()]);
            plain = plain.replacen('{', &format!("{{\"{k}\":{v},"), 1);
        }
        same_as_serde::<Parsed>(&plain);
        // Spanned's one required member, and the drawn ones.
        let spanned = raw.replacen('{', r#"{"title":"t","#, 1).replace(",}", "}");
        same_as_serde::<Spanned>(&spanned);
    }
}

fn title<'a>(_: &'a Shop, args: Spanned<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    reply.text_fmt(format_args!("{}|{:?}", args.title, args.n))
}

static PARSING: &[Tool<Shop>] = &[picomcp::tool! { name: "title", args: Spanned, handler: title }];

static PARSING_SERVER: picomcp::Server<'static, Shop> =
    picomcp::Server::new(ServerInfo::new("t", "1"), Shop).tools(PARSING);

#[test]
fn a_tool_parses_by_the_derive_and_by_serde_alike() {
    let mut answer = ready(&PARSING_SERVER);
    // Vouched for: the derived parse.
    let plain = answer(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"title","arguments":{"n":7,"title":"Dune"}}}"#,
    );
    assert!(plain.contains(r#""text":"Dune|Some(7)""#), "{plain}");
    // An escaped title: serde decodes it in place.
    let escaped = answer(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"title","arguments":{"title":"D\u0075ne \"2\""}}}"#,
    );
    assert!(escaped.contains(r#""text":"Dune \"2\"|None""#), "{escaped}");
    // A repeated key: not vouched for; the full check refuses it.
    let repeated = answer(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"title","arguments":{"title":"a","title":"b"}}}"#,
    );
    assert!(
        repeated.contains("/title appears more than once"),
        "{repeated}"
    );
    assert!(repeated.contains(r#""isError":true"#), "{repeated}");
}
