//! End-to-end stdio throughput of the bookshop binary.
//!
//! Builds nothing: point it at a release build of the bookshop.
//!
//! ```sh
//! cargo build --release -p bookshop && cargo build --release --example throughput
//! target/release/examples/throughput [BOOKSHOP] [--n 10000]
//! ```
//!
//! `BOOKSHOP` defaults to `target/release/bookshop`. After
//! `initialize` + `notifications/initialized` it pipelines N request lines
//! (fixed-seed LCG mix: 70% `tools/call` hits, 8% unknown titles, 8% schema
//! errors, 5% `tools/list`, 5% `resources/read`, 4% `ping`), written from one
//! thread while this one reads the answers. It checks that exactly N+1
//! answers come back (the `initialize` result first, the last request's last)
//! and prints one line on stdout:
//!
//! ```text
//! N=10000 requests/s=… peak_rss_kib=… server_cpu_us_per_request=… steal_pct=…
//! ```
//!
//! `requests/s` is N over the wall time from the first byte written to the
//! last answer read. `server_cpu_us_per_request` is the server's user +
//! system CPU time (from `/proc/<pid>/stat`, read after the last answer) over
//! N + 1 requests, start-up included (`-` when the server used under 0.2 s,
//! too few ticks to divide). `steal_pct` is the share of this
//! machine's CPU time that its hypervisor gave to other guests during the run
//! (`steal` in `/proc/stat`): on a shared VM, a run with much steal is a run
//! of the neighbours' load, not of the server. Both are in 10 ms ticks. `peak_rss_kib` is the server's `VmHWM` from
//! `/proc/<pid>/status`: polled every 50 ms and read once more after the last
//! answer, just before stdin is closed; the maximum is reported. Details go
//! to stderr. Exit status 1 on any failure.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

const DEFAULT_BIN: &str = "target/release/bookshop";
const DEFAULT_N: u64 = 10_000;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"throughput","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// Titles the bookshop has, and ones it does not.
const TITLES: &[&str] = &["Dune", "Neuromancer"];
const UNKNOWN: &[&str] = &["Nothing", "Snow Crash", "Solaris"];

/// Knuth's MMIX LCG, fixed seed.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as u32
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.next() as usize % from.len()]
    }
}

/// What one request is, so that its answer can be checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Hit,
    Miss,
    SchemaError,
    List,
    Read,
    Ping,
}

impl Kind {
    /// Does `answer` look like the answer to this kind of request?
    fn matches(self, answer: &str) -> bool {
        let has = |s: &str| answer.contains(s);
        match self {
            Kind::Hit => has(r#""structuredContent":{"result":"#) && has(r#""isError":false"#),
            Kind::Miss => has("No book titled") && has(r#""isError":true"#),
            Kind::SchemaError => {
                has("Invalid arguments for tool top: /n must be <= 50") && has(r#""isError":true"#)
            }
            Kind::List => has(r#""result":{"tools":[{"name":"get_author""#),
            Kind::Read => has(r#""result":{"contents":[{"uri":"books://"#),
            Kind::Ping => answer.ends_with(r#","result":{}}"#),
        }
    }
}

/// How many requests of each kind were generated.
#[derive(Debug, Default)]
struct Mix {
    hits: u64,
    misses: u64,
    schema_errors: u64,
    lists: u64,
    reads: u64,
    pings: u64,
}

/// The whole input: initialize, initialized, then N requests with ids 1..=N;
/// the kind of each request (index = id - 1).
fn generate(n: u64) -> (Vec<u8>, Mix, Vec<Kind>) {
    let mut rng = Lcg(0x5eed_b00c);
    let mut mix = Mix::default();
    let mut input = Vec::with_capacity(n as usize * 112 + 512);
    let mut kinds = Vec::with_capacity(n as usize);
    writeln!(input, "{INITIALIZE}\n{INITIALIZED}").expect("writing to a Vec");
    for id in 1..=n {
        let roll = rng.next() % 100;
        let r = match roll {
            0..70 => {
                mix.hits += 1;
                kinds.push(Kind::Hit);
                let title = rng.pick(TITLES);
                writeln!(
                    input,
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"get_author","arguments":{{"title":"{title}"}}}}}}"#
                )
            }
            70..78 => {
                mix.misses += 1;
                kinds.push(Kind::Miss);
                let title = rng.pick(UNKNOWN);
                writeln!(
                    input,
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"get_author","arguments":{{"title":"{title}"}}}}}}"#
                )
            }
            78..86 => {
                mix.schema_errors += 1;
                kinds.push(Kind::SchemaError);
                let top = 51 + rng.next() % 49;
                writeln!(
                    input,
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"top","arguments":{{"n":{top}}}}}}}"#
                )
            }
            86..91 => {
                mix.lists += 1;
                kinds.push(Kind::List);
                writeln!(
                    input,
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#
                )
            }
            91..96 => {
                mix.reads += 1;
                kinds.push(Kind::Read);
                let title = rng.pick(TITLES);
                writeln!(
                    input,
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{"uri":"books://{title}"}}}}"#
                )
            }
            _ => {
                mix.pings += 1;
                kinds.push(Kind::Ping);
                writeln!(input, r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#)
            }
        };
        r.expect("writing to a Vec");
    }
    (input, mix, kinds)
}

