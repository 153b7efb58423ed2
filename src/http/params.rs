//! 2026-07-28 custom headers: a `tools/call` argument whose property sets
//! `x-mcp-header: NAME` ([`Schema::header`]) is mirrored by the client into
//! `Mcp-Param-NAME`, and a server that reads the body must refuse a header
//! that disagrees with it; and the value encoding these headers share with
//! `Mcp-Name` (plain text, or the `=?base64?…?=` sentinel).

use core::fmt;

use crate::codec::{Alphabet, Base64Decoder, base64_value};
use crate::schema::{MAX_SCHEMA_DEPTH, Schema};
use crate::wire::json::{JsonStr, Kind, Number, Value};

/// The payload of a `=?base64?…?=` value (markers exact and lowercase, as
/// the spec says); `None`: the value is literal.
pub(super) fn sentinel(header: &str) -> Option<&str> {
    header.strip_prefix("=?base64?")?.strip_suffix("?=")
}

/// Whether `decoded` yields exactly the UTF-8 bytes of the JSON string `s`.
pub(super) fn decodes_to(s: JsonStr<'_>, mut decoded: Base64Decoder<'_>) -> bool {
    let mut utf8 = [0u8; 4];
    for c in s.chars() {
        for &b in c.encode_utf8(&mut utf8).as_bytes() {
            if decoded.next() != Some(Ok(b)) {
                return false;
            }
        }
    }
    decoded.next().is_none()
}

/// Standard base64 with its padding (RFC 4648 §4), as the spec's examples
/// are: whole 4-symbol groups, at most two `=` and only at the end. (The
/// conformance suite's test-case table refuses a value without its padding,
/// or with a symbol outside the alphabet.)
pub(super) fn strict_base64(payload: &str) -> bool {
    let payload = payload.as_bytes();
    let data = payload
        .iter()
        .rposition(|&b| b != b'=')
        .map_or(0, |p| p + 1);
    payload.len().is_multiple_of(4)
        && payload.len() - data <= 2
        && payload.get(..data).is_some_and(|d| {
            d.iter()
                .all(|&b| base64_value(b, Alphabet::Standard).is_some())
        })
        && canonical_tail(payload.get(..data).unwrap_or_default())
}

/// The bits past the last whole byte are zero (RFC 4648 §3.5: otherwise two
/// texts decode to the same bytes, and a check could be told apart from
/// what it checks).
fn canonical_tail(data: &[u8]) -> bool {
    let last = data
        .last()
        .and_then(|&b| base64_value(b, Alphabet::Standard));
    match (data.len() % 4, last) {
        (2, Some(v)) => v & 0b1111 == 0,
        (3, Some(v)) => v & 0b11 == 0,
        _ => true,
    }
}

/// Field-value characters of a literal value (RFC 9110 §5.5): visible
/// ASCII, space and tab.
fn plain_chars(value: &str) -> bool {
    value
        .bytes()
        .all(|b| b == b'\t' || (0x20..=0x7e).contains(&b))
}

/// The longest `x-mcp-header` name looked up (the header name is built on
/// the stack: `Mcp-Param-` and the name).
const MAX_HEADER_NAME: usize = 118;

const PREFIX: &str = "Mcp-Param-";

/// The `-32020` message of a refused `Mcp-Param-*` header, written on the
/// stack (`Header mismatch: Mcp-Param-NAME …`).
pub(super) struct Message {
    buf: [u8; 192],
    len: usize,
}

impl Message {
    pub(super) const fn new() -> Self {
        Self {
            buf: [0; 192],
            len: 0,
        }
    }

    pub(super) fn as_str(&self) -> &str {
        let bytes = self.buf.get(..self.len).unwrap_or_default();
        core::str::from_utf8(bytes).unwrap_or("Header mismatch")
    }
}

impl fmt::Write for Message {
    /// Whole pieces only (a piece that does not fit is dropped, so the text
    /// stays UTF-8).
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let dst = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Why one header was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Why {
    /// The argument has a value and the header is missing.
    Missing,
    /// The header is sent, the argument has no value (absent or `null`).
    Unexpected,
    /// A literal value with a character a field value may not carry.
    InvalidChars,
    /// A sentinel whose payload is not padded standard base64.
    InvalidBase64,
    /// Decoded, it is not the argument's value.
    Differs,
    /// The annotation is longer than [`MAX_HEADER_NAME`].
    NameTooLong,
}

impl Why {
    fn text(self) -> &'static str {
        match self {
            Why::Missing => " header is required: params.arguments has a value for it",
            Why::Unexpected => " header is sent, but params.arguments has no value for it",
            Why::InvalidChars => " header value contains invalid characters",
            Why::InvalidBase64 => " header value is not valid base64 (=?base64?…?=)",
            Why::Differs => " header does not match the value in params.arguments",
            Why::NameTooLong => " header name is too long to check",
        }
    }
}

