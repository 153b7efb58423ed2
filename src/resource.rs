//! Resources: fixed URIs and URI templates, and the contents a handler writes.
//!
//! `resources/read` looks for an exact [`Resource`] URI first, then tries the
//! [`ResourceTemplate`]s in registration order. Templates use RFC 6570
//! level 1 `{var}` (one path segment, percent-decoded; no `/`, `?` or `#`)
//! and `{+var}` (may contain `/`). Variables must be non-empty. A variable
//! followed by literal text ends at the first occurrence of that text.
//!
//! A handler answers with contents, [`ResourceNotFound`] (→ `-32602` with
//! `data: {"uri": URI}`), or a [`ProtocolError`] (e.g. `-32603` for a failure).

use core::fmt;

use crate::context::{Ctx, Done};
use crate::error::{ProtocolError, ResourceNotFound};
use crate::mcp::{Fields, Icon, write_icons, write_resource_naming};
use crate::wire::emit::{TextWriter, ValueWriter, Writer};

/// Why a read did not produce contents.
#[derive(Debug)]
#[non_exhaustive]
pub enum ResourceFailure<'a> {
    /// No such resource: `-32602`, the message, `data: {"uri": URI}`.
    NotFound(ResourceNotFound<'a>),
    /// Any other JSON-RPC error, chosen deliberately.
    Protocol(ProtocolError<'a>),
}

impl<'a> ResourceFailure<'a> {
    /// Pick a protocol error, deliberately (e.g. `ProtocolError::internal`).
    pub fn protocol(error: ProtocolError<'a>) -> Self {
        ResourceFailure::Protocol(error)
    }
}

impl<'a> From<ResourceNotFound<'a>> for ResourceFailure<'a> {
    fn from(e: ResourceNotFound<'a>) -> Self {
        ResourceFailure::NotFound(e)
    }
}

/// What a resource handler returns.
pub type ResourceOutcome<'a> = Result<Done, ResourceFailure<'a>>;

/// A resource handler. `S` is the server's application state.
pub type ResourceFn<S> =
    for<'a, 'r> fn(&'a S, ReadRequest<'a>, Contents<'r>) -> ResourceOutcome<'a>;

/// A fixed resource's description, listed by `resources/list`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct ResourceDescriptor<'s> {
    /// The URI.
    pub uri: &'s str,
    /// Programmatic name.
    pub name: &'s str,
    /// Display title (2025-06-18+).
    pub title: Option<&'s str>,
    /// Description.
    pub description: Option<&'s str>,
    /// MIME type.
    pub mime_type: Option<&'s str>,
    /// Size in bytes, if known.
    pub size: Option<u64>,
    /// Icons (2025-11-25+).
    pub icons: &'s [Icon<'s>],
    /// Caching hint for `resources/read` (2026-07-28); default: the server's.
    pub cache: Option<crate::mcp::Cache>,
}

impl<'s> ResourceDescriptor<'s> {
    /// A resource with a URI and a name.
    pub const fn new(uri: &'s str, name: &'s str) -> Self {
        Self {
            uri,
            name,
            title: None,
            description: None,
            mime_type: None,
            size: None,
            icons: &[],
            cache: None,
        }
    }

    crate::mcp::setters! {
        /// Set the caching hint of reads (2026-07-28).
        cache?: crate::mcp::Cache;
        /// Set the title.
        title?: &'s str;
        /// Set the description.
        description?: &'s str;
        /// Set the MIME type.
        mime_type?: &'s str;
        /// Set the size.
        size?: u64;
        /// Set the icons.
        icons: &'s [Icon<'s>];
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>, fields: Fields) {
        w.raw(b"{\"uri\":");
        w.string(self.uri);
        write_resource_naming(
            w,
            fields,
            self.name,
            self.title,
            self.description,
            self.mime_type,
        );
        if let (true, Some(n)) = (fields.resource_size, self.size) {
            w.raw(b",\"size\":");
            w.u64(n);
        }
        write_icons(w, self.icons, fields);
        w.raw(b"}");
    }
}

/// A URI template's description, listed by `resources/templates/list`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct TemplateDescriptor<'s> {
    /// The RFC 6570 template, e.g. `books://{title}`.
    pub uri_template: &'s str,
    /// Programmatic name.
    pub name: &'s str,
    /// Display title (2025-06-18+).
    pub title: Option<&'s str>,
    /// Description.
    pub description: Option<&'s str>,
    /// MIME type of the resources it yields.
    pub mime_type: Option<&'s str>,
    /// Icons (2025-11-25+).
    pub icons: &'s [Icon<'s>],
    /// Caching hint for `resources/read` (2026-07-28); default: the server's.
    pub cache: Option<crate::mcp::Cache>,
}

