//! Transcript tests for the rest of the handshake-era surface: prompts,
//! completion, logging, progress, cancellation, pagination, batches and
//! per-version shaping.

mod common;

use common::{BOOKSHOP, init, serve_with, session, session_v, shop};
use picomcp::Server;
use serde_json::{Value, json};

fn parse(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

#[test]
fn prompts_list_and_get() {
    let out = session(&[
        r#"{"jsonrpc":"2.0","id":1,"method":"prompts/list"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"recommend","arguments":{"genre":"cyberpunk"}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"recommend"}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"recommend","arguments":{"genre":5}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"nope"}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"recommend","arguments":{"genre":"sci\u00e9nce \"fiction\""}}}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{}}"#,
    ]);
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{"prompts":[{"name":"recommend","description":"Ask for a book recommendation in a genre.","arguments":[{"name":"genre","description":"The genre to recommend a book from.","required":true}]}]}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{"messages":[{"role":"user","content":{"type":"text","text":"Recommend a cyberpunk book from the catalog."}}]}}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Missing required argument: genre"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Argument genre must be a string"}}"#,
            r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Unknown prompt: nope"}}"#,
            r#"{"jsonrpc":"2.0","id":6,"result":{"messages":[{"role":"user","content":{"type":"text","text":"Recommend a sciénce \"fiction\" book from the catalog."}}]}}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid request parameters","data":""}}"#,
        ]
    );
}

#[test]
fn completion() {
    let out = session(&[
        r#"{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"recommend"},"argument":{"name":"genre","value":"f"}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"recommend"},"argument":{"name":"genre","value":""}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"books://{title}"},"argument":{"name":"title","value":"n"}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"genre","value":""}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"books://x"},"argument":{"name":"title","value":""}}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"completion/complete","params":{"ref":{"type":"ref/what"},"argument":{"name":"x","value":""}}}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"recommend"}}}"#,
    ]);
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{"completion":{"values":["fantasy"],"hasMore":false}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{"completion":{"values":["science fiction","cyberpunk","fantasy"],"hasMore":false}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{"completion":{"values":["Neuromancer"],"hasMore":false}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Unknown prompt: nope"}}"#,
            r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Unknown resource template: books://x"}}"#,
            r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"Unknown reference type: ref/what"}}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid request parameters","data":""}}"#,
        ]
    );
}

#[test]
fn completions_capability_only_with_a_handler_and_version() {
    let caps = |server: &Server<'_, shop::Shop>, version: &str| {
        let out = serve_with(
            server,
            format!("{}\n", init(version)).as_bytes(),
            4096,
            4096,
            4096,
        );
        parse(&out[0])["result"]["capabilities"].clone()
    };
    static PLAIN: Server<'static, shop::Shop> = Server::new(
        picomcp::ServerInfo::new("p", "1"),
        shop::Shop::new(shop::CATALOG, &shop::CHANGES),
    )
    .tools(shop::TOOLS);
    assert_eq!(
        caps(&PLAIN, "2025-11-25"),
        json!({"tools":{"listChanged":false}})
    );
    assert_eq!(
        caps(&BOOKSHOP, "2025-11-25"),
        json!({"completions":{},"logging":{},"prompts":{"listChanged":false},"resources":{"subscribe":false,"listChanged":false},"tools":{"listChanged":false}})
    );
    // 2024-11-05 has no `completions` capability (completion/complete is still served).
    assert!(caps(&BOOKSHOP, "2024-11-05").get("completions").is_none());
    assert!(caps(&PLAIN, "2025-11-25").get("logging").is_none());
}

#[test]
fn methods_of_absent_capabilities_are_not_found() {
    static PLAIN: Server<'static, shop::Shop> = Server::new(
        picomcp::ServerInfo::new("p", "1"),
        shop::Shop::new(shop::CATALOG, &shop::CHANGES),
    )
    .tools(shop::TOOLS);
    let input = format!(
        "{}\n{}\n{}\n{}\n{}\n",
        init("2025-11-25"),
        r#"{"jsonrpc":"2.0","id":1,"method":"prompts/list"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"books://Dune"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"info"}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"completion/complete","params":{}}"#,
    );
    let out = serve_with(&PLAIN, input.as_bytes(), 4096, 4096, 4096);
    for (line, method) in out[1..].iter().zip([
        "prompts/list",
        "resources/read",
        "logging/setLevel",
        "completion/complete",
    ]) {
        let v = parse(line);
        assert_eq!(v["error"]["code"], -32601, "{line}");
        assert_eq!(v["error"]["data"], method);
    }
}

