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

/// The names called: hits, unknown ones, escaped ones (`get_author` and an
/// unknown one), near misses.
const NAMES: [&str; 9] = [
    "get_author",
    "top",
    "get_author_strict",
    "nothing",
    "",
    r"get\u005fauthor",
    r"no\u0074hing",
    "GET_AUTHOR",
    "get_autho",
];

/// Every name called on a handshake-era connection (`modern: false`) or as
/// 2026-07-28 requests.
fn calls(modern: bool) -> String {
    let env = r#","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let mut lines = Vec::new();
    if !modern {
        lines.push(common::init("2025-11-25"));
        lines.push(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned());
    }
    let env = if modern { env } else { "" };
    for (i, n) in NAMES.iter().enumerate() {
        lines.push(format!(
            r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"{n}","arguments":{{"title":"Dune","n":2}}{env}}}}}"#
        ));
    }
    lines.join("\n") + "\n"
}

fn serve(server: &Server<'static, shop::Shop>, input: &str) -> Vec<String> {
    common::serve_with(server, input.as_bytes(), 64 * 1024, 16 * 1024, 4096)
}

#[test]
fn indexed_calls_are_the_walked_ones() {
    for input in [calls(false), calls(true)] {
        let want = serve(&common::BOOKSHOP, &input);
        assert!(want.iter().any(|l| l.contains("Frank Herbert")), "{want:?}");
        assert!(want.iter().any(|l| l.contains("Unknown tool")), "{want:?}");
        // Before the index is built (the first lookup builds it), and after.
        for _ in 0..2 {
            assert_eq!(serve(&INDEXED, &input), want);
        }
        assert_eq!(serve(&UNINDEXED, &input), want);
    }
    assert!(INDEX.is_ready());
    assert!(!SMALL.is_ready());
}
