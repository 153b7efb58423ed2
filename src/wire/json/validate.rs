//! The validator: one iterative pass over the input, enforcing the limits
//! and recording the outline.

use super::lex::{scan_key, scan_literal, scan_number, scan_string, skip_ws};
use super::limits::{JsonError, Limits, MAX_DEPTH};
use super::outline::Outline;
use super::value::Value;

/// Bytes of the container-kind bit stack (one bit per level).
const STACK_BYTES: usize = MAX_DEPTH as usize / 8;

/// Per-level item counts: `None` when items are unlimited, so that case
/// does not reserve the 1 KiB counter array on the stack (the array lives in
/// [`validate_counting`]'s frame). One copy of the validation loop serves
/// both.
type Counts<'c> = Option<&'c mut [u32; MAX_DEPTH as usize]>;

/// A container at `level` got its first item.
#[inline]
fn count_first(counts: &mut Counts<'_>, level: usize, max: u32) -> Result<(), JsonError> {
    if let Some(c) = counts {
        if max == 0 {
            return Err(JsonError::TooManyItems);
        }
        if let Some(c) = c.get_mut(level) {
            *c = 1;
        }
    }
    Ok(())
}

/// A container at `level` got one more item.
#[inline]
fn count_next(counts: &mut Counts<'_>, level: usize, max: u32) -> Result<(), JsonError> {
    if let Some(c) = counts
        && let Some(c) = c.get_mut(level)
    {
        if *c >= max {
            return Err(JsonError::TooManyItems);
        }
        *c += 1;
    }
    Ok(())
}

#[inline]
fn set_bit(stack: &mut [u8; STACK_BYTES], idx: usize, v: bool) {
    if let Some(byte) = stack.get_mut(idx / 8) {
        let m = 1u8 << (idx % 8);
        if v {
            *byte |= m;
        } else {
            *byte &= !m;
        }
    }
}

#[inline]
fn get_bit(stack: &[u8; STACK_BYTES], idx: usize) -> bool {
    stack
        .get(idx / 8)
        .is_some_and(|byte| byte & (1u8 << (idx % 8)) != 0)
}

/// Validate that `input` is exactly one JSON value (RFC 8259) surrounded by
/// optional JSON whitespace (space, `\t`, `\n`, `\r`).
///
/// Strict: valid UTF-8 everywhere, no raw control characters (< 0x20) in
/// strings, only the 8 short escapes plus `\uXXXX`, surrogate escapes only as
/// a high+low pair (anything else is [`JsonError::LoneSurrogate`]), strict
/// number grammar (no leading zeros, no `+`, no `.5`, no `1.`, no
/// NaN/Infinity), no trailing commas, literals exactly `true`/`false`/`null`,
/// no byte-order mark.
///
/// Iterative (a bit stack of container kinds sized for [`MAX_DEPTH`]), O(n),
/// never recurses, never panics, enforces `limits`. Stack use is a few dozen
/// bytes, plus 1 KiB of per-level counters only when `limits.max_items` is
/// not `u32::MAX`.
///
/// # Errors
///
/// The first problem found, as a [`JsonError`] (limit violations are the
/// variants for which [`JsonError::is_limit`] is true).
pub fn validate(input: &[u8], limits: &Limits) -> Result<(), JsonError> {
    // The outlining validator with no outline to record: one copy of the
    // validation loop in a firmware image, and no outline's 336 bytes on
    // the stack (a tool's structured output is checked deep in a call).
    validate_in(input, limits, None)
}

/// [`validate`], also recording the [`Outline`] of a top-level object.
pub(crate) fn validate_outlined(
    input: &[u8],
    limits: &Limits,
    outline: &mut Outline,
) -> Result<(), JsonError> {
    outline.reset();
    validate_in(input, limits, Some(outline))
}

fn validate_in(
    input: &[u8],
    limits: &Limits,
    outline: Option<&mut Outline>,
) -> Result<(), JsonError> {
    if limits.max_items == u32::MAX {
        // 64-bit targets: a copy of the loop without the counting (fewer
        // live values in it); small ones keep one copy (flash).
        if cfg!(target_pointer_width = "64") {
            run_validate::<false>(input, limits, None, outline)
        } else {
            run_validate::<true>(input, limits, None, outline)
        }
    } else {
        validate_counting(input, limits, outline)
    }
}

