//! How a `tools/call` hit's cost grows with the registry: a server of N
//! tools (named `tool_00000`, … or, with `--long`, 64-character names that
//! share a 54-character prefix), answering `--hits` calls of its last tool
//! through `Server::handle`, with or without a `ToolIndex`; or, with
//! `--page-size P --page K`, answering `--hits` `tools/list` requests for
//! page K (1 = the first) of P tools each, its cursor found by paging there
//! first (outside the count: every run, the zero-hit baseline too, pages
//! there once).
//!
//! `scripts/registry_scale.sh` runs it under callgrind for 5, 500 and 5,000
//! tools and prints the instructions per hit (the run minus a run of zero
//! hits, over the hits), then for each page of 500 tools 50 a page.
//!
//! Usage: registry_scale N [--index] [--long] [--hits H] [--page-size P --page K]

use picomcp::schema::{Property, Schema};
use picomcp::server::ToolIndex;
use picomcp::tool::{Arguments, Reply, Tool, ToolDescriptor, ToolOutcome};
use picomcp::{Connection, Server, ServerInfo};

const ARGS: Schema<'static> =
    Schema::object(&[Property::new("title", Schema::string())]).required(&["title"]);

fn hit<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    reply.text("Frank Herbert")
}

/// Room for up to 8,192 tools.
static INDEX: ToolIndex<16384> = ToolIndex::new();

fn main() {
    let mut args = std::env::args().skip(1);
    let mut n = 5usize;
    let (mut index, mut long, mut hits) = (false, false, 10_000usize);
    let (mut page_size, mut page) = (0usize, 0usize);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--index" => index = true,
            "--long" => long = true,
            "--hits" => hits = args.next().and_then(|h| h.parse().ok()).unwrap_or(hits),
            "--page-size" => page_size = args.next().and_then(|p| p.parse().ok()).unwrap_or(0),
            "--page" => page = args.next().and_then(|p| p.parse().ok()).unwrap_or(0),
            other => n = other.parse().expect(
                "usage: registry_scale N [--index] [--long] [--hits H] [--page-size P --page K]",
            ),
        }
    }
    let names: Vec<&'static str> = (0..n)
        .map(|i| {
            let name = if long {
                format!("a_rather_long_tool_name_prefix_shared_by_every_tool_{i:010}")
            } else {
                format!("tool_{i:05}")
            };
            &*Box::leak(name.into_boxed_str())
        })
        .collect();
    let tools: Vec<Tool<()>> = names
        .iter()
        .map(|name| Tool::new(ToolDescriptor::new(name, &ARGS), hit))
        .collect();
    let tools: &'static [Tool<()>] = Box::leak(tools.into_boxed_slice());
    let mut server = Server::new(ServerInfo::new("scale", "1.0.0"), ())
        .tools(tools)
        .page_size(page_size);
    if index {
        server = server.tool_index(&INDEX);
    }
    let last = names.last().expect("at least one tool");
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{last}","arguments":{{"title":"Dune"}}}}}}"#
    );
    let mut conn = Connection::new();
    let mut out = vec![0u8; 4096];
    let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"s","version":"1"}}}"#;
    let _ = server.handle(&mut conn, &mut init.to_vec(), &mut out);
    if page > 0 {
        list_page(&server, &mut conn, page, hits);
        return;
    }
    let mut frame = line.clone().into_bytes();
    // One call outside the count, in every run (the zero-hit baseline
    // too): it builds the index.
    let mut last_len = server.handle(&mut conn, &mut frame, &mut out);
    for _ in 0..hits {
        frame.copy_from_slice(line.as_bytes());
        last_len = server.handle(&mut conn, &mut frame, &mut out);
    }
    {
        let answer = String::from_utf8_lossy(&out[..last_len]);
        assert!(answer.contains("Frank Herbert"), "not a hit: {answer}");
    }
}

/// Page to page `page` of `tools/list` once, then ask for it `hits` times.
fn list_page(server: &Server<'_, ()>, conn: &mut Connection, page: usize, hits: usize) {
    let mut out = vec![0u8; 1 << 16];
    let mut line = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_string();
    for _ in 1..page {
        let n = server.handle(conn, &mut line.clone().into_bytes(), &mut out);
        let answer = std::str::from_utf8(&out[..n]).expect("UTF-8");
        let (_, rest) = answer
            .split_once(r#""nextCursor":""#)
            .unwrap_or_else(|| panic!("no page {page}: {answer}"));
        let cursor = &rest[..rest.find('"').expect("a closed cursor")];
        line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"cursor":"{cursor}"}}}}"#
        );
    }
    let mut frame = line.clone().into_bytes();
    let mut last_len = server.handle(conn, &mut frame, &mut out);
    for _ in 0..hits {
        frame.copy_from_slice(line.as_bytes());
        last_len = server.handle(conn, &mut frame, &mut out);
    }
    let answer = String::from_utf8_lossy(&out[..last_len]);
    assert!(answer.contains(r#""tools":["#), "not a page: {answer}");
}
