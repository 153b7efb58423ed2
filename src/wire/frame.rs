//! Newline framing over a caller-owned fixed buffer.
//!
//! MCP's stdio transport sends one JSON message per line. [`LineFramer`] keeps
//! bytes in the buffer it was given and hands out complete messages in place:
//! a message is a line without its terminator, `\n` or `\r\n` (the `\r`
//! before the `\n` is not part of the message). Incomplete is not invalid:
//! [`Status::Partial`] just means "read more".
//!
//! The limit is the buffer's size: a message of up to [`LineFramer::limit`]
//! bytes is handed out, whichever terminator follows it. A longer one is
//! reported once as [`Status::Overflow`], then discarded through its newline,
//! and framing resumes with the next line: nothing after it is lost. To tell
//! a message that fills the whole buffer from a longer one, the framer reads
//! the byte after a full buffer into a one-byte look-ahead of its own
//! ([`LineFramer::spare`] offers it): `\n` ends the message, `\r` is held
//! until the byte after it, anything else is an overflow.
//!
//! Drive loop: call [`LineFramer::next_frame`] until it returns
//! [`Status::Partial`]; then read from the transport into
//! [`LineFramer::spare`] and [`LineFramer::commit`] the count (or use
//! [`LineFramer::feed`] with bytes you already have). At end of input,
//! [`LineFramer::finish`] returns a last line that had no newline.

/// What the framer has for you.
#[derive(Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Status<'a> {
    /// No complete line is buffered: read more input.
    Partial,
    /// One complete message, without its line terminator. It stays valid (and
    /// mutable, for in-place unescaping) until the next call on the framer.
    Complete(&'a mut [u8]),
    /// A message was longer than [`LineFramer::limit`] bytes (terminator not
    /// counted). Its bytes are being discarded through the next newline.
    Overflow {
        /// The largest message that is accepted: the buffer's size.
        limit: usize,
    },
}

/// A full buffer that holds no newline: whether its message ends there is
/// decided by the byte(s) after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edge {
    /// The buffer is not full, or its newline is in it.
    Open,
    /// Full: `\n` next ends the message here, `\r` next goes to
    /// [`FullCr`](Edge::FullCr), anything else makes it too long.
    Full,
    /// Full, then a `\r` (held in the look-ahead): `\n` next ends the
    /// message here (the `\r` was its terminator's), anything else makes it
    /// too long.
    FullCr,
}

/// Cuts a byte stream into newline-terminated frames inside a fixed buffer.
#[derive(Debug)]
pub struct LineFramer<B> {
    buf: B,
    /// Start of unconsumed data.
    start: usize,
    /// End of buffered data.
    end: usize,
    /// Bytes after `start` already searched for a newline.
    scanned: usize,
    /// Dropping an oversized line until its newline.
    discarding: bool,
    /// A full buffer without a newline, waiting for the byte after it.
    edge: Edge,
    /// `look` holds a byte read through [`spare`](Self::spare) that
    /// [`next_frame`](Self::next_frame) has not examined yet.
    looked: bool,
    /// The one-byte look-ahead past a full buffer.
    look: u8,
}

impl<B: AsRef<[u8]> + AsMut<[u8]>> LineFramer<B> {
    /// A framer over `buf`. The buffer's size is the largest message, its
    /// line terminator not counted.
    pub fn new(buf: B) -> Self {
        Self {
            buf,
            start: 0,
            end: 0,
            scanned: 0,
            discarding: false,
            edge: Edge::Open,
            looked: false,
            look: 0,
        }
    }

    /// The largest message handed out (the buffer's size), line terminator
    /// not counted: a message of `limit()` bytes is [`Status::Complete`], one
    /// of `limit() + 1` bytes is [`Status::Overflow`].
    pub fn limit(&self) -> usize {
        self.buf.as_ref().len()
    }

    /// Bytes buffered and not yet handed out (a look-ahead byte not counted).
    pub fn buffered(&self) -> usize {
        self.end - self.start
    }

    /// Free space to read into. Moves buffered bytes to the front first when
    /// that makes room; past a full buffer that holds no newline, the
    /// framer's one-byte look-ahead. Empty only while a full buffer (or a
    /// look-ahead byte) waits for [`next_frame`](Self::next_frame) to examine
    /// it.
    pub fn spare(&mut self) -> &mut [u8] {
        if self.start > 0 && self.end == self.buf.as_ref().len() {
            self.compact();
        }
        if self.end == self.buf.as_ref().len() {
            return if self.looks_ahead() {
                core::slice::from_mut(&mut self.look)
            } else {
                &mut []
            };
        }
        let end = self.end;
        self.buf.as_mut().get_mut(end..).unwrap_or(&mut [])
    }