#[test]
fn logging_levels_and_filtering() {
    let mut lines = vec![
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count","arguments":{"n":1}}}"#,
    ];
    // Default level is info: the info message is delivered.
    let out = session(&lines);
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"bookshop","data":"counting done"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"counted 1"}],"isError":false}}"#,
        ]
    );
    // Every RFC 5424 level is accepted; above info the message is filtered.
    for level in [
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    ] {
        let set = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"logging/setLevel","params":{{"level":"{level}"}}}}"#
        );
        lines.insert(0, Box::leak(set.into_boxed_str()));
        let out = session(&lines);
        lines.remove(0);
        assert_eq!(out[0], r#"{"jsonrpc":"2.0","id":0,"result":{}}"#);
        let delivered = out.iter().any(|l| l.contains("notifications/message"));
        assert_eq!(
            delivered,
            matches!(level, "debug" | "info"),
            "level {level}"
        );
    }
    let out = session(&[
        r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"verbose"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":5}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"logging/setLevel"}"#,
    ]);
    assert_eq!(
        out[0],
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid log level: verbose"}}"#
    );
    assert!(out[1].contains("-32602") && out[2].contains("-32602"));
}

#[test]
fn progress_only_with_a_token_and_before_the_response() {
    let out = session(&[
        r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"error"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count","arguments":{"n":3},"_meta":{"progressToken":"p-1"}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"count","arguments":{"n":2}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"count","arguments":{"n":1},"_meta":{"progressToken":42}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"count","arguments":{"n":1},"_meta":{"progressToken":1.5}}}"#,
    ]);
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p-1","progress":1,"total":3}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p-1","progress":2,"total":3}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p-1","progress":3,"total":3}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"counted 3"}],"isError":false}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"counted 2"}],"isError":false}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":42,"progress":1,"total":1}}"#,
            r#"{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"counted 1"}],"isError":false}}"#,
            r#"{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"counted 1"}],"isError":false}}"#,
        ]
    );
}

#[test]
fn handle_collects_notifications_and_handle_with_streams_them() {
    let mut conn = picomcp::Connection::new();
    let mut out = [0u8; 1024];
    let mut line = init("2025-11-25").into_bytes();
    assert!(BOOKSHOP.handle(&mut conn, &mut line, &mut out) > 0);
    let call = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"count","arguments":{"n":2},"_meta":{"progressToken":"t"}}}"#;
    let mut line = call.as_bytes().to_vec();
    let n = BOOKSHOP.handle(&mut conn, &mut line, &mut out);
    let collected = std::str::from_utf8(&out[..n]).unwrap().to_owned();
    assert_eq!(collected.lines().count(), 4, "{collected}");
    assert!(collected.lines().last().unwrap().contains("\"id\":9"));
    let mut streamed = Vec::new();
    let mut line = call.as_bytes().to_vec();
    let n = BOOKSHOP.handle_with(&mut conn, &mut line, &mut out, &mut |m: &[u8]| {
        streamed.extend_from_slice(m)
    });
    streamed.extend_from_slice(&out[..n]);
    assert_eq!(String::from_utf8(streamed).unwrap(), collected);
}

