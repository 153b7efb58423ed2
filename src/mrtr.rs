//! Multi-round-trip requests (MRTR, MCP 2026-07-28).
//!
//! A tool, prompt or resource handler that needs input from the user answers
//! `resultType: "input_required"` with `inputRequests` (e.g. an elicitation
//! form) and an opaque `requestState`. The client asks the user, then retries
//! the same request with `inputResponses` and the `requestState` echoed. The
//! handler then sees both ([`Reply::request_state`](crate::tool::Reply::request_state),
//! [`Reply::input_response`](crate::tool::Reply::input_response)).
//!
//! `requestState` is attacker-controlled, so picomcp seals it: the wire form
//! is base64url of `1 ‖ payload ‖ tag`, where the tag is the first 16 bytes of
//! HMAC-SHA256 under the application's key (see
//! [`Server::request_state_key`](crate::Server::request_state_key)) over the
//! method, the tool/prompt/resource name, a SHA-256 of the request's
//! arguments (JSON whitespace outside strings ignored) and the payload. A
//! state that was edited, issued under another key, or replayed onto another
//! method, tool or set of arguments is refused with `-32602` before the
//! handler runs. The payload (at most [`MAX_STATE`] bytes) is the handler's.

use core::fmt;

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

use crate::content::Ctx;
use crate::schema::Schema;
use crate::tool::Done;
use crate::wire::emit::Writer;
use crate::wire::json::{JsonStr, Kind, Value};

/// Most payload bytes a sealed `requestState` may carry.
pub const MAX_STATE: usize = 96;
const TAG: usize = 16;
const FORMAT: u8 = 1;
const DOMAIN: &[u8] = b"picomcp request state v1\0";

/// What a sealed state is bound to.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Binding<'k> {
    pub(crate) key: &'k [u8],
    pub(crate) method: &'static str,
    pub(crate) name: [&'k [u8]; 1],
    pub(crate) args: [u8; 32],
}

/// SHA-256 of a JSON value with whitespace outside strings skipped.
pub(crate) fn digest_json(raw: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    let (mut in_str, mut esc, mut run) = (false, false, 0);
    for (i, &b) in raw.iter().enumerate() {
        let skip = !in_str && matches!(b, b' ' | b'\t' | b'\n' | b'\r');
        if in_str {
            if esc {
                esc = false;
            } else if b == b'\\' {
                esc = true;
            } else if b == b'"' {
                in_str = false;
            }
        } else if b == b'"' {
            in_str = true;
        }
        if skip {
            h.update(raw.get(run..i).unwrap_or(&[]));
            run = i + 1;
        }
    }
    h.update(raw.get(run..).unwrap_or(&[]));
    h.finalize().into()
}

fn mac(b: &Binding<'_>, payload: &[u8]) -> Option<Hmac<Sha256>> {
    let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(b.key).ok()?;
    m.update(DOMAIN);
    for part in [b.method.as_bytes(), b.name[0]] {
        m.update(&(part.len() as u32).to_be_bytes());
        m.update(part);
    }
    m.update(&b.args);
    m.update(payload);
    Some(m)
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn b64_value(c: u8) -> Option<u32> {
    B64.iter().position(|&x| x == c).map(|i| i as u32)
}

/// Write `bytes` as unpadded base64url.
fn write_b64url(w: &mut Writer<'_>, bytes: &[u8]) {
    let sym = |i: u32| B64.get((i & 63) as usize).copied().unwrap_or(b'A');
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (u32::from(b) << (16 - 8 * i)));
        let out = [sym(n >> 18), sym(n >> 12), sym(n >> 6), sym(n)];
        w.raw(out.get(..chunk.len() + 1).unwrap_or(&[]));
    }
}

