//! Token scanners: whitespace, strings and their escapes, numbers, literals,
//! keys; the length of a value in validated input.
//!
//! Shared by the validator, the views and unescaping.

use crate::wire::swar::{plain_run, plain_run_short};

use super::limits::JsonError;

/// JSON insignificant whitespace.
#[inline]
pub(super) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Index of the first non-whitespace byte at or after `pos` (or `input.len()`).
#[inline]
pub(crate) fn skip_ws(input: &[u8], mut pos: usize) -> usize {
    // Most JSON on the wire is compact: one test for a byte above space.
    if input.get(pos).is_some_and(|&b| b > b' ') {
        return pos;
    }
    while let Some(&b) = input.get(pos) {
        if !is_ws(b) {
            break;
        }
        pos += 1;
    }
    pos
}

/// Error to report when the input ends inside a token: `UnexpectedEnd` while
/// scanning a (possibly truncated) document, `complete_err` when the buffer is
/// known to be complete (unescaping a string's contents).
#[inline]
fn truncated(complete: bool, complete_err: JsonError) -> JsonError {
    if complete {
        complete_err
    } else {
        JsonError::UnexpectedEnd
    }
}

/// Value of one ASCII hex digit.
fn hex_val(b: u8) -> Option<u32> {
    crate::codec::hex_value(b).map(u32::from)
}

/// Parse the four hex digits at `bytes[at..at + 4]`; `esc` is the offset of the
/// escape's backslash (for errors).
fn hex4(bytes: &[u8], at: usize, esc: usize, complete: bool) -> Result<u32, JsonError> {
    let mut v = 0u32;
    for k in 0..4 {
        let Some(&b) = bytes.get(at + k) else {
            return Err(truncated(
                complete,
                JsonError::InvalidEscape { offset: esc },
            ));
        };
        let Some(d) = hex_val(b) else {
            return Err(JsonError::InvalidEscape { offset: esc });
        };
        v = (v << 4) | d;
    }
    Ok(v)
}

/// Decode the escape sequence whose backslash is at `bytes[i]`. Returns the
/// decoded char and the number of escaped bytes consumed (2, 6 or 12).
pub(super) fn decode_escape(
    bytes: &[u8],
    i: usize,
    complete: bool,
) -> Result<(char, usize), JsonError> {
    let Some(&e) = bytes.get(i + 1) else {
        return Err(truncated(complete, JsonError::InvalidEscape { offset: i }));
    };
    let c = match e {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let hi = hex4(bytes, i + 2, i, complete)?;
            return match hi {
                0xD800..=0xDBFF => match (bytes.get(i + 6), bytes.get(i + 7)) {
                    (Some(b'\\'), Some(b'u')) => {
                        let lo = hex4(bytes, i + 8, i + 6, complete)?;
                        if !(0xDC00..=0xDFFF).contains(&lo) {
                            return Err(JsonError::LoneSurrogate { offset: i });
                        }
                        let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                        match char::from_u32(cp) {
                            Some(c) => Ok((c, 12)),
                            None => Err(JsonError::LoneSurrogate { offset: i }),
                        }
                    }
                    (None, _) | (Some(b'\\'), None) => {
                        Err(truncated(complete, JsonError::LoneSurrogate { offset: i }))
                    }
                    _ => Err(JsonError::LoneSurrogate { offset: i }),
                },
                0xDC00..=0xDFFF => Err(JsonError::LoneSurrogate { offset: i }),
                _ => match char::from_u32(hi) {
                    Some(c) => Ok((c, 6)),
                    None => Err(JsonError::InvalidEscape { offset: i }),
                },
            };
        }
        _ => return Err(JsonError::InvalidEscape { offset: i }),
    };
    Ok((c, 2))
}

/// Decode one strictly valid UTF-8 sequence starting at `bytes[i]` (no
/// overlongs, no surrogates, at most U+10FFFF). Returns the char and its length.
pub(super) fn decode_utf8(
    bytes: &[u8],
    i: usize,
    complete: bool,
) -> Result<(char, usize), JsonError> {
    let bad = JsonError::InvalidUtf8 { offset: i };
    let Some(&b0) = bytes.get(i) else {
        return Err(truncated(complete, bad));
    };
    let (len, lo, hi): (usize, u8, u8) = match b0 {
        0x00..=0x7F => return Ok((char::from(b0), 1)),
        0xC2..=0xDF => (2, 0x80, 0xBF),
        0xE0 => (3, 0xA0, 0xBF),
        0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80, 0xBF),
        0xED => (3, 0x80, 0x9F),
        0xF0 => (4, 0x90, 0xBF),
        0xF1..=0xF3 => (4, 0x80, 0xBF),
        0xF4 => (4, 0x80, 0x8F),
        _ => return Err(bad),
    };
    // Payload bits of the lead byte: 5, 4 or 3 bits for lengths 2, 3, 4.
    let mut cp = u32::from(b0) & (0x7F >> len);
    for k in 1..len {
        let Some(&b) = bytes.get(i + k) else {
            return Err(truncated(complete, bad));
        };
        let (l, h) = if k == 1 { (lo, hi) } else { (0x80, 0xBF) };
        if b < l || b > h {
            return Err(bad);
        }
        cp = (cp << 6) | u32::from(b & 0x3F);
    }
    match char::from_u32(cp) {
        Some(c) => Ok((c, len)),
        None => Err(bad),
    }
}

