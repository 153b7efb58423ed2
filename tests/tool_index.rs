//! `Server::tool_index`: a server that finds its tools through a
//! `ToolIndex` answers every call byte for byte as its twin that walks the
//! registry: hits, unknown tools, escaped names, before and after the index
//! is built, on both eras.

mod common;

use common::shop;
use picomcp::Server;
use picomcp::server::ToolIndex;

static INDEX: ToolIndex<64> = ToolIndex::new();
static INDEXED: Server<'static, shop::Shop> = shop::server().tool_index(&INDEX);

/// Too small for the bookshop's tools: never built, always walked.
static SMALL: ToolIndex<4> = ToolIndex::new();
static UNINDEXED: Server<'static, shop::Shop> = shop::server().tool_index(&SMALL);

fn calls() -> String {
    let env = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let mut lines = vec![
        common::init("2025-11-25"),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
    ];
    let names = [
        "get_author",
        "top",
        "get_author_strict",
        "nothing",
        "",
        // Escaped: `get_author` and an unknown one.
        r"get\u005fauthor",
        r"no\u0074hing",
        "GET_AUTHOR",
        "get_autho",
    ];
    for (i, n) in names.iter().enumerate() {
        lines.push(format!(
            r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"{n}","arguments":{{"title":"Dune","n":2}}}}}}"#
        ));
    }
    let mut modern: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"{n}","arguments":{{"title":"Dune","n":2}},{env}}}}}"#
            )
        })
        .collect();
    lines.append(&mut modern);
    lines.join("\n") + "\n"
}

#[test]
fn indexed_calls_are_the_walked_ones() {
    let input = calls();
    let handshake_end = input.find("\"_meta\"").unwrap();
    let (first, _) = input.split_at(input[..handshake_end].rfind('\n').unwrap() + 1);
    let second = &input[first.len()..];
    for part in [first, second] {
        let want = common::serve_with(
            &common::BOOKSHOP,
            part.as_bytes(),
            64 * 1024,
            16 * 1024,
            4096,
        );
        assert!(want.iter().any(|l| l.contains("Frank Herbert")), "{want:?}");
        assert!(want.iter().any(|l| l.contains("Unknown tool")), "{want:?}");
        // Before the index is built (the first lookup builds it), and after.
        for _ in 0..2 {
            assert_eq!(
                common::serve_with(&INDEXED, part.as_bytes(), 64 * 1024, 16 * 1024, 4096),
                want
            );
        }
        assert_eq!(
            common::serve_with(&UNINDEXED, part.as_bytes(), 64 * 1024, 16 * 1024, 4096),
            want
        );
    }
    assert!(INDEX.is_ready());
    assert!(!SMALL.is_ready());
}
