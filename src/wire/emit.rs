//! The emitter: JSON written front to back into a caller-owned buffer.
//!
//! [`Writer`] never panics and never writes past its buffer: once something does
//! not fit it sets a sticky overflow flag and ignores further writes, so callers
//! can write a whole message and check once at the end
//! ([`Writer::finish`]). A writer can be switched into *string mode*, in which
//! every byte written is escaped as JSON string content; that is how JSON (or
//! any text) is embedded inside a JSON string without an intermediate buffer.
//!
//! [`ValueWriter`], [`ObjectWriter`] and [`ArrayWriter`] build JSON values with
//! commas, quoting and closing brackets handled for you.

use core::fmt;

pub use crate::codec::Decimal;
pub(crate) use crate::codec::decimal;

use crate::codec;
use crate::wire::json::JsonStr;
use crate::wire::swar;

/// The output buffer is too small for what had to be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[error("buffer full")]
pub struct EncodeError;

/// `dst.copy_from_slice(src)` (equal lengths) without a call to `memcpy`
/// for the short pieces most writes are: on 64-bit targets syntax and small
/// strings move as two overlapping words (single bytes below 4); on smaller
/// targets, where code size matters more, as a byte loop up to 16 bytes.
#[inline]
fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    if dst.len() != n {
        // Not reached: `put` slices `dst` to `src`'s length.
        return;
    }
    if n > 16 {
        dst.copy_from_slice(src);
    } else if cfg!(target_pointer_width = "64") && n >= 8 {
        copy_word::<8>(dst, src, 0);
        copy_word::<8>(dst, src, n - 8);
    } else if cfg!(target_pointer_width = "64") && n >= 4 {
        copy_word::<4>(dst, src, 0);
        copy_word::<4>(dst, src, n - 4);
    } else {
        for (d, &b) in dst.iter_mut().zip(src) {
            *d = b;
        }
    }
}

/// Copy the `W` bytes at `at` (both in bounds: the caller checked).
#[inline(always)]
fn copy_word<const W: usize>(dst: &mut [u8], src: &[u8], at: usize) {
    if let (Some(d), Some(s)) = (dst.get_mut(at..at + W), src.get(at..at + W)) {
        d.copy_from_slice(s);
    }
}

/// Writes JSON into a borrowed byte buffer.
#[derive(Debug)]
pub struct Writer<'b> {
    buf: &'b mut [u8],
    len: usize,
    /// Writable end: bytes from here to the buffer's end hold stashed
    /// notifications (see [`Writer::stash`]).
    limit: usize,
    /// Bytes kept free below `limit` (room for a list's closing suffix; a
    /// few bytes, so 32 bits: with `end` the writer stays 48 bytes on
    /// 64-bit targets, and a handler's `Reply` moves without a `memcpy`
    /// call, `tool::tests`).
    reserve: u32,
    /// Where writes must end: `limit - reserve`, or 0 once overflowed. The
    /// one bound [`Self::room`] checks (kept by [`Self::bound`] whenever
    /// `limit`, `reserve` or `overflow` change).
    end: usize,
    overflow: bool,
    string_mode: bool,
}

impl<'b> Writer<'b> {
    /// A writer at the start of `buf`.
    pub fn new(buf: &'b mut [u8]) -> Self {
        let limit = buf.len();
        Self {
            buf,
            len: 0,
            limit,
            reserve: 0,
            end: limit,
            overflow: false,
            string_mode: false,
        }
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Nothing written yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size of the underlying buffer.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Something did not fit; everything written since is dropped.
    pub fn is_overflowed(&self) -> bool {
        self.overflow
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }

    /// Forget everything after `len` bytes and clear the overflow flag
    /// (a rewind to a known-good point). Out of line: it is called from
    /// many places.
    #[inline(never)]
    pub fn truncate(&mut self, len: usize) {
        if len <= self.len {
            self.len = len;
        }
        self.overflow = false;
        self.bound();
    }

    /// Set [`Self::end`] from `limit`, `reserve` and `overflow` (one
    /// shared copy on small targets, for flash).
    #[cfg_attr(target_pointer_width = "64", inline)]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    fn bound(&mut self) {
        self.end = match self.overflow {
            true => 0,
            false => self.limit.saturating_sub(self.reserve as usize),
        };
    }

