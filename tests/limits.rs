//! Limits as configuration: each one at the limit and one past it, with the
//! error it produces. And the JSONTestSuite through the whole server.

mod common;

use common::{serve_with, shop};
use picomcp::Server;
use picomcp::wire::json::Limits;

const PING: &str = r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#;
const PONG: &str = r#"{"jsonrpc":"2.0","id":"p","result":{}}"#;

fn first_answer(server: &Server<'_, shop::Shop>, line: &str, in_cap: usize) -> (String, String) {
    let input = format!("{line}\n{PING}\n");
    let out = serve_with(server, input.as_bytes(), in_cap, 4096, 4096);
    assert_eq!(out.len(), 2, "{out:?}");
    (out[0].clone(), out[1].clone())
}

/// A request whose params nest `depth` levels in total.
fn nested(depth: usize) -> String {
    // {"jsonrpc":..,"params":{"x": [[..]]}} : object(1) + params(2) + arrays.
    let arrays = depth - 2;
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"x":{}{}}}}}"#,
        "[".repeat(arrays),
        "]".repeat(arrays)
    )
}

#[test]
fn depth_at_the_limit_and_one_past() {
    static S: Server<'static, shop::Shop> = shop::server();
    let (ok, _) = first_answer(&S, &nested(32), 4096);
    assert_eq!(ok, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    let (err, pong) = first_answer(&S, &nested(33), 4096);
    assert_eq!(
        err,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"nesting too deep"}}"#
    );
    assert_eq!(pong, PONG);
}

#[test]
fn configured_depth_items_and_string_length() {
    static S: Server<'static, shop::Shop> = Server::new(
        picomcp::ServerInfo::new("l", "1"),
        shop::Shop::new(shop::CATALOG, &shop::CHANGES),
    )
    .limits(Limits::new().max_depth(4).max_items(5).max_string_len(10));
    // Depth 4 accepted, 5 refused.
    assert!(
        first_answer(&S, &nested(4), 4096)
            .0
            .contains(r#""result":{}"#)
    );
    let (e, pong) = first_answer(&S, &nested(5), 4096);
    assert!(
        e.contains(r#""code":-32700"#) && e.contains("nesting too deep"),
        "{e}"
    );
    assert_eq!(pong, PONG);
    // Five members accepted, six refused.
    let five = r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":1,"b":2,"c":3}}"#;
    assert!(first_answer(&S, five, 4096).0.contains(r#""result":{}"#));
    let six = r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{},"x":1,"y":2}"#;
    let (e, _) = first_answer(&S, six, 4096);
    assert!(
        e.contains(r#""code":-32700"#) && e.contains("too many"),
        "{e}"
    );
    // Strings of 10 raw bytes accepted, 11 refused (keys count too).
    let ten = r#"{"jsonrpc":"2.0","id":"0123456789","method":"ping"}"#;
    assert!(first_answer(&S, ten, 4096).0.contains(r#""result":{}"#));
    let eleven = r#"{"jsonrpc":"2.0","id":"0123456789a","method":"ping"}"#;
    let (e, _) = first_answer(&S, eleven, 4096);
    assert!(
        e.contains(r#""code":-32700"#) && e.contains("string too long"),
        "{e}"
    );
}

#[test]
fn line_length_at_the_limit_and_one_past() {
    static S: Server<'static, shop::Shop> = shop::server();
    // A buffer of `cap` bytes serves messages of up to `cap` bytes; the line
    // terminator (`\n` or `\r\n`) is not counted.
    let cap = 128;
    let pad = |n: usize| {
        let base = r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":""}}"#;
        base.replace(
            r#""x":"""#,
            &format!(r#""x":"{}""#, "a".repeat(n - base.len())),
        )
    };
    for term in ["\n", "\r\n"] {
        let answers = |line: &str| {
            let input = format!("{line}{term}{PING}{term}");
            serve_with(&S, input.as_bytes(), cap, 4096, 4096)
        };
        let fits = pad(cap);
        assert_eq!(fits.len(), cap);
        assert_eq!(
            answers(&fits),
            [r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, PONG],
            "{term:?}"
        );
        let too_long = pad(cap + 1);
        assert_eq!(
            answers(&too_long),
            [
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"message too large: limit 128 bytes"}}"#,
                PONG
            ],
            "{term:?}"
        );
    }
}

/// Every JSONTestSuite file without a newline, sent as one line followed by
/// a ping: `n_` → -32700, `y_` → -32600 (valid JSON, not a request), `i_` →
/// either; the ping is answered every time.
#[test]
fn jsontestsuite_through_the_server() {
    static S: Server<'static, shop::Shop> = shop::server();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/jsontestsuite");
    let mut counts = std::collections::BTreeMap::<String, (u32, u32)>::new();
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for path in paths {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".json") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        // Newlines would split the file into several lines; blank files are
        // blank lines, which are skipped by design.
        if bytes.contains(&b'\n') || bytes.iter().all(|b| b" \t\r".contains(b)) {
            continue;
        }
        let mut input = bytes.clone();
        input.push(b'\n');
        input.extend_from_slice(PING.as_bytes());
        input.push(b'\n');
        let out = serve_with(&S, &input, 512 * 1024, 4096, 65536);
        assert_eq!(out.len(), 2, "{name}: {out:?}");
        assert_eq!(out[1], PONG, "{name}");
        let v: serde_json::Value = serde_json::from_str(&out[0]).unwrap();
        let code = v["error"]["code"].as_i64().unwrap_or(0);
        let class = name[..1].to_owned();
        let ok = match class.as_str() {
            "n" => code == -32700,
            "y" => code == -32600,
            _ => code == -32700 || code == -32600,
        };
        assert!(ok, "{name}: {}", out[0]);
        let c = counts.entry(class).or_default();
        c.0 += 1;
        c.1 += u32::from(code == -32700);
    }
    println!("JSONTestSuite through the server (class: files, of which -32700): {counts:?}");
    assert!(counts["n"].0 > 170 && counts["y"].0 > 80);
}

/// `content::MAX_PROGRESS_TOKEN` at its edge: a token of that many bytes as
/// written (a string's quotes included; an integer's digits) is echoed in
/// each progress notification; one byte more and the call is answered as
/// ever, without notifications.
#[test]
fn progress_token_at_the_limit_and_one_past() {
    let max = picomcp::content::MAX_PROGRESS_TOKEN;
    assert_eq!(max, 64, "the README's limits table says 64");
    let call = |token: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"count","arguments":{{"n":2}},"_meta":{{"progressToken":{token}}}}}}}"#
        )
    };
    let cases = [
        (format!("\"{}\"", "t".repeat(max - 2)), true),
        (format!("\"{}\"", "t".repeat(max - 1)), false),
        ("9".repeat(max), true),
        ("9".repeat(max + 1), false),
    ];
    for (token, kept) in cases {
        let out = common::session(&[&call(&token)]);
        let progress: Vec<&String> = out
            .iter()
            .filter(|l| l.contains("notifications/progress"))
            .collect();
        if kept {
            assert_eq!(progress.len(), 2, "{token}: {out:?}");
            for (i, p) in progress.iter().enumerate() {
                assert_eq!(
                    **p,
                    format!(
                        r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{token},"progress":{},"total":2}}}}"#,
                        i + 1
                    )
                );
            }
        } else {
            assert!(progress.is_empty(), "{token}: {out:?}");
        }
        let last = out.last().expect("an answer");
        assert!(
            last.starts_with(r#"{"jsonrpc":"2.0","id":1,"result":"#) && last.contains("counted 2"),
            "{token}: {last}"
        );
    }
}
