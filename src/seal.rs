//! Integrity tags on the opaque tokens a client hands back: sealed MRTR
//! `requestState` and list cursors, both HMAC-SHA256 under a key of the
//! application's ([`mac`] is the one keyed MAC).
//!
//! A sealed `requestState` is base64url of `1 ‖ payload ‖ tag`, where the tag
//! is the first 16 bytes of HMAC-SHA256 over the method, the tool/prompt/
//! resource name, a SHA-256 of the request's arguments (JSON whitespace
//! outside strings ignored) and the payload. With a time to live
//! ([`Server::request_state_ttl`](crate::Server::request_state_ttl)) it is
//! `2 ‖ issued-at (8 bytes, big-endian seconds) ‖ payload ‖ tag`, the
//! issue time under the tag too: a state older than the TTL, or issued more
//! than the TTL in the future, or without an issue time, is refused like a
//! tampered one. A request the caller authenticated as a subject
//! ([`Server::handle_as`](crate::Server::handle_as),
//! [`Request::subject`](crate::http::Request::subject)) has the subject's
//! digest under the tag too, in a separate MAC domain: a state issued to
//! one subject is refused from another, from none, and one issued to none
//! is refused from a subject.

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

use crate::codec::{Alphabet, base64_decode_in_place, base64_encode};
use crate::wire::emit::Writer;

/// Most payload bytes a sealed `requestState` may carry.
pub const MAX_STATE: usize = 96;
const TAG: usize = 16;
const FORMAT: u8 = 1;
/// The format with an issue time.
const FORMAT_TIMED: u8 = 2;
const ISSUED: usize = 8;
const DOMAIN: &[u8] = b"picomcp request state v1\0";
/// The domain of a state bound to a subject: no MAC input of the one is a
/// MAC input of the other, so neither is taken for the other.
const DOMAIN_BOUND: &[u8] = b"picomcp request state v1 bound\0";

/// The time (seconds) a state is sealed or opened at, and its time to
/// live.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Expiry {
    /// The caller's clock, read only when a state is sealed or opened:
    /// most requests do neither, and do not ask it the time (a
    /// `SystemTime::now` on a host, about 100 instructions a 2026-07-28
    /// call, `scripts/http_cost.sh`).
    Clock(fn() -> u64, u64),
    /// A time given (tests).
    #[cfg(test)]
    At(u64, u64),
}

impl Expiry {
    /// Now, and the time to live.
    fn now_and_ttl(self) -> (u64, u64) {
        match self {
            Expiry::Clock(clock, ttl) => (clock(), ttl),
            #[cfg(test)]
            Expiry::At(now, ttl) => (now, ttl),
        }
    }
}

/// What a sealed state is bound to.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Binding<'k> {
    pub(crate) key: &'k [u8],
    pub(crate) method: &'static str,
    pub(crate) name: [&'k [u8]; 1],
    pub(crate) args: ArgsDigest,
    /// When states expire: the time to live (seconds) and how to tell
    /// the time.
    pub(crate) expiry: Option<Expiry>,
    /// The digest of the subject the request was authenticated as
    /// ([`crate::server::Subject`]), when the caller said.
    pub(crate) subject: Option<[u8; 32]>,
}

/// Most bytes of arguments (whitespace outside strings removed) an
/// [`ArgsDigest`] keeps rather than hashing them at once.
const KEPT: usize = 32;

/// The SHA-256 of a call's arguments ([`digest_json`]), taken when a state
/// is sealed or opened (most calls do neither): arguments of at most 32
/// bytes, as written or without their whitespace, are kept and hashed then;
/// longer ones are hashed at once (a handler may change the arguments in
/// place before it seals a state).
#[derive(Clone, Copy, Debug)]
pub(crate) enum ArgsDigest {
    /// The digest.
    Done([u8; 32]),
    /// The arguments, as written or without their whitespace (the same
    /// digest): `bytes[..len]`.
    Kept { len: u8, bytes: [u8; KEPT] },
}

impl ArgsDigest {
    pub(crate) fn of(raw: &[u8]) -> Self {
        let mut bytes = [0u8; KEPT];
        // Short enough as written: a copy (whitespace goes when hashed).
        if let (Some(dst), Ok(len)) = (bytes.get_mut(..raw.len()), u8::try_from(raw.len())) {
            dst.copy_from_slice(raw);
            return ArgsDigest::Kept { len, bytes };
        }
        let mut len = 0;
        let fits = compact(raw, &mut |run| {
            let Some(dst) = bytes.get_mut(len..len + run.len()) else {
                return false;
            };
            dst.copy_from_slice(run);
            len += run.len();
            true
        });
        match u8::try_from(len) {
            Ok(len) if fits => ArgsDigest::Kept { len, bytes },
            _ => ArgsDigest::Done(digest_json(raw)),
        }
    }