impl<'s> TemplateDescriptor<'s> {
    /// A template with a URI template and a name.
    pub const fn new(uri_template: &'s str, name: &'s str) -> Self {
        Self {
            uri_template,
            name,
            title: None,
            description: None,
            mime_type: None,
            icons: &[],
            cache: None,
        }
    }

    crate::mcp::setters! {
        /// Set the caching hint of reads (2026-07-28).
        cache?: crate::mcp::Cache;
        /// Set the title.
        title?: &'s str;
        /// Set the description.
        description?: &'s str;
        /// Set the MIME type.
        mime_type?: &'s str;
        /// Set the icons.
        icons: &'s [Icon<'s>];
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>, fields: Fields) {
        w.raw(b"{\"uriTemplate\":");
        w.string(self.uri_template);
        write_resource_naming(
            w,
            fields,
            self.name,
            self.title,
            self.description,
            self.mime_type,
        );
        write_icons(w, self.icons, fields);
        w.raw(b"}");
    }
}

crate::context::registration!(
    /// A registered fixed resource.
    Resource(ResourceDescriptor, ResourceFn, awaits)
);

crate::context::registration!(
    /// A registered URI template.
    ResourceTemplate(TemplateDescriptor, ResourceFn, awaits)
);

#[cfg(feature = "async-handlers")]
impl<S> Resource<S> {
    /// An async resource: read by the handler at `index` of the server's
    /// [`AsyncHandlers::read_resource`](crate::asynch::AsyncHandlers::read_resource)
    /// ([`async_handlers!`](crate::async_handlers) writes these constants).
    pub const fn awaiting(descriptor: ResourceDescriptor<'static>, index: u16) -> Self {
        Self {
            descriptor,
            handler: needs_async,
            awaits: Some(index),
        }
    }
}

#[cfg(feature = "async-handlers")]
impl<S> ResourceTemplate<S> {
    /// An async URI template: read by the handler at `index` of the
    /// server's [`AsyncHandlers::read_template`](crate::asynch::AsyncHandlers::read_template).
    pub const fn awaiting(descriptor: TemplateDescriptor<'static>, index: u16) -> Self {
        Self {
            descriptor,
            handler: needs_async,
            awaits: Some(index),
        }
    }
}

/// The `handler` of an async resource, for a caller that invokes it
/// directly: it cannot read.
#[cfg(feature = "async-handlers")]
fn needs_async<'a, S>(_: &'a S, _: ReadRequest<'a>, _: Contents<'_>) -> ResourceOutcome<'a> {
    Err(ResourceFailure::Protocol(ProtocolError::internal(
        "this resource is async: serve it with Server::handle_async",
    )))
}

/// Most variables one template may have.
pub const MAX_VARS: usize = 8;

/// The variables a URI matched a template with.
#[derive(Clone, Copy, Debug, Default)]
pub struct Vars<'a> {
    vars: [Option<(&'a str, &'a str)>; MAX_VARS],
}

impl<'a> Vars<'a> {
    /// The (percent-decoded) value of variable `name`.
    pub fn get(&self, name: &str) -> Option<PercentStr<'a>> {
        self.vars
            .iter()
            .flatten()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| PercentStr(v))
    }

    /// All variables, in template order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a str, PercentStr<'a>)> + '_ {
        self.vars.iter().flatten().map(|(n, v)| (*n, PercentStr(v)))
    }
}

/// A percent-encoded URI part, decoded on the fly (no buffer needed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PercentStr<'a>(&'a str);