    /// Something did not fit: nothing more is written.
    #[inline]
    fn fail(&mut self) {
        self.overflow = true;
        self.end = 0;
    }

    /// Mark the writer as overflowed (used when a caller decides output would
    /// exceed a budget).
    pub fn set_overflow(&mut self) {
        self.fail();
    }

    /// Consume the writer: the number of bytes written, or [`EncodeError`] if
    /// anything did not fit.
    pub fn finish(self) -> Result<usize, EncodeError> {
        if self.overflow {
            Err(EncodeError)
        } else {
            Ok(self.len)
        }
    }

    /// Enter or leave string mode (every byte escaped as JSON string content).
    /// Returns the previous mode.
    pub fn set_string_mode(&mut self, on: bool) -> bool {
        core::mem::replace(&mut self.string_mode, on)
    }

    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        match self.room(bytes.len()) {
            Some(dst) => copy_short(dst, bytes),
            None => self.fail(),
        }
    }

    /// The next `n` bytes of the buffer, counted as written; `None`,
    /// changing nothing, once overflowed or when they do not fit below the
    /// limit and the reserve. The one bounds check of every write: against
    /// [`Self::end`], which is 0 once overflowed (`n == 0` may then be
    /// granted: no byte).
    #[inline]
    fn room(&mut self, n: usize) -> Option<&mut [u8]> {
        let end = self.len.checked_add(n)?;
        if end > self.end {
            return None;
        }
        let dst = self.buf.get_mut(self.len..end)?;
        self.len = end;
        Some(dst)
    }

    /// The next `n` bytes of the buffer, to fill with JSON text as is
    /// (counted as written); `None`, changing nothing, when they do not fit
    /// (or in string mode, where bytes are escaped as they are written).
    pub(crate) fn claim(&mut self, n: usize) -> Option<&mut [u8]> {
        if self.string_mode {
            return None;
        }
        self.room(n)
    }

    /// Write JSON syntax (or, in string mode, escaped text).
    #[inline]
    pub fn raw(&mut self, bytes: &[u8]) {
        if self.string_mode {
            self.escape_levels(bytes, 1);
        } else {
            self.put(bytes);
        }
    }

    /// [`raw`](Self::raw) for a `&str`.
    pub fn raw_str(&mut self, s: &str) {
        self.raw(s.as_bytes());
    }

    /// Write the bytes of valid UTF-8 text escaped as JSON string content
    /// (no quotes). In string mode the text is escaped twice, as it must be.
    fn escaped_bytes(&mut self, bytes: &[u8]) {
        self.escape_levels(bytes, 1 + u8::from(self.string_mode));
    }

    /// Escape `bytes` `levels` times (0: as is). Recursion depth <= 2.
    fn escape_levels(&mut self, bytes: &[u8], levels: u8) {
        // Nothing to escape (most text): plain bytes are their own escape
        // at every level.
        if levels == 0 || swar::all_plain(bytes) {
            self.put(bytes);
            return;
        }
        let next = levels - 1;
        let mut run = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let esc: Option<&[u8]> = match b {
                b'"' => Some(b"\\\""),
                b'\\' => Some(b"\\\\"),
                b'\n' => Some(b"\\n"),
                b'\r' => Some(b"\\r"),
                b'\t' => Some(b"\\t"),
                0x08 => Some(b"\\b"),
                0x0c => Some(b"\\f"),
                0..=0x1f => None,
                _ => continue,
            };
            self.escape_levels(bytes.get(run..i).unwrap_or(&[]), next);
            match esc {
                Some(e) => self.escape_levels(e, next),
                None => {
                    let (hi, lo) = (codec::hex_digit(b >> 4), codec::hex_digit(b));
                    self.escape_levels(&[b'\\', b'u', b'0', b'0', hi, lo], next);
                }
            }
            run = i + 1;
        }
        self.escape_levels(bytes.get(run..).unwrap_or(&[]), next);
    }

    /// Write `s` escaped as JSON string content, without quotes.
    pub fn str_content(&mut self, s: &str) {
        self.escaped_bytes(s.as_bytes());
    }

    /// Write `s` as a quoted JSON string.
    pub fn string(&mut self, s: &str) {
        let bytes = s.as_bytes();
        if !self.string_mode && swar::all_plain(bytes) {
            // Nothing to escape: quote, bytes, quote; on 64-bit targets in
            // room taken once (on small ones three writes share `put`'s
            // code, for flash).
            if cfg!(not(target_pointer_width = "64")) {
                self.put(b"\"");
                self.put(bytes);
                self.put(b"\"");
                return;
            }
            match self.room(bytes.len().saturating_add(2)) {
                Some([open, inner @ .., close]) => {
                    *open = b'"';
                    copy_short(inner, bytes);
                    *close = b'"';
                }
                _ => self.fail(),
            }
            return;
        }
        self.raw(b"\"");
        self.str_content(s);
        self.raw(b"\"");
    }

    /// Write a decoded [`JsonStr`] as a quoted JSON string (re-escaped in the
    /// canonical form).
    pub fn json_str(&mut self, s: JsonStr<'_>) {
        self.raw(b"\"");
        match s.as_plain() {
            Some(plain) => self.str_content(plain),
            None => {
                let mut tmp = [0u8; 4];
                for c in s.chars() {
                    self.str_content(c.encode_utf8(&mut tmp));
                }
            }
        }
        self.raw(b"\"");
    }

    /// Write formatted text as a quoted JSON string.
    pub fn string_fmt(&mut self, args: fmt::Arguments<'_>) {
        self.raw(b"\"");
        self.str_fmt_content(args);
        self.raw(b"\"");
    }

    /// Write formatted text escaped as string content, without quotes.
    pub fn str_fmt_content(&mut self, args: fmt::Arguments<'_>) {
        // A literal without arguments needs no formatting machinery.
        if let Some(s) = args.as_str() {
            self.str_content(s);
            return;
        }
        let mut esc = Escaping(self);
        // Escaping::write_str never fails; an error can only come from a user
        // Display impl, which then just stops early.
        let _ = fmt::write(&mut esc, args);
    }

    /// Write an unsigned integer.
    pub fn u64(&mut self, n: u64) {
        let mut tmp = [0u8; 20];
        self.raw(decimal(n, &mut tmp));
    }

    /// Write a signed integer.
    pub fn i64(&mut self, n: i64) {
        if n < 0 {
            self.raw(b"-");
        }
        self.u64(n.unsigned_abs());
    }

    /// Write a float; NaN and infinities (not representable in JSON) are
    /// written as `null`.
    pub fn f64(&mut self, x: f64) {
        if x.is_finite() {
            if x.abs() < 9.007_199_254_740_992e15 && (x as i64) as f64 == x {
                // Integral values print without a fraction (`50`, not `50.0`).
                self.i64(x as i64);
            } else {
                let mut raw = Raw(self);
                let _ = fmt::write(&mut raw, format_args!("{x}"));
            }
        } else {
            self.raw(b"null");
        }
    }

    /// Write `true` or `false`.
    pub fn bool(&mut self, b: bool) {
        self.raw(if b { b"true" } else { b"false" });
    }

    /// Write `null`.
    pub fn null(&mut self) {
        self.raw(b"null");
    }

    /// Write `data` base64-encoded (standard alphabet, padded) as string
    /// content, without quotes, three bytes at a time.
    pub fn base64(&mut self, data: &[u8]) {
        codec::base64(data, &mut |quad| self.raw(quad));
    }

    /// Append the bytes at `start..end` of what was already written, escaped
    /// as JSON string content (used to repeat a JSON value as text).
    pub fn copy_escaped_from(&mut self, start: usize, end: usize) {
        if self.overflow || start > end || end > self.len {
            if start > end || end > self.len {
                self.fail();
            }
            return;
        }
        // Escape byte by byte from the earlier region into the tail. The source
        // never overlaps the destination because the tail starts at `len >= end`.
        let mut i = start;
        while i < end && !self.overflow {
            let b = self.buf.get(i).copied().unwrap_or(b' ');
            self.escaped_bytes(&[b]);
            i += 1;
        }
    }

    /// Append a copy of the bytes at `start..end` of what was already written.
    pub fn copy_from(&mut self, start: usize, end: usize) {
        if self.overflow || start > end || end > self.len {
            if start > end || end > self.len {
                self.fail();
            }
            return;
        }
        let n = end - start;
        let new_len = self.len.saturating_add(n);
        if new_len > self.end {
            self.fail();
            return;
        }
        // The source lies before the tail, so the two never overlap.
        let Some((head, tail)) = self.buf.split_at_mut_checked(self.len) else {
            self.fail();
            return;
        };
        match (head.get(start..end), tail.get_mut(..n)) {
            (Some(src), Some(dst)) => {
                dst.copy_from_slice(src);
                self.len = new_len;
            }
            _ => self.fail(),
        }
    }

    /// Move the bytes written after `from` so they start at `to` (`to <= from`),
    /// dropping what lay in between.
    pub fn cut(&mut self, to: usize, from: usize) {
        if to <= from && from <= self.len {
            super::move_front(self.buf, from..self.len, to);
            self.len -= from - to;
        }
    }

    /// A writer over the same buffer, at the same position, for a nested
    /// scope (a handler); [`resume`](Self::resume) takes its progress back.
    pub(crate) fn reborrow(&mut self) -> Writer<'_> {
        Writer {
            buf: &mut *self.buf,
            len: self.len,
            limit: self.limit,
            reserve: self.reserve,
            end: self.end,
            overflow: self.overflow,
            string_mode: self.string_mode,
        }
    }

    /// Take back the position, limit and overflow flag of a writer that was
    /// [`reborrow`](Self::reborrow)ed from this one.
    pub(crate) fn resume(&mut self, len: usize, limit: usize, overflow: bool) {
        self.limit = limit.min(self.buf.len());
        self.len = len.min(self.limit);
        self.overflow = overflow;
        self.bound();
    }

    /// Keep `n` bytes free at the end (0 to release them).
    pub(crate) fn set_reserve(&mut self, n: usize) {
        // A few bytes in practice; past `u32::MAX` (never asked for) it
        // is clamped. Converted back losslessly: it came from a `usize`.
        self.reserve = u32::try_from(n).unwrap_or(u32::MAX);
        self.bound();
    }

    /// Bytes that can still be written: up to `end`, the one bound
    /// [`Self::room`] checks (below the limit and the reserve; none once
    /// the writer has overflowed).
    pub(crate) fn free(&self) -> usize {
        self.end.saturating_sub(self.len)
    }

    pub(crate) fn reserved(&self) -> usize {
        self.reserve as usize
    }

    /// The current position, limit and overflow flag.
    pub(crate) fn position(&self) -> (usize, usize, bool) {
        (self.len, self.limit, self.overflow)
    }

    /// The free space between what is written and the stash.
    pub(crate) fn free_mut(&mut self) -> &mut [u8] {
        let (len, limit) = (self.len, self.limit);
        self.buf.get_mut(len..limit).unwrap_or(&mut [])
    }

    /// Move the first `n` bytes of [`free_mut`](Self::free_mut) to the end of
    /// the stash (kept in order at the end of the buffer, out of the way of
    /// what is written from the front). Returns false when they do not fit.
    pub(crate) fn stash(&mut self, n: usize) -> bool {
        if n > self.limit - self.len {
            return false;
        }
        // buf[len..] holds: the new bytes (n), free space, the stash. Rotating
        // that tail left by n gives: free space, the stash, the new bytes —
        // correct even when the new bytes and the stash's new place overlap.
        // `n <= tail.len()` holds (checked above); said again so that the
        // optimizer drops `rotate_left`'s panic path and its location.
        if let Some(tail) = self.buf.get_mut(self.len..)
            && n <= tail.len()
        {
            tail.rotate_left(n);
        }
        self.limit -= n;
        self.bound();
        true
    }

    /// Forget the stashed bytes (to make room for an answer that must go out).
    pub(crate) fn drop_stash(&mut self) {
        self.limit = self.buf.len();
        self.bound();
    }

    /// Whether notifications are stashed (at the buffer's end), to go in
    /// front of the message.
    pub(crate) fn has_stash(&self) -> bool {
        self.limit < self.buf.len()
    }

    /// Finish a message: put the stashed bytes in front of what was written
    /// and return the total length (or 0 after an overflow).
    pub(crate) fn finish_with_stash(mut self) -> usize {
        if self.overflow {
            return 0;
        }
        let stashed = self.buf.len() - self.limit;
        let total = self.len + stashed;
        if stashed > 0 {
            let (len, limit, cap) = (self.len, self.limit, self.buf.len());
            super::move_front(self.buf, limit..cap, len);
            // Always true (`total = len + stashed`); said so that the
            // optimizer drops `rotate_right`'s panic path and its location.
            if let Some(all) = self.buf.get_mut(..total)
                && stashed <= all.len()
            {
                all.rotate_right(stashed);
            }
            self.len = total;
            self.limit = cap;
            self.bound();
        }
        total
    }

    /// A [`ValueWriter`] for one JSON value at the current position.
    pub fn value(&mut self) -> ValueWriter<'_, 'b> {
        ValueWriter { w: self }
    }
}

