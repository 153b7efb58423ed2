//! JSON Schema 2020-12 keywords in a `const` schema (`$schema`, `$defs`,
//! `$anchor`, `$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`):
//! `tools/list` lists them verbatim, `tools/call` checks them before the
//! handler. The conformance fixture's `json_schema_2020_12_tool` (the
//! official suite's `json-schema-2020-12` scenario) and a tool of our own.

mod common;

#[allow(dead_code)]
#[path = "../examples/conformance_fixture.rs"]
mod fixture;

use common::{init, serve_with};
use picomcp::schema::{Composition, Constraint, Def, Keywords, Literal, Property, Schema};
use picomcp::tool::{Arguments, Reply, Tool, ToolDescriptor, ToolOutcome};
use picomcp::wire::json::{Limits, Value as Json};
use picomcp::{Server, ServerInfo};
use serde_json::{Value, json};

/// `n`: a multiple of 2 or of 3, not both (`oneOf`); `word`: anything but
/// "forbidden" (`not`); `tree`: a linked list of integers through `$ref`
/// to an `$anchor` and to `#/$defs/node` (a self-referencing definition);
/// `remote`: a `$ref` picomcp does not resolve.
const PICK: Schema = Schema::object(&[
    Property::new(
        "n",
        Schema::integer().composition(&Composition::new().one_of(&[
            Schema::integer().with(&Keywords::new().multiple_of(2)),
            Schema::integer().with(&Keywords::new().multiple_of(3)),
        ])),
    ),
    Property::new(
        "word",
        Schema::string().composition(
            &Composition::new()
                .not(&Schema::ANY.with(&Keywords::new().const_value(Literal::Str("forbidden")))),
        ),
    ),
    Property::new(
        "tree",
        Schema::ANY.composition(&Composition::new().reference("#node")),
    ),
    Property::new(
        "remote",
        Schema::ANY.composition(&Composition::new().reference("https://example.com/s.json")),
    ),
])
.additional_properties(false)
.composition(&Composition::new().defs(&[Def::new("node", &NODE)]));

const NODE: Schema = Schema::object(&[
    Property::new("v", Schema::integer()),
    Property::new(
        "next",
        Schema::ANY.composition(&Composition::new().reference("#/$defs/node")),
    ),
])
.required(&["v"])
.composition(&Composition::new().anchor("node"));

fn accept<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    reply.text("ok")
}

static SERVER: Server<'static, ()> =
    Server::new(ServerInfo::new("schema2020", "0.1.0"), ()).tools(&[
        fixture::JSON_SCHEMA_2020_12_TOOL,
        Tool::new(ToolDescriptor::new("pick", &PICK), accept),
    ]);

/// Initialize (2025-11-25), then `lines`; the answers after initialize.
fn session(lines: &[String]) -> Vec<String> {
    let mut input = init("2025-11-25");
    input.push_str("\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    for l in lines {
        input.push_str(l);
        input.push('\n');
    }
    let mut out = serve_with(&SERVER, input.as_bytes(), 64 * 1024, 16 * 1024, 4096);
    out.remove(0);
    out
}

fn call(id: usize, tool: &str, args: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}"#
    )
}

/// The text of a `tools/call` answer, and whether it is a tool error.
fn answer(line: &str) -> (String, bool) {
    let v: Value = serde_json::from_str(line).unwrap();
    let result = &v["result"];
    (
        result["content"][0]["text"].as_str().unwrap().to_owned(),
        result["isError"] == json!(true),
    )
}

/// The scenario's `inputSchema`, as the suite writes it.
fn scenario_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {
                    "street": { "type": "string" },
                    "city": { "type": "string" }
                }
            }
        },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" },
            "contactMethod": { "type": "string", "enum": ["phone", "email"] },
            "phone": { "type": "string" },
            "email": { "type": "string" }
        },
        "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
        "if": {
            "properties": { "contactMethod": { "const": "phone" } },
            "required": ["contactMethod"]
        },
        "then": { "required": ["phone"] },
        "else": { "required": ["email"] },
        "additionalProperties": false
    })
}