    /// Whether a full buffer's [`spare`](Self::spare) is the look-ahead: every
    /// buffered byte has been examined (past a full buffer, or while
    /// discarding into a zero-size one) and no look-ahead byte is pending.
    fn looks_ahead(&self) -> bool {
        let examined = self.edge != Edge::Open || (self.discarding && self.start == self.end);
        examined && !self.looked
    }

    /// Record that `n` bytes were written into [`spare`](Self::spare).
    pub fn commit(&mut self, n: usize) {
        let cap = self.buf.as_ref().len();
        if self.end == cap {
            // `spare` was the look-ahead, or empty.
            self.looked |= n > 0 && self.looks_ahead();
            return;
        }
        self.end = self.end.saturating_add(n).min(cap);
    }

    /// Copy as much of `input` as fits into the buffer; returns how many bytes
    /// were taken. Call [`next_frame`](Self::next_frame) until `Partial`, then
    /// feed the rest.
    pub fn feed(&mut self, input: &[u8]) -> usize {
        let spare = self.spare();
        let n = spare.len().min(input.len());
        if let (Some(dst), Some(src)) = (spare.get_mut(..n), input.get(..n)) {
            dst.copy_from_slice(src);
        }
        self.commit(n);
        n
    }

    fn compact(&mut self) {
        let (start, end) = (self.start, self.end);
        super::move_front(self.buf.as_mut(), start..end, 0);
        self.end = end - start;
        self.start = 0;
    }