struct Escaping<'w, 'b>(&'w mut Writer<'b>);

impl fmt::Write for Escaping<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0.str_content(s);
        Ok(())
    }

    /// One character (`Display` impls write separators so): a plain one
    /// as its byte, without encoding it and scanning it as text.
    fn write_char(&mut self, c: char) -> fmt::Result {
        match u8::try_from(c) {
            Ok(b) if swar::is_plain(b) => self.0.put(&[b]),
            _ => self.0.str_content(c.encode_utf8(&mut [0u8; 4])),
        }
        Ok(())
    }
}

struct Raw<'w, 'b>(&'w mut Writer<'b>);

impl fmt::Write for Raw<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0.raw_str(s);
        Ok(())
    }
}

/// A [`fmt::Write`] that writes escaped JSON string content (for
/// `write!(text, ...)` inside a text block or resource).
pub struct TextWriter<'w, 'b>(&'w mut Writer<'b>);

impl<'w, 'b> TextWriter<'w, 'b> {
    pub(crate) fn new(w: &'w mut Writer<'b>) -> Self {
        Self(w)
    }

    /// Append `s` to the text (escaped as it is written), without
    /// `core::fmt`: `w.str(title).str(" by ").str(author)`.
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.0.str_content(s);
        self
    }
}

impl fmt::Write for TextWriter<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0.str_content(s);
        Ok(())
    }
}

