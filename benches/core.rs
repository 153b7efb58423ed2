//! Wall-clock benchmarks of the core (criterion).
//!
//! ```sh
//! cargo bench --bench core                          # full: warm-up 500 ms, 2 s, 50 samples
//! PICOMCP_BENCH_QUICK=1 cargo bench --bench core    # CI: warm-up 50 ms, 200 ms, 10 samples
//! ```
//!
//! Groups:
//!
//! * `handle/<case>`: one request line through `Server::handle` (scan, dispatch,
//!   schema check, handler, emit) on the bookshop, next to `serde_json`, a
//!   baseline that parses the same line into a `serde_json::Value`, does the
//!   same checks and lookups, builds the same answer as a `Value` and
//!   serializes it into a reused `Vec<u8>`. Both copy the request into a
//!   scratch buffer first (`handle` unescapes in place); `copy` measures that
//!   copy alone. At start-up each baseline answer is checked to be the same
//!   JSON as picomcp's.
//! * `schema/<case>`: `Schema::validate` alone.
//! * `framer/<read size>`: `LineFramer` over a 64 KiB stream of request lines.
//! * `paired/<case>` (printed after criterion's groups, in unfiltered runs
//!   only): picomcp and the baseline timed in alternating short batches, and
//!   the median of the per-round ratios, which a machine's drift in speed
//!   does not move the way it moves the ratio of two separate criterion runs.
//!
//! Throughput is the request (or stream) length in bytes.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group};
use picomcp::schema::{Keywords, Literal, Property, Schema};
use picomcp::wire::frame::{LineFramer, Status};
use picomcp::wire::json::{Limits, Value};
use picomcp::{Connection, Server};
use serde_json::{Value as Json, json};

#[path = "../examples/bookshop/src/shop.rs"]
#[allow(dead_code)]
mod shop;

static SERVER: Server<'static, shop::Shop> = shop::server();

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// `(group name, request line)`.
const CASES: &[(&str, &str)] = &[
    ("initialize", INITIALIZE),
    (
        "tools_list",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    ),
    (
        "tools_call_hit",
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}"#,
    ),
    (
        "tools_call_tool_error",
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Nothing"}}}"#,
    ),
    (
        "tools_call_schema_error",
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"top","arguments":{"n":99}}}"#,
    ),
    (
        "resources_read_found",
        r#"{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"books://Dune"}}"#,
    ),
    (
        "resources_read_not_found",
        r#"{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"books://Nothing"}}"#,
    ),
];

/// Larger than any request line used here.
const SCRATCH: usize = 1024;
/// Output buffer for one answer (the stdio bookshop uses 256 KiB; only the
/// written prefix is touched).
const OUT: usize = 16 * 1024;

fn quick() -> bool {
    std::env::var("PICOMCP_BENCH_QUICK").is_ok_and(|v| v == "1")
}

fn config() -> Criterion {
    let c = Criterion::default();
    if quick() {
        c.warm_up_time(Duration::from_millis(50))
            .measurement_time(Duration::from_millis(200))
            .sample_size(10)
    } else {
        c.warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .sample_size(50)
    }
}

/// A connection after `initialize` (2025-11-25) and `initialized`.
fn ready_connection() -> Connection {
    let mut conn = Connection::new();
    let mut out = vec![0u8; OUT];
    let mut line = INITIALIZE.as_bytes().to_vec();
    let n = SERVER.handle(&mut conn, &mut line, &mut out);
    assert!(n > 0 && conn.version().is_some(), "initialize failed");
    let mut line = INITIALIZED.as_bytes().to_vec();
    assert_eq!(SERVER.handle(&mut conn, &mut line, &mut out), 0);
    conn
}

// ---------------------------------------------------------------------------
// The serde_json baseline: the same bookshop, written the usual way.
// ---------------------------------------------------------------------------

const VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// What a serde_json server keeps as data: the `initialize` result (less
/// `protocolVersion`) and the tool list, as `Value`s. Taken once, at start-up,
/// from picomcp's own answers so that both describe the same bookshop.
struct Static {
    init_result: Json,
    tools: Json,
}