#[inline(never)]
fn validate_counting(
    input: &[u8],
    limits: &Limits,
    outline: Option<&mut Outline>,
) -> Result<(), JsonError> {
    let mut counts = [0u32; MAX_DEPTH as usize];
    run_validate::<true>(input, limits, Some(&mut counts), outline)
}

/// The validation loop. `COUNTING`: whether this copy has the item
/// counting in it (it counts when given `counts`); 64-bit targets build a
/// copy without it for the default, unlimited items.
fn run_validate<const COUNTING: bool>(
    input: &[u8],
    limits: &Limits,
    counts: Counts<'_>,
    mut rec: Option<&mut Outline>,
) -> Result<(), JsonError> {
    let mut counts = if COUNTING { counts } else { None };
    let max_depth = usize::from(if limits.max_depth > MAX_DEPTH {
        MAX_DEPTH
    } else {
        limits.max_depth
    });
    let max_str = limits.max_string_len;
    let max_items = limits.max_items;
    // Bit `d` set = the container at level `d` (0-based) is an object; the
    // innermost open container's kind is `in_obj` (read at every value's
    // end), the stack holds only the enclosing ones.
    let mut stack = [0u8; STACK_BYTES];
    let mut depth: usize = 0;
    let mut in_obj = false;
    let mut pos = skip_ws(input, 0);

    // Invariant at the top of this loop: a value is expected at `pos`
    // (whitespace already skipped).
    loop {
        let Some(&b) = input.get(pos) else {
            return Err(JsonError::UnexpectedEnd);
        };
        match b {
            b'{' | b'[' => {
                if depth >= max_depth {
                    return Err(JsonError::TooDeep);
                }
                // The enclosing container's kind goes to the stack; the
                // new one's is kept in `in_obj`.
                if depth > 0 {
                    set_bit(&mut stack, depth - 1, in_obj);
                }
                let is_obj = b == b'{';
                in_obj = is_obj;
                depth += 1;
                pos = skip_ws(input, pos + 1);
                let close = if is_obj { b'}' } else { b']' };
                match input.get(pos) {
                    None => return Err(JsonError::UnexpectedEnd),
                    Some(&c) if c == close => {
                        // Empty container: it is a complete value.
                        pos += 1;
                        depth -= 1;
                        in_obj = depth > 0 && get_bit(&stack, depth - 1);
                    }
                    Some(_) => {
                        count_first(&mut counts, depth - 1, max_items)?;
                        if is_obj {
                            pos = member(input, pos, depth, max_str, &mut rec)?;
                        }
                        continue;
                    }
                }
            }
            b'"' => pos = scan_string(input, pos, max_str)?,
            // A plain positive integer (most ids) inline on 64-bit targets;
            // any other number by the grammar's one definition.
            b'1'..=b'9' if cfg!(target_pointer_width = "64") => {
                let mut end = pos + 1;
                while input.get(end).is_some_and(u8::is_ascii_digit) {
                    end += 1;
                }
                pos = match input.get(end) {
                    Some(b'.' | b'e' | b'E') => scan_number(input, pos)?,
                    _ => end,
                };
            }
            b'-' | b'0'..=b'9' => pos = scan_number(input, pos)?,
            b't' => pos = scan_literal(input, pos, b"true")?,
            b'f' => pos = scan_literal(input, pos, b"false")?,
            b'n' => pos = scan_literal(input, pos, b"null")?,
            _ => return Err(JsonError::UnexpectedByte { offset: pos }),
        }

        // A value just ended at `pos`: close containers / find the next one.
        loop {
            if let Some(rec) = rec.as_deref_mut() {
                rec.value_end(depth, pos);
            }
            pos = skip_ws(input, pos);
            if depth == 0 {
                return if pos < input.len() {
                    Err(JsonError::TrailingData { offset: pos })
                } else {
                    Ok(())
                };
            }
            let is_obj = in_obj;
            match input.get(pos) {
                None => return Err(JsonError::UnexpectedEnd),
                Some(b',') => {
                    count_next(&mut counts, depth - 1, max_items)?;
                    pos = skip_ws(input, pos + 1);
                    if is_obj {
                        pos = member(input, pos, depth, max_str, &mut rec)?;
                    }
                    break;
                }
                Some(b']') if !is_obj => {
                    pos += 1;
                    depth -= 1;
                    in_obj = depth > 0 && get_bit(&stack, depth - 1);
                }
                Some(b'}') if is_obj => {
                    pos += 1;
                    depth -= 1;
                    in_obj = depth > 0 && get_bit(&stack, depth - 1);
                }
                Some(_) => return Err(JsonError::UnexpectedByte { offset: pos }),
            }
        }
    }
}

