//! String contents: [`JsonStr`] views and in-place unescaping.

use core::fmt;

use crate::wire::swar::{has_backslash, plain_run, same_bytes};

use super::lex::{decode_escape, decode_utf8, next_char};
use super::limits::JsonError;

/// The raw (still escaped, validated) contents of a JSON string, WITHOUT the
/// quotes. Equality compares the raw bytes (use [`JsonStr::eq_str`] to compare
/// decoded text).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonStr<'a> {
    pub(super) raw: &'a [u8],
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

    /// Whether the raw text holds an escape (a backslash).
    #[inline]
    pub(crate) fn has_escape(&self) -> bool {
        has_backslash(self.raw)
    }

    /// The contents as `&str` when there is no backslash (zero-copy fast
    /// path); `None` if decoding is needed.
    #[must_use]
    pub fn as_plain(&self) -> Option<&'a str> {
        if self.has_escape() {
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

    /// Which of `keys` (none holding a backslash) this is, decoded: raw
    /// bytes first, since text without an escape is its own content; text
    /// with one is decoded. The one key matcher of every walk that picks
    /// members by name.
    #[inline]
    pub(crate) fn position_in(&self, keys: &[&str]) -> Option<usize> {
        let mut at = keys.iter().position(|k| self.raw == k.as_bytes());
        if at.is_none() && self.has_escape() {
            at = keys.iter().position(|k| self.eq_str(k));
        }
        at
    }

    /// Decoded content equals `s` (no buffer needed). Always inlined on
    /// 64-bit targets: called, a walk of 500 tools for a name cost about 14
    /// instructions a tool more (`scripts/registry_scale.sh`).
    #[must_use]
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline)]
    pub fn eq_str(&self, s: &str) -> bool {
        // An escape is longer than what it decodes to, so the raw text is
        // never shorter than the decoded one: a shorter raw text cannot be
        // equal, and one of equal length only if it has no escape at all.
        if self.raw.len() == s.len() {
            // Equal bytes decode to `s` unless they hold an escape, which
            // they then share with `s`: on 64-bit targets `s` is tested
            // (most often a literal, folded away) instead of scanning the
            // raw text; small ones keep the one shared scan (flash: 124 B).
            same_bytes(self.raw, s.as_bytes())
                && if cfg!(target_pointer_width = "64") {
                    !has_backslash(s.as_bytes())
                } else {
                    self.raw.iter().all(|&b| b != b'\\')
                }
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
        self.has_escape() && matches!(self.strip_decoded_prefix(s.as_bytes()), Some((true, true)))
    }

    /// Decoded content starts with `prefix`.
    #[must_use]
    pub fn starts_with(&self, prefix: &str) -> bool {
        if !self.has_escape() {
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
        if !self.has_escape() {
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
    use crate::wire::json::{Limits, validate};
    use std::format;
    use std::string::String;
    use std::vec::Vec;

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
}