fn static_data() -> Static {
    let answer = |line: &str, conn: &mut Connection| -> Json {
        let mut out = vec![0u8; OUT];
        let mut frame = line.as_bytes().to_vec();
        let n = SERVER.handle(conn, &mut frame, &mut out);
        let mut v: Json = serde_json::from_slice(&out[..n]).expect("picomcp answer is JSON");
        v["result"].take()
    };
    let mut conn = Connection::new();
    let mut init_result = answer(INITIALIZE, &mut conn);
    if let Some(o) = init_result.as_object_mut() {
        o.remove("protocolVersion");
    }
    let tools = answer(
        r#"{"jsonrpc":"2.0","id":0,"method":"tools/list"}"#,
        &mut conn,
    )["tools"]
        .take();
    assert!(tools.is_array(), "tools/list answers a list");
    Static { init_result, tools }
}

fn rpc_result(id: Json, result: Json) -> Json {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn rpc_error(id: Json, code: i64, message: String, data: Option<Json>) -> Json {
    let mut error = json!({"code": code, "message": message});
    if let Some(d) = data {
        error["data"] = d;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": error})
}

fn invalid_params(id: Json) -> Json {
    rpc_error(
        id,
        -32602,
        "Invalid request parameters".to_owned(),
        Some(json!("")),
    )
}

fn tool_error_text(text: String) -> Json {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

fn author(title: &str) -> Option<&'static str> {
    shop::CATALOG
        .iter()
        .find(|(t, _)| *t == title)
        .map(|(_, a)| *a)
}

/// `tools/call` result (or `Err` for a JSON-RPC error answer).
fn call_tool(params: Option<&Json>) -> Result<Json, (i64, String)> {
    let bad = || (-32602, "Invalid request parameters".to_owned());
    let params = params.and_then(Json::as_object).ok_or_else(bad)?;
    let name = params.get("name").and_then(Json::as_str).ok_or_else(bad)?;
    let empty = serde_json::Map::new();
    let args = match params.get("arguments") {
        None | Some(Json::Null) => &empty,
        Some(Json::Object(a)) => a,
        Some(_) => return Err(bad()),
    };
    let invalid = |tool: &str, why: &str| {
        Ok(tool_error_text(format!(
            "Invalid arguments for tool {tool}: {why}"
        )))
    };
    match name {
        "get_author" | "get_author_strict" => {
            let title = match args.get("title") {
                None => return invalid(name, "/title is required"),
                Some(Json::String(s)) => s.as_str(),
                Some(_) => return invalid(name, "/title must be of type string"),
            };
            match author(title) {
                Some(a) => Ok(json!({
                    "content": [{"type": "text", "text": a}],
                    "structuredContent": {"result": a},
                    "isError": false,
                })),
                None if name == "get_author" => Ok(tool_error_text(format!(
                    "Error executing tool {name}: No book titled '{title}' in the catalog."
                ))),
                None => Err((-32602, format!("No book titled '{title}' in the catalog."))),
            }
        }
        "top" => {
            let n = match args.get("n") {
                None => return invalid(name, "/n is required"),
                Some(v) => match v.as_i64() {
                    None => return invalid(name, "/n must be of type integer"),
                    Some(n) if n < 0 => return invalid(name, "/n must be >= 0"),
                    Some(n) if n > 50 => return invalid(name, "/n must be <= 50"),
                    Some(n) => n as usize,
                },
            };
            let titles: Vec<&str> = shop::CATALOG.iter().take(n).map(|(t, _)| *t).collect();
            let content: Vec<Json> = titles
                .iter()
                .map(|t| json!({"type": "text", "text": t}))
                .collect();
            Ok(json!({
                "content": content,
                "structuredContent": {"result": titles},
                "isError": false,
            }))
        }
        _ => Err((-32602, format!("Unknown tool: {name}"))),
    }
}

/// Answer one request line the serde_json way; `None` for notifications.
fn serde_answer(data: &Static, line: &[u8]) -> Option<Json> {
    let Ok(v) = serde_json::from_slice::<Json>(line) else {
        return Some(rpc_error(
            Json::Null,
            -32700,
            "Parse error".to_owned(),
            None,
        ));
    };
    let invalid = || {
        Some(rpc_error(
            Json::Null,
            -32600,
            "Invalid Request".to_owned(),
            None,
        ))
    };
    let Some(obj) = v.as_object() else {
        return invalid();
    };
    if obj.get("jsonrpc").and_then(Json::as_str) != Some("2.0") {
        return invalid();
    }
    let Some(method) = obj.get("method").and_then(Json::as_str) else {
        return invalid();
    };
    let id = obj.get("id")?.clone();
    let params = obj.get("params");
    Some(match method {
        "ping" => rpc_result(id, json!({})),
        "initialize" => {
            let p = params.and_then(Json::as_object);
            let requested = p
                .and_then(|p| p.get("protocolVersion"))
                .and_then(Json::as_str);
            let caps_ok = p
                .and_then(|p| p.get("capabilities"))
                .is_some_and(Json::is_object);
            let info_ok = p.and_then(|p| p.get("clientInfo")).is_some_and(|ci| {
                ci.get("name").is_some_and(Json::is_string)
                    && ci.get("version").is_some_and(Json::is_string)
            });
            match requested {
                Some(req) if caps_ok && info_ok => {
                    let version = VERSIONS
                        .iter()
                        .find(|v| **v == req)
                        .copied()
                        .unwrap_or(VERSIONS[0]);
                    let mut result = data.init_result.clone();
                    result["protocolVersion"] = json!(version);
                    rpc_result(id, result)
                }
                _ => invalid_params(id),
            }
        }
        "tools/list" => rpc_result(id, json!({"tools": data.tools.clone()})),
        "tools/call" => match call_tool(params) {
            Ok(result) => rpc_result(id, result),
            Err((code, message)) => rpc_error(id, code, message, None),
        },
        "resources/read" => {
            let Some(uri) = params.and_then(|p| p.get("uri")).and_then(Json::as_str) else {
                return Some(invalid_params(id));
            };
            let found = uri
                .strip_prefix("books://")
                .and_then(|title| shop::CATALOG.iter().find(|(t, _)| *t == title));
            match found {
                Some((t, a)) => rpc_result(
                    id,
                    json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": format!("{t} by {a}")}]}),
                ),
                None => {
                    let title = uri.strip_prefix("books://").unwrap_or(uri);
                    rpc_error(
                        id,
                        -32602,
                        format!("No book titled '{title}' in the catalog."),
                        Some(json!({"uri": uri})),
                    )
                }
            }
        }
        _ => rpc_error(
            id,
            -32601,
            "Method not found".to_owned(),
            Some(json!(method)),
        ),
    })
}

/// Baseline: parse, answer, serialize into `out` (cleared first). Not inlined,
/// so that a profiler can count it.
#[inline(never)]
fn serde_handle(data: &Static, line: &[u8], out: &mut Vec<u8>) -> usize {
    out.clear();
    if let Some(answer) = serde_answer(data, line) {
        serde_json::to_writer(&mut *out, &answer).expect("serializing a Value");
        out.push(b'\n');
    }
    out.len()
}

fn handle_cases(c: &mut Criterion) {
    let data = static_data();
    for &(name, line) in CASES {
        let line = line.as_bytes();
        let len = line.len();
        let mut scratch = [0u8; SCRATCH];
        let mut out = vec![0u8; OUT];
        let mut vec_out = Vec::with_capacity(OUT);

        // Both sides answer with the same JSON.
        let mut conn = if name == "initialize" {
            Connection::new()
        } else {
            ready_connection()
        };
        let mut frame = line.to_vec();
        let n = SERVER.handle(&mut conn, &mut frame, &mut out);
        let ours: Json = serde_json::from_slice(&out[..n]).expect("picomcp answer is JSON");
        serde_handle(&data, line, &mut vec_out);
        let theirs: Json = serde_json::from_slice(&vec_out).expect("baseline answer is JSON");
        assert_eq!(ours, theirs, "{name}: baseline answers differently");

        let mut g = c.benchmark_group(format!("handle/{name}"));
        g.throughput(Throughput::Bytes(len as u64));
        g.bench_function("copy", |b| {
            b.iter(|| {
                let frame = &mut scratch[..len];
                frame.copy_from_slice(black_box(line));
                black_box(frame);
            });
        });
        if name == "initialize" {
            g.bench_function("picomcp", |b| {
                b.iter(|| {
                    let frame = &mut scratch[..len];
                    frame.copy_from_slice(black_box(line));
                    let mut conn = Connection::new();
                    let n = SERVER.handle(&mut conn, frame, &mut out);
                    black_box((conn, &out[..n]));
                });
            });
        } else {
            let mut conn = ready_connection();
            g.bench_function("picomcp", |b| {
                b.iter(|| {
                    let frame = &mut scratch[..len];
                    frame.copy_from_slice(black_box(line));
                    let n = SERVER.handle(&mut conn, frame, &mut out);
                    black_box(&out[..n]);
                });
            });
        }
        g.bench_function("serde_json", |b| {
            b.iter(|| {
                let frame = &mut scratch[..len];
                frame.copy_from_slice(black_box(line));
                let n = serde_handle(&data, frame, &mut vec_out);
                black_box(&vec_out[..n]);
            });
        });
        g.finish();
    }
}

// ---------------------------------------------------------------------------
// Schema check alone.
// ---------------------------------------------------------------------------

const TAG: Schema = Schema::string().with(&Keywords::new().min_length(1).max_length(32));
const POINT: Schema = Schema::object(&[
    Property::new("x", Schema::number()),
    Property::new("y", Schema::number()),
])
.required(&["x", "y"]);
const FORMATS: &[Literal] = &[
    Literal::Str("hardcover"),
    Literal::Str("paperback"),
    Literal::Str("ebook"),
];
/// Eight properties of mixed types and constraints.
const BOOK: Schema = Schema::object(&[
    Property::new(
        "title",
        Schema::string().with(&Keywords::new().min_length(1).max_length(200)),
    ),
    Property::new(
        "year",
        Schema::integer().with(&Keywords::new().minimum(0).maximum(3000)),
    ),
    Property::new("price", Schema::number().with(&Keywords::new().minimum(0))),
    Property::new("in_stock", Schema::boolean()),
    Property::new(
        "format",
        Schema::string().with(&Keywords::new().enum_values(FORMATS)),
    ),
    Property::new(
        "tags",
        Schema::array(&TAG).with(&Keywords::new().max_items(8)),
    ),
    Property::new("isbn", Schema::string().nullable()),
    Property::new("shelf", POINT),
])
.required(&["title", "year", "format"])
.additional_properties(false);
const BOOK_JSON: &str = r#"{"title":"Dune","year":1965,"price":9.99,"in_stock":true,"format":"paperback","tags":["sf","classic","desert"],"isbn":null,"shelf":{"x":1.5,"y":-2}}"#;

fn schema_check(c: &mut Criterion) {
    let top = shop::TOOLS
        .iter()
        .find(|t| t.descriptor.name == "top")
        .expect("bookshop has top")
        .descriptor
        .input_schema;
    let cases: [(&str, &Schema<'static>, &str); 2] = [
        ("top_n3", top, r#"{"n":3}"#),
        ("object_8_properties", &BOOK, BOOK_JSON),
    ];
    let mut g = c.benchmark_group("schema");
    for (name, schema, json) in cases {
        let value = Value::parse(json.as_bytes(), &Limits::DEFAULT).expect("valid JSON");
        assert!(schema.validate(&value).is_ok(), "{name}: must pass");
        g.throughput(Throughput::Bytes(json.len() as u64));
        g.bench_function(name, |b| {
            b.iter(|| black_box(schema.validate(black_box(&value)).is_ok()));
        });
    }
    g.finish();
}

// ---------------------------------------------------------------------------
// The framer alone.
// ---------------------------------------------------------------------------

const STREAM: usize = 64 * 1024;
/// Framer buffer (max message size) for the framer benchmark.
const FRAMER_BUF: usize = 16 * 1024;

/// Request lines, cycling through the cases plus `ping`, up to 64 KiB.
fn stream() -> (Vec<u8>, usize) {
    let mut s = Vec::with_capacity(STREAM);
    let mut lines = 0;
    let ping = r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#;
    for line in CASES.iter().skip(1).map(|(_, l)| *l).chain([ping]).cycle() {
        if s.len() + line.len() + 1 > STREAM {
            break;
        }
        s.extend_from_slice(line.as_bytes());
        s.push(b'\n');
        lines += 1;
    }
    (s, lines)
}

/// Feed `input` to a fresh framer `read` bytes at a time; the frames seen.
fn frame_all(input: &[u8], read: usize, buf: &mut [u8]) -> usize {
    let mut framer = LineFramer::new(buf);
    let mut frames = 0;
    let mut rest = input;
    loop {
        loop {
            match framer.next_frame() {
                Status::Partial => break,
                Status::Complete(line) => {
                    black_box(line);
                    frames += 1;
                }
                _ => panic!("unexpected overflow"),
            }
        }
        if rest.is_empty() {
            return frames;
        }
        let n = framer.feed(&rest[..read.min(rest.len())]);
        rest = &rest[n..];
    }
}

fn framer(c: &mut Criterion) {
    let (input, lines) = stream();
    let mut buf = vec![0u8; FRAMER_BUF];
    let mut g = c.benchmark_group("framer");
    g.throughput(Throughput::Bytes(input.len() as u64));
    for read in [1usize, 64, 4096] {
        assert_eq!(frame_all(&input, read, &mut buf), lines);
        g.bench_function(format!("read_{read}"), |b| {
            b.iter(|| frame_all(black_box(&input), read, &mut buf));
        });
    }
    g.finish();
}

// ---------------------------------------------------------------------------
// Paired ratio: picomcp and the baseline timed in alternation.
// ---------------------------------------------------------------------------

/// Time `k` runs of `f`.
fn time_runs(k: u32, f: &mut dyn FnMut()) -> Duration {
    let start = std::time::Instant::now();
    for _ in 0..k {
        f();
    }
    start.elapsed()
}

/// Criterion measures picomcp, then the baseline, seconds apart; on a VM
/// whose speed drifts, the ratio of the two medians moves with the drift.
/// Here each round times a short batch of each, back to back (which one goes
/// first alternates), and takes the ratio within the round: drift slower
/// than a round cancels out. Prints the median ratio over the rounds and the
/// 10th and 90th percentiles.
fn paired_ratio() {
    let data = static_data();
    let rounds = if quick() { 40 } else { 400 };
    println!("paired: baseline time / picomcp time, {rounds} rounds of ~0.2 ms batches per side");
    for &(name, line) in CASES {
        let line = line.as_bytes();
        let len = line.len();
        // The same per-iteration work as in `handle_cases`.
        let (mut scratch, mut scratch2) = ([0u8; SCRATCH], [0u8; SCRATCH]);
        let mut out = vec![0u8; OUT];
        let mut vec_out = Vec::with_capacity(OUT);
        let mut ready = ready_connection();
        let fresh = name == "initialize";
        let mut ours = || {
            let frame = &mut scratch[..len];
            frame.copy_from_slice(black_box(line));
            let n = if fresh {
                let mut conn = Connection::new();
                let n = SERVER.handle(&mut conn, frame, &mut out);
                black_box(conn);
                n
            } else {
                SERVER.handle(&mut ready, frame, &mut out)
            };
            black_box(&out[..n]);
        };
        let mut theirs = || {
            let frame = &mut scratch2[..len];
            frame.copy_from_slice(black_box(line));
            let n = serde_handle(&data, frame, &mut vec_out);
            black_box(&vec_out[..n]);
        };
        // Batch size: ~0.2 ms of picomcp (after a warm-up).
        time_runs(2000, &mut ours);
        time_runs(500, &mut theirs);
        let per = time_runs(1000, &mut ours).as_secs_f64() / 1000.0;
        let k = ((2e-4 / per.max(1e-9)) as u32).clamp(10, 100_000);
        let mut ratios: Vec<f64> = (0..rounds)
            .map(|r| {
                let (a, b) = if r % 2 == 0 {
                    let a = time_runs(k, &mut ours);
                    (a, time_runs(k, &mut theirs))
                } else {
                    let b = time_runs(k, &mut theirs);
                    (time_runs(k, &mut ours), b)
                };
                b.as_secs_f64() / a.as_secs_f64().max(1e-12)
            })
            .collect();
        ratios.sort_by(f64::total_cmp);
        let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
        println!(
            "paired/{name:<26} median {:5.2}x  (p10 {:5.2}x, p90 {:5.2}x)",
            at(0.5),
            at(0.1),
            at(0.9)
        );
    }
}

/// A benchmark-name filter given on the command line, if any (criterion's
/// own arguments start with `-`; `--bench` is cargo's).
fn filter_given() -> bool {
    let mut args = std::env::args().skip(1);
    let mut given = false;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--list" | "--test" => return true,
            // Options that take a value.
            "--save-baseline"
            | "--baseline"
            | "--baseline-lenient"
            | "--load-baseline"
            | "--profile-time"
            | "--sample-size"
            | "--warm-up-time"
            | "--measurement-time"
            | "--nresamples"
            | "--noise-threshold"
            | "--confidence-level"
            | "--significance-level"
            | "--color"
            | "--format"
            | "--plotting-backend"
            | "--output-format" => {
                args.next();
            }
            s if !s.starts_with('-') => given = true,
            _ => {}
        }
    }
    given
}

criterion_group! {
    name = benches;
    config = config();
    targets = handle_cases, schema_check, framer
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    // Only in a whole run (`cargo bench --bench core`), not a filtered one.
    if !filter_given() {
        paired_ratio();
    }
}
