//! The bookshop binary's command line, run as a process: `--help`, bad
//! options, and what `--max-message` means (the largest message served, its
//! line terminator not counted), at its default and at a given value.

use std::io::Write as _;
use std::process::{Command, Output, Stdio};

/// Run the bookshop with `args`, `stdin` as its whole input.
fn bookshop(args: &[&str], stdin: Vec<u8>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bookshop"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the bookshop");
    let mut pipe = child.stdin.take().expect("stdin");
    // A thread, so that a large input cannot block on a full stdout pipe.
    // A process that exits without reading (`--help`) breaks the pipe: fine.
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&stdin);
    });
    let out = child.wait_with_output().expect("wait for the bookshop");
    writer.join().expect("writer thread");
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("UTF-8")
}

#[test]
fn help_prints_every_option_to_stdout_and_exits_0() {
    for flag in ["--help", "-h"] {
        // `--help` wins wherever it is, before any other option is used.
        for args in [vec![flag], vec!["--page-size", "3", flag]] {
            let out = bookshop(&args, Vec::new());
            assert_eq!(out.status.code(), Some(0), "{args:?}");
            assert_eq!(text(&out.stderr), "", "{args:?}");
            let help = text(&out.stdout);
            assert!(help.starts_with("usage: bookshop "), "{help}");
            for option in [
                "--page-size N",
                "--max-message BYTES",
                "--max-response BYTES",
                "-h, --help",
                "default: 0",
                "default: 1048576",
                "default: 262144",
            ] {
                assert!(help.contains(option), "{args:?}: no {option:?} in\n{help}");
            }
        }
    }
}

#[test]
fn bad_options_print_usage_to_stderr_and_exit_2() {
    for (args, why) in [
        (&["--bogus"][..], "unknown option '--bogus'"),
        (&["-x", "1"], "unknown option '-x'"),
        (&["--page-size"], "--page-size needs a number >= 0"),
        (&["--page-size", "x"], "--page-size needs a number >= 0"),
        (
            &["--max-message", "63"],
            "--max-message needs a number >= 64",
        ),
        (
            &["--max-response", "255"],
            "--max-response needs a number >= 256",
        ),
    ] {
        let out = bookshop(args, Vec::new());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(text(&out.stdout), "", "{args:?}");
        let err = text(&out.stderr);
        assert!(
            err.starts_with(&format!("bookshop: {why}\nusage: bookshop ")),
            "{args:?}: {err}"
        );
        assert!(err.contains("--page-size N"), "{args:?}: {err}");
    }
}

/// A ping of exactly `len` bytes (before the terminator), id `id`.
fn padded_ping(id: u32, len: usize) -> String {
    let head = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":{{"pad":""#);
    let tail = r#""}}"#;
    format!("{head}{}{tail}", "x".repeat(len - head.len() - tail.len()))
}

fn pong(id: u32) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
}

/// A message of `limit` bytes is served, one of `limit + 1` is answered
/// `message too large: limit <limit> bytes`, with `\n` and with `\r\n`.
fn check_limit(args: &[&str], limit: usize) {
    let too_large = format!(
        r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32600,"message":"message too large: limit {limit} bytes"}}}}"#
    );
    for term in ["\n", "\r\n"] {
        let input = format!(
            "{}{term}{}{term}{}{term}",
            padded_ping(1, limit),
            padded_ping(2, limit + 1),
            padded_ping(3, 64)
        );
        let out = bookshop(args, input.into_bytes());
        assert_eq!(out.status.code(), Some(0), "{args:?} {term:?}");
        assert_eq!(
            text(&out.stdout),
            format!("{}\n{too_large}\n{}\n", pong(1), pong(3)),
            "{args:?} {term:?}"
        );
    }
}

#[test]
fn max_message_is_the_largest_message_served() {
    check_limit(&["--max-message", "300"], 300);
    check_limit(&["--max-message", "64"], 64);
}

#[test]
fn default_max_message_serves_one_mebibyte() {
    check_limit(&[], 1 << 20);
}

/// A 2026-07-28 `reserve` call (its retry carries the answers and state).
fn reserve(id: u32, retry: Option<&str>) -> String {
    let mut params = serde_json::json!({
        "name": "reserve",
        "arguments": {"title": "Dune"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
        }
    });
    if let Some(state) = retry {
        params["requestState"] = state.into();
        params["inputResponses"] =
            serde_json::json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    }
    serde_json::json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":params}).to_string()
        + "\n"
}

#[test]
fn a_key_file_lets_two_processes_share_request_state_and_a_random_key_does_not() {
    let dir = std::env::temp_dir().join(format!("bookshop-key-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("key");
    std::fs::write(&key, [7u8; 32]).unwrap();
    let key = key.to_str().unwrap();
    let first = bookshop(&["--key-file", key], reserve(1, None).into_bytes());
    assert_eq!(text(&first.stderr), "", "no warning with a key file");
    let answer: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    let state = answer["result"]["requestState"]
        .as_str()
        .expect("sealed state")
        .to_owned();
    // Another process with the same key: the retry is accepted.
    let second = bookshop(&["--key-file", key], reserve(2, Some(&state)).into_bytes());
    let done: serde_json::Value = serde_json::from_slice(&second.stdout).unwrap();
    assert_eq!(
        done["result"]["content"][0]["text"], "Reserved Dune",
        "{done}"
    );
    // A process with its own random key (and a warning) refuses it.
    let other = bookshop(&[], reserve(3, Some(&state)).into_bytes());
    assert!(text(&other.stderr).contains("warning: no --key-file"));
    let refused: serde_json::Value = serde_json::from_slice(&other.stdout).unwrap();
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    // A short key is refused at start.
    let short = dir.join("short");
    std::fs::write(&short, [7u8; 31]).unwrap();
    let out = bookshop(&["--key-file", short.to_str().unwrap()], Vec::new());
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("at least 32 bytes"));
    let _ = std::fs::remove_dir_all(&dir);
}
