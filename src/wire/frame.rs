//! Newline framing over a caller-owned fixed buffer.
//!
//! MCP's stdio transport sends one JSON message per line. [`LineFramer`] keeps
//! bytes in the buffer it was given and hands out complete lines in place
//! (without the `\n` and one trailing `\r`). Incomplete is not invalid:
//! [`Status::Partial`] just means "read more". A line that cannot fit the buffer
//! is reported once as [`Status::Overflow`], then discarded through its
//! newline, and framing resumes with the next line: nothing after it is lost.
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
    /// One complete line, without its line terminator. It stays valid (and
    /// mutable, for in-place unescaping) until the next call on the framer.
    Complete(&'a mut [u8]),
    /// A line did not fit the buffer (limit: [`LineFramer::limit`] bytes,
    /// terminator included). Its bytes are being discarded through the next
    /// newline.
    Overflow {
        /// The buffer size in bytes.
        limit: usize,
    },
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
}

impl<B: AsRef<[u8]> + AsMut<[u8]>> LineFramer<B> {
    /// A framer over `buf`. The buffer's size is the maximum frame size,
    /// including the line terminator.
    pub fn new(buf: B) -> Self {
        Self {
            buf,
            start: 0,
            end: 0,
            scanned: 0,
            discarding: false,
        }
    }

    /// The maximum frame size (the buffer's size), terminator included.
    pub fn limit(&self) -> usize {
        self.buf.as_ref().len()
    }

    /// Bytes buffered and not yet handed out.
    pub fn buffered(&self) -> usize {
        self.end - self.start
    }

    /// Free space to read into. Moves buffered bytes to the front first when
    /// that makes room. Empty only while a full buffer waits for
    /// [`next_frame`](Self::next_frame) to report it.
    pub fn spare(&mut self) -> &mut [u8] {
        if self.start > 0 && self.end == self.buf.as_ref().len() {
            self.compact();
        }
        let end = self.end;
        self.buf.as_mut().get_mut(end..).unwrap_or(&mut [])
    }

    /// Record that `n` bytes were written into [`spare`](Self::spare).
    pub fn commit(&mut self, n: usize) {
        let cap = self.buf.as_ref().len();
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

    /// The next complete line, an overflow report, or `Partial`.
    pub fn next_frame(&mut self) -> Status<'_> {
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
                    let cap = self.buf.as_ref().len();
                    if self.end - self.start >= cap {
                        // Full buffer, no newline: this line can never fit.
                        self.discarding = true;
                        self.start = 0;
                        self.end = 0;
                        self.scanned = 0;
                        return Status::Overflow { limit: cap };
                    }
                    self.scanned = data.len();
                    return Status::Partial;
                }
            }
        }
    }

    /// At end of input: the buffered bytes of a last line that had no
    /// newline, if any (`None` when nothing, or only the tail of an oversized
    /// line, is left). Resets the framer.
    pub fn finish(&mut self) -> Option<&mut [u8]> {
        let (start, end, discarding) = (self.start, self.end, self.discarding);
        self.start = 0;
        self.end = 0;
        self.scanned = 0;
        self.discarding = false;
        if discarding || start == end {
            return None;
        }
        let buf = self.buf.as_mut();
        let mut line_end = end;
        if buf.get(line_end - 1) == Some(&b'\r') {
            line_end -= 1;
        }
        buf.get_mut(start..line_end)
    }
}

/// Index of the first `\n` in `bytes`, a machine word at a time.
fn find_newline(bytes: &[u8]) -> Option<usize> {
    use crate::wire::swar::{ONES, first_stop, zero_bytes};
    let at = first_stop(
        bytes,
        |x| zero_bytes(x ^ (ONES * b'\n' as usize)),
        |b| b == b'\n',
    );
    (at < bytes.len()).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

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

    #[test]
    fn exact_fit_including_newline() {
        assert_eq!(run(4, b"abc\nabcd\nz\n", 1), ["abc", "!OVERFLOW 4", "z"]);
    }

    #[test]
    fn last_line_without_newline() {
        assert_eq!(run(8, b"a\nbc", 3), ["a", "bc<eof>"]);
        assert_eq!(run(4, b"a\nbcdefgh", 3), ["a", "!OVERFLOW 4"]);
    }

    #[test]
    fn newline_search_matches_position() {
        for len in 0..40 {
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
            }
        }
    }
}
