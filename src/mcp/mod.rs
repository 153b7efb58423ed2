//! MCP vocabulary: versions, method names, server identity, icons.

pub mod envelope;
pub mod tool;
mod version;

pub use version::{Era, Fields, ProtocolVersion};

use crate::wire::emit::Writer;
use crate::wire::json::{JsonStr, Value};

/// A method this server knows, with an `Unknown` fallback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Method {
    /// `initialize`
    Initialize,
    /// `ping`
    Ping,
    /// `tools/list`
    ToolsList,
    /// `tools/call`
    ToolsCall,
    /// `resources/list`
    ResourcesList,
    /// `resources/templates/list`
    ResourceTemplatesList,
    /// `resources/read`
    ResourcesRead,
    /// `prompts/list`
    PromptsList,
    /// `prompts/get`
    PromptsGet,
    /// `completion/complete`
    Complete,
    /// `logging/setLevel`
    SetLevel,
    /// `server/discover` (2026-07-28)
    Discover,
    /// `resources/subscribe` (handshake era)
    Subscribe,
    /// `resources/unsubscribe` (handshake era)
    Unsubscribe,
    /// `subscriptions/listen` (2026-07-28)
    Listen,
    /// `notifications/initialized`
    Initialized,
    /// `notifications/cancelled`
    Cancelled,
    /// Anything else.
    Unknown,
}

/// The request a `notifications/cancelled` names (`params.requestId`, raw
/// JSON as sent); `None` for any other notification, or one without it.
/// The one reading of a cancellation, wherever one is acted on.
pub(crate) fn cancelled_request<'a>(
    n: &crate::wire::envelope::Notification<'a>,
) -> Option<&'a [u8]> {
    if Method::from_json(n.method) != Method::Cancelled {
        return None;
    }
    n.params.and_then(|p| p.get("requestId")).map(|v| v.raw())
}

impl Method {
    /// Most frequent first: lookups compare in this order.
    const TABLE: [(Method, &'static str); 17] = [
        (Method::ToolsCall, "tools/call"),
        (Method::Ping, "ping"),
        (Method::ToolsList, "tools/list"),
        (Method::Initialize, "initialize"),
        (Method::ResourcesList, "resources/list"),
        (Method::ResourceTemplatesList, "resources/templates/list"),
        (Method::ResourcesRead, "resources/read"),
        (Method::PromptsList, "prompts/list"),
        (Method::PromptsGet, "prompts/get"),
        (Method::Complete, "completion/complete"),
        (Method::SetLevel, "logging/setLevel"),
        (Method::Discover, "server/discover"),
        (Method::Subscribe, "resources/subscribe"),
        (Method::Unsubscribe, "resources/unsubscribe"),
        (Method::Listen, "subscriptions/listen"),
        (Method::Initialized, "notifications/initialized"),
        (Method::Cancelled, "notifications/cancelled"),
    ];

    /// Look a (possibly escaped) method name up.
    pub fn from_json(name: JsonStr<'_>) -> Method {
        // No name in the table has a backslash (asserted below): raw text
        // equal to a name is that name, and only raw text with an escape
        // needs decoding to be compared.
        #[allow(clippy::indexing_slicing, reason = "const-evaluated, within bounds")]
        const _: () = {
            let mut i = 0;
            while i < Method::TABLE.len() {
                let b = Method::TABLE[i].1.as_bytes();
                let mut j = 0;
                while j < b.len() {
                    assert!(b[j] != b'\\', "a method name has no backslash");
                    j += 1;
                }
                i += 1;
            }
        };
        // 64-bit only: small targets keep the one loop below (flash).
        let raw = name.raw();
        if cfg!(target_pointer_width = "64") {
            if let Some((m, _)) = Self::TABLE.iter().find(|(_, s)| raw == s.as_bytes()) {
                return *m;
            }
            if !name.has_escape() {
                return Method::Unknown;
            }
        }
        Self::TABLE
            .iter()
            .find(|(_, s)| name.eq_str(s))
            .map_or(Method::Unknown, |(m, _)| *m)
    }

    /// The wire name (`""` for `Unknown`).
    pub fn as_str(self) -> &'static str {
        Self::TABLE
            .iter()
            .find(|(m, _)| *m == self)
            .map_or("", |(_, s)| s)
    }
}

/// A log severity (RFC 5424 order, least severe first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum LogLevel {
    /// `debug`
    Debug,
    /// `info`
    Info,
    /// `notice`
    Notice,
    /// `warning`
    Warning,
    /// `error`
    Error,
    /// `critical`
    Critical,
    /// `alert`
    Alert,
    /// `emergency`
    Emergency,
}