/// Decode unpadded base64url in place; the decoded length.
fn decode_b64url(buf: &mut [u8]) -> Option<usize> {
    let len = buf.len();
    if len % 4 == 1 {
        return None;
    }
    let mut out = 0;
    let mut i = 0;
    while i < len {
        let end = (i + 4).min(len);
        let mut n = 0u32;
        for (k, j) in (i..end).enumerate() {
            n |= b64_value(*buf.get(j)?)? << (18 - 6 * k);
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        for &byte in bytes.get(..end - i - 1)? {
            *buf.get_mut(out)? = byte;
            out += 1;
        }
        i = end;
    }
    Some(out)
}

/// Verify a `requestState` (its raw characters, decoded in place) against the
/// binding; the payload.
pub(crate) fn open<'f>(binding: &Binding<'_>, raw: &'f mut [u8]) -> Option<&'f [u8]> {
    let n = decode_b64url(raw)?;
    let bytes = raw.get(..n)?;
    let (&format, rest) = bytes.split_first()?;
    if format != FORMAT || rest.len() < TAG {
        return None;
    }
    let (payload, tag) = rest.split_at(rest.len() - TAG);
    mac(binding, payload)?.verify_truncated_left(tag).ok()?;
    Some(payload)
}

fn seal(w: &mut Writer<'_>, binding: &Binding<'_>, payload: &[u8]) -> bool {
    let Some(m) = mac(binding, payload) else {
        return false;
    };
    let tag = m.finalize().into_bytes();
    let mut sealed = [0u8; 1 + MAX_STATE + TAG];
    let Some(total) = sealed.get_mut(..1 + payload.len() + TAG) else {
        return false;
    };
    let (head, rest) = total.split_at_mut(1);
    head.fill(FORMAT);
    let (p, t) = rest.split_at_mut(payload.len());
    p.copy_from_slice(payload);
    t.copy_from_slice(tag.get(..TAG).unwrap_or(&[0; TAG]));
    write_b64url(w, total);
    true
}

/// The user's answer to an elicitation form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ElicitAction {
    /// Submitted.
    Accept,
    /// Explicitly declined.
    Decline,
    /// Dismissed.
    Cancel,
}

/// One entry of the retry's `inputResponses`.
#[derive(Clone, Copy, Debug)]
pub struct InputResponse<'r> {
    value: Value<'r>,
}

impl<'r> InputResponse<'r> {
    /// The whole response object (an `ElicitResult`, `CreateMessageResult`
    /// or `ListRootsResult`).
    pub fn value(&self) -> Value<'r> {
        self.value
    }

    /// An elicitation's `action`.
    pub fn action(&self) -> Option<ElicitAction> {
        let a = self.value.get("action")?.as_str()?;
        [
            ("accept", ElicitAction::Accept),
            ("decline", ElicitAction::Decline),
            ("cancel", ElicitAction::Cancel),
        ]
        .into_iter()
        .find(|(s, _)| a.eq_str(s))
        .map(|(_, x)| x)
    }

    /// An accepted elicitation's form `content`.
    pub fn content(&self) -> Option<Value<'r>> {
        self.value
            .get("content")
            .filter(|c| c.kind() == Kind::Object)
    }
}

/// The MRTR part of a request context.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Mrtr<'r> {
    pub(crate) binding: Option<Binding<'r>>,
    /// The verified payload of the retry's `requestState`.
    pub(crate) state: Option<&'r [u8]>,
    pub(crate) responses: Option<Value<'r>>,
}

impl<'r> Mrtr<'r> {
    /// No MRTR input.
    pub(crate) const NONE: Mrtr<'static> = Mrtr {
        binding: None,
        state: None,
        responses: None,
    };

    pub(crate) fn response(&self, key: &str) -> Option<InputResponse<'r>> {
        let value = self.responses?.get(key)?;
        (value.kind() == Kind::Object).then_some(InputResponse { value })
    }
}

/// Writes an `input_required` result. Consumed by [`finish`](Self::finish).
pub struct InputRequired<'r> {
    ctx: Ctx<'r>,
    requests: u32,
    state: bool,
}

impl<'r> InputRequired<'r> {
    pub(crate) fn new(mut ctx: Ctx<'r>) -> Self {
        ctx.w.truncate(ctx.body_start);
        ctx.w.raw(b"\"resultType\":\"input_required\"");
        ctx.input_required = true;
        Self {
            ctx,
            requests: 0,
            state: false,
        }
    }