impl<'a> PercentStr<'a> {
    /// The text as it appears in the URI.
    pub fn raw(&self) -> &'a str {
        self.0
    }

    /// The text when it contains no `%` escapes (zero-copy).
    pub fn as_plain(&self) -> Option<&'a str> {
        find_byte(self.0, b'%').is_none().then_some(self.0)
    }

    fn bytes(&self) -> impl Iterator<Item = u8> + 'a {
        let b = self.0.as_bytes();
        let mut i = 0;
        core::iter::from_fn(move || {
            let c = *b.get(i)?;
            if c == b'%' {
                let hex = |x: u8| (x as char).to_digit(16);
                if let (Some(h), Some(l)) = (
                    b.get(i + 1).and_then(|&x| hex(x)),
                    b.get(i + 2).and_then(|&x| hex(x)),
                ) {
                    i += 3;
                    return Some((h * 16 + l) as u8);
                }
            }
            i += 1;
            Some(c)
        })
    }

    /// Decode into `buf`; `None` if it does not fit or is not UTF-8.
    pub fn decode_into<'b>(&self, buf: &'b mut [u8]) -> Option<&'b str> {
        let mut n = 0;
        for byte in self.bytes() {
            *buf.get_mut(n)? = byte;
            n += 1;
        }
        core::str::from_utf8(buf.get(..n)?).ok()
    }

    /// Whether the decoded text is valid UTF-8.
    pub fn is_utf8(&self) -> bool {
        // Without escapes the decoded text is the `&str` itself.
        if !self.0.as_bytes().contains(&b'%') {
            return true;
        }
        let mut tmp = [0u8; 4];
        let mut need = 0usize;
        let mut have = 0usize;
        for b in self.bytes() {
            if need == 0 {
                need = match b {
                    0x00..=0x7f => 1,
                    0xc2..=0xdf => 2,
                    0xe0..=0xef => 3,
                    0xf0..=0xf4 => 4,
                    _ => return false,
                };
                have = 0;
            }
            if let Some(slot) = tmp.get_mut(have) {
                *slot = b;
            }
            have += 1;
            if have == need {
                if core::str::from_utf8(tmp.get(..need).unwrap_or(&[])).is_err() {
                    return false;
                }
                need = 0;
            }
        }
        need == 0
    }

    /// Whether the decoded text equals `s`.
    pub fn eq_str(&self, s: &str) -> bool {
        self.bytes().eq(s.bytes())
    }
}

impl fmt::Display for PercentStr<'_> {
    /// The decoded text (invalid UTF-8 shown as U+FFFD).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut chunk = [0u8; 64];
        let mut n = 0;
        let flush = |f: &mut fmt::Formatter<'_>, chunk: &[u8]| -> Result<usize, fmt::Error> {
            // Emit the longest valid prefix; keep an incomplete tail for later.
            let mut rest = chunk;
            loop {
                match core::str::from_utf8(rest) {
                    Ok(s) => {
                        f.write_str(s)?;
                        return Ok(0);
                    }
                    Err(e) => {
                        let (good, bad) = rest
                            .split_at_checked(e.valid_up_to())
                            .unwrap_or((rest, &[]));
                        f.write_str(core::str::from_utf8(good).unwrap_or(""))?;
                        match e.error_len() {
                            Some(len) => {
                                f.write_str("\u{fffd}")?;
                                rest = bad.get(len..).unwrap_or(&[]);
                            }
                            None => return Ok(bad.len()),
                        }
                    }
                }
            }
        };
        for b in self.bytes() {
            if n == chunk.len() {
                let keep = flush(f, &chunk)?;
                crate::wire::move_front(&mut chunk, n - keep..n, 0);
                n = keep;
            }
            if let Some(slot) = chunk.get_mut(n) {
                *slot = b;
            }
            n += 1;
        }
        let keep = flush(f, chunk.get(..n).unwrap_or(&[]))?;
        if keep > 0 {
            f.write_str("\u{fffd}")?;
        }
        Ok(())
    }
}

