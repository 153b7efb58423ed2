//! The derived arguments check (`derive_support::args`): it only ever says
//! "surely valid" for arguments the schema accepts, it says so for the
//! common valid shapes, types it cannot cover get none, and a tool whose
//! input schema was replaced after `tool!` is checked by the schema alone.
#![cfg(all(feature = "derive", target_pointer_width = "64"))]

use picomcp::derive_support::HasSchema;
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
    (c.check)(raw.as_bytes())
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

#[test]
fn a_replaced_schema_is_the_one_checked() {
    assert!(TOOLS[0].descriptor.args_check.is_some());
    assert!(
        TOOLS[1].descriptor.args_check.is_some(),
        "kept from the macro"
    );
    let mut conn = picomcp::Connection::new();
    let mut out = vec![0u8; 4096];
    let mut answer = |line: &str| {
        let mut line = line.as_bytes().to_vec();
        let n = SERVER.handle(&mut conn, &mut line, &mut out);
        String::from_utf8(out[..n].to_vec()).unwrap()
    };
    answer(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
    );
    answer(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
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
