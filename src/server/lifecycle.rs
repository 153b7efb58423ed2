//! `initialize` (the handshake era's negotiation) and the capabilities this
//! server has, derived from what is registered.

use super::Server;
use super::out::{Out, Wrote};
use crate::mcp::{ClientCapabilities, Fields, ProtocolVersion, client_capabilities};
use crate::wire::emit::Writer;
use crate::wire::json::{Kind, Value};

impl<S> Server<'_, S> {
    /// Negotiate and answer `initialize`. Returns what was written and, on
    /// success, the negotiated version and the client's capabilities.
    pub(super) fn initialize(
        &self,
        params: Option<Value<'_>>,
        resp: Out<'_, '_>,
        subscribable: bool,
    ) -> (Wrote, Option<(ProtocolVersion, ClientCapabilities)>) {
        let Some(params) = params else {
            return (resp.invalid_params(), None);
        };
        let requested = params.get("protocolVersion").and_then(|v| v.as_str());
        let caps = params
            .get("capabilities")
            .filter(|v| v.kind() == Kind::Object);
        let info_ok = params.get("clientInfo").is_some_and(|ci| {
            ci.kind() == Kind::Object
                && ci.get("name").is_some_and(|n| n.kind() == Kind::String)
                && ci.get("version").is_some_and(|n| n.kind() == Kind::String)
        });
        let (Some(requested), Some(caps), true) = (requested, caps, info_ok) else {
            return (resp.invalid_params(), None);
        };
        let version = ProtocolVersion::HANDSHAKE
            .into_iter()
            .find(|v| requested.eq_str(v.as_str()))
            .unwrap_or(ProtocolVersion::LATEST_HANDSHAKE);
        let client = client_capabilities(caps);
        let fields = version.fields();
        let wrote = resp.result(|w| {
            w.raw(b"{\"protocolVersion\":");
            w.string(version.as_str());
            w.raw(b",\"capabilities\":");
            self.write_capabilities(w, fields, subscribable);
            w.raw(b",\"serverInfo\":");
            self.id.info.write(w, fields);
            if let Some(text) = self.instructions {
                w.raw(b",\"instructions\":");
                w.string(text);
            }
            w.raw(b"}");
        });
        (wrote, Some((version, client)))
    }

    /// The capabilities this server has: derived from what is registered,
    /// and `resources.subscribe` only where the connection keeps
    /// subscriptions (`subscribable`) for a server that has a
    /// [`Changes`](crate::changes::Changes) registry.
    pub(super) fn write_capabilities(
        &self,
        w: &mut Writer<'_>,
        fields: Fields,
        subscribable: bool,
    ) {
        let mut o = w.value().object();
        if self.completion.is_some() && fields.completions {
            o.member("completions").raw_json("{}");
        }
        if self.logging {
            o.member("logging").raw_json("{}");
        }
        use crate::changes::List;
        let changes = |list| subscribable && self.changes.is_some_and(|c| c.announces(list));
        if !self.prompts.is_empty() {
            o.object("prompts")
                .bool("listChanged", changes(List::Prompts));
        }
        if self.has_resources() {
            o.object("resources")
                .bool("subscribe", subscribable && self.changes.is_some())
                .bool("listChanged", changes(List::Resources));
        }
        if !self.tools.is_empty() {
            o.object("tools").bool("listChanged", changes(List::Tools));
        }
    }
}
