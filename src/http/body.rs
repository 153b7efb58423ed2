//! What the HTTP mapping reads of a request body: from the outline of its
//! one validation.

use crate::mcp::envelope::{MetaKeys, PARAM_ARGUMENTS, PARAM_NAME, PARAM_URI};
use crate::wire::envelope::{ID, METHOD, PARAMS};
use crate::wire::json::{JsonStr, Kind, Outline, Value};

/// What the mapping reads of a validated body, from the outline its one
/// validation recorded (the top two levels), not by walking it again.
#[derive(Clone, Copy, Default)]
pub(super) struct Body<'a> {
    /// The body is one JSON object (not a batch, not a scalar).
    pub(super) object: bool,
    pub(super) id: Option<Value<'a>>,
    pub(super) method: Option<JsonStr<'a>>,
    pub(super) meta: Option<Value<'a>>,
    /// `_meta`'s first protocol-version member (the envelope's version):
    /// its presence makes a request enveloped.
    pub(super) version: Option<Value<'a>>,
    /// `_meta` has a client-capabilities member.
    pub(super) capabilities: bool,
    pub(super) name: Option<Value<'a>>,
    pub(super) uri: Option<Value<'a>>,
    /// `params.arguments` (`tools/call`).
    pub(super) arguments: Option<Value<'a>>,
}

impl<'a> Body<'a> {
    pub(super) fn read(body: &'a [u8], outline: &Outline) -> Self {
        let value = Value::trusted(body);
        let mut view = Body {
            object: value.kind() == Kind::Object,
            ..Body::default()
        };
        if !view.object {
            return view;
        }
        // One call each, not `[..].map`: the array's `map` is not always
        // inlined, and a call to it cost 158 instructions a request
        // (`scripts/http_cost.sh`).
        let (id, method, params) = (
            outline.top(body, ID),
            outline.top(body, METHOD),
            outline.top(body, PARAMS),
        );
        view.id = id;
        view.method = method.and_then(|m| m.as_str());
        if params.is_none_or(|p| p.kind() != Kind::Object) {
            return view;
        }
        view.name = outline.inner(body, PARAM_NAME);
        view.arguments = outline.inner(body, PARAM_ARGUMENTS);
        view.uri = outline.inner(body, PARAM_URI);
        // `_meta` and the envelope's keys as the core reads them.
        let meta = MetaKeys::outlined(body, outline);
        view.meta = meta.meta;
        view.version = meta.version;
        view.capabilities = meta.caps.is_some();
        view
    }

    /// The body carries the envelope's version key
    /// ([`envelope::is_enveloped`](crate::mcp::envelope::is_enveloped)).
    pub(super) fn enveloped(&self) -> bool {
        self.version.is_some()
    }

    /// The envelope's protocol version, when the envelope is complete
    /// (both keys, the version a string): the header checks run only then,
    /// so a missing envelope key is the core's `-32602` first, as the
    /// spec's ladder says.
    pub(super) fn complete_envelope(&self) -> Option<JsonStr<'a>> {
        if !self.capabilities {
            return None;
        }
        self.version?.as_str()
    }

    pub(super) fn is_initialize(&self) -> bool {
        self.method.is_some_and(|m| m.eq_str("initialize"))
    }

    /// The request's id, if it is a string or a number (echoed verbatim).
    pub(super) fn id(&self) -> Option<&'a [u8]> {
        self.id
            .filter(|id| matches!(id.kind(), Kind::String | Kind::Number))
            .map(|id| id.raw())
    }
}