/// The member of an object at `depth` whose key starts at `pos`: its key
/// scanned (or, on 64-bit targets, found to be the member the outline
/// expects there) and recorded; the offset of its value.
#[inline(always)]
fn member(
    input: &[u8],
    pos: usize,
    depth: usize,
    max_str: u32,
    rec: &mut Option<&mut Outline>,
) -> Result<usize, JsonError> {
    #[cfg(target_pointer_width = "64")]
    if let Some(rec) = rec.as_deref_mut()
        && let Some(value) = rec.expected(input, depth, pos, max_str)
    {
        return Ok(value);
    }
    let (key_end, value) = scan_key(input, pos, max_str)?;
    if let Some(rec) = rec.as_deref_mut() {
        rec.member(input, depth, pos, key_end, value);
    }
    Ok(value)
}

// `Value::parse` stays with the validator it runs (the views need no validator).
impl<'a> Value<'a> {
    /// Validate `input` with [`validate`] and return a view of the value with
    /// surrounding whitespace trimmed.
    ///
    /// # Errors
    ///
    /// Whatever [`validate`] reports.
    pub fn parse(input: &'a [u8], limits: &Limits) -> Result<Value<'a>, JsonError> {
        validate(input, limits)?;
        // Validated: the one trim of `Value::trusted` applies.
        Ok(Value::trusted(input))
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::wire::json::{tests::nested, value_len};
    use std::string::String;

    fn ok(s: &str) {
        assert_eq!(
            validate(s.as_bytes(), &Limits::DEFAULT),
            Ok(()),
            "input {s:?}"
        );
    }

    fn err(s: &str) -> JsonError {
        match validate(s.as_bytes(), &Limits::DEFAULT) {
            Ok(()) => panic!("accepted {s:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn validate_scalars() {
        for s in [
            "null",
            "true",
            "false",
            "0",
            "-0",
            "1",
            "-1",
            "12.5",
            "1e5",
            "1E+5",
            "1e-5",
            "-0.0e-0",
            "123456789012345678901234567890",
            "\"\"",
            "\"abc\"",
            " \t\r\n1 \t\r\n",
        ] {
            ok(s);
        }
    }

    #[test]
    fn validate_structures() {
        for s in [
            "[]",
            "{}",
            "[1,2,3]",
            "{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}",
            " [ 1 , { \"a\" : [ ] } , \"x\" ] ",
            "[[[[]]]]",
            "{\"a\":{},\"a\":[]}",
        ] {
            ok(s);
        }
    }

    #[test]
    fn validate_rejects_structure() {
        assert_eq!(err(""), JsonError::UnexpectedEnd);
        assert_eq!(err("   "), JsonError::UnexpectedEnd);
        assert_eq!(err("["), JsonError::UnexpectedEnd);
        assert_eq!(err("[1"), JsonError::UnexpectedEnd);
        assert_eq!(err("[1,"), JsonError::UnexpectedEnd);
        assert_eq!(err("{\"a\""), JsonError::UnexpectedEnd);
        assert_eq!(err("{\"a\":"), JsonError::UnexpectedEnd);
        assert_eq!(err("[1,]"), JsonError::UnexpectedByte { offset: 3 });
        assert_eq!(err("{\"a\":1,}"), JsonError::UnexpectedByte { offset: 7 });
        assert_eq!(err("[1 2]"), JsonError::UnexpectedByte { offset: 3 });
        assert_eq!(err("[1}"), JsonError::UnexpectedByte { offset: 2 });
        assert_eq!(err("{\"a\":1]"), JsonError::UnexpectedByte { offset: 6 });
        assert_eq!(err("{1:2}"), JsonError::UnexpectedByte { offset: 1 });
        assert_eq!(err("{\"a\" 1}"), JsonError::UnexpectedByte { offset: 5 });
        assert_eq!(err("[,1]"), JsonError::UnexpectedByte { offset: 1 });
        assert_eq!(err("1 2"), JsonError::TrailingData { offset: 2 });
        assert_eq!(err("{} x"), JsonError::TrailingData { offset: 3 });
        assert_eq!(err("[]]"), JsonError::TrailingData { offset: 2 });
        assert_eq!(err("\u{feff}1"), JsonError::UnexpectedByte { offset: 0 });
        assert_eq!(err("\u{0c}1"), JsonError::UnexpectedByte { offset: 0 });
        assert_eq!(err("tru"), JsonError::UnexpectedEnd);
        assert_eq!(err("trux"), JsonError::UnexpectedByte { offset: 3 });
        assert_eq!(err("truex"), JsonError::TrailingData { offset: 4 });
        assert_eq!(err("nul"), JsonError::UnexpectedEnd);
        assert_eq!(err("False"), JsonError::UnexpectedByte { offset: 0 });
        assert_eq!(err("[1]x"), JsonError::TrailingData { offset: 3 });
    }

    #[test]
    fn validate_numbers() {
        assert_eq!(err("01"), JsonError::InvalidNumber { offset: 1 });
        assert_eq!(err("-01"), JsonError::InvalidNumber { offset: 2 });
        assert_eq!(err("+1"), JsonError::UnexpectedByte { offset: 0 });
        assert_eq!(err(".5"), JsonError::UnexpectedByte { offset: 0 });
        assert_eq!(err("1."), JsonError::UnexpectedEnd);
        assert_eq!(err("[1.]"), JsonError::InvalidNumber { offset: 3 });
        assert_eq!(err("1.e5"), JsonError::InvalidNumber { offset: 2 });
        assert_eq!(err("1e"), JsonError::UnexpectedEnd);
        assert_eq!(err("[1e]"), JsonError::InvalidNumber { offset: 3 });
        assert_eq!(err("[1e+]"), JsonError::InvalidNumber { offset: 4 });
        assert_eq!(err("-"), JsonError::UnexpectedEnd);
        assert_eq!(err("-x"), JsonError::InvalidNumber { offset: 1 });
        assert_eq!(err("NaN"), JsonError::UnexpectedByte { offset: 0 });
        assert_eq!(err("-Infinity"), JsonError::InvalidNumber { offset: 1 });
        assert_eq!(err("0x10"), JsonError::TrailingData { offset: 1 });
        assert_eq!(err("1.5.2"), JsonError::TrailingData { offset: 3 });
    }

    #[test]
    fn validate_strings() {
        ok(r#""\" \\ \/ \b \f \n \r \t \u0041 \u00e9 \uD83D\uDE00""#);
        ok("\"caf\u{e9} \u{1F600} \u{7ff} \u{800} \u{ffff} \u{10000} \u{10ffff}\"");
        ok("\"\u{7f}\"");
        assert_eq!(err("\"abc"), JsonError::UnexpectedEnd);
        assert_eq!(err("\"\\"), JsonError::UnexpectedEnd);
        assert_eq!(err("\"\\u12"), JsonError::UnexpectedEnd);
        assert_eq!(err("\"a\\x\""), JsonError::InvalidEscape { offset: 2 });
        assert_eq!(err("\"\\u12G4\""), JsonError::InvalidEscape { offset: 1 });
        assert_eq!(err("\"\\U0041\""), JsonError::InvalidEscape { offset: 1 });
        assert_eq!(err("\"\\'\""), JsonError::InvalidEscape { offset: 1 });
        assert_eq!(err("\"a\tb\""), JsonError::ControlCharacter { offset: 2 });
        assert_eq!(err("\"\n\""), JsonError::ControlCharacter { offset: 1 });
        assert_eq!(err("\"\u{0}\""), JsonError::ControlCharacter { offset: 1 });
    }

    #[test]
    fn validate_surrogates() {
        ok(r#""\ud83d\ude00""#);
        ok(r#""\uDBFF\uDFFF""#);
        ok(r#""\uD800\uDC00""#);
        // lone high surrogate, followed by various things
        assert_eq!(err(r#""\ud800""#), JsonError::LoneSurrogate { offset: 1 });
        assert_eq!(err(r#""\ud800x""#), JsonError::LoneSurrogate { offset: 1 });
        assert_eq!(err(r#""\ud800\n""#), JsonError::LoneSurrogate { offset: 1 });
        assert_eq!(
            err(r#""\ud800\u0041""#),
            JsonError::LoneSurrogate { offset: 1 }
        );
        assert_eq!(
            err(r#""\ud800\ud800""#),
            JsonError::LoneSurrogate { offset: 1 }
        );
        assert_eq!(
            err(r#""\ud800\uzzzz""#),
            JsonError::InvalidEscape { offset: 7 }
        );
        // lone low surrogate
        assert_eq!(err(r#""\udc00""#), JsonError::LoneSurrogate { offset: 1 });
        assert_eq!(
            err(r#""a\uDFFF\ud800""#),
            JsonError::LoneSurrogate { offset: 2 }
        );
        // truncated
        assert_eq!(err(r#""\ud800"#), JsonError::UnexpectedEnd);
        assert_eq!(err(r#""\ud800\"#), JsonError::UnexpectedEnd);
        assert_eq!(err(r#""\ud800\u"#), JsonError::UnexpectedEnd);
    }

    #[test]
    fn validate_utf8() {
        let check = |bytes: &[u8]| validate(bytes, &Limits::DEFAULT);
        assert_eq!(
            check(b"\"\xff\""),
            Err(JsonError::InvalidUtf8 { offset: 1 })
        );
        assert_eq!(
            check(b"\"\xc0\xaf\""),
            Err(JsonError::InvalidUtf8 { offset: 1 })
        );
        assert_eq!(
            check(b"\"\xe0\x80\xaf\""),
            Err(JsonError::InvalidUtf8 { offset: 1 })
        );
        // encoded surrogate U+D800
        assert_eq!(
            check(b"\"\xed\xa0\x80\""),
            Err(JsonError::InvalidUtf8 { offset: 1 })
        );
        // > U+10FFFF
        assert_eq!(
            check(b"\"\xf4\x90\x80\x80\""),
            Err(JsonError::InvalidUtf8 { offset: 1 })
        );
        // lone continuation byte
        assert_eq!(
            check(b"\"a\x80\""),
            Err(JsonError::InvalidUtf8 { offset: 2 })
        );
        // truncated sequence before the quote
        assert_eq!(
            check(b"\"\xe2\x82\""),
            Err(JsonError::InvalidUtf8 { offset: 1 })
        );
        // truncated at end of input
        assert_eq!(check(b"\"\xe2\x82"), Err(JsonError::UnexpectedEnd));
        // non-ASCII outside strings
        assert_eq!(
            check(b"[\xc3\xa9]"),
            Err(JsonError::UnexpectedByte { offset: 1 })
        );
        assert_eq!(check(b"\"\xe2\x82\xac\""), Ok(()));
    }

    #[test]
    fn depth_limit() {
        let l = Limits::DEFAULT;
        assert_eq!(validate(nested(32, "[", "]", "").as_bytes(), &l), Ok(()));
        assert_eq!(
            validate(nested(33, "[", "]", "").as_bytes(), &l),
            Err(JsonError::TooDeep)
        );
        assert_eq!(
            validate(nested(32, "{\"a\":", "}", "1").as_bytes(), &l),
            Ok(())
        );
        assert_eq!(
            validate(nested(33, "{\"a\":", "}", "1").as_bytes(), &l),
            Err(JsonError::TooDeep)
        );
        let zero = Limits::new().max_depth(0);
        assert_eq!(validate(b"1", &zero), Ok(()));
        assert_eq!(validate(b"[]", &zero), Err(JsonError::TooDeep));
        let max = Limits::new().max_depth(MAX_DEPTH);
        assert_eq!(validate(nested(256, "[", "]", "").as_bytes(), &max), Ok(()));
        assert_eq!(
            validate(nested(257, "[", "]", "").as_bytes(), &max),
            Err(JsonError::TooDeep)
        );
        // A raw field above MAX_DEPTH is clamped.
        let mut raw = Limits::DEFAULT;
        raw.max_depth = u16::MAX;
        assert_eq!(
            validate(nested(257, "[", "]", "").as_bytes(), &raw),
            Err(JsonError::TooDeep)
        );
        // Mixed kinds are tracked correctly at every level.
        let mut mixed = String::new();
        for i in 0..256 {
            mixed.push_str(if i % 3 == 0 { "{\"k\":" } else { "[" });
        }
        mixed.push('1');
        for i in (0..256).rev() {
            mixed.push_str(if i % 3 == 0 { "}" } else { "]" });
        }
        assert_eq!(validate(mixed.as_bytes(), &max), Ok(()));
    }

    #[test]
    fn items_limit() {
        let l = Limits::new().max_items(3);
        assert_eq!(validate(b"[1,2,3]", &l), Ok(()));
        assert_eq!(validate(b"[1,2,3,4]", &l), Err(JsonError::TooManyItems));
        assert_eq!(validate(br#"{"a":1,"b":2,"c":3}"#, &l), Ok(()));
        assert_eq!(
            validate(br#"{"a":1,"b":2,"c":3,"d":4}"#, &l),
            Err(JsonError::TooManyItems)
        );
        // Counts are per container, restored after a nested one closes.
        assert_eq!(validate(b"[[1,2,3],[1,2,3],[1,2,3]]", &l), Ok(()));
        assert_eq!(
            validate(b"[[1,2,3],[1,2,3],[1,2,3],4]", &l),
            Err(JsonError::TooManyItems)
        );
        assert_eq!(validate(b"[1,[1,2,[1,2,3]],3]", &l), Ok(()));
        let zero = Limits::new().max_items(0);
        assert_eq!(validate(b"[]", &zero), Ok(()));
        assert_eq!(validate(b"{}", &zero), Ok(()));
        assert_eq!(validate(b"[1]", &zero), Err(JsonError::TooManyItems));
    }

    #[test]
    fn string_limit() {
        let l = Limits::new().max_string_len(4);
        assert_eq!(validate(b"\"abcd\"", &l), Ok(()));
        assert_eq!(validate(b"\"abcde\"", &l), Err(JsonError::StringTooLong));
        // raw length counts escapes as on the wire
        assert_eq!(validate(br#""\n\t""#, &l), Ok(()));
        assert_eq!(validate(br#""a\n\t""#, &l), Err(JsonError::StringTooLong));
        assert_eq!(validate(br#""\u00e9""#, &l), Err(JsonError::StringTooLong));
        // keys too
        assert_eq!(validate(br#"{"abcd":1}"#, &l), Ok(()));
        assert_eq!(
            validate(br#"{"abcde":1}"#, &l),
            Err(JsonError::StringTooLong)
        );
        // multi-byte UTF-8 counts bytes
        assert_eq!(validate("\"\u{e9}\u{e9}\"".as_bytes(), &l), Ok(()));
        assert_eq!(
            validate("\"\u{e9}\u{e9}a\"".as_bytes(), &l),
            Err(JsonError::StringTooLong)
        );
        let zero = Limits::new().max_string_len(0);
        assert_eq!(validate(b"\"\"", &zero), Ok(()));
        assert_eq!(validate(b"\"a\"", &zero), Err(JsonError::StringTooLong));
        // detected before the end of an unterminated long string
        assert_eq!(validate(b"\"abcdefgh", &l), Err(JsonError::StringTooLong));
    }

    #[test]
    fn validate_never_panics_on_any_short_input() {
        let alphabet: &[u8] = b"[]{}\":,1-0.e\\u \xc3";
        let k = alphabet.len();
        let mut buf = [0u8; 5];
        let small = Limits::new().max_depth(2).max_items(1).max_string_len(1);
        for len in 0..=5usize {
            let total = k.pow(len as u32);
            for mut idx in 0..total {
                for slot in buf.iter_mut().take(len) {
                    *slot = alphabet[idx % k];
                    idx /= k;
                }
                let input = &buf[..len];
                let r = validate(input, &Limits::DEFAULT);
                let _ = validate(input, &small);
                if r.is_ok() {
                    // Anything we accept must round-trip through the views.
                    let v = Value::parse(input, &Limits::DEFAULT).expect("parse");
                    let _ = v.len();
                    let _ = v.get("a");
                    assert_eq!(value_len(v.raw()), Some(v.raw().len()));
                }
            }
        }
    }
}