    /// Forget everything buffered and start discarding through the next
    /// newline: the line being read is too long.
    fn overflow(&mut self) -> Status<'_> {
        self.discarding = true;
        self.edge = Edge::Open;
        self.start = 0;
        self.end = 0;
        self.scanned = 0;
        Status::Overflow {
            limit: self.buf.as_ref().len(),
        }
    }

    /// The whole (full) buffer as one message, handed out and consumed.
    fn take_full(&mut self, strip_cr: bool) -> Status<'_> {
        let (start, mut end) = (self.start, self.end);
        self.edge = Edge::Open;
        self.start = end;
        self.scanned = 0;
        let buf = self.buf.as_mut();
        if strip_cr && end > start && buf.get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
        Status::Complete(buf.get_mut(start..end).unwrap_or(&mut []))
    }

    /// The next complete line, an overflow report, or `Partial`.
    pub fn next_frame(&mut self) -> Status<'_> {
        if self.looked {
            self.looked = false;
            match (self.edge, self.look) {
                // Discarding into a zero-size buffer (always full): a
                // newline ends it.
                (Edge::Open, byte) => {
                    if byte == b'\n' {
                        self.discarding = false;
                        self.edge = Edge::Full;
                    }
                    return Status::Partial;
                }
                (Edge::Full, b'\r') => {
                    self.edge = Edge::FullCr;
                    return Status::Partial;
                }
                // The buffer is the whole message; past `Full`, a `\r` at
                // its end was the `\r` of its `\r\n`.
                (edge, b'\n') => return self.take_full(edge == Edge::Full),
                _ => return self.overflow(),
            }
        }
        if self.edge != Edge::Open {
            return Status::Partial;
        }
        loop {
            let data = self.buf.as_ref().get(self.start..self.end).unwrap_or(&[]);
            let from = self.scanned.min(data.len());
            let newline = data.get(from..).and_then(find_newline).map(|i| from + i);
            match newline {
                Some(nl) if self.discarding => {
                    // The tail of an oversized line: drop it, resume framing.
                    self.discarding = false;
                    self.start += nl + 1;
                    self.scanned = 0;
                }
                Some(nl) => {
                    let line_start = self.start;
                    self.start += nl + 1;
                    self.scanned = 0;
                    let mut line_end = line_start + nl;
                    let buf = self.buf.as_mut();
                    if line_end > line_start && buf.get(line_end - 1) == Some(&b'\r') {
                        line_end -= 1;
                    }
                    return Status::Complete(buf.get_mut(line_start..line_end).unwrap_or(&mut []));
                }
                None if self.discarding => {
                    self.start = 0;
                    self.end = 0;
                    self.scanned = 0;
                    return Status::Partial;
                }
                None => {
                    if self.end - self.start >= self.buf.as_ref().len() {
                        // Full buffer, no newline: a message of exactly the
                        // buffer's size, or a longer one. The next byte
                        // (read into the look-ahead) tells.
                        self.edge = Edge::Full;
                    }
                    self.scanned = data.len();
                    return Status::Partial;
                }
            }
        }
    }

    /// [`next_frame`](Self::next_frame), with the buffer after the frame:
    /// `(status, rest, filled)`, where `rest[..filled]` are the bytes
    /// buffered after a complete frame and `rest[filled..]` is free space
    /// to read into while the frame is in use (never moved: empty when the
    /// buffer is full). [`commit`](Self::commit) what was read once the
    /// frame is done with. For any other status `rest` is empty.
    pub fn next_frame_with_rest(&mut self) -> (Status<'_>, &mut [u8], usize) {
        // Positions first (the borrow of the frame ends here).
        let (at, len) = match self.next_frame() {
            Status::Complete(line) => (line.as_ptr() as usize, line.len()),
            Status::Partial => return (Status::Partial, &mut [], 0),
            Status::Overflow { limit } => return (Status::Overflow { limit }, &mut [], 0),
        };
        let (start, end) = (self.start, self.end);
        let buf = self.buf.as_mut();
        let line_start = at.wrapping_sub(buf.as_ptr() as usize);
        let split = buf
            .get_mut(line_start..)
            .filter(|_| start >= line_start && start - line_start >= len)
            .and_then(|from_line| from_line.split_at_mut_checked(start - line_start));
        match split {
            Some((head, rest)) => {
                let line = head.get_mut(..len).unwrap_or(&mut []);
                (Status::Complete(line), rest, end.saturating_sub(start))
            }
            // Unreachable: the line lies before `start`.
            None => (Status::Partial, &mut [], 0),
        }
    }

    /// At end of input: the buffered bytes of a last line that had no
    /// newline (without one trailing `\r`), if any: `None` when nothing, or
    /// only the tail of an oversized line, is left. Call it once
    /// [`next_frame`](Self::next_frame) has returned `Partial` (a look-ahead
    /// byte committed since is not examined). Resets the framer.
    pub fn finish(&mut self) -> Option<&mut [u8]> {
        let (start, end, discarding, edge) = (self.start, self.end, self.discarding, self.edge);
        self.start = 0;
        self.end = 0;
        self.scanned = 0;
        self.discarding = false;
        self.edge = Edge::Open;
        self.looked = false;
        // Past a full buffer and a `\r`, the buffer is the message (even an
        // empty one, in a zero-size buffer) and the `\r` was its terminator.
        if discarding || (start == end && edge != Edge::FullCr) {
            return None;
        }
        let buf = self.buf.as_mut();
        let mut line_end = end;
        if edge != Edge::FullCr && line_end > start && buf.get(line_end - 1) == Some(&b'\r') {
            line_end -= 1;
        }
        buf.get_mut(start..line_end)
    }
}

/// Index of the first `\n` in `bytes`: on 64-bit targets 16 bytes at a
/// time first (written so that LLVM makes one vector compare of each
/// block: `pcmpeqb` and `pmovmskb` on x86-64, without `unsafe`), the block
/// that holds it by its two words; fewer than 16 bytes (and everything on
/// small targets) a machine word at a time.
fn find_newline(bytes: &[u8]) -> Option<usize> {
    use crate::wire::swar::{ONES, first_stop, zero_bytes};
    let marks = |x: usize| zero_bytes(x ^ (ONES * b'\n' as usize));
    let mut skip = 0;
    while cfg!(target_pointer_width = "64")
        && let Some(block) = bytes.get(skip..).and_then(|b| b.first_chunk::<16>())
    {
        if block.iter().fold(false, |any, &b| any | (b == b'\n')) {
            // In this block: the first word's lowest mark, or the second's.
            let (lo, hi) = block.split_at(8);
            let word = |c: &[u8]| usize::from_le_bytes(c.try_into().unwrap_or_default());
            let (m, base) = match marks(word(lo)) {
                0 => (marks(word(hi)), skip + 8),
                m => (m, skip),
            };
            return Some(base + (m.trailing_zeros() / 8) as usize);
        }
        skip += 16;
    }
    let rest = bytes.get(skip..)?;
    let at = first_stop(rest, marks, |b| b == b'\n');
    (at < rest.len()).then_some(skip + at)
}

