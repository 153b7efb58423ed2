//! The derived arguments check: what `#[derive(ToolArgs)]` generates a
//! tool's fast acceptance test against.
//!
//! A derived type's schema is known when the derive runs, so instead of
//! interpreting its [`Schema`] the derive writes a function that walks the
//! arguments once, matching each key with a `match` on its bytes and each
//! value with a test of its first bytes. Before a key is scanned, the
//! member of the field expected next (the fields in declaration order) is
//! tried whole, `"name":` ([`Members::next_if`]). The function only ever
//! says "these arguments surely match the schema" (`true`) or "not sure"
//! (`false`): on `false` the server runs [`Schema::validate`] as before,
//! which finds the violation (with its path and text) or accepts. So
//! answers never change; only the common case is cheaper.
//!
//! What the generated check answers `false` to, always (the full check then
//! decides): an escaped key, a repeated declared key, an integer written
//! with a fraction or an exponent or more than 19 digits, an escaped string
//! compared with an enum's names. Types whose schema has constraints
//! (`minimum`, `max_length`, …), fixed-capacity strings or lists, or more
//! than 64 properties get no check ([`HasSchema::ARGS_CHECK`] is `None`).
//!
//! Only on 64-bit targets ([`FAST_ARGS`]): on small targets flash is the
//! constraint, and the generic check is linked anyway.
//!
//! [`HasSchema::ARGS_CHECK`]: super::HasSchema::ARGS_CHECK
//! [`Schema`]: crate::schema::Schema
//! [`Schema::validate`]: crate::schema::Schema::validate

use crate::schema::Schema;
pub use crate::schema::derived::{ArgsCheck, FAST_ARGS, SPANS, Spans};
use crate::tool::{Arguments, ToolError, shape_error};
use crate::wire::de::DeError;
use crate::wire::json::{skip_ws, value_len};
use crate::wire::swar::{has_backslash, plain_run, plain_run_tail, same_bytes};
use core::marker::PhantomData;
use serde::Deserialize;

/// The members of a validated JSON object, one at a time: the walk of
/// [`Value::members`](crate::wire::json::Value::members) with the plain-string
/// case (no escape: one scan) taken inline, and an escaped key reported as
/// not sure instead of decoded. Built on `Value::members` instead, the
/// bookshop's hit measured 165 instructions more (6,683 → 6,848,
/// `scripts/list_cost.sh`); giving `Value::members` this inline case made
/// every caller slower (6,910).
#[derive(Debug)]
pub struct Members<'a> {
    rest: &'a [u8],
}

/// One step of [`Members`].
#[derive(Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Member<'a> {
    /// A member: its key's bytes (no escape in them), its value, and
    /// whether that value is a string without escapes.
    Next(&'a [u8], &'a [u8], bool),
    /// The object's end.
    End,
    /// Not sure: an escaped key, or input that is not a validated object.
    Unsure,
}

impl<'a> Members<'a> {
    /// The members of `raw`, a validated JSON value; `None` unless it is an
    /// object.
    #[inline]
    pub fn new(raw: &'a [u8]) -> Option<Self> {
        let at = skip_ws(raw, 0);
        match raw.get(at..)? {
            [b'{', rest @ ..] => Some(Self { rest }),
            _ => None,
        }
    }

