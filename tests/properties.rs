//! Property tests (proptest) for the promises the README makes about the wire
//! layer and the serve loop:
//!
//! * (a) emit → scan round-trips any string: what `Writer::string` writes is
//!   accepted by `json::validate`, and `Value::as_str().chars()`,
//!   `json::unescape_str_in_place` and serde_json all give back exactly the
//!   original; the same for strings escaped in every legal way (short
//!   escapes, `\u` in either case, surrogate pairs for astral chars).
//! * (b) any sequence of lines (requests with ids of every type,
//!   notifications, client responses, batches, garbage, over-long lines,
//!   empty lines, CRLF, an unterminated last line) served by the bookshop
//!   through `transport::serve` gets exactly one answer per request, garbage
//!   or over-long line and none per notification, response or empty line,
//!   in input order, whatever the read chunking. A batch gets one answer
//!   (an array in a 2025-03-26 session, an error otherwise). Notifications a
//!   handler sends before its answer (progress, log) are checked for shape
//!   and not counted.
//! * (c) the id of every request comes back byte-identical (escaped string
//!   ids, integers of up to 30 digits, negative ones).
//!
//! Case counts are modest so the file runs in a few seconds in debug builds.

mod common;

use picomcp::Connection;
use picomcp::wire::emit::Writer;
use picomcp::wire::json::{self, Limits, Value};
use proptest::prelude::*;

/// `n` cases, or `PROPTEST_CASES` when set (for longer local runs).
fn cases(n: u32) -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(n);
    ProptestConfig::with_cases(n)
}

// ---------------------------------------------------------------------------
// Strings
// ---------------------------------------------------------------------------

/// Chars with a bias towards the ones JSON treats specially.
fn interesting_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => any::<char>(),
        3 => prop::sample::select(vec![
            '"', '\\', '/', '\n', '\r', '\t', '\u{8}', '\u{c}', '\0', '\u{1f}', '\u{7f}',
            '\u{80}', '\u{7ff}', '\u{800}', '\u{2028}', '\u{2029}', '\u{d7ff}', '\u{e000}',
            '\u{fffd}', '\u{feff}', '\u{ffff}', '\u{10000}', '\u{1f600}', '\u{10ffff}', 'é',
            'a', ' ', 'u',
        ]),
        2 => (0u32..0x20).prop_map(|c| char::from_u32(c).expect("control char")),
        1 => (0x1_0000u32..=0x10_ffff).prop_map(|c| char::from_u32(c).expect("astral char")),
    ]
}

fn any_text(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(interesting_char(), 0..max).prop_map(|v| v.into_iter().collect())
}

/// `\uXXXX` for one UTF-16 unit, hex digits in lower or upper case.
fn u_escape(out: &mut String, unit: u32, upper: bool) {
    if upper {
        out.push_str(&format!("\\u{unit:04X}"));
    } else {
        out.push_str(&format!("\\u{unit:04x}"));
    }
}

/// Escape `c` as JSON string content in one of the legal ways picked by `how`
/// (characters that must be escaped always are).
fn escape_char(out: &mut String, c: char, how: u8) {
    let cp = u32::from(c);
    let upper = how & 4 != 0;
    let short = match c {
        '"' => Some("\\\""),
        '\\' => Some("\\\\"),
        '/' => Some("\\/"),
        '\n' => Some("\\n"),
        '\r' => Some("\\r"),
        '\t' => Some("\\t"),
        '\u{8}' => Some("\\b"),
        '\u{c}' => Some("\\f"),
        _ => None,
    };
    let must = c == '"' || c == '\\' || cp < 0x20;
    match how % 3 {
        // As is, unless it must be escaped.
        0 if !must => out.push(c),
        // The short escape when there is one.
        1 if short.is_some() => out.push_str(short.unwrap_or_default()),
        // `\u`: one unit, or a surrogate pair for astral chars.
        _ => {
            if cp >= 0x1_0000 {
                let v = cp - 0x1_0000;
                u_escape(out, 0xD800 + (v >> 10), upper);
                u_escape(out, 0xDC00 + (v & 0x3FF), !upper ^ (how & 8 != 0));
            } else {
                u_escape(out, cp, upper);
            }
        }
    }
}

