//! Integrity tags on the opaque tokens a client hands back: sealed MRTR
//! `requestState` and list cursors, both HMAC-SHA256 under a key of the
//! application's ([`mac`] is the one keyed MAC).
//!
//! A sealed `requestState` is base64url of `1 ‖ payload ‖ tag`, where the tag
//! is the first 16 bytes of HMAC-SHA256 over the method, the tool/prompt/
//! resource name, a SHA-256 of the request's arguments (JSON whitespace
//! outside strings ignored) and the payload.

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

use crate::codec::{Alphabet, base64_decode_in_place, base64_encode};
use crate::wire::emit::Writer;

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

/// HMAC-SHA256 under `key` of `parts`, in order: the one keyed MAC of the
/// crate (request state and list cursors). `None` only for a key the MAC
/// cannot take (HMAC takes any length).
pub(crate) fn mac(key: &[u8], parts: &[&[u8]]) -> Option<Hmac<Sha256>> {
    let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(key).ok()?;
    for part in parts {
        m.update(part);
    }
    Some(m)
}

/// The MAC of a request state bound to `b`.
fn state_mac(b: &Binding<'_>, payload: &[u8]) -> Option<Hmac<Sha256>> {
    let (method, name) = (b.method.as_bytes(), b.name[0]);
    mac(
        b.key,
        &[
            DOMAIN,
            &(method.len() as u32).to_be_bytes(),
            method,
            &(name.len() as u32).to_be_bytes(),
            name,
            &b.args,
            payload,
        ],
    )
}

/// Write `bytes` as unpadded base64url.
pub(crate) fn write_b64url(w: &mut Writer<'_>, bytes: &[u8]) {
    base64_encode(bytes, true, false, |s| w.raw(s));
}

/// Decode unpadded base64url in place; the decoded length.
pub(crate) fn decode_b64url(buf: &mut [u8]) -> Option<usize> {
    base64_decode_in_place(buf, Alphabet::Url)
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
    state_mac(binding, payload)?
        .verify_truncated_left(tag)
        .ok()?;
    Some(payload)
}

pub(crate) fn seal(w: &mut Writer<'_>, binding: &Binding<'_>, payload: &[u8]) -> bool {
    let Some(m) = state_mac(binding, payload) else {
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