#[test]
fn tools_list_keeps_every_keyword_in_a_stable_order() {
    let out = session(&[r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_owned()]);
    let v: Value = serde_json::from_str(&out[0]).unwrap();
    let tool = &v["result"]["tools"][0];
    assert_eq!(tool["name"], "json_schema_2020_12_tool");
    assert_eq!(
        tool["description"],
        "Tool with JSON Schema 2020-12 features"
    );
    assert_eq!(tool["inputSchema"], scenario_schema());
    // The text itself: `$schema`/`$anchor`/`$ref` first, the validation
    // keywords, then the applicators and `$defs`.
    let start = out[0].find(r#""inputSchema":"#).unwrap() + r#""inputSchema":"#.len();
    assert!(
        out[0][start..].starts_with(concat!(
            r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","#,
            r##""properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"##,
            r#""contactMethod":{"type":"string","enum":["phone","email"]},"#,
            r#""phone":{"type":"string"},"email":{"type":"string"}},"additionalProperties":false,"#,
            r#""allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"#,
            r#""if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"#,
            r#""then":{"required":["phone"]},"else":{"required":["email"]},"#,
            r#""$defs":{"address":{"$anchor":"addressDef","type":"object","#,
            r#""properties":{"street":{"type":"string"},"city":{"type":"string"}}}}}"#
        )),
        "{}",
        &out[0][start..]
    );
    let pick = &v["result"]["tools"][1]["inputSchema"];
    assert_eq!(
        pick,
        &json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "oneOf": [
                    {"type": "integer", "multipleOf": 2},
                    {"type": "integer", "multipleOf": 3}
                ]},
                "word": {"type": "string", "not": {"const": "forbidden"}},
                "tree": {"$ref": "#node"},
                "remote": {"$ref": "https://example.com/s.json"}
            },
            "additionalProperties": false,
            "$defs": {"node": {
                "$anchor": "node",
                "type": "object",
                "properties": {"v": {"type": "integer"}, "next": {"$ref": "#/$defs/node"}},
                "required": ["v"]
            }}
        })
    );
}

/// Call `tool` with each case's arguments: `None`, the handler answers
/// `accepted`; `Some(violation)`, the tool error names it.
#[track_caller]
fn assert_calls(tool: &str, accepted: &str, cases: &[(&str, Option<&str>)]) {
    let lines: Vec<String> = cases
        .iter()
        .enumerate()
        .map(|(i, (args, _))| call(i + 1, tool, args))
        .collect();
    let out = session(&lines);
    assert_eq!(out.len(), cases.len());
    for ((args, want), line) in cases.iter().zip(&out) {
        let (text, is_error) = answer(line);
        match want {
            None => assert_eq!((text.as_str(), is_error), (accepted, false), "{args}"),
            Some(want) => assert_eq!(
                (text, is_error),
                (format!("Invalid arguments for tool {tool}: {want}"), true),
                "{args}"
            ),
        }
    }
}