/// Writes exactly one JSON value.
pub struct ValueWriter<'w, 'b> {
    w: &'w mut Writer<'b>,
}

impl<'w, 'b> ValueWriter<'w, 'b> {
    /// A string.
    pub fn str(self, s: &str) {
        self.w.string(s);
    }

    /// A formatted string.
    pub fn str_fmt(self, args: fmt::Arguments<'_>) {
        self.w.string_fmt(args);
    }

    /// An unsigned integer.
    pub fn u64(self, n: u64) {
        self.w.u64(n);
    }

    /// A signed integer.
    pub fn i64(self, n: i64) {
        self.w.i64(n);
    }

    /// A float (`null` if not finite).
    pub fn f64(self, x: f64) {
        self.w.f64(x);
    }

    /// A boolean.
    pub fn bool(self, b: bool) {
        self.w.bool(b);
    }

    /// `null`.
    pub fn null(self) {
        self.w.null();
    }

    /// Raw JSON text. The caller vouches for its validity; the server checks
    /// structured content before sending it.
    pub fn raw_json(self, json: &str) {
        self.w.raw_str(json);
    }

    /// An object; closed when the returned writer is dropped.
    pub fn object(self) -> ObjectWriter<'w, 'b> {
        self.w.raw(b"{");
        ObjectWriter {
            w: self.w,
            first: true,
        }
    }

