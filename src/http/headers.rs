//! Request headers: the lookup trait, the DNS-rebinding checks (`Host`,
//! `Origin`), content negotiation, and the 2026-07-28 checks of the headers
//! against the body.

use super::body::Body;
use super::params::{decodes_to, sentinel, strict_base64};
use super::response::{EVENT_STREAM, JSON};
use crate::codec::{Alphabet, Base64Decoder};
use crate::wire::json::JsonStr;
use crate::wire::swar::{case_bits, same_ignoring_ascii_case, two_words, word_at};

/// Request headers, looked up by name, case-insensitively.
pub trait Headers {
    /// The value of the first header called `name` (any ASCII case), if any.
    fn get(&self, name: &str) -> Option<&str>;

    /// How many headers are called `name`, readable as text or not. The
    /// default knows only [`get`](Self::get): an adapter over a header map
    /// should count every occurrence, so a duplicated `Host` or `Origin` is
    /// refused (`400`).
    fn count(&self, name: &str) -> usize {
        usize::from(self.get(name).is_some())
    }

    /// A header called `name` is present but not readable as text (not
    /// visible ASCII): `Host` and `Origin` are then refused (`403`) rather
    /// than taken as absent. The default: never.
    fn unreadable(&self, name: &str) -> bool {
        let _ = name;
        false
    }

    /// Every header in order, as `(name, value)`, the value `None` when it
    /// is not readable as text (when [`get`](Self::get) would not return
    /// it); `false` when the adapter cannot list its headers (the
    /// default), and the mapping asks for each by name instead. A listing
    /// lets the mapping read every header it needs in one pass rather than
    /// a dozen lookups; it must agree with `get`, `count` and `unreadable`
    /// (the first value of a name is the one `get` returns, every value
    /// counts, and a value is unreadable when it is `None` or holds a byte
    /// other than a tab or visible ASCII).
    fn visit<'s>(&'s self, f: &mut dyn FnMut(&'s str, Option<&'s str>)) -> bool {
        let _ = f;
        false
    }
}

impl Headers for [(&str, &str)] {
    fn get(&self, name: &str) -> Option<&str> {
        self.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    }

    fn count(&self, name: &str) -> usize {
        self.iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .count()
    }

    fn unreadable(&self, name: &str) -> bool {
        self.iter()
            .any(|(k, v)| k.eq_ignore_ascii_case(name) && !readable(v))
    }

    fn visit<'s>(&'s self, f: &mut dyn FnMut(&'s str, Option<&'s str>)) -> bool {
        for (k, v) in self {
            f(k, Some(v));
        }
        true
    }
}

/// Headers an adapter cannot list (no [`Headers::visit`]): the mapping
/// asks for each by name. For the unit tests and the `http` fuzz target
/// (`cfg(fuzzing)`, set by cargo-fuzz; hidden), which give every request
/// both ways.
#[cfg(any(test, fuzzing))]
#[doc(hidden)]
pub struct ByName<'a>(pub &'a [(&'a str, &'a str)]);

#[cfg(any(test, fuzzing))]
impl Headers for ByName<'_> {
    fn get(&self, name: &str) -> Option<&str> {
        Headers::get(self.0, name)
    }

    fn count(&self, name: &str) -> usize {
        Headers::count(self.0, name)
    }

    fn unreadable(&self, name: &str) -> bool {
        Headers::unreadable(self.0, name)
    }
}

impl<const N: usize> Headers for [(&str, &str); N] {
    fn get(&self, name: &str) -> Option<&str> {
        Headers::get(&self[..], name)
    }

    fn count(&self, name: &str) -> usize {
        Headers::count(&self[..], name)
    }

    fn unreadable(&self, name: &str) -> bool {
        Headers::unreadable(&self[..], name)
    }

    fn visit<'s>(&'s self, f: &mut dyn FnMut(&'s str, Option<&'s str>)) -> bool {
        Headers::visit(&self[..], f)
    }
}

impl<H: Headers + ?Sized> Headers for &H {
    fn get(&self, name: &str) -> Option<&str> {
        (**self).get(name)
    }

    fn count(&self, name: &str) -> usize {
        (**self).count(name)
    }

    fn unreadable(&self, name: &str) -> bool {
        (**self).unreadable(name)
    }

    fn visit<'s>(&'s self, f: &mut dyn FnMut(&'s str, Option<&'s str>)) -> bool {
        (**self).visit(f)
    }
}

