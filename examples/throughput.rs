//! End-to-end stdio throughput of the bookshop binary.
//!
//! Builds nothing: point it at a release build of the bookshop.
//!
//! ```sh
//! cargo build --release -p bookshop && cargo build --release --example throughput
//! target/release/examples/throughput [BOOKSHOP] [--n 10000] [--echo 5]
//! ```
//!
//! `BOOKSHOP` defaults to `target/release/bookshop`. After
//! `initialize` + `notifications/initialized` it pipelines N request lines
//! (fixed-seed LCG mix, out of every 20 on average: 13 `tools/call`
//! `get_author` hits, 2 unknown titles, 1 argument of the wrong type, 1
//! `tools/list`, 1 `resources/read` found, 1 not found, 1 `ping`), written
//! from one thread while this one reads the answers. It checks that exactly
//! N+1 answers come back (the `initialize` result first, the last request's
//! last) and prints one line on stdout:
//!
//! ```text
//! N=10000 requests/s=… peak_rss_kib=… server_cpu_us_per_request=… steal_pct=…
//! ```
//!
//! With `--echo RUNS` it also runs an I/O-only echo server (this program
//! with `--serve-echo`: it reads the same lines as the bookshop does, copies
//! each request's id into a canned answer of the hit's bytes, flushes when
//! no complete line is buffered, parses no JSON) on the same input,
//! interleaved (bookshop, echo, bookshop, echo, ... RUNS times each), prints
//! one line per pair and then the medians:
//!
//! ```text
//! N=… runs=… median_bookshop_requests/s=… median_echo_requests/s=… median_ratio=…
//! ```
//!
//! `--write-input PATH` writes the generated input to PATH and exits (for
//! `scripts/stdio_cost.sh`, which counts instructions on it).
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
/// Unknown titles that are valid in a `books://` URI.
const UNKNOWN_URI: &[&str] = &["Nothing", "Solaris"];

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
    ReadMissing,
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
                has("Invalid arguments for tool get_author: /title must be of type string")
                    && has(r#""isError":true"#)
            }
            Kind::List => has(r#""result":{"tools":[{"name":"get_author""#),
            Kind::Read => has(r#""result":{"contents":[{"uri":"books://"#),
            Kind::ReadMissing => has(r#""error":{"code":-32602,"message":"No book titled"#),
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
    missing_reads: u64,
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
        // Out of every 20, on average: 13 hits, 2 misses, 1 call with an
        // argument of the wrong type, 1 `tools/list`, 1 `resources/read`
        // found, 1 not found, 1 `ping`.
        let roll = rng.next() % 20;
        let r = match roll {
            0..13 => {
                mix.hits += 1;
                kinds.push(Kind::Hit);
                let title = rng.pick(TITLES);
                writeln!(
                    input,
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"get_author","arguments":{{"title":"{title}"}}}}}}"#
                )
            }
            13..15 => {
                mix.misses += 1;
                kinds.push(Kind::Miss);
                let title = rng.pick(UNKNOWN);
                writeln!(
                    input,
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"get_author","arguments":{{"title":"{title}"}}}}}}"#
                )
            }
            15 => {
                mix.schema_errors += 1;
                kinds.push(Kind::SchemaError);
                let title = rng.next() % 100;
                writeln!(
                    input,
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"get_author","arguments":{{"title":{title}}}}}}}"#
                )
            }
            16 => {
                mix.lists += 1;
                kinds.push(Kind::List);
                writeln!(
                    input,
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#
                )
            }
            17 => {
                mix.reads += 1;
                kinds.push(Kind::Read);
                let title = rng.pick(TITLES);
                writeln!(
                    input,
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{"uri":"books://{title}"}}}}"#
                )
            }
            18 => {
                mix.missing_reads += 1;
                kinds.push(Kind::ReadMissing);
                let title = rng.pick(UNKNOWN_URI);
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
    /// Also run the I/O-only echo server, interleaved, this many times each.
    echo_runs: Option<u32>,
    /// Be the echo server (stdin to stdout), not the driver.
    serve_echo: bool,
    /// Only write the generated input to this file.
    write_input: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        bin: DEFAULT_BIN.to_owned(),
        n: DEFAULT_N,
        echo_runs: None,
        serve_echo: false,
        write_input: None,
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
            "--echo" => {
                args.echo_runs = Some(
                    it.next()
                        .and_then(|v| v.parse().ok())
                        .filter(|&k| k > 0)
                        .ok_or("--echo needs a positive number of runs")?,
                );
            }
            "--serve-echo" => args.serve_echo = true,
            "--write-input" => {
                args.write_input = Some(it.next().ok_or("--write-input needs a path")?);
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

/// Kill `child` (if it still runs) and hand back `msg` as the error.
fn fail(msg: String, child: &mut Child) -> Result<Outcome, String> {
    let _ = child.kill();
    let _ = child.wait();
    Err(msg)
}

/// One run's figures.
struct Outcome {
    rps: f64,
    secs: f64,
    peak_kib: u64,
    cpu: String,
    steal: String,
    out_bytes: u64,
    checked: u64,
}

/// Pipeline `input` (N requests after `initialize`) into `cmd`, read the
/// N + 1 answers and check them: every answer's id, and with `kinds` each
/// answer's kind (the echo server gives one canned answer to all).
fn run(
    cmd: &mut Command,
    n: u64,
    input: &Arc<[u8]>,
    kinds: Option<&[Kind]>,
) -> Result<Outcome, String> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start {cmd:?}: {e}"))?;
    let pid = child.id();
    let (Some(stdin), Some(mut stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return fail("no pipes to the child".into(), &mut child);
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
        let input = Arc::clone(input);
        thread::spawn(move || -> (Instant, std::io::Result<()>) {
            let mut stdin: ChildStdin = stdin;
            let start = Instant::now();
            let written = stdin.write_all(&input).and_then(|()| stdin.flush());
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
                return fail(format!("reading the server's stdout: {e}"), &mut child);
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
        return fail(format!("writing the server's stdin: {e}"), &mut child);
    }
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => return fail(format!("server exited with {s}"), &mut child),
        Err(e) => return fail(format!("waiting for the server: {e}"), &mut child),
    }
    if tracker.lines != expected || !tracker.partial.is_empty() {
        return fail(
            format!(
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
            format!("first answer is not the initialize result: {first}"),
            &mut child,
        );
    }
    if !last.starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{n},"#)) {
        return fail(format!("last answer is not for id {n}: {last}"), &mut child);
    }
    // Every complete answer kept from the head answers its request.
    let head = String::from_utf8_lossy(&tracker.head);
    let mut complete = head.split_inclusive('\n').filter(|l| l.ends_with('\n'));
    complete.next(); // the initialize result, checked above
    let mut checked = 0u64;
    for (i, line) in complete.enumerate() {
        let id = i as u64 + 1;
        let line = line.trim_end();
        let kind = kinds.and_then(|k| k.get(i).copied());
        if !line.starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{id},"#))
            || kind.is_some_and(|k| !k.matches(line))
        {
            return fail(
                format!("answer to request {id} ({kind:?}) is wrong: {line}"),
                &mut child,
            );
        }
        checked += 1;
    }
    let Some(end) = end else {
        return fail("no end time".into(), &mut child);
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
    Ok(Outcome {
        rps: n as f64 / secs,
        secs,
        peak_kib,
        cpu,
        steal,
        out_bytes,
        checked,
    })
}

/// The hit's answer after its id: what the echo server writes to every
/// request, so that both servers write about the same bytes.
const CANNED: &[u8] = br#","result":{"content":[{"type":"text","text":"Frank Herbert"}],"structuredContent":{"result":"Frank Herbert"},"isError":false}}"#;
/// The echo's answer to `initialize` (id 0).
const CANNED_INIT: &[u8] = br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"echo","version":"1"}}}"#;

/// The id token of a request line (`"id":` up to the next `,` or `}`);
/// `None` for a notification.
fn id_of(line: &[u8]) -> Option<&[u8]> {
    let at = line.windows(5).position(|w| w == br#""id":"#)? + 5;
    let rest = line.get(at..)?;
    let len = rest.iter().position(|&b| b == b',' || b == b'}')?;
    rest.get(..len)
}

/// The I/O-only baseline: read lines from stdin as the bookshop does
/// (64 KiB reads), answer every request with [`CANNED`] under its own id,
/// flush only when no complete line is buffered. No JSON parsed.
fn serve_echo() -> ExitCode {
    use std::io::{BufRead, BufReader, BufWriter};
    let mut input = BufReader::with_capacity(64 << 10, std::io::stdin().lock());
    let mut output = BufWriter::with_capacity(64 << 10, std::io::stdout().lock());
    let mut line = Vec::with_capacity(1024);
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(_) => return ExitCode::FAILURE,
        }
        let written = match id_of(&line) {
            Some(b"0") => output
                .write_all(CANNED_INIT)
                .and_then(|()| output.write_all(b"\n")),
            Some(id) => output
                .write_all(br#"{"jsonrpc":"2.0","id":"#)
                .and_then(|()| output.write_all(id))
                .and_then(|()| output.write_all(CANNED))
                .and_then(|()| output.write_all(b"\n")),
            None => Ok(()),
        };
        let flushed = if input.buffer().contains(&b'\n') {
            Ok(())
        } else {
            output.flush()
        };
        if written.and(flushed).is_err() {
            return ExitCode::FAILURE;
        }
    }
    match output.flush() {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("throughput: {e}\nusage: throughput [BOOKSHOP_BINARY] [--n N] [--echo RUNS]");
            return ExitCode::from(2);
        }
    };
    if args.serve_echo {
        return serve_echo();
    }
    let n = args.n;
    if let Some(path) = &args.write_input {
        let (input, _, _) = generate(n);
        return match std::fs::write(path, input) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("throughput: cannot write {path}: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if !std::path::Path::new(&args.bin).is_file() {
        eprintln!(
            "throughput: no binary at {} (build it: cargo build --release -p bookshop)",
            args.bin
        );
        return ExitCode::FAILURE;
    }
    let (input, mix, kinds) = generate(n);
    let input_len = input.len();
    let input: Arc<[u8]> = input.into();
    let report = |what: &str, o: &Outcome| {
        eprintln!(
            "throughput: {what}: {n} requests ({mix:?}), {input_len} B in, {} B out, {:.3} s wall, VmHWM {} KiB; first {} answers checked one by one",
            o.out_bytes, o.secs, o.peak_kib, o.checked
        );
    };
    let Some(runs) = args.echo_runs else {
        return match run(&mut Command::new(&args.bin), n, &input, Some(&kinds)) {
            Ok(o) => {
                report("bookshop", &o);
                println!(
                    "N={n} requests/s={:.0} peak_rss_kib={} server_cpu_us_per_request={} steal_pct={}",
                    o.rps, o.peak_kib, o.cpu, o.steal
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("throughput: {e}");
                ExitCode::FAILURE
            }
        };
    };
    let me = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("throughput: cannot find this program to run the echo server: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Interleaved: bookshop, echo, bookshop, echo... so that both see the
    // same weather on a shared machine; the medians are reported.
    let (mut shop, mut echo, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for i in 1..=runs {
        let b = run(&mut Command::new(&args.bin), n, &input, Some(&kinds));
        let e = run(Command::new(&me).arg("--serve-echo"), n, &input, None);
        let (b, e) = match (b, e) {
            (Ok(b), Ok(e)) => (b, e),
            (Err(err), _) | (_, Err(err)) => {
                eprintln!("throughput: {err}");
                return ExitCode::FAILURE;
            }
        };
        report("bookshop", &b);
        println!(
            "run={i} bookshop_requests/s={:.0} echo_requests/s={:.0} ratio={:.2} bookshop_peak_rss_kib={} echo_peak_rss_kib={} steal_pct={}/{}",
            b.rps,
            e.rps,
            b.rps / e.rps,
            b.peak_kib,
            e.peak_kib,
            b.steal,
            e.steal
        );
        shop.push(b.rps);
        echo.push(e.rps);
        ratios.push(b.rps / e.rps);
    }
    println!(
        "N={n} runs={runs} median_bookshop_requests/s={:.0} median_echo_requests/s={:.0} median_ratio={:.2}",
        median(shop),
        median(echo),
        median(ratios)
    );
    ExitCode::SUCCESS
}
