//! Borrowed views of validated JSON: [`Value`] and its member and item
//! iterators.

use super::lex::{is_ws, skip_ws, string_len, value_len};
use super::number::Number;
use super::string::JsonStr;

/// The kind of a JSON value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Kind {
    /// `null`
    Null,
    /// `true` or `false`
    Bool,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

/// A view of ONE already-validated JSON value (no surrounding whitespace).
/// Cheap to copy; equality compares the raw bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Value<'a> {
    pub(super) raw: &'a [u8],
}

impl<'a> Value<'a> {
    /// A view of bytes the caller already validated (surrounding whitespace
    /// trimmed), without scanning them again. Navigation on bytes that are
    /// not valid JSON never panics; it just finds nothing.
    #[must_use]
    #[inline]
    pub fn trusted(input: &'a [u8]) -> Value<'a> {
        // Spans cut from a validated frame have no whitespace around them.
        if let ([first, ..], [.., last]) = (input, input)
            && !is_ws(*first)
            && !is_ws(*last)
        {
            return Value { raw: input };
        }
        Self::trusted_trimmed(input)
    }

    /// [`Value::trusted`] of input with whitespace around it (or empty).
    #[inline(never)]
    fn trusted_trimmed(input: &'a [u8]) -> Value<'a> {
        let start = skip_ws(input, 0);
        let trailing = input.iter().rev().take_while(|&&b| is_ws(b)).count();
        let end = input.len().saturating_sub(trailing).max(start);
        Value {
            raw: input.get(start..end).unwrap_or(&[]),
        }
    }

    /// The exact bytes of the value.
    #[must_use]
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The kind of the value (from its first byte).
    #[must_use]
    pub fn kind(&self) -> Kind {
        match self.raw.first() {
            Some(b'{') => Kind::Object,
            Some(b'[') => Kind::Array,
            Some(b'"') => Kind::String,
            Some(b't' | b'f') => Kind::Bool,
            Some(b'n') | None => Kind::Null,
            Some(_) => Kind::Number,
        }
    }

    /// True for `null`.
    #[must_use]
    pub fn is_null(&self) -> bool {
        self.raw == b"null"
    }

    /// The boolean, if the value is `true` or `false`.
    #[must_use]
    pub fn as_bool(&self) -> Option<bool> {
        match self.raw {
            b"true" => Some(true),
            b"false" => Some(false),
            _ => None,
        }
    }

    /// The string contents (still escaped), if the value is a string.
    #[must_use]
    pub fn as_str(&self) -> Option<JsonStr<'a>> {
        let inner = self.raw.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
        Some(JsonStr { raw: inner })
    }

    /// The number token, if the value is a number.
    #[must_use]
    pub fn as_number(&self) -> Option<Number<'a>> {
        if self.kind() != Kind::Number {
            return None;
        }
        Number::parse(core::str::from_utf8(self.raw).ok()?)
    }

    /// The value of the first member whose DECODED key equals `key`; `None`
    /// if there is none or if this is not an object.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<Value<'a>> {
        self.members().find(|(k, _)| k.eq_str(key)).map(|(_, v)| v)
    }

    /// The values of the first members whose decoded keys equal `keys` (none
    /// of which holds a backslash), into `found` (in the order of `keys`),
    /// from one walk over `members`: what the slots of an
    /// [`Outline`](super::Outline) are checked against.
    #[cfg(test)]
    pub(crate) fn find_keys(
        members: &mut dyn Iterator<Item = (JsonStr<'a>, Value<'a>)>,
        keys: &[&str],
        found: &mut [Option<Value<'a>>],
    ) {
        for (key, value) in members {
            if let Some(slot) = key.position_in(keys).and_then(|i| found.get_mut(i))
                && slot.is_none()
            {
                *slot = Some(value);
            }
        }
    }

    /// Iterator over the `(key, value)` members of an object, in order
    /// (duplicates included); empty if this is not an object.
    #[must_use]
    #[inline(never)]
    pub fn members(&self) -> Members<'a> {
        let rest = match self.raw.first() {
            Some(b'{') => self.raw.get(1..).unwrap_or_default(),
            _ => &[],
        };
        Members { rest, first: true }
    }

    /// Iterator over the items of an array; empty if this is not an array.
    #[must_use]
    #[inline(never)]
    pub fn items(&self) -> Items<'a> {
        let rest = match self.raw.first() {
            Some(b'[') => self.raw.get(1..).unwrap_or_default(),
            _ => &[],
        };
        Items { rest, first: true }
    }

    /// Number of members (object) or items (array); 0 for scalars.
    /// O(size of the value).
    #[must_use]
    pub fn len(&self) -> usize {
        match self.kind() {
            Kind::Object => self.members().count(),
            Kind::Array => self.items().count(),
            _ => 0,
        }
    }

    /// True for scalars and for empty arrays/objects (`len() == 0`).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        match self.kind() {
            Kind::Object => self.members().next().is_none(),
            Kind::Array => self.items().next().is_none(),
            _ => true,
        }
    }
}

