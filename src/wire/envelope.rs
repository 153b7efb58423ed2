//! Borrowed JSON-RPC 2.0 views over a validated frame.
//!
//! [`parse`] classifies one JSON value as a request, a notification or a
//! response, without copying. The id is kept as its exact token so it can be
//! echoed verbatim with its JSON type (`"abc"`, `""`, `0`, `-1`,
//! `9007199254740993` — never rounded through a float).

use crate::wire::json::{JsonStr, Kind, Value, integer_literal, slot_of};

/// A request id: a JSON string or an integer, kept as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Id<'a> {
    raw: &'a [u8],
}

impl<'a> Id<'a> {
    /// The exact token (strings include their quotes and escapes).
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The id as a string, when it is one.
    pub fn as_str(&self) -> Option<JsonStr<'a>> {
        Value::trusted(self.raw).as_str()
    }
}

/// A request: it must be answered exactly once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request<'a> {
    /// The id to echo.
    pub id: Id<'a>,
    /// The method name (possibly escaped).
    pub method: JsonStr<'a>,
    /// `params`, when present and not `null` (always an object).
    pub params: Option<Value<'a>>,
}

/// A notification: never answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Notification<'a> {
    /// The method name.
    pub method: JsonStr<'a>,
    /// `params`, when present and not `null` (always an object).
    pub params: Option<Value<'a>>,
}

/// One JSON-RPC message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Envelope<'a> {
    /// A request.
    Request(Request<'a>),
    /// A notification.
    Notification(Notification<'a>),
    /// A response (`result` or `error`, no `method`) sent by the client.
    Response {
        /// Its id, when readable.
        id: Option<Id<'a>>,
    },
}

/// The value is JSON but not a valid JSON-RPC message: answer `-32600` with
/// `id` (or `null` when it could not be read).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Invalid<'a> {
    /// The id, when it could be read.
    pub id: Option<Id<'a>>,
    /// What is wrong, for the error's `data`.
    pub reason: &'static str,
}

/// The members of a message that classify it, by position: the first four
/// are kept (and must not repeat), `result` and `error` only mark a
/// response. (The order an [`Outline`](crate::wire::json::Outline)'s top
/// slots follow.)
pub(crate) const MESSAGE_KEYS: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];
/// Places in [`MESSAGE_KEYS`] (an outline's top slots).
pub(crate) const JSONRPC: usize = slot_of(&MESSAGE_KEYS, "jsonrpc");
pub(crate) const ID: usize = slot_of(&MESSAGE_KEYS, "id");
pub(crate) const METHOD: usize = slot_of(&MESSAGE_KEYS, "method");
pub(crate) const PARAMS: usize = slot_of(&MESSAGE_KEYS, "params");
const RESULT: usize = slot_of(&MESSAGE_KEYS, "result");
const ERROR: usize = slot_of(&MESSAGE_KEYS, "error");

/// Classify one validated JSON value.
///
/// Rules: an object; `"jsonrpc": "2.0"`; `id` a string or an integer (not
/// `null`, a fraction, a boolean, an object or an array); `method` a string;
/// `params` an object, or `null`/absent (treated as absent); no member twice.
/// An object with `result` or `error` and no `method` is a response.
pub fn parse(value: Value<'_>) -> Result<Envelope<'_>, Invalid<'_>> {
    if value.kind() != Kind::Object {
        return Err(not_an_object());
    }
    let mut kept: [Option<Value<'_>>; 4] = [None; 4];
    let mut result = false;
    let mut dup = false;
    for (key, v) in value.members() {
        match key.position_in(&MESSAGE_KEYS).map(|i| (i, kept.get_mut(i))) {
            Some((_, Some(slot))) => {
                dup |= slot.is_some();
                *slot = Some(v);
            }
            Some((_, None)) => result = true,
            None => {}
        }
    }
    classify(kept, result, dup)
}

/// [`parse`] of `value`, the whole of `frame`, whose validation recorded
/// `outline` (its top slots are [`MESSAGE_KEYS`]'s): the members were
/// picked out then.
pub(crate) fn parse_outlined<'a>(
    value: Value<'a>,
    frame: &'a [u8],
    outline: &crate::wire::json::Outline,
) -> Result<Envelope<'a>, Invalid<'a>> {
    if value.kind() != Kind::Object {
        return Err(not_an_object());
    }
    // One call each, not `[..].map` (not always inlined: see `http::body`).
    let kept = [
        outline.top(frame, JSONRPC),
        outline.top(frame, ID),
        outline.top(frame, METHOD),
        outline.top(frame, PARAMS),
    ];
    let result = outline.top(frame, RESULT).is_some() || outline.top(frame, ERROR).is_some();
    let repeated = (1 << JSONRPC) | (1 << ID) | (1 << METHOD) | (1 << PARAMS);
    classify(kept, result, outline.repeated_top() & repeated != 0)
}