/// Check every `Mcp-Param-*` header the tool's `schema` declares against
/// `arguments`: the properties reached from the root through `properties`
/// only (the spec's "statically reachable"), in schema order; the first
/// disagreement is described in `message`. `get` looks a header up by
/// name (any case).
///
/// Per property with `x-mcp-header`, after removing the header's optional
/// whitespace: no value in the body (absent, or `null`) and no header is
/// fine; a value and no header, or a header and no value, is refused; a
/// header is decoded (a sentinel must be padded standard base64; a literal
/// may hold only field-value characters) and compared with the value: a
/// string as its UTF-8 text, an integer (any JSON number) numerically
/// (`42.0` is `42`), a boolean as `true`/`false`. Other values (objects,
/// arrays: not allowed for an annotated property) never match.
pub(super) fn check_params<'h>(
    schema: &Schema<'_>,
    arguments: Option<Value<'_>>,
    get: &dyn Fn(&str) -> Option<&'h str>,
    message: &mut Message,
) -> Result<(), ()> {
    walk(schema, arguments, get, 0, message)
}

/// Whether a property of `schema` at `depth`, or one within it down to
/// [`MAX_SCHEMA_DEPTH`], sets `x-mcp-header`: the one definition of where
/// headers are read. [`check_params`] descends only where this holds, and
/// with none in any tool it can only pass: the mapping then skips it (and
/// the look-up of the tool it needs).
pub(super) const fn has_header(schema: &Schema<'_>, depth: usize) -> bool {
    if depth > MAX_SCHEMA_DEPTH {
        return false;
    }
    let mut rest = schema.properties;
    while let [p, tail @ ..] = rest {
        if p.schema.header.is_some() || has_header(&p.schema, depth + 1) {
            return true;
        }
        rest = tail;
    }
    false
}

fn walk<'h>(
    schema: &Schema<'_>,
    arguments: Option<Value<'_>>,
    get: &dyn Fn(&str) -> Option<&'h str>,
    depth: usize,
    message: &mut Message,
) -> Result<(), ()> {
    let object = arguments.filter(|a| a.kind() == Kind::Object);
    for p in schema.properties {
        // Looked up only for a property that has a header or leads to one
        // (`has_header` also keeps the descent within `MAX_SCHEMA_DEPTH`).
        let deeper = has_header(&p.schema, depth + 1);
        if p.schema.header.is_none() && !deeper {
            continue;
        }
        let value = object.and_then(|a| a.get(p.name));
        if let Some(name) = p.schema.header
            && let Err(why) = check_one(name, value, get)
        {
            use fmt::Write as _;
            let _ = write!(message, "Header mismatch: {PREFIX}{name}{}", why.text());
            return Err(());
        }
        if deeper {
            walk(&p.schema, value, get, depth + 1, message)?;
        }
    }
    Ok(())
}

fn check_one<'h>(
    name: &str,
    value: Option<Value<'_>>,
    get: &dyn Fn(&str) -> Option<&'h str>,
) -> Result<(), Why> {
    let mut buf = [0u8; PREFIX.len() + MAX_HEADER_NAME];
    let header_name = buf
        .get_mut(..PREFIX.len() + name.len())
        .ok_or(Why::NameTooLong)?;
    let (prefix, rest) = header_name.split_at_mut(PREFIX.len());
    prefix.copy_from_slice(PREFIX.as_bytes());
    rest.copy_from_slice(name.as_bytes());
    let header_name = core::str::from_utf8(header_name).map_err(|_| Why::NameTooLong)?;
    let header = get(header_name).map(|h| h.trim_matches([' ', '\t']));
    match (value.filter(|v| !v.is_null()), header) {
        (None, None) => Ok(()),
        (None, Some(_)) => Err(Why::Unexpected),
        (Some(_), None) => Err(Why::Missing),
        (Some(v), Some(h)) => matches(v, h),
    }
}

