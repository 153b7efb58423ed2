//! `Server::list_cache`: the lists a cached server gives are byte for byte
//! the ones an uncached twin writes, on every protocol version, first from
//! the writing and then from the cache, with pages and small buffers.

mod common;

use common::shop;
use picomcp::Server;
use picomcp::server::ListCache;

static LISTS: ListCache<4096, 32> = ListCache::new();
static CACHED: Server<'static, shop::Shop> = shop::server().list_cache(&LISTS);

static PAGED_LISTS: ListCache<4096, 32> = ListCache::new();
static PAGED: Server<'static, shop::Shop> = shop::server_with_page_size(2).list_cache(&PAGED_LISTS);
static PAGED_TWIN: Server<'static, shop::Shop> = shop::server_with_page_size(2);

const LISTS_METHODS: [&str; 4] = [
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
];

/// Every list on a handshake-era connection of version `v`.
fn session(v: &str) -> String {
    let mut lines = vec![
        common::init(v),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
    ];
    for (id, m) in LISTS_METHODS.iter().enumerate() {
        lines.push(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{m}"}}"#));
    }
    lines.join("\n") + "\n"
}

/// Every list, and calls whose results carry the stamp (the server's
/// identity, kept in the cache too), on 2026-07-28.
fn modern_session() -> String {
    let env = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let lists = LISTS_METHODS.iter().enumerate().map(|(i, m)| {
        format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"{m}","params":{{{env}}}}}"#) + "\n"
    });
    let calls = [r#""Dune""#, r#""Nope""#, "7"].into_iter().enumerate().map(|(i, title)| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"get_author","arguments":{{"title":{title}}},{env}}}}}"#,
            10 + i
        ) + "\n"
    });
    lists.chain(calls).collect()
}

fn run(server: &Server<'static, shop::Shop>, input: &str, out_cap: usize) -> Vec<String> {
    common::serve_with(server, input.as_bytes(), 64 * 1024, out_cap, 4096)
}

#[test]
fn cached_lists_are_the_written_ones() {
    let sessions: Vec<String> = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
        .into_iter()
        .map(session)
        .chain([modern_session()])
        .collect();
    for input in &sessions {
        let want = run(&common::BOOKSHOP, input, 16 * 1024);
        assert!(want.iter().any(|l| l.contains("\"tools\":[")), "{want:?}");
        if input.contains("2026-07-28") {
            let stamped = want
                .iter()
                .filter(|l| l.contains("io.modelcontextprotocol/serverInfo"));
            assert_eq!(stamped.count(), 7, "every result stamped: {want:?}");
        }
        // Written (and kept), then copied from the cache.
        assert_eq!(run(&CACHED, input, 16 * 1024), want);
        assert_eq!(run(&CACHED, input, 16 * 1024), want);
        // A buffer too small for a kept page: written afresh (and failing
        // the same way).
        let small = run(&common::BOOKSHOP, input, 600);
        assert_eq!(run(&CACHED, input, 600), small);
    }
    // Four lists under five versions, and the 2026-07-28 stamp, each kept
    // once.
    let (pages, bytes) = LISTS.kept();
    assert_eq!(pages, 21, "{bytes} bytes");
    // The sizing `ListCache`'s docs give for the bookshop: its 20 pages
    // and the stamp (about 11 KB, 21 of the 24 entries) fit 16 KiB, 2,048
    // words on a 64-bit target.
    assert!(bytes <= 16 * 1024, "{bytes} bytes of pages");
}

#[test]
fn paged_lists_keep_only_a_whole_first_page() {
    let input = format!(
        "{}\n{}\n{}\n",
        common::init("2025-11-25"),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#
    );
    let want = run(&PAGED_TWIN, &input, 16 * 1024);
    assert!(want[1].contains("nextCursor"), "{}", want[1]);
    for _ in 0..2 {
        assert_eq!(run(&PAGED, &input, 16 * 1024), want);
    }
    assert_eq!(PAGED_LISTS.kept().0, 0);
}