fn not_an_object() -> Invalid<'static> {
    Invalid {
        id: None,
        reason: "a message must be a JSON object",
    }
}

/// The message of an object whose `jsonrpc`, `id`, `method` and `params`
/// are `kept`; `result`: it has `result` or `error`; `dup`: one of the four
/// appears twice.
fn classify<'a>(
    kept: [Option<Value<'a>>; 4],
    result: bool,
    dup: bool,
) -> Result<Envelope<'a>, Invalid<'a>> {
    let [jsonrpc, id, method, params] = kept;
    let id_ok = id.and_then(|v| match v.kind() {
        Kind::String => Some(Id { raw: v.raw() }),
        Kind::Number if integer_literal(v.raw()) => Some(Id { raw: v.raw() }),
        _ => None,
    });
    let invalid = |reason| Err(Invalid { id: id_ok, reason });
    if dup {
        // Which id would be echoed is ambiguous: answer with `null`.
        return Err(Invalid {
            id: None,
            reason: "a member appears twice",
        });
    }
    if !jsonrpc
        .and_then(|v| v.as_str())
        .is_some_and(|s| s.eq_str("2.0"))
    {
        return invalid("jsonrpc must be \"2.0\"");
    }
    // A response from the client (even one with a null id, such as its own
    // parse error) is never answered: answering could make two peers
    // exchange errors forever.
    if method.is_none() && result {
        return Ok(Envelope::Response { id: id_ok });
    }
    if id.is_some() && id_ok.is_none() {
        return invalid("id must be a string or an integer");
    }
    let Some(method) = method else {
        return invalid("method is missing");
    };
    let Some(method) = method.as_str() else {
        return invalid("method must be a string");
    };
    let params = match params {
        None => None,
        Some(p) if p.is_null() => None,
        Some(p) if p.kind() == Kind::Object => Some(p),
        Some(_) => return invalid("params must be an object"),
    };
    Ok(match id_ok {
        Some(id) => Envelope::Request(Request { id, method, params }),
        None => Envelope::Notification(Notification { method, params }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::Limits;

    fn env(s: &str) -> Result<Envelope<'_>, Invalid<'_>> {
        parse(Value::parse(s.as_bytes(), &Limits::DEFAULT).unwrap())
    }

    fn id_of(s: &str) -> Option<&[u8]> {
        match env(s) {
            Ok(Envelope::Request(r)) => Some(r.id.raw()),
            Err(Invalid { id, .. }) => id.map(|i| i.raw()),
            _ => None,
        }
    }

    #[test]
    fn ids_verbatim() {
        for id in [
            r#""abc""#,
            r#""""#,
            "0",
            "-1",
            "9007199254740993",
            r#""a\u0062""#,
        ] {
            let line = std::format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            assert_eq!(id_of(&line), Some(id.as_bytes()));
        }
    }

    #[test]
    fn invalid_envelopes() {
        for (line, has_id) in [
            (r#"{"jsonrpc":"1.0","id":10,"method":"ping"}"#, true),
            (r#"{"id":11,"method":"ping"}"#, true),
            (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, false),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, false),
            (r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, false),
            (r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#, false),
            (r#"{"jsonrpc":"2.0","id":12}"#, true),
            (r#"{"jsonrpc":"2.0","id":12,"method":5}"#, true),
            (
                r#"{"jsonrpc":"2.0","id":13,"method":"ping","params":[]}"#,
                true,
            ),
            (
                r#"{"jsonrpc":"2.0","id":13,"method":"ping","id":14}"#,
                false,
            ),
            ("[1]", false),
            ("5", false),
        ] {
            let r = env(line);
            assert!(r.is_err(), "{line}");
            assert_eq!(r.unwrap_err().id.is_some(), has_id, "{line}");
        }
    }

    #[test]
    fn kinds() {
        assert!(matches!(
            env(r#"{"jsonrpc":"2.0","id":14,"method":"ping","params":null}"#),
            Ok(Envelope::Request(Request { params: None, .. }))
        ));
        assert!(matches!(
            env(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Ok(Envelope::Notification(_))
        ));
        assert!(matches!(
            env(r#"{"jsonrpc":"2.0","id":42,"result":{}}"#),
            Ok(Envelope::Response { .. })
        ));
        assert!(
            matches!(env(r#"{"jsonrpc":"2.0","method":"tools\/list","id":"x"}"#), Ok(Envelope::Request(r)) if r.method.eq_str("tools/list"))
        );
    }
}