    /// An array; closed when the returned writer is dropped.
    pub fn array(self) -> ArrayWriter<'w, 'b> {
        self.w.raw(b"[");
        ArrayWriter {
            w: self.w,
            first: true,
        }
    }

    /// Serialize a `serde::Serialize` value with serde-json-core into the
    /// remaining space. Do not use types containing `char` or byte slices
    /// (serde-json-core panics on the former and emits broken JSON for the
    /// latter); the server validates structured content before sending it.
    pub fn serialize<T: serde::Serialize + ?Sized>(self, value: &T) {
        if self.w.overflow {
            return;
        }
        if self.w.string_mode {
            // serde-json-core writes raw JSON; escape it by writing through a
            // scratch region at the tail, then quoting it in place.
            let start = self.w.len;
            let was = self.w.set_string_mode(false);
            ValueWriter { w: self.w }.serialize(value);
            let end = self.w.len;
            self.w.copy_escaped_from(start, end);
            self.w.cut(start, end);
            self.w.set_string_mode(was);
            return;
        }
        // Below the limit and the reserve, as every write (the stash and
        // a list's suffix lie above them).
        let (len, end) = (self.w.len, self.w.end);
        let rest = self.w.buf.get_mut(len..end).unwrap_or(&mut []);
        match serde_json_core::to_slice(value, rest) {
            Ok(n) => self.w.len += n,
            Err(_) => self.w.fail(),
        }
    }
}

