//! The derived arguments check: what `#[derive(ToolArgs)]` generates a
//! tool's fast acceptance test against.
//!
//! A derived type's schema is known when the derive runs, so instead of
//! interpreting its [`Schema`] the derive writes a function that walks the
//! arguments once, matching each key with a `match` on its bytes and each
//! value with a test of its first bytes. The function only ever says "these
//! arguments surely match the schema" (`true`) or "not sure" (`false`): on
//! `false` the server runs [`Schema::validate`] as before, which finds the
//! violation (with its path and text) or accepts. So answers never change;
//! only the common case is cheaper.
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

pub use crate::schema::derived::{ArgsCheck, FAST_ARGS};
use crate::wire::json::{skip_ws, value_len};
use crate::wire::swar::plain_run;

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
    /// A member: its key's bytes (no escape in them) and its value.
    Next(&'a [u8], &'a [u8]),
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

    /// The next member.
    #[inline]
    pub fn next_member(&mut self) -> Member<'a> {
        let r = self.rest;
        let mut at = skip_ws(r, 0);
        if r.get(at) == Some(&b',') {
            at = skip_ws(r, at + 1);
        }
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
        at = skip_ws(r, at + 1);
        let from = r.get(at..).unwrap_or_default();
        // A string without escapes (most values) in one scan; anything
        // else measured by `value_len`.
        let plain = match from {
            [b'"', content @ ..] => {
                let run = plain_run(content);
                (content.get(run) == Some(&b'"')).then_some(run + 2)
            }
            _ => None,
        };
        let Some(len) = plain.or_else(|| value_len(from)).filter(|&n| n > 0) else {
            return Member::Unsure;
        };
        let Some((value, rest)) = from.split_at_checked(len) else {
            return Member::Unsure;
        };
        self.rest = rest;
        Member::Next(key, value)
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
    let (negative, digits) = match v {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, v),
    };
    if digits.is_empty() || digits.len() > 19 {
        return false;
    }
    let mut n: i128 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return false;
        }
        n = n * 10 + i128::from(d - b'0');
    }
    let n = if negative { -n } else { n };
    min <= n && n <= max
}

/// A string without escapes equal to one of `names`.
pub fn is_one_of(v: &[u8], names: &[&str]) -> bool {
    let Some(content) = v.strip_prefix(b"\"").and_then(|c| c.strip_suffix(b"\"")) else {
        return false;
    };
    !content.contains(&b'\\') && names.iter().any(|n| n.as_bytes() == content)
}

/// A value of a nested type: its own derived check, if it has one.
#[inline]
pub fn is_nested(v: &[u8], check: Option<&'static ArgsCheck>) -> bool {
    check.is_some_and(|c| (c.check)(v))
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
                Member::Next(b"a", b"1"),
                Member::Next(b"bc", br#""x\"y""#),
                Member::Next(b"d", br#"{"e":[1,2]}"#),
                Member::End
            ]
        );
        assert_eq!(
            members(br#"{"a":1,"\u0062":2}"#),
            [Member::Next(b"a", b"1"), Member::Unsure]
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