#[test]
fn cancellation_is_never_answered() {
    let out = session(&[
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    ]);
    assert_eq!(out, [r#"{"jsonrpc":"2.0","id":1,"result":{}}"#]);
}

/// Walk a list to the end; returns the items' `key` values and the pages.
fn walk(
    server: &Server<'_, shop::Shop>,
    method: &str,
    items: &str,
    key: &str,
    out_cap: usize,
) -> (Vec<String>, usize) {
    let mut conn = picomcp::Connection::new();
    let mut out = vec![0u8; out_cap];
    let mut line = init("2025-11-25").into_bytes();
    assert!(server.handle(&mut conn, &mut line, &mut vec![0u8; 4096]) > 0);
    let mut cursor: Option<String> = None;
    let (mut names, mut pages) = (Vec::new(), 0);
    loop {
        let req = match &cursor {
            None => format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}"}}"#),
            Some(c) => format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"cursor":{}}}}}"#,
                json!(c)
            ),
        };
        let mut line = req.into_bytes();
        let n = server.handle(&mut conn, &mut line, &mut out);
        let v = parse(std::str::from_utf8(&out[..n]).unwrap());
        assert!(n <= out_cap);
        let page = v["result"][items]
            .as_array()
            .unwrap_or_else(|| panic!("no {items}: {v}"));
        assert!(!page.is_empty());
        pages += 1;
        names.extend(page.iter().map(|t| t[key].as_str().unwrap().to_owned()));
        match v["result"].get("nextCursor") {
            Some(c) => cursor = Some(c.as_str().unwrap().to_owned()),
            None => return (names, pages),
        }
    }
}

#[test]
fn pagination_by_page_size_walks_every_list() {
    static PAGED: Server<'static, shop::Shop> = shop::server_with_page_size(1);
    let tools = walk(&PAGED, "tools/list", "tools", "name", 8192);
    assert_eq!(
        tools,
        (
            vec![
                "get_author".into(),
                "get_author_strict".into(),
                "top".into(),
                "reserve".into(),
                "blurb".into(),
                "buy".into(),
                "count".into()
            ],
            7
        )
    );
    assert_eq!(
        walk(&PAGED, "prompts/list", "prompts", "name", 8192),
        (vec!["recommend".into()], 1)
    );
    assert_eq!(
        walk(&PAGED, "resources/list", "resources", "uri", 8192),
        (vec!["books://catalog".into(), "books://stock".into()], 2)
    );
    assert_eq!(
        walk(
            &PAGED,
            "resources/templates/list",
            "resourceTemplates",
            "uriTemplate",
            8192
        ),
        (vec!["books://{title}".into()], 1)
    );
}

static MANY_TOOLS: [picomcp::tool::Tool<shop::Shop>; 500] = {
    let mut tools =
        [const { picomcp::tool::Tool::new(shop::TOOLS[0].descriptor, |_, _, r| r.text("x")) }; 500];
    let mut i = 0;
    while i < 500 {
        tools[i] =
            picomcp::tool::Tool::new(shop::TOOLS[i % 3].descriptor, shop::TOOLS[i % 3].handler);
        i += 1;
    }
    tools
};

#[test]
fn a_server_with_500_tools_pages_in_a_4_kib_buffer() {
    static BIG: Server<'static, shop::Shop> = Server::new(
        picomcp::ServerInfo::new("big", "1"),
        shop::Shop::new(shop::CATALOG, &shop::CHANGES),
    )
    .tools(&MANY_TOOLS);
    let (names, pages) = walk(&BIG, "tools/list", "tools", "name", 4096);
    assert_eq!(names.len(), 500);
    assert!(pages > 10, "pages: {pages}");
    let expected: Vec<&str> = (0..500)
        .map(|i| shop::TOOLS[i % 3].descriptor.name)
        .collect();
    assert_eq!(names, expected);
}

#[test]
fn bad_cursors_are_rejected() {
    static PAGED: Server<'static, shop::Shop> = shop::server_with_page_size(1);
    let input = format!(
        "{}\n{}\n",
        init("2025-11-25"),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#
    );
    let out = serve_with(&PAGED, input.as_bytes(), 4096, 8192, 4096);
    let cursor = parse(&out[1])["result"]["nextCursor"]
        .as_str()
        .unwrap()
        .to_owned();
    let bad = |method: &str, cursor: &Value| {
        let input = format!(
            "{}\n{}\n",
            init("2025-11-25"),
            json!({"jsonrpc":"2.0","id":2,"method":method,"params":{"cursor":cursor}})
        );
        serve_with(&PAGED, input.as_bytes(), 4096, 8192, 4096)[1].clone()
    };
    let invalid = r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid cursor"}}"#;
    // A cursor from tools/list is rejected by every other list.
    for method in ["prompts/list", "resources/list", "resources/templates/list"] {
        assert_eq!(bad(method, &json!(cursor)), invalid, "{method}");
    }
    assert_ne!(bad("tools/list", &json!(cursor)), invalid);
    let forged = cursor.replacen(&cursor[..1], "3", 1);
    for c in [
        json!("bogus"),
        json!(""),
        json!(forged),
        json!(7),
        json!("0-0000000000000000"),
        json!(format!("{cursor}x")),
    ] {
        assert_eq!(bad("tools/list", &c), invalid, "{c}");
    }
}

