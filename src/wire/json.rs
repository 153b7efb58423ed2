//! Validating JSON scanner and zero-copy borrowed views.
//!
//! [`validate`] checks that a byte slice is exactly one strict RFC 8259 JSON
//! value, iteratively (no recursion on input depth), in O(n), without
//! allocating and without panicking, while enforcing [`Limits`].
//!
//! Once a frame is validated, [`Value`] gives cheap, copyable, borrowed views
//! into it: [`Value::get`], [`Value::members`], [`Value::items`] navigate
//! objects and arrays, [`JsonStr`] exposes string contents (still escaped) with
//! decoding helpers, and [`Number`] keeps number tokens as text with exact
//! integer accessors.
//!
//! [`unescape_in_place`] / [`unescape_str_in_place`] decode the raw contents of
//! a JSON string inside its own buffer; the serde deserializer in
//! `wire::de` uses them to borrow every `&str` from the frame.

use core::cmp::Ordering;
use core::fmt;

use crate::codec::Decimal;
use crate::wire::swar::plain_run;

/// Largest nesting depth the scanner can track (size of its container stack,
/// in bits). [`Limits::max_depth`] values above this are clamped to it.
pub const MAX_DEPTH: u16 = 256;

/// Limits the scanner enforces.
///
/// Defaults ([`Limits::DEFAULT`]): `max_depth` 32, `max_items` and
/// `max_string_len` unlimited (`u32::MAX`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Limits {
    /// Maximum nesting depth of arrays/objects (default 32; values above
    /// [`MAX_DEPTH`] are clamped to [`MAX_DEPTH`]). Depth of a scalar = 0,
    /// `[]` = 1, `[[]]` = 2.
    pub max_depth: u16,
    /// Maximum number of members in one object or items in one array
    /// (default `u32::MAX`, which means unlimited).
    pub max_items: u32,
    /// Maximum length in raw (escaped, as on the wire) bytes of one string,
    /// keys included, quotes excluded (default `u32::MAX`).
    pub max_string_len: u32,
}

impl Limits {
    /// The default limits: depth 32, unlimited items and string length.
    pub const DEFAULT: Limits = Limits {
        max_depth: 32,
        max_items: u32::MAX,
        max_string_len: u32::MAX,
    };

    /// Same as [`Limits::DEFAULT`].
    #[must_use]
    pub const fn new() -> Self {
        Self::DEFAULT
    }

    /// Set the maximum nesting depth (clamped to [`MAX_DEPTH`]).
    #[must_use]
    pub const fn max_depth(mut self, n: u16) -> Self {
        self.max_depth = if n > MAX_DEPTH { MAX_DEPTH } else { n };
        self
    }

    /// Set the maximum number of members/items of one object/array.
    #[must_use]
    pub const fn max_items(mut self, n: u32) -> Self {
        self.max_items = n;
        self
    }

    /// Set the maximum raw (escaped) length of one string, in bytes.
    #[must_use]
    pub const fn max_string_len(mut self, n: u32) -> Self {
        self.max_string_len = n;
        self
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Why a byte slice is not acceptable JSON.
///
/// Offsets are byte offsets into the slice that was scanned (for
/// [`unescape_in_place`], into the buffer it was given).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum JsonError {
    /// The input ended before the value was complete.
    #[error("unexpected end of input")]
    UnexpectedEnd,
    /// A byte that cannot appear at this position.
    #[error("unexpected byte at offset {}", Decimal::from(*.offset))]
    UnexpectedByte {
        /// Offset of the offending byte.
        offset: usize,
    },
    /// Something other than whitespace follows the value.
    #[error("trailing data at offset {}", Decimal::from(*.offset))]
    TrailingData {
        /// Offset of the first byte after the value and its whitespace.
        offset: usize,
    },
    /// A number that breaks the JSON number grammar.
    #[error("invalid number at offset {}", Decimal::from(*.offset))]
    InvalidNumber {
        /// Offset of the first byte that does not fit the grammar.
        offset: usize,
    },
    /// A backslash escape that is not one of the JSON escapes.
    #[error("invalid escape at offset {}", Decimal::from(*.offset))]
    InvalidEscape {
        /// Offset of the backslash.
        offset: usize,
    },
    /// A `\u` escape of a surrogate that is not part of a valid pair.
    #[error("lone surrogate at offset {}", Decimal::from(*.offset))]
    LoneSurrogate {
        /// Offset of the backslash of the surrogate escape.
        offset: usize,
    },
    /// A byte sequence that is not valid UTF-8 inside a string.
    #[error("invalid utf-8 at offset {}", Decimal::from(*.offset))]
    InvalidUtf8 {
        /// Offset of the first byte of the invalid sequence.
        offset: usize,
    },
    /// A raw control character (below 0x20) inside a string.
    #[error("control character at offset {}", Decimal::from(*.offset))]
    ControlCharacter {
        /// Offset of the control character.
        offset: usize,
    },
    /// Arrays/objects nest deeper than [`Limits::max_depth`].
    #[error("nesting too deep")]
    TooDeep,
    /// An array/object has more than [`Limits::max_items`] entries.
    #[error("too many items")]
    TooManyItems,
    /// A string is longer than [`Limits::max_string_len`] raw bytes.
    #[error("string too long")]
    StringTooLong,
}

impl JsonError {
    /// True for the three limit variants (`TooDeep`, `TooManyItems`,
    /// `StringTooLong`): the input may be valid JSON, just too big.
    #[must_use]
    pub fn is_limit(&self) -> bool {
        matches!(
            self,
            JsonError::TooDeep | JsonError::TooManyItems | JsonError::StringTooLong
        )
    }

