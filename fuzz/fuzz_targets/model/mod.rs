//! What a message (a framed line on stdio, a request body over HTTP) must
//! produce, the way JSON-RPC 2.0 and the README say it must be treated: the
//! model the `server` and `http` targets check answers against. (Not in
//! `util`, which the crate's own tests include and which has no serde.)
// Each target uses part of it (`Overflow` is the framer's, on stdio only).
#![allow(dead_code)]

use std::collections::BTreeMap;

use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::util::{has_lone_surrogate, is_ws, max_depth_outside_strings};

/// What one message (a framed line on stdio, a request body over HTTP) must
/// produce.
#[derive(Debug)]
pub enum Expect {
    /// No answer (notification, client response, blank message).
    Nothing,
    /// Exactly one answer with this id token (`None`: `"id":null`).
    Answer(Option<String>),
    /// One `message too large` error (the framer's: `server` only).
    Overflow,
    /// A non-empty JSON array: one batch answer (array, or a `null`-id error
    /// about batches), or none when every element is a notification.
    MaybeBatch,
    /// The model cannot tell (should not happen); only counts are checked.
    Unknown,
}

/// The members `envelope::parse` looks at, kept raw (`null` included).
#[derive(Deserialize)]
pub struct Envelope<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    pub jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    pub id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    pub method: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    pub params: Option<&'a RawValue>,
}

/// A member that is present, `null` included (serde's default would make
/// `null` absent).
pub fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// The nesting the server accepts (`Limits::DEFAULT`'s `max_depth`): a
/// message nested deeper is a parse error.
pub const SERVER_DEPTH: usize = 32;

/// Classify one complete message (a line without its terminator, or an
/// HTTP body) the way JSON-RPC 2.0 and the README say it must be treated.
pub fn classify(line: &[u8]) -> Expect {
    if line.iter().all(|&b| is_ws(b)) {
        return Expect::Nothing;
    }
    // Not strict JSON (or nested deeper than SERVER_DEPTH): a parse error,
    // `id` null.
    if std::str::from_utf8(line).is_err()
        || serde_json::from_slice::<IgnoredAny>(line).is_err()
        || max_depth_outside_strings(line) > SERVER_DEPTH
        || has_lone_surrogate(line)
    {
        return Expect::Answer(None);
    }
    let first = line.iter().copied().find(|&b| !is_ws(b));
    if first == Some(b'[') {
        let empty = serde_json::from_slice::<Vec<IgnoredAny>>(line).is_ok_and(|v| v.is_empty());
        return if empty {
            Expect::Answer(None)
        } else {
            Expect::MaybeBatch
        };
    }
    if first != Some(b'{') {
        return Expect::Answer(None); // not an object
    }
    let env = match serde_json::from_slice::<Envelope<'_>>(line) {
        Ok(env) => env,
        Err(e) if e.to_string().contains("duplicate field") => return Expect::Answer(None),
        Err(_) => return Expect::Unknown,
    };
    let id_ok = env.id.map(RawValue::get).filter(|t| {
        t.starts_with('"')
            || (t.starts_with(|c: char| c == '-' || c.is_ascii_digit())
                && !t.contains(['.', 'e', 'E']))
    });
    let jsonrpc_ok = env
        .jsonrpc
        .and_then(|r| serde_json::from_str::<String>(r.get()).ok())
        .is_some_and(|s| s == "2.0");
    let answer = |id: Option<&str>| Expect::Answer(id.map(str::to_owned));
    if !jsonrpc_ok {
        return answer(id_ok);
    }
    if env.method.is_none() {
        // A response from the client (`result` or `error`, no `method`) is
        // never answered, whatever its id (even `null`): answering could
        // make two peers exchange errors forever.
        let keys = serde_json::from_slice::<BTreeMap<String, IgnoredAny>>(line).unwrap_or_default();
        if keys.contains_key("result") || keys.contains_key("error") {
            return Expect::Nothing;
        }
    }
    if env.id.is_some() && id_ok.is_none() {
        return answer(None);
    }
    let Some(method) = env.method else {
        return answer(id_ok);
    };
    if !method.get().starts_with('"') {
        return answer(id_ok);
    }
    if let Some(p) = env.params
        && p.get() != "null"
        && !p.get().starts_with('{')
    {
        return answer(id_ok);
    }
    match id_ok {
        Some(id) => answer(Some(id)),
        None => Expect::Nothing, // a notification
    }
}

/// One JSON-RPC response object as an answer must be: `"jsonrpc":"2.0"`,
/// an id (string, number or `null`), exactly one of `result` and `error`,
/// an error with an integer `code` and a string `message`. `text` is what
/// a failure prints.
pub fn check_response(v: &serde_json::Value, text: &str) {
    assert!(v.is_object(), "an answer is an object: {text}");
    assert_eq!(
        v.get("jsonrpc").and_then(serde_json::Value::as_str),
        Some("2.0"),
        "{text}"
    );
    let id = v
        .get("id")
        .unwrap_or_else(|| panic!("an answer has an id: {text}"));
    assert!(id.is_string() || id.is_number() || id.is_null(), "{text}");
    assert!(
        v.get("result").is_some() != v.get("error").is_some(),
        "exactly one of result/error: {text}"
    );
    if let Some(e) = v.get("error") {
        assert!(e["code"].is_i64() && e["message"].is_string(), "{text}");
    }
}