/// Writes the members of a JSON object; writes `}` when dropped.
pub struct ObjectWriter<'w, 'b> {
    w: &'w mut Writer<'b>,
    first: bool,
}

impl<'b> ObjectWriter<'_, 'b> {
    /// Start a member and return the writer for its value. The value must be
    /// written (a [`ValueWriter`] left unused leaves the member without value).
    pub fn member(&mut self, key: &str) -> ValueWriter<'_, 'b> {
        if !self.first {
            self.w.raw(b",");
        }
        self.first = false;
        self.w.string(key);
        self.w.raw(b":");
        ValueWriter { w: self.w }
    }

    /// [`member`](Self::member) with the key already written as JSON: its
    /// quoted text and the colon (`"name":`), for keys known when the code
    /// is compiled (the derives), so no key is checked for escapes at run
    /// time.
    #[doc(hidden)]
    pub fn member_json(&mut self, quoted_key_colon: &'static str) -> ValueWriter<'_, 'b> {
        if !self.first {
            self.w.raw(b",");
        }
        self.first = false;
        self.w.raw(quoted_key_colon.as_bytes());
        ValueWriter { w: self.w }
    }

    /// A string member.
    pub fn str(&mut self, key: &str, value: &str) -> &mut Self {
        self.member(key).str(value);
        self
    }

    /// An unsigned integer member.
    pub fn u64(&mut self, key: &str, value: u64) -> &mut Self {
        self.member(key).u64(value);
        self
    }

    /// A signed integer member.
    pub fn i64(&mut self, key: &str, value: i64) -> &mut Self {
        self.member(key).i64(value);
        self
    }

    /// A float member.
    pub fn f64(&mut self, key: &str, value: f64) -> &mut Self {
        self.member(key).f64(value);
        self
    }

    /// A boolean member.
    pub fn bool(&mut self, key: &str, value: bool) -> &mut Self {
        self.member(key).bool(value);
        self
    }

    /// A nested object member.
    pub fn object(&mut self, key: &str) -> ObjectWriter<'_, 'b> {
        self.member(key).object()
    }

    /// A nested array member.
    pub fn array(&mut self, key: &str) -> ArrayWriter<'_, 'b> {
        self.member(key).array()
    }
}

impl Drop for ObjectWriter<'_, '_> {
    fn drop(&mut self) {
        self.w.raw(b"}");
    }
}

/// Writes the items of a JSON array; writes `]` when dropped.
pub struct ArrayWriter<'w, 'b> {
    w: &'w mut Writer<'b>,
    first: bool,
}

impl<'b> ArrayWriter<'_, 'b> {
    /// Start an item and return the writer for it.
    pub fn item(&mut self) -> ValueWriter<'_, 'b> {
        if !self.first {
            self.w.raw(b",");
        }
        self.first = false;
        ValueWriter { w: self.w }
    }

    /// A string item.
    pub fn str(&mut self, value: &str) -> &mut Self {
        self.item().str(value);
        self
    }

    /// An unsigned integer item.
    pub fn u64(&mut self, value: u64) -> &mut Self {
        self.item().u64(value);
        self
    }

    /// A signed integer item.
    pub fn i64(&mut self, value: i64) -> &mut Self {
        self.item().i64(value);
        self
    }

    /// A nested object item.
    pub fn object(&mut self) -> ObjectWriter<'_, 'b> {
        self.item().object()
    }

    /// A nested array item.
    pub fn array(&mut self) -> ArrayWriter<'_, 'b> {
        self.item().array()
    }
}