impl LogLevel {
    /// All levels, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// Look a (possibly escaped) wire name up.
    pub fn from_json(name: JsonStr<'_>) -> Option<LogLevel> {
        Self::ALL.into_iter().find(|l| name.eq_str(l.as_str()))
    }
}

/// Icon theme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Theme {
    /// For light backgrounds.
    Light,
    /// For dark backgrounds.
    Dark,
}

/// An icon (MCP 2025-11-25), on tools, resources, prompts and the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Icon<'s> {
    /// URI of the image (`https:` or `data:`).
    pub src: &'s str,
    /// MIME type.
    pub mime_type: Option<&'s str>,
    /// Sizes such as `"48x48"` or `"any"`.
    pub sizes: &'s [&'s str],
    /// Theme the icon is for.
    pub theme: Option<Theme>,
}

impl<'s> Icon<'s> {
    /// An icon with only a `src`.
    pub const fn new(src: &'s str) -> Self {
        Self {
            src,
            mime_type: None,
            sizes: &[],
            theme: None,
        }
    }

    crate::mcp::setters! {
        /// Set the MIME type.
        mime_type?: &'s str;
        /// Set the sizes.
        sizes: &'s [&'s str];
        /// Set the theme.
        theme?: Theme;
    }
}

/// Write `"name":…`, then `,"title":…` (when the version has titles) and
/// `,"description":…` where set: how a tool, a prompt, its arguments, a
/// resource and a template name themselves.
pub(crate) fn write_naming(
    w: &mut Writer<'_>,
    fields: Fields,
    name: &str,
    title: Option<&str>,
    description: Option<&str>,
) {
    w.raw(b"\"name\":");
    w.string(name);
    if let (true, Some(t)) = (fields.title, title) {
        w.raw(b",\"title\":");
        w.string(t);
    }
    if let Some(d) = description {
        w.raw(b",\"description\":");
        w.string(d);
    }
}

/// `,"name":…` with `title`, `description` and `mimeType`: what a
/// resource, a template and a resource link share.
pub(crate) fn write_resource_naming(
    w: &mut Writer<'_>,
    fields: Fields,
    name: &str,
    title: Option<&str>,
    description: Option<&str>,
    mime_type: Option<&str>,
) {
    w.raw(b",");
    write_naming(w, fields, name, title, description);
    if let Some(m) = mime_type {
        w.raw(b",\"mimeType\":");
        w.string(m);
    }
}

/// Write `,"icons":[...]` when the version has icons and there are any.
pub(crate) fn write_icons(w: &mut Writer<'_>, icons: &[Icon<'_>], fields: Fields) {
    if !fields.icons || icons.is_empty() {
        return;
    }
    w.raw(b",\"icons\":[");
    for (i, icon) in icons.iter().enumerate() {
        if i > 0 {
            w.raw(b",");
        }
        let mut o = w.value().object();
        o.str("src", icon.src);
        if let Some(m) = icon.mime_type {
            o.str("mimeType", m);
        }
        if !icon.sizes.is_empty() {
            let mut a = o.array("sizes");
            for s in icon.sizes {
                a.str(s);
            }
        }
        if let Some(t) = icon.theme {
            o.str(
                "theme",
                match t {
                    Theme::Light => "light",
                    Theme::Dark => "dark",
                },
            );
        }
    }
    w.raw(b"]");
}

/// The server's identity (`serverInfo`, an MCP `Implementation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct ServerInfo<'s> {
    /// Programmatic name.
    pub name: &'s str,
    /// Version string.
    pub version: &'s str,
    /// Display name (2025-06-18+).
    pub title: Option<&'s str>,
    /// Description (2025-11-25+).
    pub description: Option<&'s str>,
    /// Website (2025-11-25+).
    pub website_url: Option<&'s str>,
    /// Icons (2025-11-25+).
    pub icons: &'s [Icon<'s>],
}

impl<'s> ServerInfo<'s> {
    /// Name and version.
    pub const fn new(name: &'s str, version: &'s str) -> Self {
        Self {
            name,
            version,
            title: None,
            description: None,
            website_url: None,
            icons: &[],
        }
    }

