//! JSONTestSuite conformance for `wire::json::validate`.
//!
//! Every `y_*` file must be accepted, every `n_*` file rejected, and every
//! `i_*` file must return (either way) without panicking. Runs on a thread
//! with a 64 KiB stack to prove the scanner does not recurse on input depth.
//! Accepted files are also walked with the borrowed views (`Value`,
//! `JsonStr`, `Number`) to check that navigation agrees with validation.

use std::path::PathBuf;
use std::{fs, thread};

use picomcp::wire::json::{JsonError, Kind, Limits, Value, validate};

fn suite_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/jsontestsuite"
    ))
}

fn load() -> Vec<(String, Vec<u8>)> {
    let dir = suite_dir();
    let entries = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read JSONTestSuite at {}: {e}", dir.display()));
    let mut files: Vec<(String, Vec<u8>)> = entries
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            let data = fs::read(&p).expect("read file");
            (name, data)
        })
        .collect();
    files.sort();
    files
}

/// Walk every node of a validated value with an explicit stack, checking the
/// views against each other. Returns the number of nodes visited.
fn walk(root: Value<'_>) -> usize {
    let mut stack = vec![root];
    let mut nodes = 0;
    let mut buf = vec![0u8; 1 << 16];
    while let Some(v) = stack.pop() {
        nodes += 1;
        match v.kind() {
            Kind::Object => {
                let mut n = 0;
                for (k, child) in v.members() {
                    check_str(k, &mut buf);
                    assert!(v.get(&decode(k, &mut buf)).is_some());
                    stack.push(child);
                    n += 1;
                }
                assert_eq!(n, v.len());
            }
            Kind::Array => {
                let mut n = 0;
                for child in v.items() {
                    stack.push(child);
                    n += 1;
                }
                assert_eq!(n, v.len());
            }
            Kind::String => check_str(v.as_str().expect("string"), &mut buf),
            Kind::Number => {
                let n = v.as_number().expect("number");
                let _ = n.as_f64();
                let _ = n.as_i64();
                let _ = n.as_u64();
                if n.is_integer_literal() {
                    assert!(n.is_integral());
                }
            }
            Kind::Bool => assert!(v.as_bool().is_some()),
            Kind::Null => assert!(v.is_null()),
            _ => unreachable!("unknown kind"),
        }
    }
    nodes
}

fn decode(s: picomcp::wire::json::JsonStr<'_>, buf: &mut [u8]) -> String {
    s.decode_into(buf).expect("decodes").to_owned()
}

fn check_str(s: picomcp::wire::json::JsonStr<'_>, buf: &mut [u8]) {
    let decoded = decode(s, buf);
    assert!(s.eq_str(&decoded));
    assert!(s.starts_with(&decoded));
    assert_eq!(s.chars().collect::<String>(), decoded);
    assert_eq!(s.char_count(), decoded.chars().count());
    assert_eq!(s.decoded_len(), decoded.len());
    assert_eq!(s.to_string(), decoded);
    let mut raw = s.raw().to_vec();
    let unescaped = picomcp::wire::json::unescape_str_in_place(&mut raw).expect("unescapes");
    assert_eq!(unescaped, decoded);
}

#[test]
fn jsontestsuite() {
    let files = load();
    assert!(
        files.len() >= 300,
        "expected the full suite, found {}",
        files.len()
    );
    let report = thread::Builder::new()
        .stack_size(64 * 1024)
        .spawn(move || {
            let limits = Limits::DEFAULT;
            let (mut y_ok, mut y_all) = (0, 0);
            let (mut n_rej, mut n_all) = (0, 0);
            let (mut i_ok, mut i_all) = (0, 0);
            let mut failures = Vec::new();
            for (name, data) in &files {
                let r = validate(data, &limits);
                if r.is_ok() {
                    let v = Value::parse(data, &limits).expect("parse after validate");
                    assert!(walk(v) >= 1);
                }
                if name.starts_with("y_") {
                    y_all += 1;
                    match r {
                        Ok(()) => y_ok += 1,
                        Err(e) => failures.push(format!("{name}: rejected ({e:?})")),
                    }
                } else if name.starts_with("n_") {
                    n_all += 1;
                    match r {
                        Err(_) => n_rej += 1,
                        Ok(()) => failures.push(format!("{name}: accepted")),
                    }
                } else if name.starts_with("i_") {
                    i_all += 1;
                    if r.is_ok() {
                        i_ok += 1;
                    }
                }
            }
            let summary = format!(
                "y accepted {y_ok}/{y_all}, n rejected {n_rej}/{n_all}, i accepted {i_ok}/{i_all}"
            );
            (summary, failures, y_all, n_all, i_all)
        })
        .expect("spawn")
        .join()
        .expect("validator must not overflow a 64 KiB stack");
    let (summary, failures, y_all, n_all, i_all) = report;
    println!("{summary}");
    assert!(failures.is_empty(), "{summary}\n{}", failures.join("\n"));
    assert_eq!((y_all, n_all, i_all), (95, 188, 35), "{summary}");
}

#[test]
fn deep_nesting_hits_the_default_depth_limit() {
    let files = load();
    let get = |name: &str| {
        files
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, d)| d.clone())
            .unwrap_or_else(|| panic!("{name} missing"))
    };
    let opening = get("n_structure_100000_opening_arrays.json");
    let nested = get("i_structure_500_nested_arrays.json");
    let (a, b) = thread::Builder::new()
        .stack_size(64 * 1024)
        .spawn(move || {
            (
                validate(&opening, &Limits::DEFAULT),
                validate(&nested, &Limits::DEFAULT),
            )
        })
        .expect("spawn")
        .join()
        .expect("no stack overflow");
    assert_eq!(a, Err(JsonError::TooDeep));
    assert_eq!(b, Err(JsonError::TooDeep));
}