    /// The byte offset carried by the error, if any.
    #[must_use]
    pub fn offset(&self) -> Option<usize> {
        match *self {
            JsonError::UnexpectedByte { offset }
            | JsonError::TrailingData { offset }
            | JsonError::InvalidNumber { offset }
            | JsonError::InvalidEscape { offset }
            | JsonError::LoneSurrogate { offset }
            | JsonError::InvalidUtf8 { offset }
            | JsonError::ControlCharacter { offset } => Some(offset),
            JsonError::UnexpectedEnd
            | JsonError::TooDeep
            | JsonError::TooManyItems
            | JsonError::StringTooLong => None,
        }
    }
}

// ---------------------------------------------------------------------------
// Low-level lexing helpers (shared by the validator, the views and unescaping)
// ---------------------------------------------------------------------------

/// JSON insignificant whitespace.
#[inline]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Index of the first non-whitespace byte at or after `pos` (or `input.len()`).
#[inline]
fn skip_ws(input: &[u8], mut pos: usize) -> usize {
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
#[inline]
fn hex_val(b: u8) -> Option<u32> {
    match b {
        b'0'..=b'9' => Some(u32::from(b - b'0')),
        b'a'..=b'f' => Some(u32::from(b - b'a' + 10)),
        b'A'..=b'F' => Some(u32::from(b - b'A' + 10)),
        _ => None,
    }
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
fn decode_escape(bytes: &[u8], i: usize, complete: bool) -> Result<(char, usize), JsonError> {
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
fn decode_utf8(bytes: &[u8], i: usize, complete: bool) -> Result<(char, usize), JsonError> {
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
fn next_char(bytes: &[u8]) -> Option<Result<(char, usize), JsonError>> {
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
fn scan_string(input: &[u8], pos: usize, max_len: u32) -> Result<usize, JsonError> {
    let start = pos + 1;
    if cfg!(not(target_pointer_width = "64")) {
        // Small targets: one copy of the loop (flash).
        return scan_string_slow(input, pos, max_len);
    }
    let i = start + plain_run(input.get(start..).unwrap_or_default());
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
/// `const` bounds, [`Number::literal`]).
#[inline]
const fn byte_at(input: &[u8], i: usize) -> Option<u8> {
    match input.split_at_checked(i) {
        Some((_, [b, ..])) => Some(*b),
        _ => None,
    }
}

/// Scan a number starting at `input[pos]`; returns the offset just past it.
/// The one definition of the JSON number grammar.
const fn scan_number(input: &[u8], pos: usize) -> Result<usize, JsonError> {
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
fn scan_literal(input: &[u8], pos: usize, lit: &[u8]) -> Result<usize, JsonError> {
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
fn scan_key(input: &[u8], pos: usize, max_len: u32) -> Result<(usize, usize), JsonError> {
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
// Validator
// ---------------------------------------------------------------------------

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
    // The outlining validator, its outline unused: one copy of the
    // validation loop in a firmware image instead of two.
    validate_outlined(input, limits, &mut Outline::new())
}

/// [`validate`], also recording the [`Outline`] of a top-level object.
pub(crate) fn validate_outlined(
    input: &[u8],
    limits: &Limits,
    outline: &mut Outline,
) -> Result<(), JsonError> {
    *outline = Outline::new();
    if limits.max_items == u32::MAX {
        run_validate(input, limits, None, outline)
    } else {
        validate_counting(input, limits, outline)
    }
}

#[inline(never)]
fn validate_counting(
    input: &[u8],
    limits: &Limits,
    outline: &mut Outline,
) -> Result<(), JsonError> {
    let mut counts = [0u32; MAX_DEPTH as usize];
    run_validate(input, limits, Some(&mut counts), outline)
}

/// Members recorded by an [`Outline`] (of the top-level object and of the
/// objects that are its members' values).
const OUTLINE_MEMBERS: usize = 16;

/// One recorded member: offsets into the validated input.
#[derive(Clone, Copy, Debug, Default)]
struct OutlineMember {
    /// Index of the depth-1 member whose value holds this one (depth 2), or
    /// `u8::MAX` (depth 1).
    parent: u8,
    /// Key contents (inside the quotes).
    key: (u32, u32),
    value: (u32, u32),
}

/// The first two levels of members of a validated top-level object, found
/// by the validation pass itself, so the envelope and `params` can be read
/// without walking the frame again. Up to 16 members; past that (or for
/// anything but a top-level object) it is incomplete and readers walk the
/// JSON as usual.
#[derive(Clone, Debug)]
pub(crate) struct Outline {
    members: [OutlineMember; OUTLINE_MEMBERS],
    len: u8,
    /// The last depth-1 member (parent of depth-2 members), if open.
    top: Option<u8>,
    /// Members recorded but whose value has not ended, per depth 1 and 2.
    open: [Option<u8>; 2],
    complete: bool,
}

impl Outline {
    pub(crate) const fn new() -> Self {
        Outline {
            members: [OutlineMember {
                parent: 0,
                key: (0, 0),
                value: (0, 0),
            }; OUTLINE_MEMBERS],
            len: 0,
            top: None,
            open: [None, None],
            complete: true,
        }
    }

    /// The members of the top-level object (`parent` `None`) or of the
    /// object that is the value of a top-level member at `value` (its
    /// offsets in `input`); `None` if the outline is incomplete or has no
    /// such member.
    pub(crate) fn members<'a>(
        &self,
        input: &'a [u8],
        parent: Option<core::ops::Range<usize>>,
    ) -> Option<impl Iterator<Item = (JsonStr<'a>, Value<'a>)> + use<'_, 'a>> {
        if !self.complete {
            return None;
        }
        let recorded = self.members.get(..usize::from(self.len))?;
        let parent = match parent {
            None => u8::MAX,
            Some(r) => {
                let at = recorded.iter().position(|m| {
                    m.parent == u8::MAX
                        && (m.value.0 as usize, m.value.1 as usize) == (r.start, r.end)
                })?;
                u8::try_from(at).ok()?
            }
        };
        Some(
            recorded
                .iter()
                .filter(move |m| m.parent == parent)
                .filter_map(move |m| {
                    let key = input.get(m.key.0 as usize..m.key.1 as usize)?;
                    let value = input.get(m.value.0 as usize..m.value.1 as usize)?;
                    Some((JsonStr { raw: key }, Value { raw: value }))
                }),
        )
    }
}

/// What the validator tells the outline: members of objects at nesting
/// depth 1 and 2, and where values end.
impl Outline {
    /// A member of an object at `depth` (1: the top-level object's): its
    /// key at `key..key_end` (quotes included), its value from `value`.
    #[inline]
    fn member(&mut self, depth: usize, key: usize, key_end: usize, value: usize) {
        if depth > 2 || !self.complete {
            return;
        }
        let parent = if depth == 1 {
            u8::MAX
        } else {
            match self.top {
                Some(t) if self.open[0] == Some(t) => t,
                // Members of an object that is not a top-level member's
                // value (the top level is an array): not outlined.
                _ => {
                    self.complete = false;
                    return;
                }
            }
        };
        let (Ok(k0), Ok(k1), Ok(v0)) = (
            u32::try_from(key + 1),
            u32::try_from(key_end.saturating_sub(1)),
            u32::try_from(value),
        ) else {
            self.complete = false;
            return;
        };
        let index = self.len;
        let Some(slot) = self.members.get_mut(usize::from(index)) else {
            self.complete = false;
            return;
        };
        *slot = OutlineMember {
            parent,
            key: (k0, k1),
            value: (v0, v0),
        };
        self.len += 1;
        if depth == 1 {
            self.top = Some(index);
        }
        if let Some(open) = self.open.get_mut(depth - 1) {
            *open = Some(index);
        }
    }

    /// A value inside a container at `depth` ended just before `pos`.
    #[inline]
    fn value_end(&mut self, depth: usize, pos: usize) {
        if depth == 0 || depth > 2 {
            return;
        }
        let Some(open) = self.open.get_mut(depth - 1) else {
            return;
        };
        if let Some(index) = open.take()
            && let Some(m) = self.members.get_mut(usize::from(index))
        {
            match u32::try_from(pos) {
                Ok(end) => m.value.1 = end,
                Err(_) => self.complete = false,
            }
        }
    }
}

fn run_validate(
    input: &[u8],
    limits: &Limits,
    mut counts: Counts<'_>,
    rec: &mut Outline,
) -> Result<(), JsonError> {
    let max_depth = usize::from(if limits.max_depth > MAX_DEPTH {
        MAX_DEPTH
    } else {
        limits.max_depth
    });
    let max_str = limits.max_string_len;
    let max_items = limits.max_items;
    // Bit `d` set = the container at level `d` (0-based) is an object.
    let mut stack = [0u8; STACK_BYTES];
    let mut depth: usize = 0;
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
                let is_obj = b == b'{';
                set_bit(&mut stack, depth, is_obj);
                depth += 1;
                pos = skip_ws(input, pos + 1);
                let close = if is_obj { b'}' } else { b']' };
                match input.get(pos) {
                    None => return Err(JsonError::UnexpectedEnd),
                    Some(&c) if c == close => {
                        // Empty container: it is a complete value.
                        pos += 1;
                        depth -= 1;
                    }
                    Some(_) => {
                        count_first(&mut counts, depth - 1, max_items)?;
                        if is_obj {
                            let (key_end, value) = scan_key(input, pos, max_str)?;
                            rec.member(depth, pos, key_end, value);
                            pos = value;
                        }
                        continue;
                    }
                }
            }
            b'"' => pos = scan_string(input, pos, max_str)?,
            b'-' | b'0'..=b'9' => pos = scan_number(input, pos)?,
            b't' => pos = scan_literal(input, pos, b"true")?,
            b'f' => pos = scan_literal(input, pos, b"false")?,
            b'n' => pos = scan_literal(input, pos, b"null")?,
            _ => return Err(JsonError::UnexpectedByte { offset: pos }),
        }

        // A value just ended at `pos`: close containers / find the next one.
        loop {
            rec.value_end(depth, pos);
            pos = skip_ws(input, pos);
            if depth == 0 {
                return if pos < input.len() {
                    Err(JsonError::TrailingData { offset: pos })
                } else {
                    Ok(())
                };
            }
            let is_obj = get_bit(&stack, depth - 1);
            match input.get(pos) {
                None => return Err(JsonError::UnexpectedEnd),
                Some(b',') => {
                    count_next(&mut counts, depth - 1, max_items)?;
                    pos = skip_ws(input, pos + 1);
                    if is_obj {
                        let (key_end, value) = scan_key(input, pos, max_str)?;
                        rec.member(depth, pos, key_end, value);
                        pos = value;
                    }
                    break;
                }
                Some(b']') if !is_obj => {
                    pos += 1;
                    depth -= 1;
                }
                Some(b'}') if is_obj => {
                    pos += 1;
                    depth -= 1;
                }
                Some(_) => return Err(JsonError::UnexpectedByte { offset: pos }),
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Navigation of validated input
// ---------------------------------------------------------------------------

/// Length (quotes included) of the string starting at `input[0]`.
fn string_len(input: &[u8]) -> Option<usize> {
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
    raw: &'a [u8],
}

impl<'a> Value<'a> {
    /// Validate `input` with [`validate`] and return a view of the value with
    /// surrounding whitespace trimmed.
    ///
    /// # Errors
    ///
    /// Whatever [`validate`] reports.
    pub fn parse(input: &'a [u8], limits: &Limits) -> Result<Value<'a>, JsonError> {
        validate(input, limits)?;
        let start = skip_ws(input, 0);
        let trailing = input.iter().rev().take_while(|&&b| is_ws(b)).count();
        let end = input.len().saturating_sub(trailing).max(start);
        let raw = input.get(start..end).ok_or(JsonError::UnexpectedEnd)?;
        Ok(Value { raw })
    }

    /// A view of bytes the caller already validated (surrounding whitespace
    /// trimmed), without scanning them again. Navigation on bytes that are
    /// not valid JSON never panics; it just finds nothing.
    #[must_use]
    pub fn trusted(input: &'a [u8]) -> Value<'a> {
        // Spans cut from a validated frame have no whitespace around them.
        if let ([first, ..], [.., last]) = (input, input)
            && !is_ws(*first)
            && !is_ws(*last)
        {
            return Value { raw: input };
        }
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

    /// Iterator over the `(key, value)` members of an object, in order
    /// (duplicates included); empty if this is not an object.
    #[must_use]
    pub fn members(&self) -> Members<'a> {
        let rest = match self.raw.first() {
            Some(b'{') => self.raw.get(1..).unwrap_or_default(),
            _ => &[],
        };
        Members { rest, first: true }
    }

    /// Iterator over the items of an array; empty if this is not an array.
    #[must_use]
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

// ---------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------

/// A JSON number token (validated grammar), kept as text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Number<'a> {
    raw: &'a str,
}

/// Decomposed number text: `-? int (. frac)? (e exp)?`.
struct Parts<'a> {
    neg: bool,
    int: &'a [u8],
    frac: &'a [u8],
    /// Exponent, saturated to the i64 range.
    exp: i64,
}

/// Length as i64 (saturating; lengths never get near `i64::MAX` in practice).
#[inline]
fn len_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl<'a> Number<'a> {
    /// Check that `text` is exactly one JSON number token and wrap it.
    #[must_use]
    pub fn parse(text: &'a str) -> Option<Number<'a>> {
        match scan_number(text.as_bytes(), 0) {
            Ok(end) if end == text.len() => Some(Number { raw: text }),
            _ => None,
        }
    }

    /// `text` as a number, for `const` bounds: `Number::literal("0.5")`.
    ///
    /// # Panics
    ///
    /// If `text` is not exactly one JSON number token; in a `const` that is
    /// a compile error.
    #[must_use]
    #[allow(
        clippy::panic,
        reason = "a configuration error, caught at compile time in const use"
    )]
    pub const fn literal(text: &'a str) -> Number<'a> {
        if !is_number_text(text.as_bytes()) {
            panic!("not a JSON number");
        }
        Number { raw: text }
    }

    /// The number's text, exactly as in the input.
    #[must_use]
    pub fn raw(&self) -> &'a str {
        self.raw
    }

    /// True when the text has no fraction and no exponent.
    #[must_use]
    pub fn is_integer_literal(&self) -> bool {
        !self.raw.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
    }

    fn parts(&self) -> Parts<'a> {
        let mut s = self.raw.as_bytes();
        let neg = s.first() == Some(&b'-');
        if neg {
            s = s.get(1..).unwrap_or_default();
        }
        let int_len = s.iter().take_while(|b| b.is_ascii_digit()).count();
        let (int, mut s) = s.split_at_checked(int_len).unwrap_or((s, &[]));
        let mut frac: &[u8] = &[];
        if let Some(rest) = s.strip_prefix(b".") {
            let n = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            let (f, r) = rest.split_at_checked(n).unwrap_or((rest, &[]));
            frac = f;
            s = r;
        }
        let mut exp: i64 = 0;
        if let Some(rest) = s.strip_prefix(b"e").or_else(|| s.strip_prefix(b"E")) {
            let (eneg, digits) = match rest.first() {
                Some(b'-') => (true, rest.get(1..).unwrap_or_default()),
                Some(b'+') => (false, rest.get(1..).unwrap_or_default()),
                _ => (false, rest),
            };
            for &d in digits.iter().take_while(|b| b.is_ascii_digit()) {
                exp = exp.saturating_mul(10).saturating_add(i64::from(d - b'0'));
            }
            if eneg {
                exp = -exp;
            }
        }
        Parts {
            neg,
            int,
            frac,
            exp,
        }
    }

    /// JSON Schema "integer": the mathematical value is integral (`1`, `-0`,
    /// `1.0`, `1e2`, `2.50e1`, `100e-2` are; `1.5`, `1e-1` are not). Decided
    /// exactly from the text, for any length or exponent.
    #[must_use]
    pub fn is_integral(&self) -> bool {
        let p = self.parts();
        let frac_tz = p.frac.iter().rev().take_while(|&&d| d == b'0').count();
        let frac_sig = p.frac.len() - frac_tz;
        if frac_sig > 0 {
            // Last non-zero digit is 10^-frac_sig: needs exp >= frac_sig.
            return p.exp >= len_i64(frac_sig);
        }
        let int_tz = p.int.iter().rev().take_while(|&&d| d == b'0').count();
        if int_tz == p.int.len() {
            return true; // the value is zero
        }
        // Last non-zero digit is 10^int_tz.
        p.exp.saturating_add(len_i64(int_tz)) >= 0
    }

    /// Sign and magnitude of an integral value, if the magnitude fits u128.
    fn integral_magnitude(&self) -> Option<(bool, u128)> {
        if !self.is_integral() {
            return None;
        }
        let p = self.parts();
        let ndigits = len_i64(p.int.len()).saturating_add(len_i64(p.frac.len()));
        // value = digits(int ++ frac) * 10^scale
        let scale = p.exp.saturating_sub(len_i64(p.frac.len()));
        let keep = if scale < 0 {
            ndigits.saturating_add(scale).max(0)
        } else {
            ndigits
        };
        let keep = usize::try_from(keep).unwrap_or(usize::MAX);
        let mut mag: u128 = 0;
        for &d in p.int.iter().chain(p.frac.iter()).take(keep) {
            mag = mag.checked_mul(10)?.checked_add(u128::from(d - b'0'))?;
        }
        if mag != 0 {
            // Terminates: a non-zero u128 overflows after at most 39 steps.
            let mut s = scale;
            while s > 0 {
                mag = mag.checked_mul(10)?;
                s -= 1;
            }
        }
        Some((p.neg, mag))
    }

    /// The value as i64: `Some` iff integral and in range (exact, also for
    /// forms like `1.0` or `1e2`).
    #[must_use]
    pub fn as_i64(&self) -> Option<i64> {
        // Fast path (64-bit; flash on small targets): a plain integer
        // literal of up to 18 digits fits as is.
        let digits = self.raw.strip_prefix('-').unwrap_or(self.raw);
        if cfg!(target_pointer_width = "64")
            && (1..=18).contains(&digits.len())
            && digits.bytes().all(|b| b.is_ascii_digit())
        {
            let mut mag: i64 = 0;
            for b in digits.bytes() {
                mag = mag * 10 + i64::from(b - b'0');
            }
            return Some(if digits.len() < self.raw.len() {
                -mag
            } else {
                mag
            });
        }
        i64::try_from(self.as_i128()?).ok()
    }

    /// The value as u64: `Some` iff integral and in range (`-0` gives 0).
    #[must_use]
    pub fn as_u64(&self) -> Option<u64> {
        u64::try_from(self.as_u128()?).ok()
    }

    /// The value as i128: `Some` iff integral and in range.
    #[must_use]
    pub fn as_i128(&self) -> Option<i128> {
        let (neg, mag) = self.integral_magnitude()?;
        if neg {
            if mag == 1u128 << 127 {
                Some(i128::MIN)
            } else {
                i128::try_from(mag).ok().map(|v| -v)
            }
        } else {
            i128::try_from(mag).ok()
        }
    }

    /// The value as u128: `Some` iff integral and in range (`-0` gives 0).
    #[must_use]
    pub fn as_u128(&self) -> Option<u128> {
        let (neg, mag) = self.integral_magnitude()?;
        if neg && mag != 0 { None } else { Some(mag) }
    }

    /// The numbers compared by their exact decimal values (`1.0 == 1`,
    /// `-0 == 0`, `1e2 == 100`, `0.1 < 0.10000000000000000001`), from the
    /// text alone: no floating point, any number of digits. Exponents are
    /// exact up to ±9.2e18; beyond that they saturate.
    #[must_use]
    pub fn cmp_exact(&self, other: &Number<'_>) -> Ordering {
        let (a, b) = (Exact::of(self), Exact::of(other));
        match (a.zero, b.zero) {
            (true, true) => return Ordering::Equal,
            (true, false) => {
                return if b.neg {
                    Ordering::Greater
                } else {
                    Ordering::Less
                };
            }
            (false, true) => {
                return if a.neg {
                    Ordering::Less
                } else {
                    Ordering::Greater
                };
            }
            (false, false) => {}
        }
        if a.neg != b.neg {
            return if a.neg {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let magnitude = a.point.cmp(&b.point).then_with(|| {
            let (mut x, mut y) = (a.digits(), b.digits());
            loop {
                match (x.next(), y.next()) {
                    (Some(p), Some(q)) if p == q => {}
                    (Some(p), Some(q)) => return p.cmp(&q),
                    // The longer one is bigger iff it has a non-zero digit left.
                    (Some(p), None) => {
                        return if p != b'0' || x.any(|d| d != b'0') {
                            Ordering::Greater
                        } else {
                            Ordering::Equal
                        };
                    }
                    (None, Some(q)) => {
                        return if q != b'0' || y.any(|d| d != b'0') {
                            Ordering::Less
                        } else {
                            Ordering::Equal
                        };
                    }
                    (None, None) => return Ordering::Equal,
                }
            }
        });
        if a.neg {
            magnitude.reverse()
        } else {
            magnitude
        }
    }

    /// The nearest f64 (overflow gives ±infinity, underflow ±0).
    ///
    /// This links the core library's float parser (about 16 KB of flash on
    /// Cortex-M); picomcp itself never calls it unless a tool's argument
    /// type has a float field.
    #[must_use]
    pub fn as_f64(&self) -> f64 {
        self.raw.parse::<f64>().unwrap_or(f64::NAN)
    }

    /// The nearest f32 (overflow gives ±infinity, underflow ±0).
    #[must_use]
    pub fn as_f32(&self) -> f32 {
        self.raw.parse::<f32>().unwrap_or(f32::NAN)
    }
}

/// `bytes` is exactly one JSON number token.
const fn is_number_text(bytes: &[u8]) -> bool {
    matches!(scan_number(bytes, 0), Ok(n) if n == bytes.len())
}

/// A number's value as `0.DIGITS × 10^point` (significant digits from the
/// first non-zero one), for exact comparison.
struct Exact<'a> {
    neg: bool,
    zero: bool,
    /// The significant digits: the rest of `int` ++ `frac` after `skip`.
    int: &'a [u8],
    frac: &'a [u8],
    skip: usize,
    point: i64,
}

impl<'a> Exact<'a> {
    fn of(n: &Number<'a>) -> Exact<'a> {
        let p = n.parts();
        let lead_int = p.int.iter().take_while(|&&d| d == b'0').count();
        let lead = if lead_int == p.int.len() {
            lead_int + p.frac.iter().take_while(|&&d| d == b'0').count()
        } else {
            lead_int
        };
        let total = p.int.len() + p.frac.len();
        Exact {
            neg: p.neg,
            zero: lead == total,
            int: p.int,
            frac: p.frac,
            skip: lead,
            point: len_i64(p.int.len())
                .saturating_sub(len_i64(lead))
                .saturating_add(p.exp),
        }
    }

    fn digits(&self) -> impl Iterator<Item = u8> + 'a {
        self.int
            .iter()
            .chain(self.frac.iter())
            .skip(self.skip)
            .copied()
    }
}

impl fmt::Display for Number<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.raw)
    }
}

// ---------------------------------------------------------------------------
// Strings
// ---------------------------------------------------------------------------

/// The raw (still escaped, validated) contents of a JSON string, WITHOUT the
/// quotes. Equality compares the raw bytes (use [`JsonStr::eq_str`] to compare
/// decoded text).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonStr<'a> {
    raw: &'a [u8],
}

impl<'a> JsonStr<'a> {
    /// Wrap raw string contents (bytes between the quotes) after checking
    /// that they are valid (escapes, surrogates, UTF-8, no raw control
    /// characters or unescaped quotes).
    ///
    /// # Errors
    ///
    /// The first malformed escape, surrogate, UTF-8 sequence, control
    /// character or unescaped quote, with its offset in `raw`.
    pub fn new(raw: &'a [u8]) -> Result<JsonStr<'a>, JsonError> {
        let mut rest = raw;
        let mut off = 0usize;
        while let Some(step) = next_char(rest) {
            match step {
                Ok((_, n)) => {
                    rest = rest.get(n..).unwrap_or_default();
                    off += n;
                }
                Err(e) => return Err(shift_offset(e, off)),
            }
        }
        Ok(JsonStr { raw })
    }

    /// The escaped bytes between the quotes.
    #[must_use]
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The contents as `&str` when there is no backslash (zero-copy fast
    /// path); `None` if decoding is needed.
    #[must_use]
    pub fn as_plain(&self) -> Option<&'a str> {
        if self.raw.contains(&b'\\') {
            return None;
        }
        core::str::from_utf8(self.raw).ok()
    }

    /// Iterator over the decoded chars (surrogate pairs joined). Stops
    /// (without panicking) at malformed contents.
    #[must_use]
    pub fn chars(&self) -> Chars<'a> {
        Chars { rest: self.raw }
    }

    /// Decoded content equals `s` (no buffer needed).
    #[must_use]
    #[inline]
    pub fn eq_str(&self, s: &str) -> bool {
        // An escape is longer than what it decodes to, so the raw text is
        // never shorter than the decoded one: a shorter raw text cannot be
        // equal, and one of equal length only if it has no escape at all.
        if self.raw.len() == s.len() {
            self.raw == s.as_bytes() && self.raw.iter().all(|&b| b != b'\\')
        } else {
            // Longer raw text: equal only through an escape, and its first
            // character is either an escape or the same byte.
            self.raw.len() > s.len()
                && (self.raw.first() == s.as_bytes().first() || self.raw.first() == Some(&b'\\'))
                && self.eq_str_escaped(s)
        }
    }

    /// [`Self::eq_str`] when the raw text is longer than `s`.
    #[inline(never)]
    fn eq_str_escaped(&self, s: &str) -> bool {
        self.raw.contains(&b'\\')
            && matches!(self.strip_decoded_prefix(s.as_bytes()), Some((true, true)))
    }

    /// Decoded content starts with `prefix`.
    #[must_use]
    pub fn starts_with(&self, prefix: &str) -> bool {
        if !self.raw.contains(&b'\\') {
            return self.raw.starts_with(prefix.as_bytes());
        }
        matches!(
            self.strip_decoded_prefix(prefix.as_bytes()),
            Some((_, true))
        )
    }

    /// Walk the decoded text against `want`. Returns `(contents exhausted,
    /// want exhausted)` at the first point where either is exhausted, or
    /// `None` on a mismatch or malformed contents.
    fn strip_decoded_prefix(&self, mut want: &[u8]) -> Option<(bool, bool)> {
        let mut rest = self.raw;
        loop {
            if rest.is_empty() || want.is_empty() {
                return Some((rest.is_empty(), want.is_empty()));
            }
            let (c, n) = next_char(rest)?.ok()?;
            let mut tmp = [0u8; 4];
            want = want.strip_prefix(c.encode_utf8(&mut tmp).as_bytes())?;
            rest = rest.get(n..)?;
        }
    }

    /// Number of decoded Unicode scalar values (for minLength/maxLength).
    #[must_use]
    pub fn char_count(&self) -> usize {
        match self.as_plain() {
            Some(s) => s.chars().count(),
            None => self.chars().count(),
        }
    }

    /// Decoded length in UTF-8 bytes.
    #[must_use]
    pub fn decoded_len(&self) -> usize {
        if !self.raw.contains(&b'\\') {
            return self.raw.len();
        }
        self.chars().map(char::len_utf8).sum()
    }

    /// Decode into `buf` and return the decoded text; `None` if `buf` is too
    /// small (see [`JsonStr::decoded_len`]) or the contents are malformed.
    #[must_use]
    pub fn decode_into<'b>(&self, buf: &'b mut [u8]) -> Option<&'b str> {
        let mut w = 0usize;
        let mut rest = self.raw;
        while !rest.is_empty() {
            let run = rest.iter().position(|&b| b == b'\\').unwrap_or(rest.len());
            if run > 0 {
                let (plain, after) = rest.split_at_checked(run)?;
                // Both slices have length `run`, so copy_from_slice cannot panic.
                buf.get_mut(w..w + run)?.copy_from_slice(plain);
                w += run;
                rest = after;
                continue;
            }
            let (c, n) = decode_escape(rest, 0, true).ok()?;
            let mut tmp = [0u8; 4];
            let enc = c.encode_utf8(&mut tmp).as_bytes();
            buf.get_mut(w..w + enc.len())?.copy_from_slice(enc);
            w += enc.len();
            rest = rest.get(n..)?;
        }
        core::str::from_utf8(buf.get(..w)?).ok()
    }
}

impl fmt::Display for JsonStr<'_> {
    /// Writes the decoded text (stops quietly at malformed contents).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write as _;
        let mut rest = self.raw;
        while !rest.is_empty() {
            let run = rest.iter().position(|&b| b == b'\\').unwrap_or(rest.len());
            if run > 0 {
                let (plain, after) = rest.split_at_checked(run).unwrap_or((rest, &[]));
                match core::str::from_utf8(plain) {
                    Ok(s) => f.write_str(s)?,
                    Err(e) => {
                        let good = plain.get(..e.valid_up_to()).unwrap_or_default();
                        f.write_str(core::str::from_utf8(good).unwrap_or_default())?;
                        return Ok(());
                    }
                }
                rest = after;
                continue;
            }
            match decode_escape(rest, 0, true) {
                Ok((c, n)) => {
                    f.write_char(c)?;
                    rest = rest.get(n..).unwrap_or_default();
                }
                Err(_) => return Ok(()),
            }
        }
        Ok(())
    }
}

/// Iterator over the decoded chars of a [`JsonStr`]; see [`JsonStr::chars`].
#[derive(Clone, Debug)]
pub struct Chars<'a> {
    rest: &'a [u8],
}