/// Decode the next char of raw string contents `bytes` (complete buffer).
/// `None` at the end; `Err` on malformed contents.
pub(super) fn next_char(bytes: &[u8]) -> Option<Result<(char, usize), JsonError>> {
    let &b = bytes.first()?;
    Some(match b {
        b'\\' => decode_escape(bytes, 0, true),
        b'"' => Err(JsonError::UnexpectedByte { offset: 0 }),
        0x00..=0x1F => Err(JsonError::ControlCharacter { offset: 0 }),
        _ => decode_utf8(bytes, 0, true),
    })
}

/// Scan a string whose opening quote is at `input[pos]`; returns the offset
/// just past the closing quote.
///
/// On 64-bit targets the common case, plain ASCII up to the closing quote, is
/// inlined into the validator; escapes, non-ASCII and errors take
/// [`scan_string_slow`], which is all of it on smaller targets.
#[cfg_attr(target_pointer_width = "64", inline(always))]
pub(super) fn scan_string(input: &[u8], pos: usize, max_len: u32) -> Result<usize, JsonError> {
    let start = pos + 1;
    if cfg!(not(target_pointer_width = "64")) {
        // Small targets: one copy of the loop (flash).
        return scan_string_slow(input, pos, max_len);
    }
    let i = start + plain_run_short(input.get(start..).unwrap_or_default());
    if input.get(i) == Some(&b'"')
        && u64::try_from(i - start).is_ok_and(|n| n <= u64::from(max_len))
    {
        return Ok(i + 1);
    }
    scan_string_slow(input, pos, max_len)
}

/// [`scan_string`] for strings with escapes or non-ASCII text, and errors.
#[cfg_attr(target_pointer_width = "64", inline(never))]
fn scan_string_slow(input: &[u8], pos: usize, max_len: u32) -> Result<usize, JsonError> {
    let start = pos + 1;
    let mut i = start;
    loop {
        // Fast path over plain ASCII.
        i += plain_run(input.get(i..).unwrap_or_default());
        // `i - start` is the raw length so far (i >= start always).
        if u64::try_from(i - start).unwrap_or(u64::MAX) > u64::from(max_len) {
            return Err(JsonError::StringTooLong);
        }
        match input.get(i) {
            None => return Err(JsonError::UnexpectedEnd),
            Some(b'"') => return Ok(i + 1),
            Some(b'\\') => {
                let (_, n) = decode_escape(input, i, false)?;
                i += n;
            }
            Some(&b) if b < 0x20 => return Err(JsonError::ControlCharacter { offset: i }),
            Some(_) => {
                let (_, n) = decode_utf8(input, i, false)?;
                i += n;
            }
        }
    }
}

/// The byte at `input[i]` (`const`: the number grammar below also checks
/// `const` bounds, [`Number::literal`](super::Number::literal)).
#[inline]
const fn byte_at(input: &[u8], i: usize) -> Option<u8> {
    match input.split_at_checked(i) {
        Some((_, [b, ..])) => Some(*b),
        _ => None,
    }
}

/// Scan a number starting at `input[pos]`; returns the offset just past it.
/// The one definition of the JSON number grammar.
pub(super) const fn scan_number(input: &[u8], pos: usize) -> Result<usize, JsonError> {
    let mut i = pos;
    if let Some(b'-') = byte_at(input, i) {
        i += 1;
    }
    // Integer part: 0 | [1-9][0-9]*
    match byte_at(input, i) {
        None => return Err(JsonError::UnexpectedEnd),
        Some(b'0') => {
            i += 1;
            if let Some(b'0'..=b'9') = byte_at(input, i) {
                return Err(JsonError::InvalidNumber { offset: i });
            }
        }
        Some(b'1'..=b'9') => i = skip_digits(input, i + 1),
        Some(_) => return Err(JsonError::InvalidNumber { offset: i }),
    }
    // Fraction: . [0-9]+
    if let Some(b'.') = byte_at(input, i) {
        i = match require_digits(input, i + 1) {
            Ok(i) => i,
            Err(e) => return Err(e),
        };
    }
    // Exponent: [eE] [+-]? [0-9]+
    if let Some(b'e' | b'E') = byte_at(input, i) {
        i += 1;
        if let Some(b'+' | b'-') = byte_at(input, i) {
            i += 1;
        }
        i = match require_digits(input, i) {
            Ok(i) => i,
            Err(e) => return Err(e),
        };
    }
    Ok(i)
}

