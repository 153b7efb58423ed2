//! The schema checker and the in-place serde deserializer on any JSON.
//!
//! Every input that `json::validate` accepts is checked against a handful of
//! `const` schemas that together use every keyword (type unions,
//! properties/required/additionalProperties, enum, const, integer and float
//! bounds, exclusive bounds, multipleOf, minLength/maxLength, items,
//! minItems/maxItems, a self-referencing schema); a violation must display
//! as a JSON-pointer path plus a constraint. Then the input is deserialized
//! in place into a few borrowed serde types; whenever both picomcp and
//! serde_json accept it, both must produce the same value.
#![no_main]

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Once;

use libfuzzer_sys::fuzz_target;
use picomcp::schema::{Bound, Keywords, Literal, Property, Schema, Types};
use picomcp::wire::de::from_slice_in_place;
use picomcp::wire::emit::Writer;
use picomcp::wire::json::{self, Limits, Value};
use serde::Deserialize;

const TOP: Schema = Schema::object(&[Property::new(
    "n",
    Schema::integer().with(&Keywords::new().minimum(0).maximum(50)),
)])
.required(&["n"]);
const ITEM: Schema = Schema::string().with(&Keywords::new().min_length(2).max_length(3));
const RICH: Schema = Schema::object(&[
    Property::new(
        "name",
        Schema::string().nullable().title("Name").description("d"),
    ),
    Property::new(
        "tags",
        Schema::array(&ITEM).with(&Keywords::new().min_items(1).max_items(2)),
    ),
    Property::new(
        "color",
        Schema::string().with(
            &Keywords::new().enum_values(&[Literal::Str("red"), Literal::Str("gr\u{e9}en \"q\"")]),
        ),
    ),
    Property::new(
        "even",
        Schema::integer().with(&Keywords::new().multiple_of(2)),
    ),
    Property::new(
        "zero",
        Schema::integer().with(&Keywords::new().multiple_of(0)),
    ),
    Property::new(
        "ratio",
        Schema::number().with(
            &Keywords::new()
                .exclusive_minimum(Bound::Int(0))
                .exclusive_maximum(Bound::decimal("1.5")),
        ),
    ),
    Property::new(
        "wide",
        Schema::number().with(&Keywords::new().minimum(i64::MIN).maximum(i64::MAX)),
    ),
    Property::new(
        "fine",
        Schema::number().with(
            &Keywords::new()
                .minimum_decimal("-0.5")
                .maximum_decimal("1e300"),
        ),
    ),
    Property::new(
        "tight",
        Schema::integer().with(
            &Keywords::new()
                .exclusive_minimum(Bound::decimal("-1e-300"))
                .exclusive_maximum(Bound::Int(i64::MIN)),
        ),
    ),
    Property::new(
        "kind",
        Schema::string().with(&Keywords::new().const_value(Literal::Str("book"))),
    ),
    Property::new(
        "flag",
        Schema::of(Types::ANY).with(&Keywords::new().const_value(Literal::Bool(true))),
    ),
    Property::new(
        "nothing",
        Schema::null().with(&Keywords::new().const_value(Literal::Null)),
    ),
    Property::new(
        "count",
        Schema::of(Types::ANY).with(&Keywords::new().const_value(Literal::Int(-7))),
    ),
    Property::new(
        "inner",
        Schema::object(&[Property::new("ok", Schema::boolean())])
            .required(&["ok", "a/b~c"])
            .additional_properties(false),
    ),
    Property::new(
        "any",
        Schema::ANY.with(&Keywords::new().default_json("{\"x\":[1,2]}")),
    ),
])
.required(&["name"]);
const UNION: Schema = Schema::of(
    Types::STRING
        .or(Types::INTEGER)
        .or(Types::NULL)
        .or(Types::ARRAY)
        .or(Types::OBJECT)
        .or(Types::BOOLEAN),
)
.with(
    &Keywords::new()
        .enum_values(&[
            Literal::Null,
            Literal::Bool(false),
            Literal::Int(i64::MIN),
            Literal::Int(0),
            Literal::Str(""),
            Literal::Str("\u{1f600}/\\"),
        ])
        .min_length(0)
        .max_length(u32::MAX)
        .min_items(u32::MAX)
        .max_items(0),
);
const NUMBERS: Schema = Schema::array(
    &Schema::number().with(
        &Keywords::new()
            .minimum(-3)
            .maximum_decimal("3.25")
            .multiple_of(3),
    ),
)
.with(&Keywords::new().max_items(1000));
const STRINGS: Schema = Schema::array(
    &Schema::string()
        .with(&Keywords::new().min_length(1).max_length(4))
        .nullable(),
)
.additional_properties(true);
static LOOP: Schema = Schema::array(&LOOP).with(&Keywords::new().min_items(1));