/// Split the value at `rest[p..]` off `rest`; returns it and the bytes after it.
fn take_value(rest: &[u8], p: usize) -> Option<(Value<'_>, &[u8])> {
    let tail = rest.get(p..)?;
    let n = value_len(tail)?;
    let (raw, after) = tail.split_at_checked(n)?;
    Some((Value { raw }, after))
}

/// Iterator over the members of an object; see [`Value::members`].
#[derive(Clone, Debug)]
pub struct Members<'a> {
    rest: &'a [u8],
    first: bool,
}

impl<'a> Members<'a> {
    fn step(&mut self) -> Option<(JsonStr<'a>, Value<'a>)> {
        let rest = self.rest;
        let mut p = skip_ws(rest, 0);
        match (rest.get(p)?, self.first) {
            (b'"', true) => {}
            (b',', false) => p = skip_ws(rest, p + 1),
            _ => return None,
        }
        self.first = false;
        let key_full = rest.get(p..)?;
        let klen = string_len(key_full)?;
        // klen >= 2: both quotes are included.
        let key = key_full.get(1..klen.checked_sub(1)?)?;
        p = skip_ws(rest, p + klen);
        if rest.get(p) != Some(&b':') {
            return None;
        }
        let (value, after) = take_value(rest, skip_ws(rest, p + 1))?;
        self.rest = after;
        Some((JsonStr { raw: key }, value))
    }
}

impl<'a> Iterator for Members<'a> {
    type Item = (JsonStr<'a>, Value<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let r = self.step();
        if r.is_none() {
            self.rest = &[];
        }
        r
    }
}

/// Iterator over the items of an array; see [`Value::items`].
#[derive(Clone, Debug)]
pub struct Items<'a> {
    rest: &'a [u8],
    first: bool,
}

impl<'a> Items<'a> {
    fn step(&mut self) -> Option<Value<'a>> {
        let rest = self.rest;
        let mut p = skip_ws(rest, 0);
        match (rest.get(p)?, self.first) {
            (b']', _) => return None,
            (b',', false) => p = skip_ws(rest, p + 1),
            (_, true) => {}
            (_, false) => return None,
        }
        self.first = false;
        let (value, after) = take_value(rest, p)?;
        self.rest = after;
        Some(value)
    }
}

impl<'a> Iterator for Items<'a> {
    type Item = Value<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        let r = self.step();
        if r.is_none() {
            self.rest = &[];
        }
        r
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::wire::json::{JsonError, Limits};
    use std::format;
    use std::string::String;
    use std::vec::Vec;

