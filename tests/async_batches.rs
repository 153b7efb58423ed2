//! 2025-03-26 batches through `Server::handle_async` (async handlers'
//! calls awaited where they come, the batch going on after each) answer
//! byte for byte as the sync bookshop answers them through `handle`:
//! any mix of async calls, sync requests, notifications and invalid
//! elements, any whitespace, any output buffer (so the paths where an
//! answer or the whole batch does not fit are taken too), with and
//! without a notification sink; and the two shops' stock (`buy`) moves
//! in step. Its own test binary, so that nothing else buys alongside.

mod common;

use common::twins::{SYNC_SHOP, TWIN_SHOP, Twins};
use picomcp::Connection;
use picomcp::asynch::block_on;
use proptest::prelude::*;

/// Batch elements; `ID` is replaced by the element's id.
const ELEMENTS: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Nothing"}}}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"get_author","arguments":{"title":7}}}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"get_author_strict","arguments":{"title":"Nothing"}}}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"top","arguments":{"n":2}}}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"top","arguments":{"n":"x"}}}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"reserve","arguments":{"title":"Dune"}}}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"blurb","arguments":{"title":"Dune"}}}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"buy","arguments":{"title":"Neuromancer"}}}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"count","arguments":{"n":2},"_meta":{"progressToken":"pID"}}}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"nope","arguments":{}}}"#,
    r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"tools/list"}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":"sID","method":"resources/read","params":{"uri":"books://Dune"}}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"resources/read","params":{"uri":"books://Nothing"}}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"resources/read","params":{"uri":"books://catalog"}}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"resources/read","params":{"uri":"books://stock"}}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"resources/read","params":{"uri":"nobooks://x"}}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"prompts/get","params":{"name":"recommend","arguments":{"genre":"fantasy"}}}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"prompts/get","params":{"name":"recommend"}}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"recommend"},"argument":{"name":"genre","value":"f"}}}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"books://{title}"},"argument":{"name":"title","value":"D"}}}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"logging/setLevel","params":{"level":"debug"}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":ID}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":"no/such/method"}"#,
    r#"{"jsonrpc":"2.0","id":ID,"method":5}"#,
    r#"{"jsonrpc":"1.0","id":ID,"method":"ping"}"#,
    r#"{}"#,
    r#"7"#,
    r#"[]"#,
    r#"[{"jsonrpc":"2.0","id":ID,"method":"ping"}]"#,
];

/// Held by each test while it runs batches: the two shops' stock moves in
/// step only when one test at a time buys.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Between elements.
const GAPS: &[&str] = &["", " ", "\n", "\t ", "  \r\n "];

/// The batch's text and the answers of the sync bookshop and of the twins.
fn answer(elements: &[(usize, usize)], out_cap: usize, sink: bool) -> (String, String, String) {
    let parts: Vec<String> = elements
        .iter()
        .enumerate()
        .map(|(i, &(e, gap))| {
            format!(
                "{}{}",
                GAPS[gap % GAPS.len()],
                ELEMENTS[e % ELEMENTS.len()].replace("ID", &(i + 1).to_string())
            )
        })
        .collect();
    let batch = format!("[{}]", parts.join(","));
    let run = |twins: bool| {
        let mut conn = Connection::new();
        let server = if twins { &TWIN_SHOP } else { &SYNC_SHOP };
        common::ready_at(server, &mut conn, "2025-03-26");
        let mut frame = batch.clone().into_bytes();
        let mut out = vec![0u8; out_cap];
        let mut seen = String::new();
        let mut note = |m: &[u8]| seen.push_str(std::str::from_utf8(m).unwrap());
        let n = match (twins, sink) {
            (true, true) => block_on(
                TWIN_SHOP.handle_async_with(&mut conn, &mut frame, &mut out, &mut note, &Twins),
            ),
            (true, false) => {
                block_on(TWIN_SHOP.handle_async(&mut conn, &mut frame, &mut out, &Twins))
            }
            (false, true) => SYNC_SHOP.handle_with(&mut conn, &mut frame, &mut out, &mut note),
            (false, false) => SYNC_SHOP.handle(&mut conn, &mut frame, &mut out),
        };
        seen + std::str::from_utf8(&out[..n]).unwrap()
    };
    let sync = run(false);
    let twins = run(true);
    (batch, sync, twins)
}

/// Each shop's stock, as `books://stock` reads it: the two must move in
/// step (the same handlers ran, or did not).
fn stocks() -> (String, String) {
    let read = |twins: bool| {
        let mut conn = Connection::new();
        let server = if twins { &TWIN_SHOP } else { &SYNC_SHOP };
        common::ready_at(server, &mut conn, "2025-03-26");
        let mut frame =
            br#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"books://stock"}}"#
                .to_vec();
        let mut out = vec![0u8; 1024];
        let n = if twins {
            block_on(TWIN_SHOP.handle_async(&mut conn, &mut frame, &mut out, &Twins))
        } else {
            SYNC_SHOP.handle(&mut conn, &mut frame, &mut out)
        };
        String::from_utf8(out[..n].to_vec()).unwrap()
    };
    (read(false), read(true))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]
    #[test]
    fn a_batch_through_handle_async_is_answered_as_handle_answers_it(
        elements in prop::collection::vec((0usize..64, 0usize..8), 1..10),
        out_cap in prop_oneof![64usize..600, 600usize..16384],
        sink in any::<bool>(),
    ) {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (batch, sync, twins) = answer(&elements, out_cap, sink);
        prop_assert_eq!(&sync, &twins, "batch {} (out {} B, sink {})", batch, out_cap, sink);
        let (a, b) = stocks();
        prop_assert_eq!(a, b, "the stock after batch {} (out {} B, sink {}): {}", batch, out_cap, sink, sync);
    }
}

/// The property's inputs reach what they are meant to: whole batches
/// answered with async calls' results, and batches too large for the
/// buffer answered with the one error.
#[test]
fn the_property_reaches_real_answers_and_the_overflow() {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let all: Vec<(usize, usize)> = (0..ELEMENTS.len()).map(|e| (e, e)).collect();
    let (_, sync, twins) = answer(&all, 16384, false);
    assert_eq!(sync, twins);
    assert!(
        twins.contains("Frank Herbert") && twins.contains("\"id\":\"s15\""),
        "{twins}"
    );
    assert!(!twins.contains("does not await handlers"), "{twins}");
    let (_, sync, twins) = answer(&all, 600, true);
    assert_eq!(sync, twins);
    assert!(twins.contains("batch response exceeds"), "{twins}");
}

/// A batch whose answers stop fitting after an async call: the call's
/// answer takes what room there is (its own `-32603` when its result does
/// not fit), the element after it has no room to start and is not run (a
/// `buy` there leaves the stock as it was), and the batch is the one
/// error, as the sync bookshop answers it.
#[test]
fn a_batch_out_of_room_after_an_async_call_runs_nothing_more() {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for shop in [&SYNC_SHOP, &TWIN_SHOP] {
        while shop.state().restock() {}
    }
    let before = stocks();
    // `resources/read books://catalog` (async in the twins), then `buy
    // Neuromancer`, in 160 bytes.
    let (read, buy) = (16, 8);
    assert!(ELEMENTS[read].contains("books://catalog") && ELEMENTS[buy].contains("buy"));
    let (batch, sync, twins) = answer(&[(read, 0), (buy, 0)], 160, false);
    assert_eq!(sync, twins, "{batch}");
    assert!(twins.contains("batch response exceeds"), "{twins}");
    assert_eq!(stocks(), before, "the buy with no room ran");
}
