//! How a `tools/call` hit's cost grows with the registry: a server of N
//! tools (named `tool_00000`, … or, with `--long`, 64-character names that
//! share a 54-character prefix), answering `--hits` calls of its last tool
//! through `Server::handle`, with or without a `ToolIndex`; or, with
//! `--page-size P --page K`, answering `--hits` `tools/list` requests for
//! page K (1 = the first) of P tools each, its cursor found by paging there
//! first (outside the count: every run, the zero-hit baseline too, pages
//! there once).
//!
//! `--arg-bytes B` makes the call's `title` argument B bytes long;
//! `--props K` gives the tools' input schema K required string properties
//! (`title`, then `p01` …) and the call all K of them: how a hit grows with
//! the size of its arguments and of its schema.
//!
//! `scripts/registry_scale.sh` runs it under callgrind for 5, 500 and 5,000
//! tools and prints the instructions per hit (the run minus a run of zero
//! hits, over the hits), then for each page of 500 tools 50 a page, then
//! for argument and schema sizes.
//!
//! Usage: registry_scale N [--index] [--long] [--hits H] [--page-size P --page K]
//!        [--arg-bytes B] [--props K]

use picomcp::schema::{Property, Schema};
use picomcp::server::ToolIndex;
use picomcp::tool::{Arguments, Reply, Tool, ToolDescriptor, ToolOutcome};
use picomcp::{Connection, Server, ServerInfo};

/// An input schema of `k` required string properties: `title`, `p01`, ….
fn args_schema(k: usize) -> &'static Schema<'static> {
    let names: Vec<&'static str> = (0..k.max(1))
        .map(|i| match i {
            0 => "title",
            _ => Box::leak(format!("p{i:02}").into_boxed_str()),
        })
        .collect();
    let names: &'static [&'static str] = Box::leak(names.into_boxed_slice());
    let props: Vec<Property<'static>> = names
        .iter()
        .map(|name| Property::new(name, Schema::string()))
        .collect();
    let props: &'static [Property<'static>] = Box::leak(props.into_boxed_slice());
    Box::leak(Box::new(Schema::object(props).required(names)))
}

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
    let (mut arg_bytes, mut props) = (4usize, 1usize);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--index" => index = true,
            "--long" => long = true,
            "--hits" => hits = args.next().and_then(|h| h.parse().ok()).unwrap_or(hits),
            "--page-size" => page_size = args.next().and_then(|p| p.parse().ok()).unwrap_or(0),
            "--page" => page = args.next().and_then(|p| p.parse().ok()).unwrap_or(0),
            "--arg-bytes" => arg_bytes = args.next().and_then(|b| b.parse().ok()).unwrap_or(4),
            "--props" => props = args.next().and_then(|k| k.parse().ok()).unwrap_or(1),
            other => n = other.parse().expect(
                "usage: registry_scale N [--index] [--long] [--hits H] [--page-size P --page K] \
                 [--arg-bytes B] [--props K]",
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
    let schema = args_schema(props);
    let tools: Vec<Tool<()>> = names
        .iter()
        .map(|name| Tool::new(ToolDescriptor::new(name, schema), hit))
        .collect();
    let tools: &'static [Tool<()>] = Box::leak(tools.into_boxed_slice());
    let mut server = Server::new(ServerInfo::new("scale", "1.0.0"), ())
        .tools(tools)
        .page_size(page_size);
    if index {
        server = server.tool_index(&INDEX);
    }
    let last = names.last().expect("at least one tool");
    // "Dune", or a title of `arg_bytes` bytes; then the other properties.
    let title: String = "Dune".chars().cycle().take(arg_bytes).collect();
    let mut arguments = format!(r#""title":"{title}""#);
    for i in 1..props.max(1) {
        arguments.push_str(&format!(r#","p{i:02}":"value {i}""#));
    }
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{last}","arguments":{{{arguments}}}}}}}"#
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