/// `value.trim()`, without decoding characters when neither end can be
/// whitespace (the usual header value).
pub(super) fn trim(value: &str) -> &str {
    let solid = |b: Option<&u8>| b.is_some_and(|&b| b > b' ' && b < 0x80);
    if solid(value.as_bytes().first()) && solid(value.as_bytes().last()) {
        value
    } else {
        value.trim()
    }
}

/// `name` is `lower` (a lowercase ASCII header name) in any ASCII case:
/// 4 to 16 bytes as two overlapping words (`swar::two_words`), a longer
/// name eight bytes at a time (the last eight overlapping), the case bit
/// ignored where `lower` has a letter.
#[inline(always)]
fn same_name(name: &str, lower: &str) -> bool {
    let (a, b) = (name.as_bytes(), lower.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let same = |x: u64, y: u64| x | case_bits(y, b'a') == y;
    if n < 4 {
        return a
            .iter()
            .zip(b)
            .all(|(&x, &y)| same(u64::from(x), u64::from(y)));
    }
    if n > 16 {
        let mut at = 0;
        while at + 8 <= n {
            if !same(word_at::<8>(a, at), word_at::<8>(b, at)) {
                return false;
            }
            at += 8;
        }
        return at == n || same(word_at::<8>(a, n - 8), word_at::<8>(b, n - 8));
    }
    let (x, y) = (two_words(a), two_words(b));
    same(x[0], y[0]) && same(x[1], y[1])
}

/// A header value readable as text: tabs and visible ASCII only (runs of
/// visible ASCII a word at a time).
fn readable(value: &str) -> bool {
    let mut rest = value.as_bytes();
    loop {
        let run = crate::wire::swar::visible_run(rest);
        match rest.get(run..) {
            None | Some([]) => return true,
            Some([b'\t', tail @ ..]) => rest = tail,
            Some(_) => return false,
        }
    }
}

/// The headers the mapping reads by name ([`Name::lower`]).
#[derive(Clone, Copy)]
enum Name {
    Host,
    Origin,
    /// `MCP-Protocol-Version`.
    Version,
    Accept,
    ContentType,
    /// `Mcp-Method`.
    Method,
    /// `Mcp-Name`.
    Named,
    /// `Mcp-Session-Id`.
    SessionId,
}

impl Name {
    /// Every name, in the order of their discriminants (`Seen::first`'s).
    const ALL: [Name; 8] = [
        Name::Host,
        Name::Origin,
        Name::Version,
        Name::Accept,
        Name::ContentType,
        Name::Method,
        Name::Named,
        Name::SessionId,
    ];

    /// The name in lowercase: its one spelling.
    const fn lower(self) -> &'static str {
        match self {
            Name::Host => "host",
            Name::Origin => "origin",
            Name::Version => "mcp-protocol-version",
            Name::Accept => "accept",
            Name::ContentType => "content-type",
            Name::Method => "mcp-method",
            Name::Named => "mcp-name",
            Name::SessionId => "mcp-session-id",
        }
    }

    /// The slot of a name whose headers are counted (`Host`, `Origin`:
    /// several of them, or an unreadable one, is refused).
    const fn counted(self) -> Option<usize> {
        match self {
            Name::Host => Some(0),
            Name::Origin => Some(1),
            _ => None,
        }
    }

    /// Which of ours `name` is (any ASCII case).
    fn of(name: &str) -> Option<Name> {
        // Each arm compares with one name, so that its text, words and case
        // bits are constants (`same_name` is inlined into each).
        let is = |want: Name| same_name(name, want.lower()).then_some(want);
        match name.len() {
            4 => is(Name::Host),
            6 if name.as_bytes().first().is_some_and(|b| b | 0x20 == b'o') => is(Name::Origin),
            6 => is(Name::Accept),
            8 => is(Name::Named),
            10 => is(Name::Method),
            12 => is(Name::ContentType),
            14 => is(Name::SessionId),
            20 => is(Name::Version),
            _ => None,
        }
    }
}