#[test]
fn the_scenario_schema_is_checked_before_the_handler() {
    let cases = [
        // Valid: the handler runs.
        (
            r#"{"name":"Ada","address":{"street":"1 Main St","city":"Springfield"},"contactMethod":"phone","phone":"555"}"#,
            None,
        ),
        (r#"{"email":"a@b.c"}"#, None),
        (r#"{"contactMethod":"email","email":"a@b.c"}"#, None),
        // `$ref`'d property with a wrong type: the path goes through the $ref.
        (
            r#"{"phone":"555","address":{"city":5}}"#,
            Some("/address/city must be of type string"),
        ),
        (
            r#"{"phone":"555","address":"here"}"#,
            Some("/address must be of type object"),
        ),
        // allOf > anyOf: neither phone nor email.
        (
            r#"{"name":"Ada"}"#,
            Some("/ must match at least one schema of anyOf"),
        ),
        // if (contactMethod is phone) then phone is required.
        (
            r#"{"contactMethod":"phone","email":"a@b.c"}"#,
            Some("/phone is required"),
        ),
        // else email is required.
        (r#"{"phone":"555"}"#, Some("/email is required")),
        (
            r#"{"contactMethod":"email","phone":"555"}"#,
            Some("/email is required"),
        ),
        // The validation keywords still apply.
        (
            r#"{"contactMethod":"fax","phone":"555"}"#,
            Some(r#"/contactMethod must be one of "phone", "email""#),
        ),
        (
            r#"{"phone":"555","email":"a@b.c","age":3}"#,
            Some("/age is not an allowed property"),
        ),
    ];
    assert_calls(
        "json_schema_2020_12_tool",
        "Contact details accepted",
        &cases,
    );
}

#[test]
fn one_of_not_and_references_are_checked() {
    let cases = [
        (
            r#"{"n":4,"word":"fine","tree":{"v":1,"next":{"v":2}}}"#,
            None,
        ),
        (r#"{"n":9}"#, None),
        (
            r#"{"n":6}"#,
            Some("/n must match exactly one schema of oneOf (it matches 2)"),
        ),
        (
            r#"{"n":7}"#,
            Some("/n must match exactly one schema of oneOf (it matches 0)"),
        ),
        (r#"{"n":"6"}"#, Some("/n must be of type integer")),
        (
            r#"{"word":"forbidden"}"#,
            Some("/word must not match the schema in not"),
        ),
        (
            r#"{"tree":{"v":1,"next":{"v":2,"next":{"v":"x"}}}}"#,
            Some("/tree/next/next/v must be of type integer"),
        ),
        (
            r#"{"tree":{"v":1,"next":{}}}"#,
            Some("/tree/next/v is required"),
        ),
        (
            r#"{"remote":1}"#,
            Some(
                r#"/remote cannot be checked: $ref "https://example.com/s.json" does not resolve"#,
            ),
        ),
    ];
    assert_calls("pick", "ok", &cases);
}

fn check(s: &Schema<'_>, json: &str) -> Result<(), String> {
    let v = Json::parse(json.as_bytes(), &Limits::DEFAULT.max_depth(64)).unwrap();
    s.validate(&v).map_err(|e| e.to_string())
}

/// `$defs: {a: {$ref: "#/$defs/a"}}`, `$ref: "#/$defs/a"`: a reference
/// that never reaches a value.
static CYCLE: Schema = Schema::ANY.composition(
    &Composition::new()
        .reference("#/$defs/a")
        .defs(&[Def::new("a", &CYCLE_A)]),
);
static CYCLE_A: Schema = Schema::ANY.composition(&Composition::new().reference("#/$defs/a"));
/// The root inside its own `anyOf`, `not` and `if`.
static ANY_ROOT: Schema = Schema::ANY.composition(
    &Composition::new().any_of(&[Schema::ANY.composition(&Composition::new().reference("#"))]),
);
static NOT_ROOT: Schema = Schema::ANY.composition(&Composition::new().not(&NOT_ROOT));
static IF_ROOT: Schema = Schema::ANY.composition(
    &Composition::new()
        .if_(&Schema::ANY.composition(&Composition::new().reference("#")))
        .then(&Schema::null()),
);

#[test]
fn reference_cycles_stop_at_the_schema_depth_limit() {
    for s in [&CYCLE, &ANY_ROOT, &NOT_ROOT, &IF_ROOT] {
        let v = Json::parse(b"{}", &Limits::DEFAULT).unwrap();
        let e = s.validate(&v).unwrap_err();
        assert_eq!(e.constraint, Constraint::TooDeep, "{e}");
        assert_eq!(e.to_string(), "/ is nested too deeply");
    }
    // `#/$defs/a` names the root's definitions: checked as a root of its
    // own, `CYCLE_A` has none.
    assert_eq!(
        check(&CYCLE_A, "{}"),
        Err(r##"/ cannot be checked: $ref "#/$defs/a" does not resolve"##.to_owned())
    );
    // Emitting never follows a `$ref`; a schema that contains itself is cut
    // at the same depth.
    let mut buf = vec![0u8; 8192];
    let mut w = picomcp::wire::emit::Writer::new(&mut buf);
    NOT_ROOT.write(&mut w);
    let n = w.finish().unwrap();
    assert!(Json::parse(&buf[..n], &Limits::DEFAULT.max_depth(128)).is_ok());
    let mut w = picomcp::wire::emit::Writer::new(&mut buf);
    CYCLE.write(&mut w);
    let n = w.finish().unwrap();
    assert_eq!(
        std::str::from_utf8(&buf[..n]).unwrap(),
        r##"{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}"##
    );
}

#[test]
fn references_resolve_locally_only() {
    const TARGET: Schema = Schema::integer().composition(&Composition::new().anchor("int"));
    const DEFS: &[Def] = &[Def::new("int", &TARGET)];
    const fn by(c: &'static Composition<'static>) -> Schema<'static> {
        Schema::ANY.composition(c)
    }
    const CASES: &[(&str, Schema)] = &[
        (
            "#/$defs/int",
            by(&Composition::new().reference("#/$defs/int").defs(DEFS)),
        ),
        ("#int", by(&Composition::new().reference("#int").defs(DEFS))),
        (
            "#/$defs/other",
            by(&Composition::new().reference("#/$defs/other").defs(DEFS)),
        ),
        (
            "#/properties/x",
            by(&Composition::new().reference("#/properties/x").defs(DEFS)),
        ),
        (
            "other.json#/$defs/int",
            by(&Composition::new()
                .reference("other.json#/$defs/int")
                .defs(DEFS)),
        ),
    ];
    for (r, s) in &CASES[..2] {
        assert_eq!(check(s, "3"), Ok(()), "{r}");
        assert_eq!(
            check(s, "true"),
            Err("/ must be of type integer".to_owned()),
            "{r}"
        );
    }
    for (r, s) in &CASES[2..] {
        assert_eq!(
            check(s, "3"),
            Err(format!(
                "/ cannot be checked: $ref \"{r}\" does not resolve"
            )),
        );
    }
    // An unresolvable reference inside anyOf fails the check rather than
    // counting as "no match" (and so can never make `not` pass).
    const NOT_REMOTE: Schema = Schema::ANY.composition(
        &Composition::new()
            .not(&Schema::ANY.composition(&Composition::new().reference("https://example.com/x"))),
    );
    assert_eq!(
        check(&NOT_REMOTE, "1"),
        Err(r#"/ cannot be checked: $ref "https://example.com/x" does not resolve"#.to_owned())
    );
}

#[test]
fn all_of_reports_the_inner_violation_and_branches_leave_no_path() {
    const S: Schema = Schema::object(&[Property::new(
        "a",
        Schema::ANY.composition(&Composition::new().any_of(&[
            Schema::object(&[Property::new("deep", Schema::string())]),
            Schema::integer(),
        ])),
    )])
    .composition(&Composition::new().all_of(&[
        Schema::ANY.required(&["a"]),
        Schema::ANY.properties(&[Property::new(
            "a",
            Schema::ANY.with(&Keywords::new().max_length(3)),
        )]),
    ]));
    assert_eq!(check(&S, r#"{}"#), Err("/a is required".to_owned()));
    assert_eq!(check(&S, r#"{"a":{"deep":"x"}}"#), Ok(()));
    assert_eq!(check(&S, r#"{"a":7}"#), Ok(()));
    // The first branch fails at /a/deep; the violation is the anyOf's, at /a.
    assert_eq!(
        check(&S, r#"{"a":{"deep":1}}"#),
        Err("/a must match at least one schema of anyOf".to_owned())
    );
    assert_eq!(
        check(&S, r#"{"a":"long"}"#),
        Err("/a must match at least one schema of anyOf".to_owned())
    );
}

#[derive(picomcp::ToolArgs, serde::Deserialize, Debug, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Shade {
    Light,
    Dark,
}

#[derive(picomcp::ToolArgs, serde::Deserialize, Debug)]
struct Palette {
    shades: heapless::Vec<Option<Shade>, 3>,
    flags: heapless::Vec<Option<bool>, 2>,
}

#[derive(picomcp::ToolArgs, serde::Deserialize, Debug, PartialEq)]
struct Named<'a> {
    name: &'a str,
}

/// A nested `Option` of a type with a lifetime.
#[derive(picomcp::ToolArgs, serde::Deserialize, Debug)]
struct Roster<'a> {
    #[serde(borrow)]
    slots: [Option<Named<'a>>; 2],
}

/// The derive: a nested `Option` of a derived type is `anyOf` it or `null`
/// (`null` added to `type` would still fail the enum); of a scalar, as
/// before, `null` added to `type`.
#[test]
fn derived_nested_options_of_derived_types_are_any_of_null() {
    use picomcp::derive_support::HasSchema;
    let mut buf = [0u8; 1024];
    let mut w = picomcp::wire::emit::Writer::new(&mut buf);
    Palette::SCHEMA.write(&mut w);
    let n = w.finish().unwrap();
    assert_eq!(
        std::str::from_utf8(&buf[..n]).unwrap(),
        concat!(
            r#"{"type":"object","properties":{"shades":{"type":"array","items":"#,
            r#"{"anyOf":[{"type":"string","enum":["light","dark"]},{"type":"null"}]},"maxItems":3},"#,
            r#""flags":{"type":"array","items":{"type":["boolean","null"]},"maxItems":2}},"#,
            r#""required":["shades","flags"]}"#
        )
    );
    assert_eq!(
        check(
            &Palette::SCHEMA,
            r#"{"shades":["light",null,"dark"],"flags":[null]}"#
        ),
        Ok(())
    );
    assert_eq!(
        check(&Palette::SCHEMA, r#"{"shades":["grey"],"flags":[]}"#),
        Err("/shades/0 must match at least one schema of anyOf".to_owned())
    );
    let p: Palette = serde_json::from_str(r#"{"shades":["light",null],"flags":[true]}"#).unwrap();
    assert_eq!(p.shades.as_slice(), [Some(Shade::Light), None]);
    assert_eq!(p.flags.as_slice(), [Some(true)]);
    assert_eq!(
        check(&Roster::SCHEMA, r#"{"slots":[{"name":"a"},null]}"#),
        Ok(())
    );
    assert_eq!(
        check(&Roster::SCHEMA, r#"{"slots":[{},null]}"#),
        Err("/slots/0 must match at least one schema of anyOf".to_owned())
    );
    let r: Roster = serde_json::from_str(r#"{"slots":[null,{"name":"b"}]}"#).unwrap();
    assert_eq!(r.slots, [None, Some(Named { name: "b" })]);
}