    /// The digest.
    pub(crate) fn get(&self) -> [u8; 32] {
        match self {
            ArgsDigest::Done(d) => *d,
            ArgsDigest::Kept { len, bytes } => {
                digest_json(bytes.get(..usize::from(*len)).unwrap_or_default())
            }
        }
    }
}

/// The runs of a JSON value between whitespace outside strings, in order,
/// to `f` until it returns `false`; whether it took them all.
fn compact(raw: &[u8], f: &mut dyn FnMut(&[u8]) -> bool) -> bool {
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
            if !f(raw.get(run..i).unwrap_or(&[])) {
                return false;
            }
            run = i + 1;
        }
    }
    f(raw.get(run..).unwrap_or(&[]))
}

/// SHA-256 of a JSON value with whitespace outside strings skipped.
pub(crate) fn digest_json(raw: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    compact(raw, &mut |run| {
        h.update(run);
        true
    });
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

/// The MAC of a request state bound to `b`, issued at `issued` (timed
/// format) or not.
fn state_mac(
    b: &Binding<'_>,
    issued: Option<[u8; ISSUED]>,
    payload: &[u8],
) -> Option<Hmac<Sha256>> {
    let (method, name) = (b.method.as_bytes(), b.name[0]);
    let args = b.args.get();
    let (format, time) = match &issued {
        Some(t) => ([FORMAT_TIMED], &t[..]),
        None => ([FORMAT], &[][..]),
    };
    let (domain, subject) = match &b.subject {
        Some(s) => (DOMAIN_BOUND, &s[..]),
        None => (DOMAIN, &[][..]),
    };
    mac(
        b.key,
        &[
            domain,
            subject,
            &format,
            time,
            &(method.len() as u32).to_be_bytes(),
            method,
            &(name.len() as u32).to_be_bytes(),
            name,
            &args,
            payload,
        ],
    )
}

/// Write `bytes` as unpadded base64url.
pub(crate) fn write_b64url(w: &mut Writer<'_>, bytes: &[u8]) {
    base64_encode(bytes, true, false, &mut |s| w.raw(s));
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
    let (issued, rest) = match format {
        FORMAT => (None, rest),
        FORMAT_TIMED => {
            let (t, rest) = rest.split_first_chunk::<ISSUED>()?;
            (Some(*t), rest)
        }
        _ => return None,
    };
    if rest.len() < TAG {
        return None;
    }
    let (payload, tag) = rest.split_at(rest.len() - TAG);
    state_mac(binding, issued, payload)?
        .verify_truncated_left(tag)
        .ok()?;
    if let Some((now, ttl)) = binding.expiry.map(Expiry::now_and_ttl) {
        // Expiring states: one without an issue time is not ours to take.
        let at = u64::from_be_bytes(issued?);
        if now.saturating_sub(at) > ttl || at.saturating_sub(now) > ttl {
            return None;
        }
    }
    Some(payload)
}

pub(crate) fn seal(w: &mut Writer<'_>, binding: &Binding<'_>, payload: &[u8]) -> bool {
    let issued = binding.expiry.map(|e| e.now_and_ttl().0.to_be_bytes());
    let Some(m) = state_mac(binding, issued, payload) else {
        return false;
    };
    let tag = m.finalize().into_bytes();
    let mut sealed = [0u8; 1 + ISSUED + MAX_STATE + TAG];
    let format = [if issued.is_some() {
        FORMAT_TIMED
    } else {
        FORMAT
    }];
    let time = issued.as_ref().map_or(&[][..], |t| &t[..]);
    let mut n = 0;
    for part in [
        &format[..],
        time,
        payload,
        tag.get(..TAG).unwrap_or(&[0; TAG]),
    ] {
        // Copied without a panicking path (no location in the firmware).
        let Some(dst) = sealed.get_mut(n..n + part.len()) else {
            return false;
        };
        for (d, s) in dst.iter_mut().zip(part) {
            *d = *s;
        }
        n += part.len();
    }
    let Some(total) = sealed.get(..n) else {
        return false;
    };
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
            args: ArgsDigest::of(args),
            expiry: None,
            subject: None,
        }
    }

    #[test]
    fn kept_arguments_digest_as_hashed_ones() {
        let long = std::format!("{{\"t\": \"{}\"}}", "x".repeat(40));
        for (raw, kept) in [
            (&b"{}"[..], true),
            (br#"{"title":"Dune"}"#, true),
            // Kept as written (whitespace and all), hashed without it.
            (br#"{ "t" : "a b" }"#, true),
            // 31 bytes without the whitespace outside strings.
            (br#" { "title" : "Du ne", "n": [1, 2] } "#, true),
            (br#"{"a":"\" }","b":"\\"}"#, true),
            (br#"{"exactly":"32 bytes long....."}"#, true),
            (br#"{"exactly":"33 bytes long......"}"#, false),
            (long.as_bytes(), false),
        ] {
            let d = ArgsDigest::of(raw);
            let text = std::string::String::from_utf8_lossy(raw);
            assert_eq!(d.get(), digest_json(raw), "{text}");
            assert_eq!(matches!(d, ArgsDigest::Kept { .. }), kept, "{text}");
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
        // Any flipped character is refused (every ninth under Miri: each
        // open is an HMAC, ~0.3 s there).
        for i in (0..s.len()).step_by(if cfg!(miri) { 9 } else { 1 }) {
            let mut t = s.clone();
            t[i] = if t[i] == b'A' { b'B' } else { b'A' };
            assert_eq!(open(&b, &mut t), None, "flip at {i}");
        }
        assert_eq!(open(&b, &mut s[..5].to_vec()), None);
        s.push(b'=');
        assert_eq!(open(&b, &mut s), None);
    }

    #[test]
    fn subject_bound_states() {
        let plain = binding(b"k", b"reserve", br#"{"title":"Dune"}"#);
        let (alice_s, bob_s, alic_s, empty_s) = (
            crate::server::Subject::of(b"alice").0,
            crate::server::Subject::of(b"bob").0,
            crate::server::Subject::of(b"alic").0,
            crate::server::Subject::of(b"").0,
        );
        let subject = |s: &[u8]| match s {
            b"alice" => &alice_s,
            b"bob" => &bob_s,
            b"alic" => &alic_s,
            _ => &empty_s,
        };
        let of = |s: &[u8]| Binding {
            subject: Some(*subject(s)),
            ..plain
        };
        let alice = sealed(&of(b"alice"), b"confirm");
        assert_eq!(
            open(&of(b"alice"), &mut alice.clone()),
            Some(&b"confirm"[..])
        );
        // Another subject, no subject, a prefix of the subject: refused.
        for other in [of(b"bob"), plain, of(b"alic"), of(b"")] {
            assert_eq!(open(&other, &mut alice.clone()), None);
        }
        // A state issued to no subject is not taken from one.
        let unbound = sealed(&plain, b"confirm");
        assert_eq!(open(&of(b"alice"), &mut unbound.clone()), None);
        assert_eq!(open(&plain, &mut unbound.clone()), Some(&b"confirm"[..]));
        // Timed and bound: both hold.
        let timed = |now, s: &[u8]| Binding {
            expiry: Some(Expiry::At(now, 300)),
            ..of(s)
        };
        let t = sealed(&timed(1_000, b"alice"), b"confirm");
        assert_eq!(
            open(&timed(1_200, b"alice"), &mut t.clone()),
            Some(&b"confirm"[..])
        );
        assert_eq!(open(&timed(1_200, b"bob"), &mut t.clone()), None);
        assert_eq!(open(&timed(1_400, b"alice"), &mut t.clone()), None);
    }

    #[test]
    fn expiring_states() {
        let at = |now| Binding {
            expiry: Some(Expiry::At(now, 300)),
            ..binding(b"k", b"reserve", br#"{"title":"Dune"}"#)
        };
        let s = sealed(&at(1_000), b"confirm");
        // Within the TTL, either side of the issue time.
        for now in [1_000, 1_300, 700] {
            assert_eq!(
                open(&at(now), &mut s.clone()),
                Some(&b"confirm"[..]),
                "{now}"
            );
        }
        // Expired, or from too far in the future.
        for now in [1_301, 699, u64::MAX] {
            assert_eq!(open(&at(now), &mut s.clone()), None, "{now}");
        }
        // A state without an issue time is refused once states expire; a
        // timed one is still verified (its time under the tag) without.
        let untimed = sealed(
            &binding(b"k", b"reserve", br#"{"title":"Dune"}"#),
            b"confirm",
        );
        assert_eq!(open(&at(1_000), &mut untimed.clone()), None);
        let plain = binding(b"k", b"reserve", br#"{"title":"Dune"}"#);
        assert_eq!(open(&plain, &mut s.clone()), Some(&b"confirm"[..]));
        // The last symbol changed to any other (the interop client's
        // tamper): refused, whatever the length's unused bits.
        let symbols = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        for &c in symbols.iter().step_by(if cfg!(miri) { 9 } else { 1 }) {
            let mut t = s.clone();
            if *t.last().unwrap() != c {
                *t.last_mut().unwrap() = c;
                assert_eq!(open(&at(1_000), &mut t), None, "last symbol {}", c as char);
            }
        }
        // The issue time cannot be moved: every flipped character is
        // refused (every ninth under Miri).
        for i in (0..s.len()).step_by(if cfg!(miri) { 9 } else { 1 }) {
            let mut t = s.clone();
            t[i] = if t[i] == b'A' { b'B' } else { b'A' };
            assert_eq!(open(&at(1_000), &mut t), None, "flip at {i}");
        }
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
