//! How a `tools/call` hit's cost grows with the registry: a server of N
//! tools (named `tool_00000`, … or, with `--long`, 64-character names that
//! share a 54-character prefix), answering `--hits` calls of its last tool
//! through `Server::handle`, with or without a `ToolIndex`.
//!
//! `scripts/registry_scale.sh` runs it under callgrind for 5, 500 and 5,000
//! tools and prints the instructions per hit (the run minus a run of zero
//! hits, over the hits).
//!
//! Usage: registry_scale N [--index] [--long] [--hits H]

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
    while let Some(a) = args.next() {
        match a.as_str() {
            "--index" => index = true,
            "--long" => long = true,
            "--hits" => hits = args.next().and_then(|h| h.parse().ok()).unwrap_or(hits),
            other => {
                n = other
                    .parse()
                    .expect("usage: registry_scale N [--index] [--long] [--hits H]")
            }
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
    let mut server = Server::new(ServerInfo::new("scale", "1.0.0"), ()).tools(tools);
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
