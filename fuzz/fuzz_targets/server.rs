//! Arbitrary bytes through `transport::serve` with the bookshop server.
//!
//! Input buffer 512 bytes, output buffer 2048, reads of varying sizes from
//! an in-memory transport whose output goes into a pre-allocated array, on
//! a thread with a small fixed stack. Checked for every input:
//!
//! * zero heap allocations while `serve` runs (a counting global allocator
//!   armed only around the call, on the serving thread);
//! * `serve` returns (libFuzzer's `-timeout` catches hangs) without a
//!   transport error, and without overflowing the small stack;
//! * the output is UTF-8 and every line is JSON: a response object
//!   (`"jsonrpc":"2.0"`, an `id`, exactly one of `result` / `error`), a batch
//!   answer (a non-empty array of responses), or a notification a handler
//!   sent (`method`, no `id`);
//! * answers (responses and batch answers) number at most the input lines
//!   plus one;
//! * no message is lost or answered twice, answers come in input order, and
//!   every id is echoed byte for byte: the input is cut into lines by a
//!   plain splitter and each line is classified with serde_json (must be
//!   answered with this id / with `null` / not at all / may be a batch), and
//!   the answers must match that list exactly.
#![no_main]

mod counting;
mod model;
#[path = "../../examples/bookshop/src/shop.rs"]
#[allow(dead_code)]
mod shop;
mod util;
mod worker;

use std::sync::{Mutex, OnceLock};

use counting::no_alloc;
use libfuzzer_sys::fuzz_target;
use model::{Expect, check_response, classify};
use picomcp::Server;
use util::{Frame, reference_frames};
use worker::Worker;

static SERVER: Server<'static, shop::Shop> = shop::server();

/// Input buffer: the largest message, terminator not counted.
const IN_CAP: usize = 512;
/// Output buffer: the largest answer.
const OUT_CAP: usize = 2048;
/// Longer inputs are skipped (run with `-max_len=4096`).
const MAX_INPUT: usize = 4096;
/// Where the transport's output goes: far more than any correct run writes
/// (at most one answer of `OUT_CAP` bytes per line, plus a few short
/// notifications per request).
const SINK_CAP: usize = 32 << 20;
/// Stack of the serving thread. The core never recurses on input depth, so
/// a small fixed stack must do for any input. Measured in the sanitizer
/// build (fat frames): every corpus input runs in the smallest thread glibc
/// gives (a 16 KiB request, 28 KiB mapped, ~14 KiB used by one request), so
/// this leaves about 5x headroom (`worker`).
const STACK: usize = 128 << 10;

// ---------------------------------------------------------------------------
// In-memory transport
// ---------------------------------------------------------------------------

#[derive(Debug)]
struct SinkFull;

impl std::fmt::Display for SinkFull {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("output sink full")
    }
}

impl std::error::Error for SinkFull {}

impl embedded_io::Error for SinkFull {
    fn kind(&self) -> embedded_io::ErrorKind {
        embedded_io::ErrorKind::OutOfMemory
    }
}

/// Reads `input` in chunks of varying size; writes into a fixed array.
struct MemIo<'a> {
    input: &'a [u8],
    reads: usize,
    out: &'a mut [u8],
    len: usize,
}

impl embedded_io::ErrorType for MemIo<'_> {
    type Error = SinkFull;
}

impl embedded_io::Read for MemIo<'_> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, SinkFull> {
        const SIZES: [usize; 7] = [1, 7, 64, 3, 513, 100, 4096];
        let chunk = SIZES[(self.reads + self.input.len()) % SIZES.len()];
        self.reads += 1;
        let n = buf.len().min(self.input.len()).min(chunk);
        buf[..n].copy_from_slice(&self.input[..n]);
        self.input = &self.input[n..];
        Ok(n)
    }
}

