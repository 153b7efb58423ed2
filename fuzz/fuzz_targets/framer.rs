//! `wire::frame::LineFramer` against a plain line splitter.
//!
//! Input: byte 0 picks the read chunk size and the API (`feed` or
//! `spare`/`commit`), byte 1 the buffer size (8..=4096), the rest is the
//! stream. Every complete line must be free of `\n` and at most as long as
//! the buffer (a message of exactly the buffer's size is served, its
//! terminator not counted), and the sequence of lines and overflow reports
//! must be exactly what a naive splitter gives for the same buffer size:
//! lines that fit are reproduced byte for byte, in order; each line that does
//! not fit is reported once; nothing after it is lost.
#![no_main]

mod util;

use libfuzzer_sys::fuzz_target;
use picomcp::wire::frame::{LineFramer, Status};
use util::{Frame, reference_frames};

/// Buffer size from one byte: every size from 8 to 135, then coarser steps
/// up to 4096.
fn buffer_size(b: u8) -> usize {
    let b = usize::from(b);
    if b < 128 {
        8 + b
    } else {
        136 + (b - 128) * (4096 - 136) / 127
    }
}

/// Read size from seven bits: 1..=100, then up to 4200.
fn chunk_size(b: u8) -> usize {
    let k = usize::from(b >> 1);
    if k < 100 { k + 1 } else { (k - 99) * 150 }
}

fn drain(framer: &mut LineFramer<Vec<u8>>, cap: usize, got: &mut Vec<Frame>) {
    loop {
        match framer.next_frame() {
            Status::Partial => return,
            Status::Complete(line) => {
                assert!(!line.contains(&b'\n'), "a line holds a newline: {line:?}");
                assert!(
                    line.len() <= cap,
                    "line of {} bytes from a {cap}-byte buffer",
                    line.len()
                );
                got.push(Frame::Line(line.to_vec()));
            }
            Status::Overflow { limit } => {
                assert_eq!(
                    limit, cap,
                    "overflow reports the largest message: the buffer size"
                );
                got.push(Frame::Overflow);
            }
            other => panic!("unknown status {other:?}"),
        }
        assert!(framer.buffered() <= cap);
    }
}

fuzz_target!(|data: &[u8]| {
    let [c, b, stream @ ..] = data else { return };
    let cap = buffer_size(*b);
    let chunk = chunk_size(*c);
    let use_spare = c & 1 == 1;

    let mut framer = LineFramer::new(vec![0u8; cap]);
    assert_eq!(framer.limit(), cap);
    let mut got = Vec::new();
    let mut rest = stream;
    loop {
        drain(&mut framer, cap, &mut got);
        if rest.is_empty() {
            break;
        }
        let want = chunk.min(rest.len());
        let n = if use_spare {
            let spare = framer.spare();
            let n = spare.len().min(want);
            spare[..n].copy_from_slice(&rest[..n]);
            framer.commit(n);
            n
        } else {
            framer.feed(&rest[..want])
        };
        // After draining to `Partial` there is always room for a byte.
        assert!(n > 0, "framer accepts no input after reporting Partial");
        rest = &rest[n..];
    }
    if let Some(last) = framer.finish() {
        assert!(!last.contains(&b'\n'));
        assert!(last.len() <= cap);
        got.push(Frame::Line(last.to_vec()));
    }
    assert_eq!(framer.buffered(), 0, "finish resets the framer");
    assert_eq!(
        got,
        reference_frames(stream, cap),
        "framer and reference splitter disagree"
    );
});