impl Iterator for Chars<'_> {
    type Item = char;

    fn next(&mut self) -> Option<char> {
        match next_char(self.rest) {
            Some(Ok((c, n))) => {
                self.rest = self.rest.get(n..).unwrap_or_default();
                Some(c)
            }
            _ => {
                self.rest = &[];
                None
            }
        }
    }
}

/// Add `by` to the offset carried by `e`.
fn shift_offset(e: JsonError, by: usize) -> JsonError {
    match e {
        JsonError::UnexpectedByte { offset } => JsonError::UnexpectedByte {
            offset: offset + by,
        },
        JsonError::TrailingData { offset } => JsonError::TrailingData {
            offset: offset + by,
        },
        JsonError::InvalidNumber { offset } => JsonError::InvalidNumber {
            offset: offset + by,
        },
        JsonError::InvalidEscape { offset } => JsonError::InvalidEscape {
            offset: offset + by,
        },
        JsonError::LoneSurrogate { offset } => JsonError::LoneSurrogate {
            offset: offset + by,
        },
        JsonError::InvalidUtf8 { offset } => JsonError::InvalidUtf8 {
            offset: offset + by,
        },
        JsonError::ControlCharacter { offset } => JsonError::ControlCharacter {
            offset: offset + by,
        },
        other => other,
    }
}