/// A string and one of its many JSON escapings (contents, no quotes).
fn escaped_text(max: usize) -> impl Strategy<Value = (String, String)> {
    prop::collection::vec((interesting_char(), any::<u8>()), 0..max).prop_map(|chars| {
        let mut plain = String::new();
        let mut escaped = String::new();
        for (c, how) in chars {
            plain.push(c);
            escape_char(&mut escaped, c, how);
        }
        (plain, escaped)
    })
}

/// Everything the scanner and decoders say about the JSON string `quoted`
/// must agree with `want`.
fn check_decodes_to(quoted: &[u8], want: &str) -> Result<(), TestCaseError> {
    prop_assert_eq!(json::validate(quoted, &Limits::DEFAULT), Ok(()));
    let v = Value::parse(quoted, &Limits::DEFAULT).expect("validated");
    let s = v.as_str().expect("a string value");
    prop_assert_eq!(s.chars().collect::<String>(), want);
    prop_assert!(s.eq_str(want));
    prop_assert!(s.starts_with(want));
    prop_assert_eq!(s.char_count(), want.chars().count());
    prop_assert_eq!(s.decoded_len(), want.len());
    prop_assert_eq!(s.to_string(), want);
    let mut buf = vec![0u8; want.len()];
    prop_assert_eq!(s.decode_into(&mut buf), Some(want));
    let mut raw = s.raw().to_vec();
    prop_assert_eq!(json::unescape_str_in_place(&mut raw), Ok(want));
    // An independent parser agrees.
    let independent = serde_json::from_slice::<String>(quoted).ok();
    prop_assert_eq!(independent.as_deref(), Some(want));
    Ok(())
}

proptest! {
    #![proptest_config(cases(512))]

    /// (a) `Writer::string` output scans and decodes back to the original.
    #[test]
    fn emit_then_scan_round_trips(s in any_text(64)) {
        // Worst case: every byte becomes `\u00XX`, plus the quotes.
        let mut buf = vec![0u8; s.len() * 6 + 2];
        let mut w = Writer::new(&mut buf);
        w.string(&s);
        let n = w.finish().expect("fits");
        let out = &buf[..n];
        check_decodes_to(out, &s)?;
        // No raw control characters and no escapes beyond what is needed:
        // printable ASCII, non-ASCII text and `/` pass through unchanged.
        prop_assert!(out.iter().all(|&b| b >= 0x20));

        // One byte short never yields a partial message.
        if n > 0 {
            let mut small = vec![0u8; n - 1];
            let mut w = Writer::new(&mut small);
            w.string(&s);
            prop_assert!(w.finish().is_err());
        }

        // String mode: a JSON string written inside a JSON string decodes to
        // the JSON text of the inner string, which decodes to the original.
        let mut buf2 = vec![0u8; s.len() * 36 + 16];
        let mut w = Writer::new(&mut buf2);
        w.raw(b"\"");
        w.set_string_mode(true);
        w.string(&s);
        w.set_string_mode(false);
        w.raw(b"\"");
        let n2 = w.finish().expect("fits");
        let outer = Value::parse(&buf2[..n2], &Limits::DEFAULT).expect("outer string is valid");
        let inner: String = outer.as_str().expect("string").chars().collect();
        prop_assert_eq!(inner.as_bytes(), out);
    }

    /// (a) Any legal escaping of any string decodes to the original, and
    /// `Writer::json_str` re-escapes it to exactly what `Writer::string`
    /// writes (the canonical form).
    #[test]
    fn any_escaping_decodes_and_canonicalises((plain, escaped) in escaped_text(48)) {
        let quoted = format!("\"{escaped}\"");
        check_decodes_to(quoted.as_bytes(), &plain)?;

        let js = Value::parse(quoted.as_bytes(), &Limits::DEFAULT).expect("valid").as_str().expect("string");
        let mut a = vec![0u8; plain.len() * 6 + 2];
        let mut w = Writer::new(&mut a);
        w.json_str(js);
        let na = w.finish().expect("fits");
        let mut b = vec![0u8; plain.len() * 6 + 2];
        let mut w = Writer::new(&mut b);
        w.string(&plain);
        let nb = w.finish().expect("fits");
        prop_assert_eq!(&a[..na], &b[..nb]);
    }

    /// Breaking an escaping (a lone surrogate half, a bad escape letter, a
    /// raw control character) is always rejected, by every decoder.
    #[test]
    fn broken_escapes_are_rejected(
        (_, before) in escaped_text(8),
        (_, after) in escaped_text(8),
        breakage in prop::sample::select(vec![
            "\\ud800", "\\uDBFF", "\\udc00", "\\uDFFF", "\\ud800\\u0041", "\\ud83d\\ud83d",
            "\\x", "\\U0041", "\\u12", "\\u00g0", "\\'", "\\\u{1}", "\u{0}", "\u{1f}", "\n", "\\",
        ]),
    ) {
        // The `x` keeps a truncated escape (`\`, `\u12`) from completing
        // with the text after it.
        let contents = format!("{before}{breakage}x{after}");
        let quoted = format!("\"{contents}\"");
        prop_assert!(json::validate(quoted.as_bytes(), &Limits::DEFAULT).is_err(), "{quoted:?}");
        let mut raw = contents.into_bytes();
        prop_assert!(json::unescape_str_in_place(&mut raw).is_err());
        prop_assert!(serde_json::from_str::<String>(&quoted).is_err());
    }
}