    /// The next member. Inlined into each derived check and parse: called
    /// there, not inlined, it cost the bookshop's hit about 110
    /// instructions a member (`scripts/list_cost.sh`).
    #[inline(always)]
    pub fn next_member(&mut self) -> Member<'a> {
        let (r, mut at) = self.start();
        let key_start = match r.get(at) {
            Some(b'"') => at + 1,
            Some(b'}') => return Member::End,
            _ => return Member::Unsure,
        };
        let tail = r.get(key_start..).unwrap_or_default();
        let run = plain_run(tail);
        if tail.get(run) != Some(&b'"') {
            return Member::Unsure;
        }
        let key = tail.get(..run).unwrap_or_default();
        at = skip_ws(r, key_start + run + 1);
        if r.get(at) != Some(&b':') {
            return Member::Unsure;
        }
        match self.value_at(r, at + 1) {
            Some((value, plain)) => Member::Next(key, value, plain),
            None => Member::Unsure,
        }
    }

    /// The next member when it is the one whose head, its key written
    /// `"key":` with nothing between, is `head` (a derived type's next
    /// field, in declaration order: the order arguments usually come in):
    /// its value and whether that is a string without escapes. One
    /// comparison instead of the key's scan and match (64-bit targets:
    /// two words for a head of 4 to 16 bytes). `None`: read the member
    /// with [`Members::next_member`] (nothing was consumed); always for an
    /// empty `head` (the derive gives one to a name with a byte that is
    /// not plain ASCII, which `next_member` is unsure of).
    #[inline(always)]
    pub fn next_if(&mut self, head: &[u8]) -> Option<(&'a [u8], bool)> {
        // No head: a name the derive does not take as expected.
        if head.is_empty() {
            return None;
        }
        let (r, at) = self.start();
        let end = at + head.len();
        if !same_bytes(r.get(at..end)?, head) {
            return None;
        }
        self.value_at(r, end)
    }

    /// The rest, and where its next member (or the object's end) starts:
    /// past whitespace and the comma after the last member.
    #[inline(always)]
    fn start(&self) -> (&'a [u8], usize) {
        let r = self.rest;
        let at = skip_ws(r, 0);
        match r.get(at) {
            Some(b',') => (r, skip_ws(r, at + 1)),
            _ => (r, at),
        }
    }

    /// The value that starts after whitespace at `r[at..]`, and whether it
    /// is a string without escapes; the members after it become the rest.
    /// `None`: not a value this walk reads.
    #[inline(always)]
    fn value_at(&mut self, r: &'a [u8], at: usize) -> Option<(&'a [u8], bool)> {
        let from = r.get(skip_ws(r, at)..).unwrap_or_default();
        // A string of plain ASCII (most values) in one scan; anything else
        // measured by `value_len`, and a string then searched for an escape.
        let ascii = match from {
            [b'"', content @ ..] => {
                let run = plain_run_tail(content);
                (content.get(run) == Some(&b'"')).then_some(run + 2)
            }
            _ => None,
        };
        let len = ascii.or_else(|| value_len(from)).filter(|&n| n > 0)?;
        let (value, rest) = from.split_at_checked(len)?;
        self.rest = rest;
        let plain = ascii.is_some() || is_plain_string(value);
        Some((value, plain))
    }
}

/// A JSON string.
#[inline]
pub fn is_string(v: &[u8]) -> bool {
    v.first() == Some(&b'"')
}

/// `true` or `false`.
#[inline]
pub fn is_bool(v: &[u8]) -> bool {
    matches!(v.first(), Some(b't' | b'f'))
}

/// `null`.
#[inline]
pub fn is_null(v: &[u8]) -> bool {
    v.first() == Some(&b'n')
}

/// A JSON number.
#[inline]
pub fn is_number(v: &[u8]) -> bool {
    matches!(v.first(), Some(b'-' | b'0'..=b'9'))
}

/// An integer written with digits only (at most 19, after an optional
/// `-`) within `min..=max`.
pub fn is_int_in(v: &[u8], min: i128, max: i128) -> bool {
    digits_value(v).is_some_and(|n| min <= n && n <= max)
}

/// The value of an integer written with digits only (at most 19, after an
/// optional `-`): what the check tests and the derived parse builds from.
#[inline]
fn digits_value(v: &[u8]) -> Option<i128> {
    let (negative, digits) = match v {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, v),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut n: i128 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n * 10 + i128::from(d - b'0');
    }
    Some(if negative { -n } else { n })
}

/// A string without escapes equal to one of `names`.
pub fn is_one_of(v: &[u8], names: &[&str]) -> bool {
    let Some(content) = v.strip_prefix(b"\"").and_then(|c| c.strip_suffix(b"\"")) else {
        return false;
    };
    !has_backslash(content) && names.iter().any(|n| n.as_bytes() == content)
}