/// Unescape the raw contents of a JSON string (the bytes between the quotes)
/// in place. Returns the decoded length `n`; `buf[..n]` is then valid UTF-8
/// (bytes after `n` are left over from the input).
///
/// Validates as it goes (invalid or truncated escape, lone surrogate, raw
/// control character, unescaped `"`, bad UTF-8 → `Err`, with offsets into
/// `buf`), never panics, works on unvalidated input. On error `buf` may be
/// partially rewritten. Decoding never grows the text, so it fits in place.
///
/// # Errors
///
/// [`JsonError::InvalidEscape`], [`JsonError::LoneSurrogate`],
/// [`JsonError::ControlCharacter`], [`JsonError::UnexpectedByte`] (a raw `"`)
/// or [`JsonError::InvalidUtf8`], with the offset in `buf`.
pub fn unescape_in_place(buf: &mut [u8]) -> Result<usize, JsonError> {
    // Fast path: nothing to move before the first backslash.
    let mut r = 0usize;
    loop {
        r += plain_run(buf.get(r..).unwrap_or_default());
        match buf.get(r) {
            None => return Ok(r),
            Some(b'\\') => break,
            Some(b'"') => return Err(JsonError::UnexpectedByte { offset: r }),
            Some(&b) if b < 0x20 => return Err(JsonError::ControlCharacter { offset: r }),
            Some(&b) if b < 0x80 => r += 1,
            Some(_) => r += decode_utf8(buf, r, true)?.1,
        }
    }
    // Invariant: w <= r. Every escape of n raw bytes decodes to at most n
    // UTF-8 bytes (2 -> 1, 6 -> <= 3, 12 -> 4), so writes never overtake reads.
    let mut w = r;
    loop {
        let Some(&b) = buf.get(r) else {
            return Ok(w);
        };
        let n = match b {
            b'\\' => {
                let (c, n) = decode_escape(buf, r, true)?;
                let mut tmp = [0u8; 4];
                let enc = c.encode_utf8(&mut tmp).as_bytes();
                let dst = buf
                    .get_mut(w..w + enc.len())
                    .ok_or(JsonError::InvalidEscape { offset: r })?;
                // Same length on both sides, so this cannot panic.
                dst.copy_from_slice(enc);
                w += enc.len();
                r += n;
                continue;
            }
            b'"' => return Err(JsonError::UnexpectedByte { offset: r }),
            0x00..=0x1F => return Err(JsonError::ControlCharacter { offset: r }),
            0x20..=0x7F => 1,
            _ => decode_utf8(buf, r, true)?.1,
        };
        for _ in 0..n {
            if let Some(&byte) = buf.get(r)
                && let Some(slot) = buf.get_mut(w)
            {
                *slot = byte;
            }
            r += 1;
            w += 1;
        }
    }
}