impl embedded_io::Write for MemIo<'_> {
    fn write(&mut self, buf: &[u8]) -> Result<usize, SinkFull> {
        let dst = self
            .out
            .get_mut(self.len..self.len + buf.len())
            .ok_or(SinkFull)?;
        dst.copy_from_slice(buf);
        self.len += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> Result<(), SinkFull> {
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Checking the output
// ---------------------------------------------------------------------------

const PREFIX: &str = "{\"jsonrpc\":\"2.0\",\"id\":";

/// A `null`-id error or array that only an array line can get.
fn is_batch_answer(line: &str, v: &serde_json::Value) -> bool {
    line.starts_with('[')
        || (line.starts_with(&format!("{PREFIX}null,\"error\":"))
            && (v["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("batch"))
                || v["error"]["data"]
                    .as_str()
                    .is_some_and(|d| d.contains("batch"))))
}

fn check_output(input: &[u8], output: &[u8]) {
    let text = std::str::from_utf8(output).expect("the output is UTF-8");
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "the output ends with a newline"
    );
    let mut answers = Vec::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("an output line is not JSON ({e}): {line:?}"));
        match &v {
            serde_json::Value::Object(o) if o.contains_key("method") && !o.contains_key("id") => {
                assert_eq!(v["jsonrpc"].as_str(), Some("2.0"), "{line}");
                assert!(v["method"].is_string(), "{line}");
                assert!(
                    !o.contains_key("result") && !o.contains_key("error"),
                    "{line}"
                );
                continue; // a handler's notification: not an answer
            }
            serde_json::Value::Array(items) => {
                assert!(!items.is_empty(), "an empty batch answer: {line}");
                for item in items {
                    check_response(item, line);
                }
            }
            _ => check_response(&v, line),
        }
        answers.push((line, v));
    }
    let newlines = input.iter().filter(|&&b| b == b'\n').count();
    assert!(
        answers.len() <= newlines + 1,
        "{} answers to {newlines} lines",
        answers.len()
    );

    let expected: Vec<Expect> = reference_frames(input, IN_CAP)
        .into_iter()
        .map(|f| match f {
            Frame::Overflow => Expect::Overflow,
            Frame::Line(l) => classify(&l),
        })
        .collect();
    let must = expected
        .iter()
        .filter(|e| matches!(e, Expect::Answer(_) | Expect::Overflow))
        .count();
    let may = expected
        .iter()
        .filter(|e| matches!(e, Expect::MaybeBatch | Expect::Unknown))
        .count();
    assert!(
        (must..=must + may).contains(&answers.len()),
        "{} answers, expected {must}..={} for {expected:?}",
        answers.len(),
        must + may
    );
    if expected.iter().any(|e| matches!(e, Expect::Unknown)) {
        return;
    }
    let mut next = answers.iter().peekable();
    for (i, e) in expected.iter().enumerate() {
        match e {
            Expect::Nothing | Expect::Unknown => {}
            Expect::MaybeBatch => {
                if next.peek().is_some_and(|(l, v)| is_batch_answer(l, v)) {
                    next.next();
                }
            }
            Expect::Answer(id) => {
                let (line, _) = next
                    .next()
                    .unwrap_or_else(|| panic!("line {i} ({e:?}) is not answered"));
                let head = match id {
                    Some(id) => format!("{PREFIX}{id},"),
                    None => format!("{PREFIX}null,\"error\":"),
                };
                assert!(
                    line.starts_with(&head),
                    "line {i}: want an answer starting {head:?}, got {line}"
                );
            }
            Expect::Overflow => {
                let (line, _) = next
                    .next()
                    .unwrap_or_else(|| panic!("overflowing line {i} is not answered"));
                let head = format!(
                    "{PREFIX}null,\"error\":{{\"code\":-32600,\"message\":\"message too large: limit {IN_CAP} bytes\""
                );
                assert!(line.starts_with(&head), "line {i}: {line}");
            }
        }
    }
    if let Some((line, _)) = next.next() {
        panic!("an answer no line asked for: {line}");
    }
}

// ---------------------------------------------------------------------------
// The serving thread
// ---------------------------------------------------------------------------

fn serve_and_check(input: &[u8], sink: &mut [u8]) {
    let mut inbuf = [0u8; IN_CAP];
    let mut outbuf = [0u8; OUT_CAP];
    let mut io = MemIo {
        input,
        reads: 0,
        out: sink,
        len: 0,
    };
    let result = no_alloc("serve", || {
        picomcp::transport::serve(&SERVER, &mut io, &mut inbuf, &mut outbuf)
    });
    if let Err(e) = result {
        panic!("serve failed: {e:?} after writing {} bytes", io.len);
    }
    let written = io.len;
    check_output(input, &sink[..written]);
}

fn worker() -> &'static Mutex<Worker> {
    static WORKER: OnceLock<Mutex<Worker>> = OnceLock::new();
    WORKER.get_or_init(|| {
        let mut sink = vec![0u8; SINK_CAP];
        Mutex::new(Worker::spawn("serve", STACK, move |input| {
            serve_and_check(input, &mut sink)
        }))
    })
}

fuzz_target!(|data: &[u8]| {
    if data.len() > MAX_INPUT {
        return;
    }
    worker().lock().expect("worker lock").run(data);
});