/// A value of a nested type: its own derived check, if it has one.
#[inline]
pub fn is_nested(v: &[u8], check: Option<&'static ArgsCheck>) -> bool {
    check.is_some_and(|c| (c.check)(v, &mut Spans::default()))
}

/// A JSON string without an escape: what a derived parse borrows as is
/// (the check of a `#[mcp(parse)]` type is unsure of an escaped one, which
/// serde then decodes in place). [`Member::Next`] tells it of a member's
/// value.
#[inline]
pub fn is_plain_string(v: &[u8]) -> bool {
    match v {
        [b'"', content @ .., b'"'] => !has_backslash(content),
        _ => false,
    }
}

/// The derived parse (`#[derive(ToolArgs)]` with `#[mcp(parse)]`): the
/// type built straight from arguments its own derived check vouched for,
/// instead of through serde.
///
/// `parse_plain` runs only on bytes the check derived with [`SCHEMA`]
/// said surely match it (that check is then also unsure of escaped
/// strings): on such bytes it cannot fail, and builds exactly what serde's
/// derive would. Anything else takes serde's `Deserialize`, so answers
/// never change. On bytes the check did not vouch for it is not meant to
/// be called: it may return `None`, or a value serde would not build (an
/// escaped string's raw text), and `tool!` never calls it there.
///
/// [`SCHEMA`]: DerivedParse::SCHEMA
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no derived parse",
    label = "a field of a `#[mcp(parse)]` type",
    note = "give `{Self}` `#[derive(ToolArgs)]` with `#[mcp(parse)]` too, or drop `#[mcp(parse)]` from the outer type"
)]
pub trait DerivedParse<'de>: Sized {
    /// The `static` schema the type's derived check was derived with.
    const SCHEMA: &'static Schema<'static>;

    /// The value of `raw`, arguments the check vouched for, from the
    /// [`Spans`] it recorded (`None`: walked again, as for a nested value).
    fn parse_plain(raw: &'de [u8], spans: Option<&Spans>) -> Option<Self>;
}

/// The content of a string the check found without escapes (its bytes
/// as they are: an escape in them would be kept undecoded).
#[inline]
pub fn plain_str(v: &[u8]) -> Option<&str> {
    match v {
        [b'"', content @ .., b'"'] => core::str::from_utf8(content).ok(),
        _ => None,
    }
}

/// An integer written with digits only (what [`is_int_in`] accepts), as
/// `T`.
#[inline]
pub fn int<T: TryFrom<i128>>(v: &[u8]) -> Option<T> {
    T::try_from(digits_value(v)?).ok()
}

/// A JSON number as a float: the same conversion serde's way takes
/// (`str::parse` of the number's text).
#[inline]
pub fn float<T: core::str::FromStr>(v: &[u8]) -> Option<T> {
    core::str::from_utf8(v).ok()?.parse().ok()
}

/// `true` or `false`.
#[inline]
pub fn boolean(v: &[u8]) -> Option<bool> {
    match v {
        b"true" => Some(true),
        b"false" => Some(false),
        _ => None,
    }
}

/// A value of a nested type with a derived parse.
#[inline]
pub fn nested<'de, T: DerivedParse<'de>>(v: &'de [u8]) -> Option<T> {
    T::parse_plain(v, None)
}

/// How `tool!` parses its arguments type `T`: with the derived parse when
/// `T` has one ([`ByDerive`], picked first by method resolution), else
/// with serde ([`BySerde`], one auto-reference further).
#[derive(Debug)]
pub struct Pick<T>(PhantomData<T>);

impl<T> Pick<T> {
    /// The picker of `T`.
    #[inline]
    pub const fn new() -> Self {
        Self(PhantomData)
    }
}

impl<T> Default for Pick<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// The derived parse, for a type that has one.
pub trait ByDerive<'de, T> {
    /// `T` from `args`: built by [`DerivedParse`] when its check vouched for
    /// them, by serde otherwise.
    ///
    /// # Errors
    ///
    /// The tool error of arguments that do not fit `T`.
    fn parse_args(&self, args: Arguments<'de>) -> Result<T, ToolError<'static>>;
}

