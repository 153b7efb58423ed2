//! Request headers: the lookup trait, the DNS-rebinding checks (`Host`,
//! `Origin`), content negotiation, and the 2026-07-28 checks of the headers
//! against the body.

use super::body::Body;
use super::params::{decodes_to, sentinel, strict_base64};
use super::response::{EVENT_STREAM, JSON};
use crate::codec::{Alphabet, Base64Decoder};
use crate::wire::json::JsonStr;

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
        self.iter().any(|(k, v)| {
            k.eq_ignore_ascii_case(name)
                && !v.bytes().all(|b| b == b'\t' || (0x20..0x7f).contains(&b))
        })
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
}

/// `Host` and `Origin` strictly: `Err(true)` when one appears twice (`400`),
/// `Err(false)` when one is present but unreadable (`403`).
pub(super) fn single_host_and_origin<H: Headers + ?Sized>(headers: &H) -> Result<(), bool> {
    for name in ["host", "origin"] {
        if headers.count(name) > 1 {
            return Err(true);
        }
        if headers.unreadable(name) {
            return Err(false);
        }
    }
    Ok(())
}

/// `Host` names an allowed host (`hosts: None`: any host).
pub(super) fn host_allowed(hosts: Option<&[&str]>, host: Option<&str>) -> bool {
    let Some(hosts) = hosts else {
        return true;
    };
    // A missing Host (HTTP/1.0, or HTTP/2 where the adapter did not map
    // :authority) is not a browser: let it through.
    host.is_none_or(|h| {
        hosts
            .iter()
            .any(|a| a.eq_ignore_ascii_case(hostname(h.trim())))
    })
}

/// `Origin` is one of `origins` or on an allowed host.
pub(super) fn origin_allowed(
    hosts: Option<&[&str]>,
    origins: &[&str],
    origin: Option<&str>,
) -> bool {
    let Some(origin) = origin.map(str::trim) else {
        return true;
    };
    if origins.iter().any(|o| o.eq_ignore_ascii_case(origin)) {
        return true;
    }
    let Some(hosts) = hosts else {
        return true;
    };
    let Some((_, authority)) = origin.split_once("://") else {
        return false;
    };
    let authority = authority.split('/').next().unwrap_or_default();
    hosts
        .iter()
        .any(|a| a.eq_ignore_ascii_case(hostname(authority)))
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
    match authority.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
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
        ct.split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .eq_ignore_ascii_case(JSON)
    })
}

/// The 2026-07-28 header checks (run only when the envelope is complete, so
/// a missing envelope key is the core's `-32602` first, as the spec's ladder
/// says).
pub(super) fn check_modern_headers<H: Headers + ?Sized>(
    body: &Body<'_>,
    headers: &H,
) -> Result<(), &'static str> {
    let Some(version) = body.complete_envelope() else {
        return Ok(());
    };
    match headers.get("mcp-protocol-version").map(str::trim) {
        None => return Err("Header mismatch: MCP-Protocol-Version header is required"),
        Some(h) if !version.eq_str(h) => {
            return Err("Header mismatch: MCP-Protocol-Version does not match params._meta");
        }
        Some(_) => {}
    }
    let Some(method) = body.method else {
        return Ok(());
    };
    match headers.get("mcp-method").map(str::trim) {
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
    match headers.get("mcp-name").map(str::trim) {
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