/// `VmHWM` (peak resident set) of a live process, in KiB.
fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// User + system CPU time of a live process, in clock ticks (`utime` and
/// `stime`, fields 14 and 15 of `/proc/<pid>/stat`).
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let mut fields = rest.split_whitespace().skip(11); // field 3 is the first here
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

/// Ticks the hypervisor gave to other guests while this one wanted to run
/// (`steal` in the `cpu` line of `/proc/stat`, summed over all CPUs).
fn steal_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    line.split_whitespace().nth(8)?.parse().ok()
}

/// `USER_HZ`: the unit of `/proc` CPU times (100 on every Linux
/// architecture this runs on; `getconf CLK_TCK` shows it).
const TICKS_PER_SEC: f64 = 100.0;

struct Args {
    bin: String,
    n: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        bin: DEFAULT_BIN.to_owned(),
        n: DEFAULT_N,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--n" => {
                args.n = it
                    .next()
                    .and_then(|v| v.replace('_', "").parse().ok())
                    .filter(|&n| n > 0)
                    .ok_or("--n needs a positive integer")?;
            }
            "--bin" => args.bin = it.next().ok_or("--bin needs a path")?,
            s if !s.starts_with('-') => args.bin = s.to_owned(),
            s => return Err(format!("unknown option {s}")),
        }
    }
    Ok(args)
}

/// Answers kept for checking after the timed run.
const HEAD: usize = 1 << 20;

/// Counts lines in a stream of chunks; keeps the first [`HEAD`] bytes and the
/// last complete line.
#[derive(Default)]
struct LineTracker {
    lines: u64,
    head: Vec<u8>,
    first: Vec<u8>,
    last: Vec<u8>,
    partial: Vec<u8>,
}

impl LineTracker {
    fn push(&mut self, chunk: &[u8]) {
        if self.head.len() < HEAD {
            let take = chunk.len().min(HEAD - self.head.len());
            self.head.extend_from_slice(&chunk[..take]);
        }
        let count = chunk.iter().filter(|&&b| b == b'\n').count() as u64;
        if count == 0 {
            self.partial.extend_from_slice(chunk);
            return;
        }
        let first_nl = chunk.iter().position(|&b| b == b'\n').unwrap_or(0);
        let last_nl = chunk.iter().rposition(|&b| b == b'\n').unwrap_or(0);
        if self.lines == 0 {
            self.first.extend_from_slice(&self.partial);
            self.first.extend_from_slice(&chunk[..first_nl]);
        }
        self.last.clear();
        match chunk[..last_nl].iter().rposition(|&b| b == b'\n') {
            Some(prev) => self.last.extend_from_slice(&chunk[prev + 1..last_nl]),
            None => {
                self.last.extend_from_slice(&self.partial);
                self.last.extend_from_slice(&chunk[..last_nl]);
            }
        }
        self.partial.clear();
        self.partial.extend_from_slice(&chunk[last_nl + 1..]);
        self.lines += count;
    }
}