/// Where `needle` first occurs in `hay`: a plain window search. The needle
/// is a template's short literal, so this is fast enough, and it keeps core's
/// two-way substring searcher (about 300 B of flash) out of the image.
fn find_str(hay: &str, needle: &str) -> Option<usize> {
    let (hay, needle) = (hay.as_bytes(), needle.as_bytes());
    if needle.is_empty() {
        return Some(0);
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Where the ASCII byte `b` first occurs in `s` (byte searches: `str`'s
/// `char` patterns link core's searcher and `memchr`, about 320 B of flash).
fn find_byte(s: &str, b: u8) -> Option<usize> {
    s.bytes().position(|c| c == b)
}

/// Whether `s` holds any of the ASCII bytes in `set`.
fn has_any(s: &str, set: &[u8]) -> bool {
    s.bytes().any(|c| set.contains(&c))
}

/// Match `uri` against an RFC 6570 `template` (`{var}` and `{+var}`).
pub fn match_template<'t, 'a>(template: &'t str, uri: &'a str) -> Option<Vars<'a>>
where
    't: 'a,
{
    let mut vars = Vars::default();
    match_into(template, uri, &mut vars).then_some(vars)
}

/// [`match_template`] into `vars`: the server's read fills the one `Vars`
/// it hands the handler instead of moving one out of each step (256 bytes
/// on 64-bit targets, each move a `memcpy` call; `resources/read` 5,132 →
/// 5,075 instructions, `scripts/list_cost.sh`). On a match, `vars` holds
/// exactly its variables; otherwise its contents are unspecified.
pub(crate) fn match_into<'a>(template: &'a str, uri: &'a str, vars: &mut Vars<'a>) -> bool {
    match_vars(template, uri, vars).is_some()
}

fn match_vars<'a>(template: &'a str, uri: &'a str, vars: &mut Vars<'a>) -> Option<()> {
    let mut nvars = 0;
    let mut t = template;
    let mut u = uri;
    while !t.is_empty() {
        match find_byte(t, b'{') {
            Some(0) => {
                let close = find_byte(t, b'}')?;
                let expr = t.get(1..close)?;
                t = t.get(close + 1..)?;
                let (reserved, name) = match expr.strip_prefix('+') {
                    Some(n) => (true, n),
                    None => (false, expr),
                };
                if name.is_empty() || has_any(name, b"{,*:?#/.;&") {
                    return None;
                }
                // The value runs to the next literal (or the end).
                let next_lit = find_byte(t, b'{').map_or(t, |i| t.get(..i).unwrap_or(""));
                let end = if find_byte(t, b'{').is_none() {
                    // Last variable: the rest of the template is a fixed suffix.
                    u.len()
                        .checked_sub(t.len())
                        .filter(|&e| u.get(e..) == Some(t))?
                } else if next_lit.is_empty() {
                    return None; // adjacent variables: ambiguous
                } else {
                    find_str(u, next_lit)?
                };
                let value = u.get(..end)?;
                let forbidden: &[u8] = if reserved { b"" } else { b"/?#" };
                if value.is_empty() || has_any(value, forbidden) {
                    return None;
                }
                let pv = PercentStr(value);
                if !pv.is_utf8() {
                    return None;
                }
                *vars.vars.get_mut(nvars)? = Some((name, value));
                nvars += 1;
                u = u.get(end..)?;
            }
            found => {
                let lit_end = found.unwrap_or(t.len());
                let lit = t.get(..lit_end)?;
                u = u.strip_prefix(lit)?;
                t = t.get(lit_end..)?;
            }
        }
    }
    if !u.is_empty() {
        return None;
    }
    // What an earlier attempt (another template) left after ours.
    for slot in vars.vars.iter_mut().skip(nvars) {
        *slot = None;
    }
    Some(())
}

/// A `resources/read` request as a handler sees it.
#[derive(Clone, Copy, Debug)]
pub struct ReadRequest<'a> {
    uri: &'a str,
    vars: Vars<'a>,
}

impl<'a> ReadRequest<'a> {
    pub(crate) fn new(uri: &'a str, vars: Vars<'a>) -> Self {
        Self { uri, vars }
    }

    /// The requested URI (JSON-decoded, not percent-decoded).
    pub fn uri(&self) -> &'a str {
        self.uri
    }

    /// The template variables (empty for a fixed resource).
    pub fn vars(&self) -> &Vars<'a> {
        &self.vars
    }

    /// One template variable, percent-decoded on the fly.
    pub fn var(&self, name: &str) -> Option<PercentStr<'a>> {
        self.vars.get(name)
    }
}

/// Where a resource handler writes `contents`, front to back. Consumed by
/// [`finish`](Self::finish), so a read is answered exactly once.
pub struct Contents<'r> {
    ctx: Ctx<'r>,
    items: u32,
}

impl<'r> Contents<'r> {
    pub(crate) fn new(mut ctx: Ctx<'r>) -> Self {
        ctx.w.raw(b"\"contents\":[");
        Self { ctx, items: 0 }
    }