    fn val(s: &str) -> Value<'_> {
        Value::parse(s.as_bytes(), &Limits::DEFAULT).expect("valid")
    }

    #[test]
    fn value_parse_and_kind() {
        let v = val("  {\"a\": 1}\n");
        assert_eq!(v.raw(), b"{\"a\": 1}");
        assert_eq!(v.kind(), Kind::Object);
        assert_eq!(val("[1]").kind(), Kind::Array);
        assert_eq!(val("\"x\"").kind(), Kind::String);
        assert_eq!(val("true").kind(), Kind::Bool);
        assert_eq!(val("false").kind(), Kind::Bool);
        assert_eq!(val("null").kind(), Kind::Null);
        assert_eq!(val("-1.5").kind(), Kind::Number);
        assert_eq!(val("7").kind(), Kind::Number);
        assert!(val("null").is_null());
        assert!(!val("0").is_null());
        assert_eq!(val("true").as_bool(), Some(true));
        assert_eq!(val("false").as_bool(), Some(false));
        assert_eq!(val("1").as_bool(), None);
        assert_eq!(
            val(" \"a\\nb\" ").as_str().map(|s| s.raw()),
            Some(&b"a\\nb"[..])
        );
        assert_eq!(val("1").as_str(), None);
        assert_eq!(val("12").as_number().map(|n| n.raw()), Some("12"));
        assert_eq!(val("\"12\"").as_number(), None);
        assert_eq!(
            Value::parse(b"[1,", &Limits::DEFAULT),
            Err(JsonError::UnexpectedEnd)
        );
        assert_eq!(val("[]").len(), 0);
        assert!(val("[]").is_empty());
        assert!(val("{}").is_empty());
        assert!(!val("[0]").is_empty());
        assert_eq!(val("3").len(), 0);
    }

    #[test]
    fn navigation() {
        let doc = r#"{ "a" : 1 , "b\u0063" : [ 1, "x,]}", {"n":[[]]} , -2.5e3 ] ,
            "a": 2, "\ud83d\ude00": null, "e\"q": {"k": "v"}, "": true }"#;
        let v = val(doc);
        assert_eq!(v.len(), 6);
        // first duplicate wins
        assert_eq!(v.get("a").map(|x| x.raw()), Some(&b"1"[..]));
        // escaped keys are compared decoded
        let bc = v.get("bc").expect("bc");
        assert_eq!(bc.kind(), Kind::Array);
        assert_eq!(bc.len(), 4);
        let items: Vec<&[u8]> = bc.items().map(|i| i.raw()).collect();
        assert_eq!(items, [&b"1"[..], b"\"x,]}\"", b"{\"n\":[[]]}", b"-2.5e3"]);
        assert_eq!(v.get("\u{1F600}").map(|x| x.is_null()), Some(true));
        assert_eq!(
            v.get("e\"q")
                .and_then(|x| x.get("k"))
                .and_then(|x| x.as_str())
                .map(|s| s.raw()),
            Some(&b"v"[..])
        );
        assert_eq!(v.get("").and_then(|x| x.as_bool()), Some(true));
        assert_eq!(v.get("missing"), None);
        assert_eq!(v.get("b"), None);
        let keys: Vec<String> = v.members().map(|(k, _)| format!("{k}")).collect();
        assert_eq!(keys, ["a", "bc", "a", "\u{1F600}", "e\"q", ""]);
        // non-containers
        assert_eq!(val("[1]").get("a"), None);
        assert_eq!(val("[1]").members().count(), 0);
        assert_eq!(val("{\"a\":1}").items().count(), 0);
        assert_eq!(val("\"a\"").items().count(), 0);
        assert_eq!(val("{}").members().count(), 0);
        assert_eq!(val("[ ]").items().count(), 0);
        // nested arrays
        let deep = val("[[1,[2]],[],3]");
        let inner: Vec<usize> = deep.items().map(|i| i.len()).collect();
        assert_eq!(inner, [2, 0, 0]);
    }

    #[test]
    fn navigation_survives_garbage() {
        // Views are only built from validated input, but a bug must never
        // make them panic or loop forever.
        let garbage: [&[u8]; 12] = [
            b"{",
            b"{\"a",
            b"{\"a\"",
            b"{\"a\":",
            b"{\"a\" 1}",
            b"[1,",
            b"[\"",
            b"{,}",
            b"[[[",
            b"{\"a\":1,,}",
            b"[1 2]",
            b"}",
        ];
        for g in garbage {
            let v = Value { raw: g };
            let _ = v.len();
            let _ = v.get("a");
            let _ = v.members().count();
            let _ = v.items().count();
            let _ = v.as_number();
            let _ = v.as_str();
            let _ = value_len(g);
        }
        assert_eq!(Value { raw: b"" }.kind(), Kind::Null);
        assert_eq!(value_len(b""), None);
        assert_eq!(value_len(b"]"), None);
    }
}