/// The fuzz targets' naive line splitter (`reference_frames`, the contract
/// written plainly) for the unit tests below.
#[cfg(test)]
#[path = "../../fuzz/fuzz_targets/util/mod.rs"]
mod reference;

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn a_frame_with_the_rest_of_the_buffer_to_read_into() {
        let mut f = LineFramer::new([0u8; 16]);
        assert_eq!(f.feed(b"ab\r\ncd"), 6);
        let (status, rest, filled) = f.next_frame_with_rest();
        let Status::Complete(line) = status else {
            panic!("a line");
        };
        assert_eq!(line, b"ab");
        // `cd` is buffered after it, then 10 free bytes.
        assert_eq!((filled, rest.len()), (2, 12));
        assert_eq!(&rest[..filled], b"cd");
        rest[filled..filled + 3].copy_from_slice(b"e\nx");
        line[0] = b'A'; // the frame stays usable meanwhile
        f.commit(3);
        assert_eq!(f.next_frame(), Status::Complete(&mut b"cde".to_vec()));
        let (status, rest, filled) = f.next_frame_with_rest();
        assert_eq!((status, rest.len(), filled), (Status::Partial, 0, 0));
        // An overflow has no rest either.
        let mut g = LineFramer::new([0u8; 2]);
        g.feed(b"xy");
        g.commit(0);
        assert_eq!(g.next_frame(), Status::Partial);
        let look = g.spare();
        look[0] = b'z';
        g.commit(1);
        let (status, rest, _) = g.next_frame_with_rest();
        assert_eq!((status, rest.len()), (Status::Overflow { limit: 2 }, 0));
    }

    /// Feed `input` in chunks of `chunk` bytes; collect lines (as strings) and
    /// overflow reports (as "!OVERFLOW").
    fn run(cap: usize, input: &[u8], chunk: usize) -> Vec<std::string::String> {
        let mut f = LineFramer::new(std::vec![0u8; cap]);
        let mut out = Vec::new();
        let mut rest = input;
        loop {
            loop {
                match f.next_frame() {
                    Status::Partial => break,
                    Status::Complete(l) => {
                        out.push(std::string::String::from_utf8(l.to_vec()).unwrap())
                    }
                    Status::Overflow { limit } => out.push(std::format!("!OVERFLOW {limit}")),
                }
            }
            if rest.is_empty() {
                break;
            }
            let n = f.feed(&rest[..chunk.min(rest.len())]);
            assert!(n > 0, "no room after Partial");
            rest = &rest[n..];
        }
        if let Some(l) = f.finish() {
            out.push(std::format!(
                "{}<eof>",
                std::string::String::from_utf8(l.to_vec()).unwrap()
            ));
        }
        out
    }

    #[test]
    fn lines_in_any_chunking() {
        let input = b"a\r\nbb\n\nccc\n";
        for chunk in [1, 2, 3, 64] {
            assert_eq!(
                run(16, input, chunk),
                ["a", "bb", "", "ccc"],
                "chunk {chunk}"
            );
        }
    }

    #[test]
    fn oversized_line_then_good_line() {
        let mut input = Vec::new();
        input.extend_from_slice(b"ok\n");
        input.extend(core::iter::repeat_n(b'x', 100));
        input.extend_from_slice(b"\nafter\n");
        for chunk in [1, 7, 4096] {
            assert_eq!(
                run(8, &input, chunk),
                ["ok", "!OVERFLOW 8", "after"],
                "chunk {chunk}"
            );
        }
    }

    /// `len` bytes of message: `x`s, or `x`s ending in `\r` when `cr_inside`
    /// (a `\r` that is part of the message: before a `\r\n`, not a `\n`,
    /// which would make it the terminator's).
    fn message(len: usize, cr_inside: bool) -> Vec<u8> {
        let mut m = std::vec![b'x'; len];
        if cr_inside && let Some(last) = m.last_mut() {
            *last = b'\r';
        }
        m
    }

    #[test]
    fn a_message_of_exactly_the_limit_is_served_either_terminator() {
        let endings = [(&b"\n"[..], false), (b"\r\n", false), (b"\r\n", true)];
        for cap in [1, 2, 4, 16] {
            for (term, cr_inside) in endings {
                for chunk in [1, 2, 3, cap, cap + 1, 64] {
                    // N bytes, N + 1 bytes, N bytes: served, too large, served.
                    let at = message(cap, cr_inside);
                    let past = message(cap + 1, cr_inside);
                    let mut input = Vec::new();
                    for m in [&at, &past, &at] {
                        input.extend_from_slice(m);
                        input.extend_from_slice(term);
                    }
                    let at = std::string::String::from_utf8(at).unwrap();
                    assert_eq!(
                        run(cap, &input, chunk),
                        [at.clone(), std::format!("!OVERFLOW {cap}"), at],
                        "cap {cap} term {term:?} cr_inside {cr_inside} chunk {chunk}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_message_of_exactly_the_limit_at_end_of_input() {
        for chunk in [1, 4, 64] {
            assert_eq!(run(4, b"a\nbcde", chunk), ["a", "bcde<eof>"]);
            assert_eq!(run(4, b"a\nbcde\r", chunk), ["a", "bcde<eof>"]);
            assert_eq!(run(4, b"a\nbcd\r", chunk), ["a", "bcd<eof>"]);
            assert_eq!(run(4, b"a\nbcdef", chunk), ["a", "!OVERFLOW 4"]);
            assert_eq!(run(4, b"a\nbcde\rf", chunk), ["a", "!OVERFLOW 4"]);
        }
    }

    #[test]
    fn limit_is_the_buffer_size() {
        let f = LineFramer::new([0u8; 5]);
        assert_eq!(f.limit(), 5);
        assert_eq!(run(5, b"12345\n123456\n", 3), ["12345", "!OVERFLOW 5"]);
    }

    #[test]
    fn zero_size_buffer_serves_empty_lines_only() {
        for chunk in [1, 2, 64] {
            assert_eq!(
                run(0, b"\n\r\nab\n\nc\r\n\n", chunk),
                ["", "", "!OVERFLOW 0", "", "!OVERFLOW 0", ""],
                "chunk {chunk}"
            );
        }
    }

    #[test]
    fn every_short_stream_matches_the_reference() {
        use super::reference::{Frame, reference_frames};
        // Every stream over {x, \r, \n} up to this length (shorter under Miri).
        let max_len = if cfg!(miri) { 3 } else { 8 };
        for len in 0..=max_len {
            for code in 0..3usize.pow(len) {
                let input: Vec<u8> = (0..len)
                    .map(|i| b"x\r\n"[code / 3usize.pow(i) % 3])
                    .collect();
                for cap in 0..=4 {
                    let want: Vec<_> = reference_frames(&input, cap)
                        .into_iter()
                        .map(|frame| match frame {
                            Frame::Line(l) => std::string::String::from_utf8(l).unwrap(),
                            Frame::Overflow => std::format!("!OVERFLOW {cap}"),
                        })
                        .collect();
                    for chunk in [1, 2, 5] {
                        // The reference does not mark a last line without
                        // newline: drop `run`'s `<eof>`.
                        let got: Vec<_> = run(cap, &input, chunk)
                            .into_iter()
                            .map(|l| match l.strip_suffix("<eof>") {
                                Some(line) => line.into(),
                                None => l,
                            })
                            .collect();
                        assert_eq!(got, want, "cap {cap} chunk {chunk} {input:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn last_line_without_newline() {
        assert_eq!(run(8, b"a\nbc", 3), ["a", "bc<eof>"]);
        assert_eq!(run(4, b"a\nbcdefgh", 3), ["a", "!OVERFLOW 4"]);
    }

    #[test]
    fn newline_search_matches_position() {
        // Past three 16-byte blocks (past one under Miri).
        for len in 0..if cfg!(miri) { 20 } else { 50 } {
            for at in 0..=len {
                let mut v = std::vec![b'a'; len];
                if at < len {
                    v[at] = b'\n';
                }
                // Bytes that differ from '\n' by one bit or by borrow.
                for (i, b) in v.iter_mut().enumerate() {
                    if i != at && i % 3 == 0 {
                        *b = [0x0b, 0x09, 0x8a, 0x00, 0xff][i % 5];
                    }
                }
                assert_eq!(
                    find_newline(&v),
                    v.iter().position(|&b| b == b'\n'),
                    "{v:?}"
                );
                // A second newline after it, in the same 16-byte block or
                // word, or a later one: the first is still the answer.
                for later in [at + 1, at + 7, at + 8, at + 16] {
                    if at < len && later < len {
                        let mut w = v.clone();
                        w[later] = b'\n';
                        assert_eq!(find_newline(&w), Some(at), "{w:?}");
                    }
                }
            }
        }
    }
}
