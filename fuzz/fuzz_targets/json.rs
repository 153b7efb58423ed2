//! `wire::json::validate` against serde_json, and the borrowed views over
//! everything it accepts.
//!
//! * For valid UTF-8 input nested at most 32 deep, `validate` (default
//!   limits) accepts exactly what serde_json accepts, except strings with a
//!   lone surrogate escape, which picomcp rejects by design (serde_json only
//!   checks them when it decodes a string).
//! * Tighter limits only ever turn acceptance into a limit error.
//! * Every accepted value is walked completely (members, items, strings,
//!   numbers) and every view agrees with the others and with serde_json.
//! * The outline the server's validation records for a message agrees with
//!   that validation's answer and with walking the message.
#![no_main]

mod util;

use libfuzzer_sys::fuzz_target;
use picomcp::wire::json::{self, JsonError, Kind, Limits, Value};
use serde::de::IgnoredAny;

fn check_string(v: Value<'_>) {
    let s = v.as_str().expect("a string value has contents");
    let decoded: String = s.chars().collect();
    let reference: String =
        serde_json::from_slice(v.raw()).expect("serde_json decodes an accepted string");
    assert_eq!(decoded, reference, "decoded string differs from serde_json");
    let mut raw = s.raw().to_vec();
    assert_eq!(json::unescape_str_in_place(&mut raw), Ok(decoded.as_str()));
    assert!(s.eq_str(&decoded));
    assert!(s.starts_with(&decoded));
    assert_eq!(s.char_count(), decoded.chars().count());
    assert_eq!(s.decoded_len(), decoded.len());
    assert_eq!(s.to_string(), decoded);
    let mut buf = vec![0u8; decoded.len()];
    assert_eq!(s.decode_into(&mut buf), Some(decoded.as_str()));
    if !s.raw().contains(&b'\\') {
        assert_eq!(s.as_plain(), Some(decoded.as_str()));
    }
}

fn check_number(v: Value<'_>) {
    let n = v.as_number().expect("a number value parses as a number");
    let raw = n.raw();
    assert_eq!(raw.as_bytes(), v.raw());
    let _ = (
        n.as_f64(),
        n.as_f32(),
        n.as_u128(),
        n.as_i128(),
        n.is_integral(),
    );
    if n.is_integer_literal() {
        assert!(n.is_integral(), "{raw} is an integer literal");
        assert_eq!(n.as_i64(), raw.parse::<i64>().ok(), "as_i64 of {raw}");
        assert_eq!(n.as_i128(), raw.parse::<i128>().ok(), "as_i128 of {raw}");
        if !raw.starts_with('-') {
            assert_eq!(n.as_u64(), raw.parse::<u64>().ok(), "as_u64 of {raw}");
            assert_eq!(n.as_u128(), raw.parse::<u128>().ok(), "as_u128 of {raw}");
        }
    }
    if let Some(i) = n.as_i64() {
        assert!(n.is_integral());
        assert_eq!(n.as_i128(), Some(i128::from(i)));
    }
    if let Some(u) = n.as_u64() {
        assert_eq!(n.as_u128(), Some(u128::from(u)));
    }
}

/// Walk every node with an explicit stack; returns the number of nodes.
fn walk(root: Value<'_>) -> usize {
    let mut stack = vec![root];
    let mut nodes = 0;
    while let Some(v) = stack.pop() {
        nodes += 1;
        assert_eq!(
            json::value_len(v.raw()),
            Some(v.raw().len()),
            "value_len of a node"
        );
        match v.kind() {
            Kind::Object => {
                let mut n = 0;
                for (k, child) in v.members() {
                    if n < 16 {
                        // The first member with an equal decoded key wins.
                        let key: String = k.chars().collect();
                        let first = v
                            .members()
                            .find(|(k2, _)| k2.chars().eq(key.chars()))
                            .map(|(_, c)| c);
                        assert_eq!(v.get(&key), first);
                    }
                    let quoted = format!("\"{}\"", String::from_utf8_lossy(k.raw()));
                    check_string(
                        Value::parse(quoted.as_bytes(), &Limits::DEFAULT)
                            .expect("a key is a valid string"),
                    );
                    stack.push(child);
                    n += 1;
                }
                assert_eq!(n, v.len());
                assert_eq!(n == 0, v.is_empty());
            }
            Kind::Array => {
                let n = v.items().inspect(|&child| stack.push(child)).count();
                assert_eq!(n, v.len());
                assert_eq!(n == 0, v.is_empty());
            }
            Kind::String => check_string(v),
            Kind::Number => check_number(v),
            Kind::Bool => assert!(v.as_bool().is_some()),
            Kind::Null => assert!(v.is_null()),
            other => panic!("unknown kind {other:?}"),
        }
        // A part of a valid document is a valid document.
        assert_eq!(
            json::validate(v.raw(), &Limits::DEFAULT.max_depth(json::MAX_DEPTH)),
            Ok(())
        );
    }
    nodes
}

fuzz_target!(|data: &[u8]| {
    let result = json::validate(data, &Limits::DEFAULT);
    // The outline the server's one validation records (members taken as
    // expected included) agrees with validation and with walking, under
    // the defaults and a string limit its keys meet or miss.
    for limits in [Limits::DEFAULT, Limits::new().max_string_len(4)] {
        picomcp::mcp::envelope::fuzz_outline(data, &limits);
    }

    // Tighter limits never accept more, and a non-limit error stays an error.
    for tight in [
        Limits::new().max_depth(2).max_items(1).max_string_len(1),
        Limits::new().max_depth(0),
        Limits::new().max_items(3).max_string_len(16),
        Limits::new().max_depth(u16::MAX),
    ] {
        let r = json::validate(data, &tight);
        if tight.max_depth <= 32 && r.is_ok() {
            assert_eq!(
                result,
                Ok(()),
                "accepted with {tight:?} but not with the defaults"
            );
        }
        if let Err(e) = result
            && !e.is_limit()
        {
            assert!(
                r.is_err(),
                "{e:?} with the defaults but accepted with {tight:?}"
            );
        }
    }
    if let Err(e) = result
        && let Some(offset) = e.offset()
    {
        assert!(offset <= data.len(), "{e:?} points past the input");
    }

    if std::str::from_utf8(data).is_ok() && util::max_depth_outside_strings(data) <= 32 {
        let reference = serde_json::from_slice::<IgnoredAny>(data).is_ok();
        let expected = reference && !util::has_lone_surrogate(data);
        assert_eq!(
            result.is_ok(),
            expected,
            "validate says {result:?}, serde_json says {}",
            if reference { "ok" } else { "error" }
        );
        if reference && !expected {
            assert!(
                matches!(result, Err(JsonError::LoneSurrogate { .. })),
                "{result:?}"
            );
        }
    }

    if result.is_ok() {
        let v = Value::parse(data, &Limits::DEFAULT).expect("parse agrees with validate");
        walk(v);
        assert_eq!(Value::trusted(data), v);
    }
});