    /// Answer `input_required` instead (2026-07-28 MRTR).
    pub fn input_required(self) -> crate::mrtr::InputRequired<'r> {
        crate::mrtr::InputRequired::new(self.ctx)
    }

    crate::context::notify_methods!(ctx);

    fn begin(&mut self, uri: &str, mime_type: Option<&str>) -> &mut Writer<'r> {
        let w = &mut self.ctx.w;
        if self.items > 0 {
            w.raw(b",");
        }
        self.items += 1;
        w.raw(b"{\"uri\":");
        w.string(uri);
        if let Some(m) = mime_type {
            w.raw(b",\"mimeType\":");
            w.string(m);
        }
        w
    }

    /// A text item.
    pub fn text(&mut self, uri: &str, mime_type: Option<&str>, text: &str) -> &mut Self {
        let w = self.begin(uri, mime_type);
        w.raw(b",\"text\":");
        w.string(text);
        w.raw(b"}");
        self
    }

    /// A text item from formatted text.
    pub fn text_fmt(
        &mut self,
        uri: &str,
        mime_type: Option<&str>,
        args: fmt::Arguments<'_>,
    ) -> &mut Self {
        let w = self.begin(uri, mime_type);
        w.raw(b",\"text\":");
        w.string_fmt(args);
        w.raw(b"}");
        self
    }

    /// A text item written through [`core::fmt::Write`].
    pub fn text_with(
        &mut self,
        uri: &str,
        mime_type: Option<&str>,
        write: impl FnOnce(&mut TextWriter<'_, 'r>),
    ) -> &mut Self {
        let w = self.begin(uri, mime_type);
        w.raw(b",\"text\":\"");
        write(&mut TextWriter::new(w));
        w.raw(b"\"}");
        self
    }

    /// A text item whose text is a JSON document built with a
    /// [`ValueWriter`] (escaped into the string as it is written).
    pub fn json(
        &mut self,
        uri: &str,
        mime_type: Option<&str>,
        write: impl FnOnce(ValueWriter<'_, 'r>),
    ) -> &mut Self {
        let w = self.begin(uri, mime_type);
        w.raw(b",\"text\":\"");
        let was = w.set_string_mode(true);
        write(w.value());
        w.set_string_mode(was);
        w.raw(b"\"}");
        self
    }

    /// A binary item, base64-encoded as it is written.
    pub fn blob(&mut self, uri: &str, mime_type: Option<&str>, data: &[u8]) -> &mut Self {
        let w = self.begin(uri, mime_type);
        w.raw(b",\"blob\":\"");
        w.base64(data);
        w.raw(b"\"}");
        self
    }

    /// Finish the contents.
    pub fn finish<'a>(mut self) -> ResourceOutcome<'a> {
        self.ctx.w.raw(b"]");
        Ok(self.ctx.finish())
    }
}

impl fmt::Debug for Contents<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Contents")
            .field("version", &self.ctx.version)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    fn vars(t: &str, u: &str) -> Option<std::vec::Vec<(std::string::String, std::string::String)>> {
        match_template(t, u).map(|v| {
            v.iter()
                .map(|(n, p)| (n.to_string(), p.to_string()))
                .collect()
        })
    }

    #[test]
    fn a_match_into_vars_an_earlier_attempt_filled_holds_only_its_own() {
        let mut v = Vars::default();
        // Two variables written, then the suffix fails.
        assert!(!match_into("t://{x}/{y}/{z}!", "t://a/b/c", &mut v));
        assert!(v.get("y").is_some());
        assert!(match_into("t://{+w}", "t://a/b/c", &mut v));
        let got: std::vec::Vec<_> = v.iter().map(|(n, p)| (n, p.to_string())).collect();
        assert_eq!(got, std::vec![("w", "a/b/c".to_string())]);
        assert!(v.get("x").is_none() && v.get("y").is_none());
    }

    #[test]
    fn simple_template() {
        assert_eq!(
            vars("books://{title}", "books://Dune"),
            Some(std::vec![("title".into(), "Dune".into())])
        );
        assert_eq!(
            vars("books://{title}", "books://Dune%20Messiah"),
            Some(std::vec![("title".into(), "Dune Messiah".into())])
        );
        assert_eq!(vars("books://{title}", "books://a/b"), None);
        assert_eq!(vars("books://{title}", "books://"), None);
        assert_eq!(vars("books://{title}", "nobooks://x"), None);
        assert_eq!(vars("books://{title}", "books://%FF"), None);
    }

    #[test]
    fn reserved_and_multiple() {
        assert_eq!(
            vars("repo://{owner}/{+path}", "repo://me/a/b.txt"),
            Some(std::vec![
                ("owner".into(), "me".into()),
                ("path".into(), "a/b.txt".into())
            ])
        );
        assert_eq!(
            vars("f://{name}.txt", "f://a.b.txt"),
            Some(std::vec![("name".into(), "a.b".into())])
        );
        assert_eq!(
            vars("f://{a}/{b}/x", "f://1/2/x"),
            Some(std::vec![
                ("a".into(), "1".into()),
                ("b".into(), "2".into())
            ])
        );
        assert_eq!(
            vars("f://{name}.txt", "f://notes.txt"),
            Some(std::vec![("name".into(), "notes".into())])
        );
        assert_eq!(vars("x://{a}{b}", "x://ab"), None);
    }

    #[test]
    fn percent_str() {
        let p = PercentStr("caf%C3%A9%2");
        assert_eq!(p.to_string(), "café%2");
        assert!(p.eq_str("café%2"));
        let mut buf = [0u8; 16];
        assert_eq!(p.decode_into(&mut buf), Some("café%2"));
        assert_eq!(PercentStr("a%FFb").to_string(), "a\u{fffd}b");
        assert!(!PercentStr("a%FFb").is_utf8());
    }
}
