//! Small reference implementations the targets check picomcp against. They
//! are deliberately naive: obviously right rather than fast.
#![allow(dead_code)]

use std::collections::BTreeMap;

use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// One frame as a plain line splitter sees it.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A line that fits, without its `\n` and one trailing `\r`.
    Line(Vec<u8>),
    /// A line that does not fit a buffer of the given size.
    Overflow,
}

/// Split `input` into lines for a buffer of `cap` bytes: a line's message is
/// the line without its `\n` and one `\r` before it (or, for a last line
/// without `\n`, one `\r` at the end of input); it fits when it has at most
/// `cap` bytes; an empty last line is no line at all.
pub fn reference_frames(input: &[u8], cap: usize) -> Vec<Frame> {
    let parts: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    let mut frames = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let terminated = i + 1 < parts.len();
        if !terminated && part.is_empty() {
            break;
        }
        let message = part.strip_suffix(b"\r").unwrap_or(part);
        if message.len() <= cap {
            frames.push(Frame::Line(message.to_vec()));
        } else {
            frames.push(Frame::Overflow);
        }
    }
    frames
}

/// JSON insignificant whitespace.
pub fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Deepest nesting of `[`/`{` outside strings (an upper bound of the real
/// depth for any input, exact for valid JSON).
pub fn max_depth_outside_strings(input: &[u8]) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let mut in_string = false;
    let mut i = 0;
    while let Some(&b) = input.get(i) {
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'[' | b'{' => {
                    depth += 1;
                    max = max.max(depth);
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        i += 1;
    }
    max
}

fn hex4(input: &[u8], at: usize) -> Option<u32> {
    let digits = input.get(at..at + 4)?;
    u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
}

/// Whether a string in `input` (JSON that is otherwise well-formed) holds a
/// `\u` surrogate escape that is not a high+low pair.
pub fn has_lone_surrogate(input: &[u8]) -> bool {
    let mut in_string = false;
    let mut i = 0;
    while let Some(&b) = input.get(i) {
        if !in_string {
            in_string = b == b'"';
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = false;
                i += 1;
            }
            b'\\' if input.get(i + 1) == Some(&b'u') => {
                let Some(unit) = hex4(input, i + 2) else {
                    return false; // not well-formed: not our question
                };
                match unit {
                    0xD800..=0xDBFF => {
                        let pair = input.get(i + 6..i + 8) == Some(b"\\u")
                            && hex4(input, i + 8).is_some_and(|lo| (0xDC00..=0xDFFF).contains(&lo));
                        if !pair {
                            return true;
                        }
                        i += 12;
                    }
                    0xDC00..=0xDFFF => return true,
                    _ => i += 6,
                }
            }
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    false
}

// ---------------------------------------------------------------------------
// The model: what a message must produce (the server and http targets)
// ---------------------------------------------------------------------------

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

/// Classify one complete message (a line without its terminator, or an
/// HTTP body) the way JSON-RPC 2.0 and the README say it must be treated.
pub fn classify(line: &[u8]) -> Expect {
    if line.iter().all(|&b| is_ws(b)) {
        return Expect::Nothing;
    }
    // Not strict JSON (or nested deeper than 32): a parse error, `id` null.
    if std::str::from_utf8(line).is_err()
        || serde_json::from_slice::<IgnoredAny>(line).is_err()
        || max_depth_outside_strings(line) > 32
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