/// A header value (whitespace removed) against a body value.
fn matches(value: Value<'_>, header: &str) -> Result<(), Why> {
    let payload = match sentinel(header) {
        Some(p) if strict_base64(p) => Some(p),
        Some(_) => return Err(Why::InvalidBase64),
        None if plain_chars(header) => None,
        None => return Err(Why::InvalidChars),
    };
    let same = match value.kind() {
        Kind::String => match (value.as_str(), payload) {
            (Some(s), Some(p)) => decodes_to(s, standard(p)),
            (Some(s), None) => s.eq_str(header),
            (None, _) => false,
        },
        Kind::Number | Kind::Bool => {
            // The header as text: the literal, or the decoded payload.
            let mut buf = [0u8; 64];
            let text = match payload {
                None => Some(header),
                Some(p) => decode_small(standard(p), &mut buf),
            };
            match (value.kind(), text) {
                (Kind::Bool, Some(t)) => t.as_bytes() == value.raw(),
                (_, Some(t)) => match (value.as_number(), Number::parse(t)) {
                    (Some(a), Some(b)) => a.cmp_exact(&b).is_eq(),
                    _ => false,
                },
                (_, None) => false,
            }
        }
        _ => false,
    };
    if same { Ok(()) } else { Err(Why::Differs) }
}

fn standard(payload: &str) -> Base64Decoder<'_> {
    Base64Decoder::new(payload.as_bytes(), Alphabet::Standard)
}