/// Like [`unescape_in_place`], returning the decoded text as a `&str` slice
/// of `buf`.
///
/// # Errors
///
/// As [`unescape_in_place`].
pub fn unescape_str_in_place(buf: &mut [u8]) -> Result<&str, JsonError> {
    let n = unescape_in_place(buf)?;
    let decoded = buf.get(..n).ok_or(JsonError::UnexpectedEnd)?;
    core::str::from_utf8(decoded).map_err(|e| JsonError::InvalidUtf8 {
        offset: e.valid_up_to(),
    })
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::format;
    use std::string::String;
    use std::vec::Vec;

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

    fn val(s: &str) -> Value<'_> {
        Value::parse(s.as_bytes(), &Limits::DEFAULT).expect("valid")
    }

    fn nested(depth: usize, open: &str, close: &str, inner: &str) -> String {
        let mut s = String::new();
        for _ in 0..depth {
            s.push_str(open);
        }
        s.push_str(inner);
        for _ in 0..depth {
            s.push_str(close);
        }
        s
    }

    #[test]
    fn limits_builders() {
        assert_eq!(Limits::new(), Limits::DEFAULT);
        assert_eq!(Limits::default(), Limits::DEFAULT);
        assert_eq!(Limits::DEFAULT.max_depth, 32);
        assert_eq!(Limits::DEFAULT.max_items, u32::MAX);
        assert_eq!(Limits::DEFAULT.max_string_len, u32::MAX);
        let l = Limits::new().max_depth(1000).max_items(3).max_string_len(7);
        assert_eq!(l.max_depth, MAX_DEPTH);
        assert_eq!(l.max_items, 3);
        assert_eq!(l.max_string_len, 7);
        assert_eq!(Limits::new().max_depth(5).max_depth, 5);
    }

    #[test]
    fn error_helpers() {
        assert!(JsonError::TooDeep.is_limit());
        assert!(JsonError::TooManyItems.is_limit());
        assert!(JsonError::StringTooLong.is_limit());
        assert!(!JsonError::UnexpectedEnd.is_limit());
        assert!(!JsonError::UnexpectedByte { offset: 1 }.is_limit());
        assert_eq!(JsonError::InvalidUtf8 { offset: 4 }.offset(), Some(4));
        assert_eq!(JsonError::TooDeep.offset(), None);
        assert_eq!(
            format!("{}", JsonError::UnexpectedEnd),
            "unexpected end of input"
        );
        assert_eq!(
            format!("{}", JsonError::UnexpectedByte { offset: 3 }),
            "unexpected byte at offset 3"
        );
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

    /// A pseudo-random JSON value of bounded depth, with whitespace.
    fn rnd(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    fn random_json(x: &mut u64, depth: u32, out: &mut std::string::String) {
        let next = |x: &mut u64| rnd(x);
        let ws = ["", " ", "\n\t "];
        let pick = next(x) % if depth == 0 { 4 } else { 6 };
        match pick {
            0 => out.push_str(["null", "true", "-1.5e3", "0"][(next(x) % 4) as usize]),
            1 => out
                .push_str(["\"a\"", "\"\"", "\"x\\\"y\"", "\"\\u00e9}\""][(next(x) % 4) as usize]),
            2 | 3 => out.push_str("12"),
            4 => {
                out.push('[');
                for i in 0..next(x) % 4 {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(ws[(next(x) % 3) as usize]);
                    random_json(x, depth - 1, out);
                }
                out.push(']');
            }
            _ => {
                out.push('{');
                for i in 0..next(x) % 6 {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(ws[(next(x) % 3) as usize]);
                    out.push_str(
                        ["\"k\"", "\"name\"", "\"a\\\"b\"", "\"\""][(next(x) % 4) as usize],
                    );
                    out.push_str(ws[(next(x) % 3) as usize]);
                    out.push(':');
                    out.push_str(ws[(next(x) % 3) as usize]);
                    random_json(x, depth - 1, out);
                    out.push_str(ws[(next(x) % 3) as usize]);
                }
                out.push('}');
            }
        }
    }

    #[test]
    fn outline_agrees_with_walking() {
        let mut x: u64 = 0x5eed_1234_abcd_9876;
        let mut complete = 0;
        // Fewer under Miri, which is about a thousand times slower.
        let rounds = if cfg!(miri) { 60 } else { 3000 };
        for _ in 0..rounds {
            let mut text = std::string::String::from(" ");
            random_json(&mut x, 4, &mut text);
            text.push(' ');
            let input = text.as_bytes();
            let mut outline = Outline::new();
            validate_outlined(input, &Limits::DEFAULT, &mut outline).unwrap();
            let whole = Value::parse(input, &Limits::DEFAULT).unwrap();
            let Some(top) = outline.members(input, None) else {
                continue;
            };
            complete += 1;
            let top: std::vec::Vec<_> = top.collect();
            let want: std::vec::Vec<_> = whole.members().collect();
            assert_eq!(top, want, "{text}");
            for (_, v) in want {
                let start = v.raw().as_ptr() as usize - input.as_ptr() as usize;
                let children = outline
                    .members(input, Some(start..start + v.raw().len()))
                    .unwrap_or_else(|| panic!("{text}"));
                let got: std::vec::Vec<_> = children.collect();
                let want: std::vec::Vec<_> = v.members().collect();
                assert_eq!(got, want, "{text}");
            }
        }
        assert!(
            complete * 4 > rounds,
            "{complete} of {rounds} outlines complete"
        );
        // Past 16 members, or members under a top-level array: incomplete.
        let many = format!(
            "{{{}}}",
            (0..17)
                .map(|i| format!("\"k{i}\":1"))
                .collect::<std::vec::Vec<_>>()
                .join(",")
        );
        let mut o = Outline::new();
        validate_outlined(many.as_bytes(), &Limits::DEFAULT, &mut o).unwrap();
        assert!(o.members(many.as_bytes(), None).is_none());
        let batch = br#"[{"a":{"b":1}}]"#;
        validate_outlined(batch, &Limits::DEFAULT, &mut o).unwrap();
        assert!(o.members(batch, None).is_none());
    }

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

    #[test]
    fn numbers() {
        let n = |s: &'static str| Number::parse(s).expect(s);
        assert_eq!(Number::parse("01"), None);
        assert_eq!(Number::parse("1 "), None);
        assert_eq!(Number::parse(""), None);
        assert_eq!(Number::parse("+1"), None);
        assert!(n("12").is_integer_literal());
        assert!(!n("1.0").is_integer_literal());
        assert!(!n("1e2").is_integer_literal());
        assert!(!n("1E2").is_integer_literal());
        for s in [
            "1",
            "-0",
            "0",
            "1.0",
            "1e2",
            "2.50e1",
            "100e-2",
            "0.0",
            "0e-99999999999999999999",
            "-0.000e5",
            "1.5e1",
            "12345678901234567890123456789012345678901234567890",
            "1e999999999999999999999",
            "1.25e2",
            "10E-1",
        ] {
            assert!(n(s).is_integral(), "{s}");
        }
        for s in [
            "1.5",
            "1e-1",
            "0.1",
            "-2.5",
            "1.25e1",
            "1e-999999999999999999999",
            "101e-2",
        ] {
            assert!(!n(s).is_integral(), "{s}");
        }
        assert_eq!(n("0").as_i64(), Some(0));
        assert_eq!(n("-0").as_i64(), Some(0));
        assert_eq!(n("-0").as_u64(), Some(0));
        // Both sides of the 18-digit fast path.
        assert_eq!(
            n("999999999999999999").as_i64(),
            Some(999_999_999_999_999_999)
        );
        assert_eq!(
            n("-999999999999999999").as_i64(),
            Some(-999_999_999_999_999_999)
        );
        assert_eq!(
            n("1000000000000000000").as_i64(),
            Some(1_000_000_000_000_000_000)
        );
        assert_eq!(n("-42").as_i64(), Some(-42));
        assert_eq!(n("9223372036854775807").as_i64(), Some(i64::MAX));
        assert_eq!(n("9223372036854775808").as_i64(), None);
        assert_eq!(n("-9223372036854775808").as_i64(), Some(i64::MIN));
        assert_eq!(n("-9223372036854775809").as_i64(), None);
        assert_eq!(n("18446744073709551615").as_u64(), Some(u64::MAX));
        assert_eq!(n("18446744073709551616").as_u64(), None);
        assert_eq!(n("-1").as_u64(), None);
        assert_eq!(n("1.0").as_i64(), Some(1));
        assert_eq!(n("1e2").as_u64(), Some(100));
        assert_eq!(n("2.50e1").as_i64(), Some(25));
        assert_eq!(n("100e-2").as_i64(), Some(1));
        assert_eq!(n("-1.5e1").as_i64(), Some(-15));
        assert_eq!(n("0.00e400").as_i64(), Some(0));
        assert_eq!(n("9.223372036854775807e18").as_i64(), Some(i64::MAX));
        assert_eq!(n("9.223372036854775808e18").as_i64(), None);
        assert_eq!(n("1e19").as_u64(), Some(10_000_000_000_000_000_000));
        assert_eq!(n("1e20").as_u64(), None);
        assert_eq!(n("1e400").as_u64(), None);
        assert_eq!(n("1.5").as_i64(), None);
        assert_eq!(n("1.5").as_u64(), None);
        assert_eq!(
            n("170141183460469231731687303715884105727").as_i128(),
            Some(i128::MAX)
        );
        assert_eq!(
            n("-170141183460469231731687303715884105728").as_i128(),
            Some(i128::MIN)
        );
        assert_eq!(n("170141183460469231731687303715884105728").as_i128(), None);
        assert_eq!(
            n("340282366920938463463374607431768211455").as_u128(),
            Some(u128::MAX)
        );
        assert_eq!(n("340282366920938463463374607431768211456").as_u128(), None);
        assert_eq!(n("1.5").as_f64(), 1.5);
        assert_eq!(n("-2e-3").as_f64(), -0.002);
        assert_eq!(n("1e400").as_f64(), f64::INFINITY);
        assert_eq!(n("-1e400").as_f64(), f64::NEG_INFINITY);
        assert_eq!(n("1e-400").as_f64(), 0.0);
        assert_eq!(n("0.1").as_f32(), 0.1f32);
        assert_eq!(format!("{}", n("-1.5e3")), "-1.5e3");
    }

    #[test]
    fn numbers_compare_exactly_from_text() {
        use core::cmp::Ordering::{Equal, Greater, Less};
        fn n(t: &str) -> Number<'_> {
            Number::parse(t).unwrap()
        }
        let cmp = |a: &str, b: &str| n(a).cmp_exact(&n(b));
        for (a, b, want) in [
            ("0", "-0", Equal),
            ("0.000", "0e5", Equal),
            ("1", "1.0", Equal),
            ("1e2", "100", Equal),
            ("100e-2", "1", Equal),
            ("0.0012", "12e-4", Equal),
            ("1.5", "1.50", Equal),
            ("2", "1.5", Greater),
            ("-2", "-1.5", Less),
            ("-0.1", "0", Less),
            ("0", "1e-400", Less),
            ("0", "-1e-400", Greater),
            ("0.1", "0.10000000000000000001", Less),
            ("0.30000000000000001", "0.3", Greater),
            ("9007199254740993", "9007199254740992", Greater),
            ("18446744073709551616", "18446744073709551615", Greater),
            ("1e400", "9e399", Greater),
            ("-1e400", "-9e399", Less),
            ("123.45", "123.4", Greater),
            ("99", "100", Less),
            ("0.99", "1", Less),
            ("1e-7", "0.0000001", Equal),
        ] {
            assert_eq!(cmp(a, b), want, "{a} vs {b}");
            assert_eq!(cmp(b, a), want.reverse(), "{b} vs {a}");
        }
    }

    #[test]
    fn number_literal_is_const_and_checked() {
        const HALF: Number<'static> = Number::literal("0.5");
        assert_eq!(HALF.raw(), "0.5");
        for good in ["0", "-0", "1.5", "-1e-3", "2E+10", "18446744073709551616"] {
            assert!(is_number_text(good.as_bytes()), "{good}");
            assert_eq!(Number::literal(good).raw(), good);
        }
        for bad in [
            "", "-", "01", "1.", ".5", "1e", "1e+", "+1", "1 ", "0x1", "NaN", "--1",
        ] {
            assert!(!is_number_text(bad.as_bytes()), "{bad}");
            assert!(std::panic::catch_unwind(|| Number::literal(bad)).is_err());
        }
    }

    #[test]
    fn integral_forms_are_exact() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut values: Vec<i64> = std::vec![0, 1, -1, 42, -42, 10, 100, i64::MAX, i64::MIN];
        values.push(1_000_000_000_000_000_000);
        for _ in 0..200 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(x as i64 >> (x % 60));
        }
        for k in values {
            let sign = if k < 0 { "-" } else { "" };
            let digits = format!("{}", k.unsigned_abs());
            let (head, tail) = digits.split_at(1);
            let exp = tail.len();
            let forms = [
                format!("{k}"),
                format!("{k}.0"),
                format!("{k}.000e0"),
                if k == 0 {
                    "0e-2".into()
                } else {
                    format!("{k}00e-2")
                },
                format!("{sign}{head}.{tail}0e{exp}"),
                format!("{sign}{head}.{tail}00E+{exp}"),
                format!("{sign}0.{digits}e{}", exp + 1),
            ];
            for f in forms {
                let n = Number::parse(&f).unwrap_or_else(|| panic!("{f}"));
                assert!(n.is_integral(), "{f}");
                assert_eq!(n.as_i64(), Some(k), "{f}");
                assert_eq!(n.as_i128(), Some(i128::from(k)), "{f}");
                assert_eq!(n.as_u64(), u64::try_from(k).ok(), "{f}");
            }
            let half = format!("{k}.5");
            assert!(!Number::parse(&half).expect("half").is_integral());
            let tenth_text = format!("{k}e-1");
            let tenth = Number::parse(&tenth_text).expect("tenth");
            assert_eq!(tenth.is_integral(), k % 10 == 0, "{k}e-1");
            assert_eq!(tenth.as_i64(), (k % 10 == 0).then_some(k / 10), "{k}e-1");
        }
    }

    fn js(raw: &str) -> JsonStr<'_> {
        JsonStr::new(raw.as_bytes()).expect("valid string contents")
    }

    #[test]
    fn json_str_views() {
        let plain = js("hello");
        assert_eq!(plain.as_plain(), Some("hello"));
        assert!(plain.eq_str("hello"));
        assert!(!plain.eq_str("hell"));
        assert!(plain.starts_with("he"));
        assert_eq!(plain.char_count(), 5);
        assert_eq!(plain.decoded_len(), 5);

        let esc = js(r#"a\"b\\c\/d\be\ff\ng\rh\ti\u00e9\ud83d\ude00"#);
        assert_eq!(esc.as_plain(), None);
        let want = "a\"b\\c/d\u{8}e\u{c}f\ng\rh\ti\u{e9}\u{1F600}";
        assert!(esc.eq_str(want));
        assert!(!esc.eq_str("a\"b"));
        assert!(!esc.eq_str(&format!("{want}x")));
        assert!(esc.starts_with("a\"b\\"));
        assert!(esc.starts_with(""));
        assert!(esc.starts_with(want));
        assert!(!esc.starts_with("a\"c"));
        assert_eq!(esc.chars().collect::<String>(), want);
        assert_eq!(esc.char_count(), want.chars().count());
        assert_eq!(esc.decoded_len(), want.len());
        assert_eq!(format!("{esc}"), want);
        let mut buf = [0u8; 64];
        assert_eq!(esc.decode_into(&mut buf), Some(want));
        let mut small = [0u8; 10];
        assert_eq!(esc.decode_into(&mut small), None);
        let mut exact = [0u8; 23];
        assert_eq!(exact.len(), want.len());
        assert_eq!(esc.decode_into(&mut exact), Some(want));

        let uni = js("caf\u{e9}\\u0020\u{1F600}");
        assert_eq!(uni.char_count(), 6);
        assert_eq!(uni.decoded_len(), 3 + 2 + 1 + 4);
        assert!(uni.eq_str("caf\u{e9} \u{1F600}"));

        assert!(js("").eq_str(""));
        assert!(!js("").eq_str("a"));
        assert!(js("\\n").eq_str("\n"));
        assert!(!js("\\n").eq_str(""));
        // Same length, same bytes, but the raw text is an escape.
        assert!(!js("\\n").eq_str("\\n"));
        assert!(js("\\\\n").eq_str("\\n"));

        assert_eq!(
            JsonStr::new(b"a\\x"),
            Err(JsonError::InvalidEscape { offset: 1 })
        );
        assert_eq!(
            JsonStr::new(b"ab\"c"),
            Err(JsonError::UnexpectedByte { offset: 2 })
        );
        assert_eq!(
            JsonStr::new(b"a\\ud800"),
            Err(JsonError::LoneSurrogate { offset: 1 })
        );
    }

    #[test]
    fn json_str_malformed_stops() {
        let bad = JsonStr { raw: b"ab\\qcd" };
        assert_eq!(bad.chars().collect::<String>(), "ab");
        assert!(!bad.eq_str("ab"));
        assert!(!bad.eq_str("abqcd"));
        assert!(bad.starts_with("ab"));
        assert_eq!(format!("{bad}"), "ab");
        let mut buf = [0u8; 16];
        assert_eq!(bad.decode_into(&mut buf), None);
        let bad_utf8 = JsonStr {
            raw: b"ab\xffcd\\n",
        };
        assert_eq!(format!("{bad_utf8}"), "ab");
        assert_eq!(bad_utf8.chars().count(), 2);
        assert_eq!(bad_utf8.decode_into(&mut buf), None);
    }

    fn unescape(input: &[u8]) -> Result<String, JsonError> {
        let mut buf = input.to_vec();
        unescape_str_in_place(&mut buf).map(String::from)
    }

    #[test]
    fn unescape_ok() {
        assert_eq!(unescape(b"").as_deref(), Ok(""));
        assert_eq!(unescape(b"plain text").as_deref(), Ok("plain text"));
        assert_eq!(
            unescape(br#"\"\\\/\b\f\n\r\t"#).as_deref(),
            Ok("\"\\/\u{8}\u{c}\n\r\t")
        );
        assert_eq!(unescape(br"caf\u00e9").as_deref(), Ok("caf\u{e9}"));
        assert_eq!(unescape(br"\u00E9\u20ac").as_deref(), Ok("\u{e9}\u{20ac}"));
        assert_eq!(unescape(br"\ud83d\ude00!").as_deref(), Ok("\u{1F600}!"));
        assert_eq!(
            unescape("\u{e9}\\n\u{1F600}\\t\u{20ac}x".as_bytes()).as_deref(),
            Ok("\u{e9}\n\u{1F600}\t\u{20ac}x")
        );
        assert_eq!(unescape(br"\u0000").as_deref(), Ok("\u{0}"));
        let mut buf = *br"ab\ncd";
        assert_eq!(unescape_in_place(&mut buf), Ok(5));
        assert_eq!(&buf[..5], b"ab\ncd");
    }

    #[test]
    fn unescape_errors() {
        assert_eq!(
            unescape(br"\x"),
            Err(JsonError::InvalidEscape { offset: 0 })
        );
        assert_eq!(
            unescape(b"ab\\"),
            Err(JsonError::InvalidEscape { offset: 2 })
        );
        assert_eq!(
            unescape(br"\u12"),
            Err(JsonError::InvalidEscape { offset: 0 })
        );
        assert_eq!(
            unescape(br"a\u12g4"),
            Err(JsonError::InvalidEscape { offset: 1 })
        );
        assert_eq!(
            unescape(br"\ud800"),
            Err(JsonError::LoneSurrogate { offset: 0 })
        );
        assert_eq!(
            unescape(br"\ud800\"),
            Err(JsonError::LoneSurrogate { offset: 0 })
        );
        assert_eq!(
            unescape(br"\ud800\u00"),
            Err(JsonError::InvalidEscape { offset: 6 })
        );
        assert_eq!(
            unescape(br"x\udc00"),
            Err(JsonError::LoneSurrogate { offset: 1 })
        );
        assert_eq!(
            unescape(br"\ud800\u0041"),
            Err(JsonError::LoneSurrogate { offset: 0 })
        );
        assert_eq!(
            unescape(b"a\nb"),
            Err(JsonError::ControlCharacter { offset: 1 })
        );
        assert_eq!(
            unescape(b"\\n\x1f"),
            Err(JsonError::ControlCharacter { offset: 2 })
        );
        assert_eq!(
            unescape(b"a\"b"),
            Err(JsonError::UnexpectedByte { offset: 1 })
        );
        assert_eq!(
            unescape(b"\\na\"b"),
            Err(JsonError::UnexpectedByte { offset: 3 })
        );
        assert_eq!(
            unescape(b"a\xff"),
            Err(JsonError::InvalidUtf8 { offset: 1 })
        );
        assert_eq!(
            unescape(b"\\n\xe2\x82"),
            Err(JsonError::InvalidUtf8 { offset: 2 })
        );
        assert_eq!(
            unescape(b"\xed\xa0\x80"),
            Err(JsonError::InvalidUtf8 { offset: 0 })
        );
    }

    #[test]
    fn unescape_never_panics_on_any_short_input() {
        // Exhaustive over a small alphabet of interesting bytes, length <= 4.
        let alphabet: &[u8] = b"\\u\"dD8c0a\xc3\xa9\xff\x01n";
        let mut buf = [0u8; 4];
        let k = alphabet.len();
        for len in 0..=4usize {
            let total = k.pow(len as u32);
            for mut idx in 0..total {
                for slot in buf.iter_mut().take(len) {
                    *slot = alphabet[idx % k];
                    idx /= k;
                }
                let input = &buf[..len];
                let mut work = input.to_vec();
                let res = unescape_str_in_place(&mut work);
                // Must agree with validate on the quoted string.
                let mut quoted = Vec::with_capacity(len + 2);
                quoted.push(b'"');
                quoted.extend_from_slice(input);
                quoted.push(b'"');
                let v = validate(&quoted, &Limits::DEFAULT);
                assert_eq!(res.is_ok(), v.is_ok(), "{input:?}: {res:?} vs {v:?}");
                if let Ok(s) = res {
                    let js = JsonStr { raw: input };
                    assert!(js.eq_str(s));
                    assert_eq!(js.decoded_len(), s.len());
                    assert_eq!(js.char_count(), s.chars().count());
                    assert_eq!(format!("{js}"), s);
                }
            }
        }
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