static SCHEMAS: [&Schema<'static>; 7] =
    [&TOP, &RICH, &UNION, &NUMBERS, &STRINGS, &LOOP, &Schema::ANY];

#[derive(Debug, PartialEq, Deserialize)]
enum Kind<'a> {
    Unit,
    New(i64),
    Tup(u8, i16),
    Struct {
        x: i8,
        y: Option<bool>,
    },
    #[serde(borrow)]
    Text(Cow<'a, str>),
}

/// Arguments a tool could take: every primitive serde knows, borrowed text.
#[derive(Debug, PartialEq, Deserialize)]
struct Args<'a> {
    #[serde(borrow)]
    title: Option<Cow<'a, str>>,
    n: Option<i64>,
    u: Option<u8>,
    w: Option<u64>,
    big: Option<i128>,
    ubig: Option<u128>,
    f: Option<f64>,
    b: Option<bool>,
    c: Option<char>,
    unit: Option<()>,
    #[serde(borrow)]
    tags: Option<Vec<Cow<'a, str>>>,
    pair: Option<(i32, bool)>,
    #[serde(borrow)]
    kind: Option<Kind<'a>>,
    #[serde(borrow)]
    map: Option<BTreeMap<Cow<'a, str>, u16>>,
    keys: Option<BTreeMap<u32, bool>>,
    #[serde(borrow)]
    nested: Option<Box<Args<'a>>>,
}

/// A JSON-RPC request with tool-call params.
#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Call<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: Option<serde::de::IgnoredAny>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow)]
    params: Option<Params<'a>>,
}

#[derive(Debug, PartialEq, Deserialize)]
struct Params<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    arguments: Option<Args<'a>>,
    #[serde(borrow)]
    uri: Option<Cow<'a, str>>,
}

/// Any JSON, through `deserialize_any` (untagged buffering), at any depth.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
#[allow(dead_code)]
enum Tree<'a> {
    Null(()),
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(#[serde(borrow)] Cow<'a, str>),
    List(Vec<Tree<'a>>),
    Map(BTreeMap<Cow<'a, str>, Tree<'a>>),
}

/// picomcp and serde_json agree whenever both accept `data` as a `T`.
fn same_as_serde_json<'a, T>(data: &'a [u8], copy: &'a mut Vec<u8>)
where
    T: Deserialize<'a> + PartialEq + std::fmt::Debug,
{
    copy.clear();
    copy.extend_from_slice(data);
    let ours = from_slice_in_place::<T>(copy);
    let theirs = serde_json::from_slice::<T>(data);
    if let (Ok(ours), Ok(theirs)) = (&ours, &theirs) {
        assert_eq!(ours, theirs, "picomcp and serde_json read different values");
    }
}

/// The emitted schemas are JSON. (Not `LOOP`: `Schema::write` follows
/// `items` without a depth bound, so a self-referencing schema cannot be
/// emitted; only the checker guards against them.)
fn emitted_schemas_are_json() {
    for s in SCHEMAS.into_iter().filter(|s| !std::ptr::eq(*s, &LOOP)) {
        let mut buf = vec![0u8; 1 << 16];
        let mut w = Writer::new(&mut buf);
        s.write(&mut w);
        let n = w.finish().expect("schema fits");
        serde_json::from_slice::<serde_json::Value>(&buf[..n]).expect("an emitted schema is JSON");
    }
}

static ONCE: Once = Once::new();

fuzz_target!(|data: &[u8]| {
    ONCE.call_once(emitted_schemas_are_json);
    let limits = Limits::DEFAULT.max_depth(json::MAX_DEPTH);
    if json::validate(data, &limits).is_err() {
        return;
    }
    let value = Value::parse(data, &limits).expect("validated");
    let mut text = String::new();
    for schema in SCHEMAS {
        if let Err(violation) = schema.validate(&value) {
            text.clear();
            write!(text, "{violation}").expect("Display never fails");
            assert!(
                text.starts_with('/'),
                "a violation starts with its path: {text}"
            );
            let _ = format!("{:?}", violation.constraint);
        }
        // A value nested inside is checked the same way (no panic either).
        if let Some(first) = value
            .items()
            .next()
            .or_else(|| value.members().next().map(|(_, v)| v))
        {
            let _ = schema.validate(&first);
        }
    }

    let mut copy = Vec::with_capacity(data.len());
    same_as_serde_json::<Args<'_>>(data, &mut copy);
    same_as_serde_json::<Call<'_>>(data, &mut copy);
    same_as_serde_json::<Vec<Kind<'_>>>(data, &mut copy);
    copy.clear();
    copy.extend_from_slice(data);
    let _ = from_slice_in_place::<Tree<'_>>(&mut copy);
    copy.clear();
    copy.extend_from_slice(data);
    let _ = from_slice_in_place::<serde::de::IgnoredAny>(&mut copy);
});