    fn next_request(&mut self, key: &str) -> &mut Writer<'r> {
        let w = &mut self.ctx.w;
        w.raw(if self.requests == 0 {
            b",\"inputRequests\":{"
        } else {
            b","
        });
        self.requests += 1;
        w.string(key);
        w.raw(b":");
        w
    }

    /// Ask the user to fill in a form (`elicitation/create`, mode `form`):
    /// `schema` is the requested schema (flat object of primitive
    /// properties).
    pub fn elicit(
        &mut self,
        key: &str,
        message: fmt::Arguments<'_>,
        schema: &Schema<'_>,
    ) -> &mut Self {
        if self.state {
            self.ctx.w.set_overflow(); // requests must come before the state
            return self;
        }
        let w = self.next_request(key);
        w.raw(b"{\"method\":\"elicitation/create\",\"params\":{\"mode\":\"form\",\"message\":");
        w.string_fmt(message);
        w.raw(b",\"requestedSchema\":");
        schema.write(w);
        w.raw(b"}}");
        self
    }

    /// Attach sealed state (at most [`MAX_STATE`] bytes) that the retry will
    /// hand back verified. Needs
    /// [`Server::request_state_key`](crate::Server::request_state_key).
    pub fn state(&mut self, payload: &[u8]) -> &mut Self {
        if self.requests > 0 {
            self.ctx.w.raw(b"}");
        }
        self.state = true;
        let binding = self.ctx.mrtr.binding;
        let w = &mut self.ctx.w;
        w.raw(b",\"requestState\":\"");
        match binding {
            Some(b) if payload.len() <= MAX_STATE && seal(w, &b, payload) => {}
            _ => {
                self.ctx.state_error = true;
                w.set_overflow();
            }
        }
        self.ctx.w.raw(b"\"");
        self
    }

    /// Finish the `input_required` result.
    pub fn finish<E>(mut self) -> Result<Done, E> {
        if self.requests > 0 && !self.state {
            self.ctx.w.raw(b"}");
        }
        if self.requests == 0 && !self.state {
            self.ctx.state_error = true; // MCP requires at least one of the two
        }
        self.ctx.finished = true;
        Ok(Done(()))
    }
}

impl fmt::Debug for InputRequired<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InputRequired")
            .field("requests", &self.requests)
            .finish_non_exhaustive()
    }
}

/// The string value of a `requestState` member, raw (for in-place decoding).
pub(crate) fn state_raw<'a>(params: &Value<'a>) -> Option<Result<JsonStr<'a>, ()>> {
    params.get("requestState").map(|v| v.as_str().ok_or(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding<'k>(key: &'k [u8], name: &'k [u8], args: &[u8]) -> Binding<'k> {
        Binding {
            key,
            method: "tools/call",
            name: [name],
            args: digest_json(args),
        }
    }

    fn sealed(b: &Binding<'_>, payload: &[u8]) -> std::vec::Vec<u8> {
        let mut buf = [0u8; 256];
        let mut w = Writer::new(&mut buf);
        assert!(seal(&mut w, b, payload));
        let n = w.finish().unwrap();
        buf[..n].to_vec()
    }

    #[test]
    fn seal_and_open() {
        let b = binding(b"k", b"reserve", br#"{"title":"Dune"}"#);
        let mut s = sealed(&b, b"confirm");
        assert_eq!(open(&b, &mut s.clone()), Some(&b"confirm"[..]));
        // Whitespace in the arguments does not matter; their content does.
        let spaced = binding(b"k", b"reserve", br#"{ "title" : "Dune" }"#);
        assert_eq!(open(&spaced, &mut s.clone()), Some(&b"confirm"[..]));
        for other in [
            binding(b"k", b"reserve", br#"{"title":"Neuromancer"}"#),
            binding(b"k", b"get_author", br#"{"title":"Dune"}"#),
            binding(b"other key", b"reserve", br#"{"title":"Dune"}"#),
            Binding {
                method: "prompts/get",
                ..b
            },
        ] {
            assert_eq!(open(&other, &mut s.clone()), None);
        }
        // Any flipped character is refused.
        for i in 0..s.len() {
            let mut t = s.clone();
            t[i] = if t[i] == b'A' { b'B' } else { b'A' };
            assert_eq!(open(&b, &mut t), None, "flip at {i}");
        }
        assert_eq!(open(&b, &mut s[..5].to_vec()), None);
        s.push(b'=');
        assert_eq!(open(&b, &mut s), None);
    }

    #[test]
    fn b64url_round_trip() {
        for len in 0..40 {
            let data: std::vec::Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let mut buf = [0u8; 128];
            let mut w = Writer::new(&mut buf);
            write_b64url(&mut w, &data);
            let n = w.finish().unwrap();
            let mut enc = buf[..n].to_vec();
            assert!(
                enc.iter()
                    .all(|c| c.is_ascii_alphanumeric() || *c == b'-' || *c == b'_')
            );
            let m = decode_b64url(&mut enc).unwrap();
            assert_eq!(&enc[..m], &data[..]);
        }
    }
}