#[test]
fn batch_2025_03_26_mixed() {
    let out = session_v(
        "2025-03-26",
        &[
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}},{"jsonrpc":"2.0","id":3,"method":"nope"},{"jsonrpc":"1.0","id":4,"method":"ping"},5,{"jsonrpc":"2.0","id":6,"method":"initialize","params":{}}]"#,
            r#"[{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}]"#,
            r#"[]"#,
            r#"[{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"count","arguments":{"n":1},"_meta":{"progressToken":"t"}}}]"#,
            r#"[1,"#,
        ],
    );
    assert_eq!(
        out,
        [
            r#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":"b","result":{"content":[{"type":"text","text":"Frank Herbert"}],"isError":false}},{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found","data":"nope"}},{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"Invalid Request","data":"jsonrpc must be \"2.0\""}},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"a message must be a JSON object"}},{"jsonrpc":"2.0","id":6,"error":{"code":-32600,"message":"initialize must not be part of a batch"}}]"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"empty batch"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"total":1}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"bookshop","data":"counting done"}}"#,
            r#"[{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"counted 1"}],"isError":false}}]"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"unexpected end of input"}}"#,
        ]
    );
}

#[test]
fn batch_too_large_for_the_buffer_is_one_clear_error() {
    let batch: Vec<String> = (0..40)
        .map(|i| format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/list"}}"#))
        .collect();
    let input = format!("{}\n[{}]\n", init("2025-03-26"), batch.join(","));
    let out = serve_with(&BOOKSHOP, input.as_bytes(), 8192, 4096, 4096);
    assert_eq!(
        out[1],
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"batch response exceeds the 4096-byte output buffer"}}"#
    );
}

#[test]
fn batches_refused_on_other_versions() {
    for v in ["2024-11-05", "2025-06-18", "2025-11-25"] {
        let out = session_v(v, &[r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#]);
        assert_eq!(
            out,
            [format!(
                r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32600,"message":"batches are not supported by protocol version {v}"}}}}"#
            )]
        );
    }
}

#[test]
fn shaping_2024_11_05_session() {
    let out = session_v(
        "2024-11-05",
        &[
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"top","arguments":{"n":0}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"prompts/list"}"#,
        ],
    );
    let tools = parse(&out[0]);
    for t in tools["result"]["tools"].as_array().unwrap() {
        for absent in ["title", "outputSchema", "annotations", "icons", "_meta"] {
            assert!(t.get(absent).is_none(), "{absent} in {t}");
        }
    }
    assert_eq!(
        out[1],
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"result\":[]}"}],"isError":false}}"#
    );
    assert_eq!(
        out[2],
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Frank Herbert"}],"isError":false}}"#
    );
    assert!(!out[3].contains("\"title\""));
}

/// Content kinds and descriptor fields a version lacks are converted or left out.
mod kinds {
    use super::*;
    use picomcp::mcp::Icon;
    use picomcp::schema::Schema;
    use picomcp::tool::{
        Arguments, Reply, ResourceLink, Tool, ToolAnnotations, ToolDescriptor, ToolOutcome,
    };