// ---------------------------------------------------------------------------
// Lines through the serve loop
// ---------------------------------------------------------------------------

/// What one input line must produce (besides notifications a handler may
/// send before its answer, which are checked for shape and not counted).
#[derive(Clone, Debug, PartialEq)]
enum Expect {
    /// Nothing (notification, client response, empty or blank line).
    Nothing,
    /// One answer echoing this id token byte for byte.
    Id(String),
    /// One error answer with `"id":null` (garbage, bad ids); in a session
    /// that negotiated batches (2025-03-26) a garbage line that happens to
    /// be a non-empty JSON array may instead get one batch answer.
    NullError,
    /// A batch of requests (these ids, in order) and notifications: one
    /// array answer in a 2025-03-26 session (none if `ids` is empty), one
    /// `"id":null` error otherwise.
    Batch(Vec<String>),
    /// One `message too large` error (decided when the line is framed).
    Overflow,
}

/// A generated line (without terminator) and what it must produce if it fits.
#[derive(Clone, Debug)]
struct Line {
    bytes: Vec<u8>,
    expect: Expect,
    /// A well-formed `initialize` request for this version: the session is
    /// (re)negotiated when the line fits the buffer.
    initializes: Option<&'static str>,
}

impl Line {
    fn new(text: String, expect: Expect) -> Self {
        Line {
            bytes: text.into_bytes(),
            expect,
            initializes: None,
        }
    }
}

/// Request ids of every legal type, as their exact JSON token.
fn id_token() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => escaped_text(16).prop_map(|(_, esc)| format!("\"{esc}\"")),
        3 => (any::<bool>(), "[1-9][0-9]{0,29}").prop_map(|(neg, d)| if neg { format!("-{d}") } else { d }),
        1 => prop::sample::select(vec!["0", "-0", "\"\"", "9007199254740993", "-9223372036854775809", "18446744073709551616"])
            .prop_map(str::to_owned),
    ]
}

/// Ids that are JSON but not legal JSON-RPC ids: answered with `"id":null`.
fn bad_id_token() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "null",
        "true",
        "false",
        "1.5",
        "1e3",
        "-1.0",
        "1E2",
        "0.0",
        "{}",
        "[1]",
        "[]",
        "{\"a\":1}",
    ])
}

/// Insignificant whitespace that does not end a line.
fn ws() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["", "", "", " ", "\t", " \t "])
}

/// Members of a request or notification body.
type Members = Vec<(String, String)>;

const VERSIONS: [&str; 5] = [
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
    "1999-01-01",
];