/// The request headers the mapping reads, found in one pass when the
/// adapter lists its headers ([`Headers::visit`]), else asked for by name:
/// the first value of each (as [`Headers::get`] gives it), and how many
/// `Host` and `Origin` headers there are and whether one is unreadable.
#[derive(Clone, Copy, Default)]
pub(super) struct Seen<'h> {
    /// The first value of each [`Name`]: `Some(None)` when it is not
    /// readable as text.
    first: [Option<Option<&'h str>>; 8],
    /// `Host` and `Origin`: how many, and whether one is unreadable.
    count: [usize; 2],
    unreadable: [bool; 2],
}

impl<'h> Seen<'h> {
    pub(super) fn read<H: Headers + ?Sized>(headers: &'h H) -> Self {
        let mut seen = Seen::default();
        let listed = headers.visit(&mut |name, value| {
            let Some(at) = Name::of(name) else {
                return;
            };
            if let Some(slot) = seen.first.get_mut(at as usize)
                && slot.is_none()
            {
                *slot = Some(value);
            }
            let Some(i) = at.counted() else {
                return;
            };
            if let (Some(n), Some(bad)) = (seen.count.get_mut(i), seen.unreadable.get_mut(i)) {
                *n += 1;
                *bad |= !value.is_some_and(readable);
            }
        });
        if !listed {
            seen = Seen::default();
            for (name, slot) in Name::ALL.iter().zip(&mut seen.first) {
                *slot = headers.get(name.lower()).map(Some);
            }
            for name in Name::ALL {
                if let Some(i) = name.counted()
                    && let (Some(n), Some(bad)) =
                        (seen.count.get_mut(i), seen.unreadable.get_mut(i))
                {
                    *n = headers.count(name.lower());
                    *bad = headers.unreadable(name.lower());
                }
            }
        }
        seen
    }

    /// The first value of `name`, if readable as text.
    fn get(&self, name: Name) -> Option<&'h str> {
        self.first.get(name as usize).copied().flatten().flatten()
    }

    pub(super) fn host(&self) -> Option<&'h str> {
        self.get(Name::Host)
    }

    pub(super) fn origin(&self) -> Option<&'h str> {
        self.get(Name::Origin)
    }

    /// `MCP-Protocol-Version`, trimmed.
    pub(super) fn version(&self) -> Option<&'h str> {
        self.get(Name::Version).map(trim)
    }

    pub(super) fn accept(&self) -> Option<&'h str> {
        self.get(Name::Accept)
    }

    pub(super) fn content_type(&self) -> Option<&'h str> {
        self.get(Name::ContentType)
    }

    /// `Mcp-Session-Id`.
    pub(super) fn session_id(&self) -> Option<&'h str> {
        self.get(Name::SessionId)
    }

    /// `Host` and `Origin` strictly: `Err(true)` when one appears twice
    /// (`400`), `Err(false)` when one is present but unreadable (`403`).
    pub(super) fn single_host_and_origin(&self) -> Result<(), bool> {
        for (&count, &unreadable) in self.count.iter().zip(&self.unreadable) {
            if count > 1 {
                return Err(true);
            }
            if unreadable {
                return Err(false);
            }
        }
        Ok(())
    }
}

/// `Host` names an allowed host (`hosts: None`: any host).
pub(super) fn host_allowed(hosts: Option<&[&str]>, host: Option<&str>) -> bool {
    let Some(hosts) = hosts else {
        return true;
    };
    // A missing Host (HTTP/1.0, or HTTP/2 where the adapter did not map
    // :authority) is not a browser: let it through.
    host.is_none_or(|h| {
        let name = hostname(trim(h));
        hosts
            .iter()
            .any(|a| same_ignoring_ascii_case(a.as_bytes(), name.as_bytes()))
    })
}

/// `Origin` is one of `origins` or on an allowed host.
pub(super) fn origin_allowed(
    hosts: Option<&[&str]>,
    origins: &[&str],
    origin: Option<&str>,
) -> bool {
    let Some(origin) = origin.map(trim) else {
        return true;
    };
    if origins
        .iter()
        .any(|o| same_ignoring_ascii_case(o.as_bytes(), origin.as_bytes()))
    {
        return true;
    }
    let Some(hosts) = hosts else {
        return true;
    };
    let Some((_, authority)) = origin.split_once("://") else {
        return false;
    };
    let authority = authority.split('/').next().unwrap_or_default();
    let name = hostname(authority);
    hosts
        .iter()
        .any(|a| same_ignoring_ascii_case(a.as_bytes(), name.as_bytes()))
}