fn fail(msg: &str, child: &mut Child) -> ExitCode {
    eprintln!("throughput: {msg}");
    let _ = child.kill();
    let _ = child.wait();
    ExitCode::FAILURE
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("throughput: {e}\nusage: throughput [BOOKSHOP_BINARY] [--n N]");
            return ExitCode::from(2);
        }
    };
    let n = args.n;
    if !std::path::Path::new(&args.bin).is_file() {
        eprintln!(
            "throughput: no binary at {} (build it: cargo build --release -p bookshop)",
            args.bin
        );
        return ExitCode::FAILURE;
    }
    let (input, mix, kinds) = generate(n);
    let input_len = input.len();

    let mut child = match Command::new(&args.bin)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("throughput: cannot start {}: {e}", args.bin);
            return ExitCode::FAILURE;
        }
    };
    let pid = child.id();
    let (Some(stdin), Some(mut stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return fail("no pipes to the child", &mut child);
    };

    // Poll VmHWM every 50 ms, keep the maximum.
    let peak = Arc::new(AtomicU64::new(0));
    // The server's CPU time, read with the last VmHWM (before stdin closes).
    let server_ticks = Arc::new(AtomicU64::new(u64::MAX));
    let stop = Arc::new(AtomicBool::new(false));
    let poller = {
        let (peak, stop) = (Arc::clone(&peak), Arc::clone(&stop));
        thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Some(kib) = vm_hwm_kib(pid) {
                    peak.fetch_max(kib, Ordering::Relaxed);
                }
                thread::sleep(Duration::from_millis(50));
            }
        })
    };

    // Write everything, then hold stdin open until the reader has every
    // answer (or a deadline passes), read VmHWM once more, close stdin.
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let deadline = Duration::from_secs(30) + Duration::from_micros(100 * n);
    let steal_before = steal_ticks();
    let writer = {
        let (peak, server_ticks) = (Arc::clone(&peak), Arc::clone(&server_ticks));
        thread::spawn(move || -> (Instant, std::io::Result<()>) {
            let mut stdin: ChildStdin = stdin;
            let start = Instant::now();
            let written = stdin.write_all(&input).and_then(|()| stdin.flush());
            drop(input);
            if written.is_ok() {
                let _ = done_rx.recv_timeout(deadline);
            }
            if let Some(kib) = vm_hwm_kib(pid) {
                peak.fetch_max(kib, Ordering::Relaxed);
            }
            if let Some(t) = cpu_ticks(pid) {
                server_ticks.store(t, Ordering::Relaxed);
            }
            drop(stdin);
            (start, written)
        })
    };

    // Read answers until N+1 lines (or end of output).
    let expected = n + 1;
    let mut tracker = LineTracker::default();
    let mut buf = vec![0u8; 256 * 1024];
    let mut out_bytes = 0u64;
    let mut end = None;
    loop {
        let got = match stdout.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = done_tx.send(());
                return fail(&format!("reading the server's stdout: {e}"), &mut child);
            }
        };
        out_bytes += got as u64;
        tracker.push(&buf[..got]);
        if end.is_none() && tracker.lines >= expected {
            end = Some(Instant::now());
            let _ = done_tx.send(());
        }
    }
    let _ = done_tx.send(());
    let (start, written) = writer.join().expect("writer thread");
    stop.store(true, Ordering::Relaxed);
    poller.join().expect("poller thread");
    let status = child.wait();

    if let Err(e) = written {
        return fail(&format!("writing the server's stdin: {e}"), &mut child);
    }
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => return fail(&format!("server exited with {s}"), &mut child),
        Err(e) => return fail(&format!("waiting for the server: {e}"), &mut child),
    }
    if tracker.lines != expected || !tracker.partial.is_empty() {
        return fail(
            &format!(
                "expected {expected} answers, got {} (plus {} bytes without a newline)",
                tracker.lines,
                tracker.partial.len()
            ),
            &mut child,
        );
    }
    let first = String::from_utf8_lossy(&tracker.first);
    let last = String::from_utf8_lossy(&tracker.last);
    if !first.starts_with(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"#) {
        return fail(
            &format!("first answer is not the initialize result: {first}"),
            &mut child,
        );
    }
    if !last.starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{n},"#)) {
        return fail(
            &format!("last answer is not for id {n}: {last}"),
            &mut child,
        );
    }
    // Every complete answer kept from the head answers its request.
    let head = String::from_utf8_lossy(&tracker.head);
    let mut complete = head.split_inclusive('\n').filter(|l| l.ends_with('\n'));
    complete.next(); // the initialize result, checked above
    let mut checked = 0u64;
    for (i, line) in complete.enumerate() {
        let id = i as u64 + 1;
        let line = line.trim_end();
        let kind = kinds[i];
        if !line.starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{id},"#)) || !kind.matches(line) {
            return fail(
                &format!("answer to request {id} ({kind:?}) is wrong: {line}"),
                &mut child,
            );
        }
        checked += 1;
    }
    let Some(end) = end else {
        return fail("no end time", &mut child);
    };
    let secs = end.duration_since(start).as_secs_f64();
    let peak_kib = peak.load(Ordering::Relaxed);
    // Both CPU figures come in 10 ms ticks: coarse at small N.
    let cpus = thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let steal = match (steal_before, steal_ticks()) {
        (Some(a), Some(b)) => format!(
            "{:.0}",
            100.0 * b.saturating_sub(a) as f64 / TICKS_PER_SEC / (secs * cpus)
        ),
        _ => "?".to_owned(),
    };
    // Under 20 ticks (0.2 s) the per-request figure would be mostly rounding.
    let cpu = match server_ticks.load(Ordering::Relaxed) {
        t if t == u64::MAX || t < 20 => "-".to_owned(),
        t => format!("{:.2}", t as f64 / TICKS_PER_SEC * 1e6 / (n + 1) as f64),
    };
    eprintln!(
        "throughput: {n} requests ({mix:?}), {input_len} B in, {out_bytes} B out, {secs:.3} s wall, VmHWM {peak_kib} KiB; first {checked} answers checked one by one"
    );
    println!(
        "N={n} requests/s={:.0} peak_rss_kib={peak_kib} server_cpu_us_per_request={cpu} steal_pct={steal}",
        n as f64 / secs
    );
    ExitCode::SUCCESS
}