/// `"method":...` plus optional `"params":...` members, and the version a
/// well-formed `initialize` asks for.
fn method_members() -> impl Strategy<Value = (Members, Option<&'static str>)> {
    fn m(name: &str) -> Members {
        vec![("method".to_owned(), format!("\"{name}\""))]
    }
    fn mp(name: &str, params: String) -> Members {
        vec![
            ("method".to_owned(), format!("\"{name}\"")),
            ("params".to_owned(), params),
        ]
    }
    let plain = prop_oneof![
        Just(m("ping")),
        Just(m("tools/list")),
        Just(m("resources/list")),
        Just(m("resources/templates/list")),
        Just(m("prompts/list")),
        Just(m("initialize")),
        Just(mp("ping", "null".into())),
        Just(mp("ping", "[]".into())),
        Just(mp("ping", "3".into())),
        Just(mp("tools/list", r#"{"cursor":"nonsense"}"#.into())),
        escaped_text(12).prop_map(|(_, t)| mp(
            "tools/call",
            format!(r#"{{"name":"get_author","arguments":{{"title":"{t}"}}}}"#)
        )),
        escaped_text(12).prop_map(|(_, t)| mp(
            "tools/call",
            format!(r#"{{"name":"get_author_strict","arguments":{{"title":"{t}"}}}}"#)
        )),
        (-5i64..100).prop_map(|n| mp(
            "tools/call",
            format!(r#"{{"name":"top","arguments":{{"n":{n}}}}}"#)
        )),
        (0i64..13, prop::option::of(id_token())).prop_map(|(n, token)| mp(
            "tools/call",
            match token {
                Some(t) => format!(r#"{{"name":"count","arguments":{{"n":{n}}},"_meta":{{"progressToken":{t}}}}}"#),
                None => format!(r#"{{"name":"count","arguments":{{"n":{n}}}}}"#),
            }
        )),
        escaped_text(8).prop_map(|(_, t)| mp("tools/call", format!(r#"{{"name":"{t}"}}"#))),
        escaped_text(12).prop_map(|(_, t)| mp("resources/read", format!(r#"{{"uri":"books://{t}"}}"#))),
        Just(mp("resources/read", r#"{"uri":"books://catalog"}"#.into())),
        escaped_text(12).prop_map(|(_, t)| mp(
            "prompts/get",
            format!(r#"{{"name":"recommend","arguments":{{"genre":"{t}"}}}}"#)
        )),
        escaped_text(6).prop_map(|(_, t)| mp(
            "completion/complete",
            format!(r#"{{"ref":{{"type":"ref/prompt","name":"recommend"}},"argument":{{"name":"genre","value":"{t}"}}}}"#)
        )),
        prop::sample::select(vec!["debug", "info", "error", "emergency", "loud"])
            .prop_map(|l| mp("logging/setLevel", format!(r#"{{"level":"{l}"}}"#))),
        escaped_text(12).prop_map(|(_, t)| m(&t)),
    ];
    prop_oneof![
        6 => plain.prop_map(|m| (m, None)),
        1 => prop::sample::select(VERSIONS.to_vec()).prop_map(|v| (
            mp("initialize", format!(
                r#"{{"protocolVersion":"{v}","capabilities":{{}},"clientInfo":{{"name":"p","version":"1"}}}}"#
            )),
            Some(v),
        )),
    ]
}

/// `{` members `}` with optional whitespace.
fn object(members: &Members, spaces: &[&str]) -> String {
    let mut s = String::from("{");
    for (i, (k, v)) in members.iter().enumerate() {
        let sp = |j: usize| {
            spaces
                .get((i * 3 + j) % spaces.len().max(1))
                .copied()
                .unwrap_or("")
        };
        if i > 0 {
            s.push(',');
        }
        s.push_str(sp(0));
        s.push('"');
        s.push_str(k);
        s.push('"');
        s.push_str(sp(1));
        s.push(':');
        s.push_str(sp(2));
        s.push_str(v);
    }
    s.push('}');
    s
}

/// The members in random order, with random whitespace.
fn shuffled_object(members: Members) -> impl Strategy<Value = String> {
    (
        Just(members).prop_shuffle(),
        prop::collection::vec(ws(), 1..8),
    )
        .prop_map(|(m, sp)| object(&m, &sp))
}

fn request() -> impl Strategy<Value = Line> {
    (id_token(), method_members()).prop_flat_map(|(id, (mut members, init))| {
        members.push(("jsonrpc".into(), "\"2.0\"".into()));
        members.push(("id".into(), id.clone()));
        shuffled_object(members).prop_map(move |text| Line {
            initializes: init,
            ..Line::new(text, Expect::Id(id.clone()))
        })
    })
}

fn bad_id_request() -> impl Strategy<Value = Line> {
    (bad_id_token(), method_members()).prop_flat_map(|(id, (mut members, _))| {
        members.push(("jsonrpc".into(), "\"2.0\"".into()));
        members.push(("id".into(), id.to_owned()));
        shuffled_object(members).prop_map(|text| Line::new(text, Expect::NullError))
    })
}

fn notification() -> impl Strategy<Value = Line> {
    let methods = prop_oneof![
        Just(vec![(
            "method".to_owned(),
            "\"notifications/initialized\"".to_owned()
        )]),
        (0u32..100).prop_map(|n| vec![
            (
                "method".to_owned(),
                "\"notifications/cancelled\"".to_owned()
            ),
            (
                "params".to_owned(),
                format!(r#"{{"requestId":{n},"reason":"x"}}"#)
            ),
        ]),
        escaped_text(10).prop_map(|(_, t)| vec![
            ("method".to_owned(), format!("\"{t}\"")),
            ("params".to_owned(), "null".to_owned()),
        ]),
    ];
    methods.prop_flat_map(|mut members| {
        members.push(("jsonrpc".into(), "\"2.0\"".into()));
        shuffled_object(members).prop_map(|text| Line::new(text, Expect::Nothing))
    })
}

/// A response from the client: never answered, whatever its id (a `null`
/// id too: the client's own parse error).
fn client_response() -> impl Strategy<Value = Line> {
    (
        prop_oneof![4 => id_token(), 1 => Just("null".to_owned())],
        prop::sample::select(vec![
            ("result", "{}"),
            ("result", "null"),
            ("error", r#"{"code":-1,"message":"no"}"#),
        ]),
    )
        .prop_flat_map(|(id, (k, v))| {
            let members = vec![
                ("jsonrpc".to_owned(), "\"2.0\"".to_owned()),
                ("id".to_owned(), id),
                (k.to_owned(), v.to_owned()),
            ];
            shuffled_object(members).prop_map(|text| Line::new(text, Expect::Nothing))
        })
}

/// A JSON array of requests and notifications.
fn batch() -> impl Strategy<Value = Line> {
    let element = prop_oneof![
        2 => request().prop_map(|l| (l.bytes, l.expect)),
        1 => notification().prop_map(|l| (l.bytes, l.expect)),
    ];
    (prop::collection::vec(element, 1..4), ws()).prop_map(|(elements, sp)| {
        let mut bytes = b"[".to_vec();
        let mut ids = Vec::new();
        for (i, (b, e)) in elements.into_iter().enumerate() {
            if i > 0 {
                bytes.extend_from_slice(b",");
                bytes.extend_from_slice(sp.as_bytes());
            }
            bytes.extend_from_slice(&b);
            if let Expect::Id(id) = e {
                ids.push(id);
            }
        }
        bytes.extend_from_slice(b"]");
        Line {
            bytes,
            expect: Expect::Batch(ids),
            initializes: None,
        }
    })
}

/// Bytes that can never be a notification or a response: the first byte is
/// neither whitespace nor `{`, or the line is a strict prefix of a request
/// (an unclosed object). Always answered, with `"id":null`.
fn garbage() -> impl Strategy<Value = Line> {
    let no_newline = prop::collection::vec(
        any::<u8>().prop_filter("no newline", |&b| b != b'\n'),
        0..40,
    );
    let first = any::<u8>().prop_filter("not blank, not an object", |b| {
        !matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'{')
    });
    let garbage = |bytes: Vec<u8>| Line {
        bytes,
        expect: Expect::NullError,
        initializes: None,
    };
    prop_oneof![
        (first, no_newline).prop_map(move |(f, rest)| {
            let mut bytes = vec![f];
            bytes.extend(rest);
            garbage(bytes)
        }),
        (request(), any::<prop::sample::Index>()).prop_map(move |(r, cut)| {
            // Cut strictly inside the object: never a complete value.
            let n = 1 + cut.index(r.bytes.len() - 1);
            garbage(r.bytes[..n].to_vec())
        }),
        prop::sample::select(vec![
            "[]",
            "[1]",
            "[{}]",
            "{}",
            "\"x\"",
            "42",
            "null",
            "{\"jsonrpc\":\"1.0\",\"method\":\"ping\"}",
            "{\"jsonrpc\":\"2.0\"}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"method\":\"b\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"\\ud800\"}",
            "\u{feff}{}",
            "{\"a\":01}",
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
        ])
        .prop_map(move |s| garbage(s.as_bytes().to_vec())),
    ]
}

fn blank() -> impl Strategy<Value = Line> {
    prop::sample::select(vec!["", "", " ", "\t", " \t ", "\r", "  \r"])
        .prop_map(|s| Line::new(s.to_owned(), Expect::Nothing))
}

/// A line longer than any input buffer used below: a valid request padded
/// with spaces, or arbitrary bytes. The expectation is fixed when framed.
fn long_line() -> impl Strategy<Value = Line> {
    prop_oneof![
        (request(), 1100usize..2500).prop_map(|(r, n)| {
            let mut bytes = b"{".to_vec();
            bytes.resize(n, b' ');
            bytes.extend_from_slice(&r.bytes[1..]);
            Line {
                bytes,
                expect: Expect::Overflow,
                initializes: None,
            }
        }),
        (1100usize..2500, any::<u8>()).prop_map(|(n, b)| {
            let b = if b == b'\n' { b'x' } else { b };
            Line {
                bytes: vec![b; n],
                expect: Expect::Overflow,
                initializes: None,
            }
        }),
    ]
}

fn any_line() -> impl Strategy<Value = Line> {
    prop_oneof![
        8 => request(),
        2 => bad_id_request(),
        3 => notification(),
        1 => client_response(),
        2 => batch(),
        3 => garbage(),
        2 => blank(),
        1 => long_line(),
    ]
}

const PREFIX: &str = "{\"jsonrpc\":\"2.0\",\"id\":";

/// What to look for in the output, in order.
#[derive(Debug)]
enum Want {
    Id(String),
    /// `"id":null` error, or (when batches are on) any batch answer.
    NullError {
        batches: bool,
    },
    /// A batch answer with these ids, or an `"id":null` error (too large).
    Batch(Vec<String>),
    Overflow,
}

/// A JSON-RPC response object: `"jsonrpc":"2.0"`, an `id`, exactly one of
/// `result` / `error`.
fn check_response(v: &serde_json::Value, line: &str) -> Result<(), TestCaseError> {
    prop_assert!(v.is_object(), "not an object: {}", line);
    prop_assert_eq!(
        v.get("jsonrpc").and_then(|j| j.as_str()),
        Some("2.0"),
        "{}",
        line
    );
    prop_assert!(v.get("id").is_some(), "no id: {}", line);
    prop_assert!(
        v.get("result").is_some() != v.get("error").is_some(),
        "exactly one of result/error: {}",
        line
    );
    if let Some(e) = v.get("error") {
        prop_assert!(e["code"].is_i64() && e["message"].is_string(), "{}", line);
    }
    Ok(())
}

/// Serve `lines` (each with its terminator) and compare the answers, in
/// order, with what each line must produce.
fn check_session(
    lines: &[(Line, &str)],
    unterminated_last: bool,
    in_cap: usize,
    chunk: usize,
) -> Result<(), TestCaseError> {
    let mut input = Vec::new();
    let mut wanted = Vec::new();
    let mut batches = false;
    for (i, (line, term)) in lines.iter().enumerate() {
        let last = i + 1 == lines.len();
        let term = if last && unterminated_last { "" } else { *term };
        input.extend_from_slice(&line.bytes);
        input.extend_from_slice(term.as_bytes());
        // A message of up to `in_cap` bytes is served. Its terminator does
        // not count: `\n`, or `\r\n` (a `\r` before the `\n`, or at the end
        // of input, is the terminator's).
        let raw_len = line.bytes.len() + usize::from(term == "\r\n");
        let ends_in_cr = term == "\r\n" || line.bytes.last() == Some(&b'\r');
        if raw_len - usize::from(ends_in_cr) > in_cap {
            wanted.push(Want::Overflow);
            continue;
        }
        match &line.expect {
            Expect::Nothing => {}
            Expect::Id(id) => wanted.push(Want::Id(id.clone())),
            Expect::NullError => wanted.push(Want::NullError { batches }),
            Expect::Batch(ids) if batches => {
                if !ids.is_empty() {
                    wanted.push(Want::Batch(ids.clone()));
                }
            }
            Expect::Batch(_) => wanted.push(Want::NullError { batches }),
            Expect::Overflow => unreachable!("long lines are longer than every buffer"),
        }
        if let Some(v) = line.initializes {
            batches = v == "2025-03-26";
        }
    }
    let lines_out = common::serve_with(&common::BOOKSHOP, &input, in_cap, 2048, chunk);
    // Notifications a handler sent (progress, log messages) come before its
    // answer: check their shape, then leave them out of the count.
    let mut answers = Vec::new();
    for line in &lines_out {
        let v: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| TestCaseError::fail(format!("output line is not JSON ({e}): {line}")))?;
        if v.get("method").is_some() && v.get("id").is_none() {
            prop_assert_eq!(
                v.get("jsonrpc").and_then(|j| j.as_str()),
                Some("2.0"),
                "{}",
                line
            );
            prop_assert!(
                v.get("result").is_none() && v.get("error").is_none(),
                "{}",
                line
            );
            continue;
        }
        answers.push((line.as_str(), v));
    }
    prop_assert_eq!(
        answers.len(),
        wanted.len(),
        "answers {:#?}\nwanted {:#?}\ninput {:?}",
        lines_out,
        wanted,
        String::from_utf8_lossy(&input)
    );
    for ((answer, v), want) in answers.iter().zip(&wanted) {
        let null_error = format!("{PREFIX}null,\"error\":{{");
        match want {
            Want::Id(id) => {
                check_response(v, answer)?;
                let head = format!("{PREFIX}{id},");
                prop_assert!(
                    answer.starts_with(&head),
                    "id not echoed verbatim: want {} in {}",
                    id,
                    answer
                );
            }
            Want::NullError { batches } if *batches && answer.starts_with('[') => {
                let items = v.as_array().expect("a batch answer is an array");
                prop_assert!(!items.is_empty(), "{}", answer);
                for item in items {
                    check_response(item, answer)?;
                }
            }
            Want::NullError { .. } => {
                check_response(v, answer)?;
                prop_assert!(answer.starts_with(&null_error), "{}", answer);
                let code = v["error"]["code"].as_i64();
                prop_assert!(matches!(code, Some(-32700 | -32600)), "{}", answer);
            }
            Want::Batch(ids) => {
                if answer.starts_with('{') {
                    // Only a batch answer too large for the output buffer.
                    check_response(v, answer)?;
                    prop_assert!(answer.starts_with(&null_error), "{}", answer);
                    prop_assert_eq!(v["error"]["code"].as_i64(), Some(-32603), "{}", answer);
                    continue;
                }
                let items = v.as_array().expect("a batch answer is an array");
                prop_assert_eq!(items.len(), ids.len(), "{}", answer);
                for (item, id) in items.iter().zip(ids) {
                    check_response(item, answer)?;
                    let want_id: serde_json::Value = serde_json::from_str(id).expect("id is JSON");
                    prop_assert_eq!(&item["id"], &want_id, "{}", answer);
                    let head = format!("{PREFIX}{id},");
                    prop_assert!(
                        answer.contains(&head),
                        "id not echoed verbatim: want {} in {}",
                        id,
                        answer
                    );
                }
            }
            Want::Overflow => {
                check_response(v, answer)?;
                let head = format!(
                    "{PREFIX}null,\"error\":{{\"code\":-32600,\"message\":\"message too large: limit {in_cap} bytes\""
                );
                prop_assert!(answer.starts_with(&head), "{}", answer);
            }
        }
    }
    Ok(())
}

fn init_line(version: &'static str) -> Line {
    Line {
        initializes: Some(version),
        ..Line::new(common::init(version), Expect::Id("0".into()))
    }
}

proptest! {
    #![proptest_config(cases(160))]

    /// (b) One answer per request / garbage / over-long line, none per
    /// notification / response / empty line, in order, ids echoed verbatim.
    #[test]
    fn serve_answers_each_line_once_in_order(
        lines in prop::collection::vec((any_line(), prop::sample::select(vec!["\n", "\n", "\r\n"])), 0..24),
        unterminated_last in any::<bool>(),
        in_cap in prop::sample::select(vec![256usize, 512, 1024]),
        chunk in prop_oneof![1usize..8, 8usize..700, Just(4096usize)],
    ) {
        check_session(&lines, unterminated_last, in_cap, chunk)?;
    }

    /// The same after a successful handshake (answers take the initialized
    /// paths: tools, resources, prompts, batches in 2025-03-26, ...).
    #[test]
    fn serve_after_initialize_answers_each_line_once(
        version in prop::sample::select(VERSIONS.to_vec()),
        lines in prop::collection::vec((any_line(), prop::sample::select(vec!["\n", "\r\n"])), 0..16),
        chunk in prop_oneof![1usize..8, 8usize..700],
    ) {
        let initialized = Line::new(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
            Expect::Nothing,
        );
        let mut all = vec![(init_line(version), "\n"), (initialized, "\n")];
        all.extend(lines);
        check_session(&all, false, 1024, chunk)?;
    }

    /// The async-tools loop with a waiting-call store and subscriptions
    /// (`serve_async_tools_subscribed`, no async tool) writes byte for
    /// byte what the async loop with them (`serve_async_subscribed`)
    /// writes, whatever the lines, the version and the size of each read.
    #[test]
    fn the_async_tools_loop_writes_what_the_async_loop_writes(
        version in prop::sample::select(VERSIONS.to_vec()),
        lines in prop::collection::vec((any_line(), prop::sample::select(vec!["\n", "\r\n"])), 0..16),
        chunk in prop_oneof![1usize..8, 8usize..700],
        unterminated_last in any::<bool>(),
    ) {
        let mut input = format!("{}\n", common::init(version)).into_bytes();
        input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        for (i, (line, term)) in lines.iter().enumerate() {
            input.extend_from_slice(&line.bytes);
            if !(unterminated_last && i + 1 == lines.len()) {
                input.extend_from_slice(term.as_bytes());
            }
        }
        let outputs: Vec<Vec<u8>> = [false, true]
            .into_iter()
            .map(|tools| {
                let mut io = common::MemIo { input: &input, chunk, output: Vec::new() };
                let (mut inb, mut outb, mut notes) = (vec![0u8; 1024], vec![0u8; 2048], [0u8; 256]);
                let mut waiting = picomcp::server::Waiting::<2, 1024>::new();
                let mut subs = picomcp::changes::Subscriptions::<2, 64>::new();
                let served = if tools {
                    picomcp::asynch::block_on(picomcp::transport::serve_async_tools_subscribed(
                        &common::BOOKSHOP, &mut io, &mut inb, &mut outb, &mut notes, &(),
                        &mut waiting, &mut subs, std::future::pending,
                    ))
                } else {
                    picomcp::asynch::block_on(picomcp::transport::serve_async_subscribed(
                        &common::BOOKSHOP, &mut io, &mut inb, &mut outb,
                        &mut waiting, &mut subs, std::future::pending,
                    ))
                };
                served.unwrap();
                io.output
            })
            .collect();
        prop_assert_eq!(
            String::from_utf8_lossy(&outputs[1]),
            String::from_utf8_lossy(&outputs[0])
        );
    }

    /// (c) The id comes back byte-identical, through `Server::handle` and
    /// through the serve loop, before and after initialization.
    #[test]
    fn ids_come_back_byte_identical(id in id_token(), sp in ws()) {
        let line = format!("{{\"jsonrpc\":\"2.0\",{sp}\"id\"{sp}:{sp}{id}{sp},\"method\":\"ping\"}}");
        let want = format!("{PREFIX}{id},\"result\":{{}}}}\n");

        let mut conn = Connection::new();
        let mut frame = line.clone().into_bytes();
        let mut out = [0u8; 1024];
        let n = common::BOOKSHOP.handle(&mut conn, &mut frame, &mut out);
        prop_assert_eq!(std::str::from_utf8(&out[..n]).ok(), Some(want.as_str()));

        let input = format!("{}\n{}\n", common::init("2025-06-18"), line);
        let answers = common::serve_with(&common::BOOKSHOP, input.as_bytes(), 512, 2048, 7);
        prop_assert_eq!(answers.len(), 2);
        prop_assert_eq!(format!("{}\n", answers[1]), want);

        // Unknown methods echo it the same way.
        let line = format!("{{\"id\":{id},\"jsonrpc\":\"2.0\",\"method\":\"nope/nope\"}}");
        let input = format!("{}\n{}\n", common::init("2025-11-25"), line);
        let answers = common::serve_with(&common::BOOKSHOP, input.as_bytes(), 512, 2048, 64);
        prop_assert_eq!(answers.len(), 2);
        prop_assert!(answers[1].starts_with(&format!("{PREFIX}{id},\"error\":{{\"code\":-32601")), "{}", answers[1]);

        // So does a batch element (2025-03-26).
        let input = format!("{}\n[{line}]\n", common::init("2025-03-26"));
        let answers = common::serve_with(&common::BOOKSHOP, input.as_bytes(), 512, 2048, 64);
        prop_assert_eq!(answers.len(), 2);
        prop_assert!(answers[1].starts_with(&format!("[{PREFIX}{id},\"error\":{{\"code\":-32601")), "{}", answers[1]);
    }
}