/// `host[:port]` → `host` (`[v6]:port` → `[v6]`).
pub(super) fn hostname(authority: &str) -> &str {
    if authority.starts_with('[') {
        // `[v6]` or `[v6]:port`; anything else after `]` is no host name of
        // ours (returned whole, it matches no allowed host).
        return match authority.find(']') {
            Some(end) => {
                let rest = authority.get(end + 1..).unwrap_or_default();
                let port_ok = rest.is_empty()
                    || rest
                        .strip_prefix(':')
                        .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
                if port_ok {
                    &authority[..=end]
                } else {
                    authority
                }
            }
            None => authority,
        };
    }
    // The last `:` with only digits after it: a run of digits at the end
    // with a `:` before it (one backward scan, not a search for the `:`
    // and a second look at the port).
    let b = authority.as_bytes();
    let port = b.iter().rev().take_while(|c| c.is_ascii_digit()).count();
    match b.len().checked_sub(port + 1) {
        Some(at) if b.get(at) == Some(&b':') => authority.get(..at).unwrap_or(authority),
        _ => authority,
    }
}

/// Media ranges of an `Accept` header cover both JSON and SSE.
pub(super) fn accepts_both(accept: Option<&str>) -> bool {
    accepts(accept) == (true, true)
}

/// `Accept` covers `text/event-stream` (a `GET` stream).
pub(super) fn accepts_event_stream(accept: Option<&str>) -> bool {
    accepts(accept).1
}

/// Whether `Accept` covers JSON, and SSE (wildcards count, `q=0` refuses).
fn accepts(accept: Option<&str>) -> (bool, bool) {
    let Some(accept) = accept else {
        return (false, false);
    };
    // What clients send, read without splitting it up.
    if accept == "application/json, text/event-stream" {
        return (true, true);
    }
    let (mut json, mut sse) = (false, false);
    for range in accept.split(',') {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or_default().trim();
        let refused = parts.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .is_some_and(|q| q.trim().trim_end_matches(['0', '.']).is_empty())
        });
        if refused {
            continue;
        }
        let m = |s: &str| media.eq_ignore_ascii_case(s);
        json |= m(JSON) || m("application/*") || m("*/*");
        sse |= m(EVENT_STREAM) || m("text/*") || m("*/*");
    }
    (json, sse)
}

pub(super) fn is_json(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|ct| {
        ct == JSON
            || ct
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .eq_ignore_ascii_case(JSON)
    })
}

/// The 2026-07-28 header checks (run only when the envelope is complete, so
/// a missing envelope key is the core's `-32602` first, as the spec's ladder
/// says).
pub(super) fn check_modern_headers(
    body: &Body<'_>,
    headers: &Seen<'_>,
) -> Result<(), &'static str> {
    let Some(version) = body.complete_envelope() else {
        return Ok(());
    };
    match headers.version() {
        None => return Err("Header mismatch: MCP-Protocol-Version header is required"),
        Some(h) if !version.eq_str(h) => {
            return Err("Header mismatch: MCP-Protocol-Version does not match params._meta");
        }
        Some(_) => {}
    }
    let Some(method) = body.method else {
        return Ok(());
    };
    match headers.get(Name::Method).map(trim) {
        None => return Err("Header mismatch: Mcp-Method header is required"),
        Some(h) if !method.eq_str(h) => {
            return Err("Header mismatch: Mcp-Method does not match the body's method");
        }
        Some(_) => {}
    }
    let named = if method.eq_str("tools/call") || method.eq_str("prompts/get") {
        body.name
    } else if method.eq_str("resources/read") {
        body.uri
    } else {
        return Ok(());
    };
    let Some(name) = named.and_then(|n| n.as_str()) else {
        return Ok(()); // the core answers -32602
    };
    match headers.get(Name::Named).map(trim) {
        None => Err("Header mismatch: Mcp-Name header is required"),
        Some(h) if !name_matches(name, h) => {
            Err("Header mismatch: Mcp-Name does not match the body's name or uri")
        }
        Some(_) => Ok(()),
    }
}