impl Drop for ArrayWriter<'_, '_> {
    fn drop(&mut self) {
        self.w.raw(b"]");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with<F: FnOnce(&mut Writer<'_>)>(
        cap: usize,
        f: F,
    ) -> Result<std::string::String, EncodeError> {
        let mut buf = std::vec![0u8; cap];
        let mut w = Writer::new(&mut buf);
        f(&mut w);
        let n = w.finish()?;
        Ok(std::string::String::from_utf8(buf[..n].to_vec()).unwrap())
    }

    #[test]
    fn pieces_of_every_short_length_are_copied_whole() {
        let text: std::string::String = ('a'..='z').chain('A'..='Z').collect();
        for n in 0..=text.len() {
            let piece = &text[..n];
            assert_eq!(with(64, |w| w.raw_str(piece)).unwrap(), piece);
            assert_eq!(
                with(64, |w| w.string(piece)).unwrap(),
                std::format!("\"{piece}\"")
            );
            // Exactly the room it needs, and one byte short: overflow,
            // nothing half-written.
            assert!(with(n + 2, |w| w.string(piece)).is_ok());
            assert!(with(n + 1, |w| w.string(piece)).is_err());
        }
    }

    #[test]
    fn escapes_strings() {
        let s = with(64, |w| w.string("q\" b\\ n\n t\t c\u{1} é 😀")).unwrap();
        assert_eq!(s, r#""q\" b\\ n\n t\t c\u0001 é 😀""#);
    }

    #[test]
    fn overflow_is_sticky() {
        assert_eq!(with(3, |w| w.string("abcd")), Err(EncodeError));
        let s = with(8, |w| {
            w.raw(b"12345678");
            w.raw(b"9");
            w.truncate(2);
            w.raw(b"x");
        })
        .unwrap();
        assert_eq!(s, "12x");
    }

    #[test]
    fn numbers() {
        let s = with(128, |w| {
            w.u64(0);
            w.raw(b" ");
            w.u64(u64::MAX);
            w.raw(b" ");
            w.i64(i64::MIN);
            w.raw(b" ");
            w.f64(50.0);
            w.raw(b" ");
            w.f64(0.5);
            w.raw(b" ");
            w.f64(f64::NAN);
        })
        .unwrap();
        assert_eq!(s, "0 18446744073709551615 -9223372036854775808 50 0.5 null");
    }

    #[test]
    fn base64_matches_rfc4648() {
        for (input, out) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(with(16, |w| w.base64(input.as_bytes())).unwrap(), out);
        }
    }

    #[test]
    fn builders_close_on_drop() {
        let s = with(128, |w| {
            let mut o = w.value().object();
            o.str("result", "Dune");
            {
                let mut a = o.array("list");
                a.str("a").u64(1);
                a.object().bool("ok", true);
            }
            o.member("n").null();
        })
        .unwrap();
        assert_eq!(
            s,
            r#"{"result":"Dune","list":["a",1,{"ok":true}],"n":null}"#
        );
    }

    #[test]
    fn string_mode_embeds_json_in_a_string() {
        let s = with(128, |w| {
            w.raw(b"\"");
            w.set_string_mode(true);
            w.value().array().str("Dune").str("a\"b");
            w.set_string_mode(false);
            w.raw(b"\"");
        })
        .unwrap();
        assert_eq!(s, r#""[\"Dune\",\"a\\\"b\"]""#);
    }

    #[test]
    fn stash_keeps_order_in_a_tight_buffer() {
        // Free space smaller than twice a notification: the case where moving
        // the stash would overwrite the new bytes.
        for cap in 12..40 {
            let mut buf = std::vec![0u8; cap];
            let mut w = Writer::new(&mut buf);
            w.raw(b"R");
            let mut stashed = std::string::String::new();
            for note in ["aaaa\n", "bbbbb\n", "cc\n"] {
                let free = w.free_mut();
                if free.len() < note.len() {
                    break;
                }
                free[..note.len()].copy_from_slice(note.as_bytes());
                assert!(w.stash(note.len()));
                stashed.push_str(note);
            }
            w.raw(b"S");
            let overflow = w.is_overflowed();
            let n = w.finish_with_stash();
            if !overflow {
                assert_eq!(
                    std::str::from_utf8(&buf[..n]).unwrap(),
                    std::format!("{stashed}RS"),
                    "cap {cap}"
                );
            }
        }
    }

    /// `serialize` writes below the stash and the reserve, as every other
    /// write: a value that only fits over them is an overflow, and the
    /// stashed bytes are kept. (Before, serde-json-core was given the
    /// whole rest of the buffer and could write over the stash.)
    #[test]
    fn serialize_stays_below_the_stash_and_the_reserve() {
        let value = ("abcdefgh", 12345u32); // ["abcdefgh",12345]: 18 bytes
        let caps: std::vec::Vec<usize> = if cfg!(miri) {
            std::vec![18, 20, 21, 25, 27, 28]
        } else {
            (18..40).collect()
        };
        for cap in caps {
            for stash in [0usize, 3, 7] {
                for reserve in [0usize, 2] {
                    let mut buf = std::vec![0u8; cap];
                    let mut w = Writer::new(&mut buf);
                    if stash > 0 {
                        let free = w.free_mut();
                        free[..stash].fill(b'N');
                        assert!(w.stash(stash));
                    }
                    w.set_reserve(reserve);
                    w.value().serialize(&value);
                    let fits = 18 + stash + reserve <= cap;
                    assert_eq!(
                        !w.is_overflowed(),
                        fits,
                        "cap {cap} stash {stash} {reserve}"
                    );
                    w.set_reserve(0);
                    let n = w.finish_with_stash();
                    if fits {
                        let expect = std::format!("{}[\"abcdefgh\",12345]", "N".repeat(stash));
                        assert_eq!(std::str::from_utf8(&buf[..n]).unwrap(), expect);
                    } else {
                        assert_eq!(n, 0);
                        assert!(buf[cap - stash..].iter().all(|&b| b == b'N'));
                    }
                }
            }
        }
    }

    /// Every write stops at the reserve, and an overflow stops every later
    /// write until `truncate`, whatever the reserve and the stash.
    #[test]
    fn writes_end_at_the_reserve_and_after_an_overflow() {
        for reserve in 0..4 {
            let mut buf = [0u8; 8];
            let mut w = Writer::new(&mut buf);
            w.set_reserve(reserve);
            assert_eq!(w.free(), 8 - reserve);
            w.raw(&b"12345678"[..8 - reserve]);
            assert!(!w.is_overflowed(), "reserve {reserve}");
            assert_eq!(w.free(), 0);
            w.raw(b"");
            assert!(!w.is_overflowed());
            w.raw(b"x");
            assert!(w.is_overflowed());
            w.set_reserve(0); // room again, but the overflow sticks
            assert_eq!(w.free(), 0, "free() says what a write would get");
            w.raw(b"");
            w.string("y");
            assert_eq!(w.len(), 8 - reserve);
            w.truncate(1);
            w.string("y");
            assert_eq!(w.as_bytes(), b"1\"y\"");
        }
    }

    #[test]
    fn copy_escaped_and_cut() {
        let s = with(128, |w| {
            w.raw(br#"{"a":"x"}"#);
            w.raw(b"|");
            w.copy_escaped_from(0, 9);
            w.cut(0, 10);
        })
        .unwrap();
        assert_eq!(s, r#"{\"a\":\"x\"}"#);
    }

    #[test]
    fn serialize_with_serde() {
        #[derive(serde::Serialize)]
        struct R<'a> {
            result: &'a str,
        }
        let s = with(64, |w| w.value().serialize(&R { result: "a\"b" })).unwrap();
        assert_eq!(s, r#"{"result":"a\"b"}"#);
        let s = with(64, |w| {
            w.set_string_mode(true);
            w.value().serialize(&R { result: "x" });
        })
        .unwrap();
        assert_eq!(s, r#"{\"result\":\"x\"}"#);
    }
}