    fn all<'a>(_: &'a (), _: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
        let mut c = reply.content();
        c.text("hello")
            .image("image/png", b"\x89PNG\r\n")
            .audio("audio/wav", b"RIFF")
            .resource_link(
                &ResourceLink::new("books://Dune", "Dune")
                    .mime_type("text/plain")
                    .title("Dune!"),
            )
            .embedded_text("books://Dune", Some("text/plain"), "Dune by Frank Herbert")
            .embedded_blob("books://cover", None, b"\x00\xff");
        c.finish()
    }

    static ICONS: [Icon<'static>; 1] = [Icon::new("https://x/i.png")];
    static TOOLS: [Tool<()>; 1] = [Tool::new(
        ToolDescriptor::new("all", &Schema::object(&[]))
            .title("All kinds")
            .annotations(ToolAnnotations::new().read_only(true).title("All"))
            .icons(&ICONS),
        all,
    )];
    static SERVER: Server<'static, ()> = Server::new(
        picomcp::ServerInfo::new("k", "1")
            .title("K")
            .description("d")
            .website_url("https://k")
            .icons(&ICONS),
        (),
    )
    .tools(&TOOLS);

    fn run(version: &str) -> (Value, Value, Value) {
        let input = format!(
            "{}\n{}\n{}\n",
            init(version),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"all"}}"#
        );
        let out = serve_with(&SERVER, input.as_bytes(), 4096, 4096, 4096);
        (parse(&out[0]), parse(&out[1]), parse(&out[2]))
    }

    #[test]
    fn newest_version_gets_everything() {
        let (init, list, call) = run("2025-11-25");
        assert_eq!(
            init["result"]["serverInfo"],
            json!({"name":"k","version":"1","title":"K","description":"d","websiteUrl":"https://k","icons":[{"src":"https://x/i.png"}]})
        );
        assert_eq!(
            list["result"]["tools"][0],
            json!({"name":"all","title":"All kinds","inputSchema":{"type":"object","properties":{}},"annotations":{"title":"All","readOnlyHint":true},"icons":[{"src":"https://x/i.png"}]})
        );
        assert_eq!(
            call["result"]["content"],
            json!([
                {"type":"text","text":"hello"},
                {"type":"image","data":"iVBORw0K","mimeType":"image/png"},
                {"type":"audio","data":"UklGRg==","mimeType":"audio/wav"},
                {"type":"resource_link","uri":"books://Dune","name":"Dune","title":"Dune!","mimeType":"text/plain"},
                {"type":"resource","resource":{"uri":"books://Dune","mimeType":"text/plain","text":"Dune by Frank Herbert"}},
                {"type":"resource","resource":{"uri":"books://cover","blob":"AP8="}}
            ])
        );
    }

    #[test]
    fn oldest_version_gets_only_what_it_defines() {
        let (init, list, call) = run("2024-11-05");
        assert_eq!(
            init["result"]["serverInfo"],
            json!({"name":"k","version":"1"})
        );
        assert_eq!(
            list["result"]["tools"][0],
            json!({"name":"all","inputSchema":{"type":"object","properties":{}}})
        );
        assert_eq!(
            call["result"]["content"][2],
            json!({"type":"text","text":"[audio/wav audio omitted: protocol 2024-11-05 has no audio content]"})
        );
        assert_eq!(
            call["result"]["content"][3],
            json!({"type":"text","text":"Dune: books://Dune"})
        );
        let (_, list, call) = run("2025-03-26");
        assert_eq!(
            list["result"]["tools"][0]["annotations"],
            json!({"title":"All","readOnlyHint":true})
        );
        assert!(list["result"]["tools"][0].get("title").is_none());
        assert_eq!(call["result"]["content"][2]["type"], "audio");
        assert_eq!(call["result"]["content"][3]["type"], "text");
        let (init, list, call) = run("2025-06-18");
        assert_eq!(
            init["result"]["serverInfo"],
            json!({"name":"k","version":"1","title":"K"})
        );
        assert!(list["result"]["tools"][0].get("icons").is_none());
        assert_eq!(call["result"]["content"][3]["type"], "resource_link");
    }
}

#[test]
fn notifications_in_a_tight_output_buffer_stay_whole() {
    let call = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"count","arguments":{"n":2},"_meta":{"progressToken":"t"}}}"#;
    for cap in 200..700 {
        let mut conn = picomcp::Connection::new();
        let mut out = vec![0u8; cap];
        let mut line = init("2025-11-25").into_bytes();
        let mut big = vec![0u8; 4096];
        assert!(BOOKSHOP.handle(&mut conn, &mut line, &mut big) > 0);
        let mut line = call.as_bytes().to_vec();
        let n = BOOKSHOP.handle(&mut conn, &mut line, &mut out);
        let text = std::str::from_utf8(&out[..n]).unwrap();
        for l in text.lines() {
            parse(l);
        }
        assert!(
            text.lines().last().is_some_and(|l| l.contains("\"id\":9")),
            "cap {cap}: {text}"
        );
    }
}