/// `Mcp-Name` against the decoded JSON string: plain text, or the
/// `=?base64?…?=` sentinel (standard or URL-safe alphabet, padding optional:
/// more lenient than `Mcp-Param-*`, see [`super::params`]).
pub(super) fn name_matches(name: JsonStr<'_>, header: &str) -> bool {
    match sentinel(header) {
        // Canonical standard base64 only, as for `Mcp-Param-*`.
        Some(b64) => {
            strict_base64(b64)
                && decodes_to(name, Base64Decoder::new(b64.as_bytes(), Alphabet::Standard))
        }
        None => name.eq_str(header),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-at-a-time test agrees with its definition: tabs and
    /// visible ASCII only.
    #[test]
    fn readable_is_tabs_and_visible_ascii() {
        let slow = |v: &str| v.bytes().all(|b| b == b'\t' || (0x20..0x7f).contains(&b));
        for v in [
            "",
            "a",
            "\t",
            "localhost:8080",
            "a\tb\t\t",
            "0123456789abcdef\t0123456789abcdef",
            "\u{7f}",
            "caf\u{e9}",
            "a\nb",
            "0123456789abcde\r",
            "\t\t\t\t\t\t\t\t\t",
        ] {
            assert_eq!(readable(v), slow(v), "{v:?}");
        }
    }

    /// `hostname` strips a port as a search for the last `:` followed by
    /// digits only would: every string of up to 6 bytes over `a1:[]`.
    #[test]
    fn hostname_strips_a_port_as_the_last_colon_with_digits_after() {
        fn reference(authority: &str) -> &str {
            match authority.bytes().rposition(|b| b == b':') {
                Some(at)
                    if authority.as_bytes()[at + 1..]
                        .iter()
                        .all(u8::is_ascii_digit) =>
                {
                    &authority[..at]
                }
                _ => authority,
            }
        }
        let alphabet = [b'a', b'1', b':', b'[', b']'];
        let mut s = std::vec::Vec::new();
        // Every string up to this length (shorter under Miri).
        for len in 0..=if cfg!(miri) { 4 } else { 6u32 } {
            for mut code in 0..5usize.pow(len) {
                s.clear();
                for _ in 0..len {
                    s.push(alphabet[code % 5]);
                    code /= 5;
                }
                let a = core::str::from_utf8(&s).unwrap();
                if a.starts_with('[') {
                    continue; // the bracketed form has its own branch
                }
                assert_eq!(hostname(a), reference(a), "{a:?}");
            }
        }
    }

    /// `Name::of` finds each name in any case, and nothing else of the
    /// same length (each arm compares with its own literal).
    #[test]
    fn name_of_finds_each_name_in_any_case_and_no_other() {
        for (i, want) in Name::ALL.into_iter().enumerate() {
            assert_eq!(want as usize, i, "ALL is in discriminant order");
            let lower = want.lower();
            for v in [lower.to_string(), lower.to_uppercase()] {
                assert_eq!(Name::of(&v).map(|n| n as usize), Some(want as usize), "{v}");
            }
            for (i, _) in lower.char_indices() {
                let mut b = lower.as_bytes().to_vec();
                b[i] = if b[i] == b'x' { b'y' } else { b'x' };
                let v = std::string::String::from_utf8(b).unwrap();
                let found = Name::of(&v).map(|n| n as usize);
                let other = Name::ALL
                    .iter()
                    .find(|n| n.lower().eq_ignore_ascii_case(&v));
                assert_eq!(found, other.map(|n| *n as usize), "{v}");
            }
        }
        assert!(Name::of("hostx").is_none() && Name::of("").is_none());
    }

    /// The word-at-a-time comparison agrees with `eq_ignore_ascii_case`
    /// for every name the mapping reads: any case of each letter, and a
    /// byte changed anywhere (by the case bit too, where that is no case).
    #[test]
    fn same_name_is_ascii_case_insensitive_equality() {
        for lower in Name::ALL.map(Name::lower) {
            let mut variants = std::vec![lower.to_uppercase(), std::string::String::from(lower)];
            for i in 0..lower.len() {
                for flip in [0x20u8, 0x01, 0x40] {
                    let mut b = lower.as_bytes().to_vec();
                    b[i] ^= flip;
                    if let Ok(s) = std::string::String::from_utf8(b) {
                        variants.push(s);
                    }
                }
                let mut b = lower.as_bytes().to_vec();
                b[i] = b[i].to_ascii_uppercase();
                variants.push(std::string::String::from_utf8(b).unwrap());
            }
            variants.push(std::format!("{lower}x"));
            for v in &variants {
                assert_eq!(
                    same_name(v, lower),
                    v.eq_ignore_ascii_case(lower),
                    "{v:?} against {lower:?}"
                );
            }
        }
    }
}