    crate::mcp::setters! {
        /// Set the display title.
        title?: &'s str;
        /// Set the description.
        description?: &'s str;
        /// Set the website.
        website_url?: &'s str;
        /// Set the icons.
        icons: &'s [Icon<'s>];
    }

    /// Write the `Implementation` object shaped for a version.
    pub(crate) fn write(&self, w: &mut Writer<'_>, fields: Fields) {
        w.raw(b"{\"name\":");
        w.string(self.name);
        w.raw(b",\"version\":");
        w.string(self.version);
        if let (true, Some(t)) = (fields.title, self.title) {
            w.raw(b",\"title\":");
            w.string(t);
        }
        if fields.implementation_description {
            if let Some(d) = self.description {
                w.raw(b",\"description\":");
                w.string(d);
            }
            if let Some(u) = self.website_url {
                w.raw(b",\"websiteUrl\":");
                w.string(u);
            }
        }
        write_icons(w, self.icons, fields);
        w.raw(b"}");
    }
}

/// What the client declared it can do (in `initialize`, or in a 2026-07-28
/// request's envelope).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct ClientCapabilities {
    /// `roots`.
    pub roots: bool,
    /// `sampling`.
    pub sampling: bool,
    /// `elicitation`.
    pub elicitation: bool,
}

impl ClientCapabilities {
    /// The client can answer some input request.
    pub fn any(&self) -> bool {
        self.roots || self.sampling || self.elicitation
    }
}

/// Client capabilities declared in an object (`initialize` or the envelope).
pub(crate) fn client_capabilities(caps: Value<'_>) -> ClientCapabilities {
    let mut c = ClientCapabilities::default();
    // One walk over the members (often none).
    for (key, _) in caps.members() {
        if key.eq_str("roots") {
            c.roots = true;
        } else if key.eq_str("sampling") {
            c.sampling = true;
        } else if key.eq_str("elicitation") {
            c.elicitation = true;
        }
    }
    c
}

/// How long a result may be cached, and by whom (2026-07-28 `ttlMs` and
/// `cacheScope`, on `server/discover`, the list methods and `resources/read`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Cache {
    /// Freshness in milliseconds (0: stale at once).
    pub ttl_ms: u64,
    /// Who may cache it.
    pub scope: CacheScope,
}

impl Cache {
    /// `ttlMs: 0`, `cacheScope: "private"` (the default).
    pub const NONE: Cache = Cache {
        ttl_ms: 0,
        scope: CacheScope::Private,
    };

    /// A caching hint.
    pub const fn new(ttl_ms: u64, scope: CacheScope) -> Self {
        Self { ttl_ms, scope }
    }
}

/// `cacheScope`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum CacheScope {
    /// Any client or intermediary may reuse it.
    Public,
    /// Only the requesting client may reuse it.
    Private,
}

/// The `const fn` builder setters of a descriptor's fields, written once:
/// `name?: T;` sets `self.name = Some(value)`, `name: T;` sets
/// `self.name = value`; each with the doc comment given.
macro_rules! setters {
    () => {};
    ($(#[$doc:meta])* $field:ident?: $ty:ty; $($rest:tt)*) => {
        $(#[$doc])*
        pub const fn $field(mut self, value: $ty) -> Self {
            self.$field = Some(value);
            self
        }
        $crate::mcp::setters!($($rest)*);
    };
    ($(#[$doc:meta])* $field:ident: $ty:ty; $($rest:tt)*) => {
        $(#[$doc])*
        pub const fn $field(mut self, value: $ty) -> Self {
            self.$field = value;
            self
        }
        $crate::mcp::setters!($($rest)*);
    };
}
pub(crate) use setters;

/// Who speaks a message (of a prompt, or of a sampling request).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Role {
    /// `user`
    User,
    /// `assistant`
    Assistant,
}

#[cfg(test)]
mod tests {
    use super::Method;
    use crate::wire::json::JsonStr;

    fn method(raw: &str) -> Method {
        Method::from_json(JsonStr::new(raw.as_bytes()).expect("valid string contents"))
    }

    #[test]
    fn methods_as_written_and_escaped() {
        for (m, name) in Method::TABLE {
            assert_eq!(method(name), m, "{name}");
            assert_eq!(Method::as_str(m), name);
        }
        assert_eq!(method(r"tools\/call"), Method::ToolsCall);
        assert_eq!(method(r"\u0070ing"), Method::Ping);
        assert_eq!(method(r"tools/cal\u006c"), Method::ToolsCall);
        assert_eq!(method("tools/Call"), Method::Unknown);
        assert_eq!(method(r"tools\/calls"), Method::Unknown);
        assert_eq!(method(""), Method::Unknown);
    }
}