/// A short decoded payload as text (`None`: longer than `buf`, or not
/// UTF-8: then it is no number or boolean anyway).
fn decode_small<'b>(decoded: Base64Decoder<'_>, buf: &'b mut [u8]) -> Option<&'b str> {
    let mut n = 0;
    for b in decoded {
        *buf.get_mut(n)? = b.ok()?;
        n += 1;
    }
    core::str::from_utf8(buf.get(..n)?).ok()
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::schema::Property;
    use crate::wire::json::Limits;

    const REGION: Schema = Schema::string().header("Region");
    const ARGS: Schema = Schema::object(&[
        Property::new("region", REGION),
        Property::new("query", Schema::string()),
        Property::new("limit", Schema::integer().header("Limit")),
        Property::new("dry", Schema::boolean().header("Dry-Run")),
        Property::new(
            "target",
            Schema::object(&[Property::new("zone", Schema::string().header("Zone"))]),
        ),
    ]);

    fn check(args: &str, headers: &[(&str, &str)]) -> Result<(), std::string::String> {
        let v = Value::parse(args.as_bytes(), &Limits::DEFAULT).unwrap();
        let get = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| *v)
        };
        let mut m = Message::new();
        check_params(&ARGS, Some(v), &get, &mut m).map_err(|()| m.as_str().into())
    }

    #[test]
    fn literal_and_base64_values() {
        assert_eq!(
            check(
                r#"{"region":"us-west1"}"#,
                &[("mcp-param-region", "us-west1")]
            ),
            Ok(())
        );
        // Optional whitespace around the value is not part of it.
        assert_eq!(
            check(
                r#"{"region":"us-west1"}"#,
                &[("Mcp-Param-Region", " us-west1\t")]
            ),
            Ok(())
        );
        let hello = r#"{"region":"Hello, 世界"}"#;
        assert_eq!(
            check(
                hello,
                &[("Mcp-Param-Region", "=?base64?SGVsbG8sIOS4lueVjA==?=")]
            ),
            Ok(())
        );
        // The sentinel must be exact: otherwise the value is literal.
        for literal in ["SGVsbG8=", "=?base64?SGVsbG8=", "=?BASE64?SGVsbG8=?="] {
            let args = std::format!(r#"{{"region":"{literal}"}}"#);
            assert_eq!(
                check(&args, &[("Mcp-Param-Region", literal)]),
                Ok(()),
                "{literal}"
            );
        }
        // A plain value that looks like the sentinel travels encoded.
        let looks = r#"{"region":"=?base64?literal?="}"#;
        assert_eq!(
            check(
                looks,
                &[("Mcp-Param-Region", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=")]
            ),
            Ok(())
        );
    }

    #[test]
    fn refusals_name_the_header() {
        let args = r#"{"region":"Hello"}"#;
        let refused = |header: &str| check(args, &[("Mcp-Param-Region", header)]).unwrap_err();
        assert_eq!(
            refused("=?base64?SGVsbG8?="),
            "Header mismatch: Mcp-Param-Region header value is not valid base64 (=?base64?…?=)"
        );
        assert!(refused("=?base64?SGVs!!!bG8=?=").contains("not valid base64"));
        assert!(refused("=?base64?SGVsbG8_?=").contains("not valid base64"));
        assert!(refused("=?base64?S===?=").contains("not valid base64"));
        assert!(refused("Hel\u{7f}lo").ends_with("contains invalid characters"));
        assert!(refused("Hellö").ends_with("contains invalid characters"));
        assert_eq!(
            refused("Goodbye"),
            "Header mismatch: Mcp-Param-Region header does not match the value in params.arguments"
        );
        assert!(
            refused("=?base64?SGVsbG8h?=")
                .ends_with("does not match the value in params.arguments")
        );
        assert_eq!(
            check(args, &[]).unwrap_err(),
            "Header mismatch: Mcp-Param-Region header is required: params.arguments has a value for it"
        );
    }

    #[test]
    fn absent_and_null_values_expect_no_header() {
        assert_eq!(check(r#"{"query":"q"}"#, &[]), Ok(()));
        assert_eq!(check(r#"{"region":null}"#, &[]), Ok(()));
        assert_eq!(
            check(r#"{"region":null}"#, &[("Mcp-Param-Region", "x")]).unwrap_err(),
            "Header mismatch: Mcp-Param-Region header is sent, but params.arguments has no value for it"
        );
    }

    #[test]
    fn integers_and_booleans() {
        let h = |l: &'static str| [("Mcp-Param-Limit", l)];
        assert_eq!(check(r#"{"limit":42}"#, &h("42")), Ok(()));
        assert_eq!(check(r#"{"limit":42}"#, &h("42.0")), Ok(()));
        assert_eq!(check(r#"{"limit":-7}"#, &h("=?base64?LTc=?=")), Ok(()));
        assert!(check(r#"{"limit":42}"#, &h("43")).is_err());
        assert!(check(r#"{"limit":42}"#, &h("forty-two")).is_err());
        assert!(check(r#"{"limit":"42"}"#, &h("42")).is_ok()); // a string: compared as text
        let d = |v: &'static str| [("Mcp-Param-Dry-Run", v)];
        assert_eq!(check(r#"{"dry":true}"#, &d("true")), Ok(()));
        assert!(check(r#"{"dry":false}"#, &d("true")).is_err());
        assert!(check(r#"{"dry":true}"#, &d("True")).is_err());
    }

    #[test]
    fn nested_properties_are_reached() {
        assert_eq!(
            check(r#"{"target":{"zone":"a"}}"#, &[("Mcp-Param-Zone", "a")]),
            Ok(())
        );
        assert!(
            check(r#"{"target":{"zone":"a"}}"#, &[])
                .unwrap_err()
                .contains("Mcp-Param-Zone")
        );
        // Not an object there: nothing to mirror.
        assert_eq!(check(r#"{"target":5}"#, &[]), Ok(()));
    }

    #[test]
    fn has_header_finds_a_header_wherever_check_params_reads_one() {
        assert!(has_header(&ARGS, 0));
        const NONE: Schema = Schema::object(&[
            Property::new("a", Schema::string()),
            Property::new(
                "b",
                Schema::object(&[Property::new("c", Schema::integer())]),
            ),
        ]);
        assert!(!has_header(&NONE, 0));
        const NESTED: Schema = Schema::object(&[Property::new(
            "t",
            Schema::object(&[Property::new("zone", Schema::string().header("Zone"))]),
        )]);
        assert!(has_header(&NESTED, 0));
        // At the depth `walk` stops reading, a header is not looked for.
        assert!(has_header(&NESTED, MAX_SCHEMA_DEPTH - 1));
        assert!(!has_header(&NESTED, MAX_SCHEMA_DEPTH));
    }

    /// A header is read down to `MAX_SCHEMA_DEPTH` and not below: a header
    /// sent for a property at that depth (with no argument) is refused,
    /// one level deeper it is not looked at.
    #[test]
    fn headers_are_read_to_the_schema_depth_limit_and_no_deeper() {
        fn nested(depth: usize) -> &'static Schema<'static> {
            let mut s = Schema::object(std::boxed::Box::leak(std::boxed::Box::new([
                Property::new("x", Schema::string().header("X")),
            ])));
            for _ in 0..depth {
                let props = std::boxed::Box::leak(std::boxed::Box::new([Property::new("n", s)]));
                s = Schema::object(props);
            }
            std::boxed::Box::leak(std::boxed::Box::new(s))
        }
        let get = |name: &str| name.eq_ignore_ascii_case("mcp-param-x").then_some("1");
        for (depth, read) in [(MAX_SCHEMA_DEPTH, true), (MAX_SCHEMA_DEPTH + 1, false)] {
            let schema = nested(depth);
            assert_eq!(has_header(schema, 0), read, "depth {depth}");
            let mut m = Message::new();
            assert_eq!(
                check_params(schema, None, &get, &mut m).is_err(),
                read,
                "depth {depth}"
            );
        }
    }
}