#[inline]
const fn skip_digits(input: &[u8], mut i: usize) -> usize {
    while let Some(b'0'..=b'9') = byte_at(input, i) {
        i += 1;
    }
    i
}

/// One or more digits at `input[i..]`.
const fn require_digits(input: &[u8], i: usize) -> Result<usize, JsonError> {
    match byte_at(input, i) {
        None => Err(JsonError::UnexpectedEnd),
        Some(b'0'..=b'9') => Ok(skip_digits(input, i + 1)),
        Some(_) => Err(JsonError::InvalidNumber { offset: i }),
    }
}

/// Match the literal `lit` at `input[pos..]`.
pub(super) fn scan_literal(input: &[u8], pos: usize, lit: &[u8]) -> Result<usize, JsonError> {
    for (k, &want) in lit.iter().enumerate() {
        match input.get(pos + k) {
            None => return Err(JsonError::UnexpectedEnd),
            Some(&b) if b == want => {}
            Some(_) => return Err(JsonError::UnexpectedByte { offset: pos + k }),
        }
    }
    Ok(pos + lit.len())
}

/// Scan `"key" ws : ws` at `input[pos..]`; returns the offset just past the
/// key's closing quote and the offset of the value.
#[cfg_attr(target_pointer_width = "64", inline(always))]
#[cfg_attr(not(target_pointer_width = "64"), inline)]
pub(super) fn scan_key(
    input: &[u8],
    pos: usize,
    max_len: u32,
) -> Result<(usize, usize), JsonError> {
    match input.get(pos) {
        None => return Err(JsonError::UnexpectedEnd),
        Some(b'"') => {}
        Some(_) => return Err(JsonError::UnexpectedByte { offset: pos }),
    }
    let key_end = scan_string(input, pos, max_len)?;
    let pos = skip_ws(input, key_end);
    match input.get(pos) {
        None => Err(JsonError::UnexpectedEnd),
        Some(b':') => Ok((key_end, skip_ws(input, pos + 1))),
        Some(_) => Err(JsonError::UnexpectedByte { offset: pos }),
    }
}

// ---------------------------------------------------------------------------
// Navigation of validated input
// ---------------------------------------------------------------------------

/// Length (quotes included) of the string starting at `input[0]`.
pub(super) fn string_len(input: &[u8]) -> Option<usize> {
    if input.first() != Some(&b'"') {
        return None;
    }
    let mut i = 1;
    loop {
        i += plain_run(input.get(i..)?);
        match *input.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// Byte length of the JSON value that starts at `input[0]`.
///
/// `input` must start with the first byte of a value of *already validated*
/// JSON (anything may follow it). Nested arrays/objects are skipped
/// iteratively by counting brackets outside strings, so this uses constant
/// stack space at any depth. On malformed input it returns `None` or some
/// length within `input`; it never panics or loops forever.
#[must_use]
pub fn value_len(input: &[u8]) -> Option<usize> {
    match *input.first()? {
        b'"' => string_len(input),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = 0;
            loop {
                match *input.get(i)? {
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    b'"' => {
                        i += string_len(input.get(i..)?)?;
                        continue;
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let n = input
                .iter()
                .position(|&b| is_ws(b) || matches!(b, b',' | b']' | b'}' | b':'))
                .unwrap_or(input.len());
            (n > 0).then_some(n)
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::wire::json::tests::nested;

    #[test]
    fn value_len_works() {
        assert_eq!(value_len(b"\"a\\\"b\" rest"), Some(6));
        assert_eq!(value_len(b"[1,[2],\"]\"] rest"), Some(11));
        assert_eq!(value_len(b"{\"}\":{}},"), Some(8));
        assert_eq!(value_len(b"123,"), Some(3));
        assert_eq!(value_len(b"true]"), Some(4));
        assert_eq!(value_len(b"-1.5e3"), Some(6));
    }

    /// Named `deep`: too slow for the Miri stage, which skips such tests.
    #[test]
    fn value_len_deep_nesting_is_constant_stack() {
        let deep = nested(100_000, "[", "]", "");
        assert_eq!(value_len(deep.as_bytes()), Some(200_000));
    }
}