impl<'de, T: DerivedParse<'de> + Deserialize<'de>> ByDerive<'de, T> for Pick<T> {
    #[inline]
    fn parse_args(&self, args: Arguments<'de>) -> Result<T, ToolError<'static>> {
        // No derived check vouches on small targets (`FAST_ARGS`): no
        // derived parse linked there.
        if !FAST_ARGS {
            return args.parse();
        }
        match args.vouched_by(T::SCHEMA) {
            // `None` cannot follow the check's word (see `DerivedParse`).
            Ok((raw, spans)) => {
                T::parse_plain(raw, Some(&spans)).ok_or_else(|| shape_error(DeError::InvalidType))
            }
            Err(args) => args.parse(),
        }
    }
}

/// Serde's parse, for every other type.
pub trait BySerde<'de, T> {
    /// `T` from `args`, by serde.
    ///
    /// # Errors
    ///
    /// The tool error of arguments that do not fit `T`.
    fn parse_args(&self, args: Arguments<'de>) -> Result<T, ToolError<'static>>;
}

impl<'de, T: Deserialize<'de>> BySerde<'de, T> for &Pick<T> {
    #[inline]
    fn parse_args(&self, args: Arguments<'de>) -> Result<T, ToolError<'static>> {
        args.parse()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::vec::Vec;

    fn members(raw: &[u8]) -> Vec<Member<'_>> {
        let mut m = Members::new(raw).expect("an object");
        let mut out = Vec::new();
        loop {
            let step = m.next_member();
            let more = matches!(step, Member::Next(..));
            out.push(step);
            if !more {
                return out;
            }
        }
    }

    #[test]
    fn members_of_objects() {
        assert_eq!(members(b"{}"), [Member::End]);
        assert_eq!(members(b" { } "), [Member::End]);
        assert_eq!(
            members(br#"{"a":1, "bc" : "x\"y" ,"d":{"e":[1,2]}}"#),
            [
                Member::Next(b"a", b"1", false),
                Member::Next(b"bc", br#""x\"y""#, false),
                Member::Next(b"d", br#"{"e":[1,2]}"#, false),
                Member::End
            ]
        );
        assert_eq!(
            members(br#"{"a":1,"\u0062":2}"#),
            [Member::Next(b"a", b"1", false), Member::Unsure]
        );
        assert!(Members::new(b"[1]").is_none());
        assert!(Members::new(b"").is_none());
    }

    #[test]
    fn value_tests_at_their_edges() {
        assert!(is_int_in(b"255", 0, 255));
        assert!(!is_int_in(b"256", 0, 255));
        assert!(!is_int_in(b"-1", 0, 255));
        assert!(is_int_in(b"-128", -128, 127));
        assert!(!is_int_in(b"-129", -128, 127));
        assert!(is_int_in(b"-0", 0, 1));
        assert!(
            !is_int_in(b"1.0", 0, 9),
            "a fraction: the full check decides"
        );
        assert!(!is_int_in(b"1e2", 0, 999));
        assert!(!is_int_in(b"-", -9, 9));
        assert!(is_int_in(b"9223372036854775807", 0, i128::from(i64::MAX)));
        assert!(!is_int_in(b"9223372036854775808", 0, i128::from(i64::MAX)));
        assert!(is_int_in(b"9999999999999999999", 0, i128::from(u64::MAX)));
        assert!(
            !is_int_in(b"10000000000000000000", 0, i128::from(u64::MAX)),
            "20 digits"
        );
        assert!(is_one_of(br#""asc""#, &["asc", "desc"]));
        assert!(
            !is_one_of(br#""\u0061sc""#, &["asc"]),
            "escaped: the full check decides"
        );
        assert!(!is_one_of(br#""up""#, &["asc", "desc"]));
        assert!(!is_one_of(b"1", &["1"]));
        assert!(is_string(br#""""#) && !is_string(b"null"));
        assert!(is_bool(b"true") && is_bool(b"false") && !is_bool(b"null"));
        assert!(is_number(b"-1.5e3") && is_number(b"0") && !is_number(b"\"1\""));
        assert!(is_null(b"null") && !is_null(b"0"));
        assert!(!is_nested(b"{}", None));
    }
}
