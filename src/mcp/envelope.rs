//! The 2026-07-28 per-request envelope: its `_meta` keys, the era a request
//! opens, and the ladder of checks a modern request passes before dispatch.
//!
//! Both the core ([`Server::handle`](crate::Server::handle)) and the HTTP
//! mapping decide the era and read the envelope through this module, so the
//! two cannot disagree.

use crate::error::{ErrorCode, INVALID_PARAMS, UNSUPPORTED_PROTOCOL_VERSION};
use crate::mcp::{ClientCapabilities, Era, LogLevel, ProtocolVersion, client_capabilities};
use crate::wire::emit::Writer;
use crate::wire::json::{JsonStr, Kind, Level, Name, Outline, OutlineKeys, Value, slot_of};

/// `params._meta` key: the request's protocol version.
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `params._meta` key: the client's capabilities.
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `params._meta` key: the log level this request asks for.
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// The `_meta` key carrying the server identity on 2026-07-28 results.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// The members of `params` the core and the HTTP mapping read, in the
/// order of an [`Outline`]'s inner slots.
pub(crate) const PARAMS_KEYS: [&str; 6] = [
    "_meta",
    "name",
    "arguments",
    "requestState",
    "inputResponses",
    "uri",
];

/// Places in [`PARAMS_KEYS`] (an outline's inner slots).
pub(crate) const PARAM_META: usize = slot_of(&PARAMS_KEYS, "_meta");
pub(crate) const PARAM_NAME: usize = slot_of(&PARAMS_KEYS, "name");
pub(crate) const PARAM_ARGUMENTS: usize = slot_of(&PARAMS_KEYS, "arguments");
pub(crate) const PARAM_STATE: usize = slot_of(&PARAMS_KEYS, "requestState");
pub(crate) const PARAM_RESPONSES: usize = slot_of(&PARAMS_KEYS, "inputResponses");
pub(crate) const PARAM_URI: usize = slot_of(&PARAMS_KEYS, "uri");

/// The members of `params._meta` the core and the HTTP mapping read, in
/// the order of an [`Outline`]'s deep slots.
const META_KEYS: [&str; 4] = [
    PROTOCOL_VERSION_KEY,
    CLIENT_CAPABILITIES_KEY,
    "progressToken",
    LOG_LEVEL_KEY,
];

/// What a frame's one validation picks out: the message's members
/// ([`MESSAGE_KEYS`](crate::wire::envelope::MESSAGE_KEYS)), those of its
/// `params` ([`PARAMS_KEYS`]) and those of `params._meta` ([`META_KEYS`]).
pub(crate) static OUTLINE_KEYS: OutlineKeys = OutlineKeys::new(
    // Members expected in the order `jsonrpc`, `id`, `method`, `params`
    // (a cycle: any rotation of it too), and `name`, `arguments`, `_meta`:
    // the Python SDK's order (its transcripts in `tests/data/vectors`); the
    // TypeScript SDK writes `method`, `params`, then `jsonrpc`, `id`, and
    // adds `_meta` to `params` last (`tools/call-ts-order` in
    // `scripts/list_cost.sh` counts what its order costs).
    Level::cycling(
        &Name::all(crate::wire::envelope::MESSAGE_KEYS),
        &["jsonrpc", "id", "method", "params"],
    ),
    crate::wire::envelope::PARAMS,
    Level::cycling(&Name::all(PARAMS_KEYS), &["name", "arguments", "_meta"]),
    PARAM_META,
    Level::deep(&Name::all(META_KEYS)),
);

/// The fuzz targets' check of the outline (`cfg(fuzzing)`, set by
/// cargo-fuzz; hidden): a frame's outlined validation with
/// [`OUTLINE_KEYS`] (members taken as expected included) answers as
/// [`validate`](crate::wire::json::validate) does under `limits`, and what
/// it records for an object is what walking it finds: the first member of
/// each name at each of the three levels, and the top level's repeated
/// names. Panics on a difference.
#[cfg(fuzzing)]
#[doc(hidden)]
pub fn fuzz_outline(input: &[u8], limits: &crate::wire::json::Limits) {
    use crate::wire::json::{validate, validate_outlined};
    let mut outline = Outline::new(&OUTLINE_KEYS);
    let got = validate_outlined(input, limits, &mut outline);
    assert_eq!(got, validate(input, limits), "outlined validation");
    if got.is_ok() {
        outline.check_against_walking(input);
    }
}

/// A request's `params._meta` and the members of it the core reads (the
/// first of each, as `Value::get` would find): from the slots the frame's
/// validation filled, or from one walk over it.
#[derive(Clone, Copy, Default)]
pub(crate) struct MetaKeys<'a> {
    /// `params._meta` itself (any kind).
    pub(crate) meta: Option<Value<'a>>,
    pub(crate) version: Option<Value<'a>>,
    pub(crate) caps: Option<Value<'a>>,
    pub(crate) level: Option<Value<'a>>,
    /// `progressToken`.
    pub(crate) progress: Option<Value<'a>>,
}

impl<'a> MetaKeys<'a> {
    /// The keys of the first `params._meta` of `frame`, whose validation
    /// recorded `outline` ([`OUTLINE_KEYS`]).
    pub(crate) fn outlined(frame: &'a [u8], outline: &Outline) -> Self {
        const VERSION: usize = slot_of(&META_KEYS, PROTOCOL_VERSION_KEY);
        const CAPS: usize = slot_of(&META_KEYS, CLIENT_CAPABILITIES_KEY);
        const PROGRESS: usize = slot_of(&META_KEYS, "progressToken");
        const LEVEL: usize = slot_of(&META_KEYS, LOG_LEVEL_KEY);
        let meta = outline.inner(frame, PARAM_META);
        // No `_meta` (most requests of the handshake era): no keys in it.
        if meta.is_none() {
            return MetaKeys::default();
        }
        // One call each, not `[..].map` (not always inlined: see
        // `http::body`).
        MetaKeys {
            meta,
            version: outline.deep(frame, VERSION),
            caps: outline.deep(frame, CAPS),
            level: outline.deep(frame, LEVEL),
            progress: outline.deep(frame, PROGRESS),
        }
    }

    /// The keys of `meta` (`params._meta`; none unless it is an object),
    /// walked.
    #[cfg(test)]
    pub(crate) fn of(meta: Option<Value<'a>>) -> Self {
        match meta {
            None => MetaKeys::default(),
            Some(m) => Self::of_meta(m),
        }
    }

    #[cfg(test)]
    fn of_meta(m: Value<'a>) -> Self {
        let meta = Some(m);
        let mut found = [None; 4];
        {
            Value::find_keys(&mut m.members(), &META_KEYS, &mut found);
        }
        let [version, caps, progress, level] = found;
        MetaKeys {
            meta,
            version,
            caps,
            level,
            progress,
        }
    }

    /// Whether `params._meta` carries the envelope's version key.
    pub(crate) fn is_enveloped(&self) -> bool {
        self.version.is_some()
    }
}

/// The era a request opens: the first request of a stream connection, or
/// every HTTP request. Not `initialize` and enveloped → 2026-07-28.
///
/// `claims_modern`: the transport says the request speaks 2026-07-28 (over
/// HTTP, `MCP-Protocol-Version: 2026-07-28`; a stream has no such claim).
/// That holds for `initialize` too: 2026-07-28 has no `initialize`, so such
/// a request is a 2026-07-28 request for a method that revision removed
/// (`-32601`, HTTP `404`), not the start of a handshake.
pub(crate) fn era_of(is_initialize: bool, enveloped: bool, claims_modern: bool) -> Era {
    if claims_modern || (!is_initialize && enveloped) {
        Era::Modern
    } else {
        Era::Handshake
    }
}

/// The facts a checked 2026-07-28 envelope gives a request. Only
/// [`check`] makes one: holding it proves the ladder was passed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Modern {
    log_level: Option<LogLevel>,
    client: ClientCapabilities,
}

impl Modern {
    /// The log level the request asked for (`None`: no log notifications).
    pub(crate) fn log_level(&self) -> Option<LogLevel> {
        self.log_level
    }

    /// The capabilities the envelope declares.
    pub(crate) fn client(&self) -> ClientCapabilities {
        self.client
    }
}

/// Why a modern request was refused before dispatch.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fault<'a> {
    pub(crate) code: ErrorCode,
    /// The message, in pieces (the keys are written once in the image, not
    /// once per message that names them).
    pub(crate) message: Pieces,
    /// `Some`: answer with `data: {"supported": [...], "requested": R}`.
    pub(crate) requested: Option<Option<JsonStr<'a>>>,
}

/// A message made of static pieces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pieces(pub(crate) &'static [&'static str]);

impl core::fmt::Display for Pieces {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.0.iter().try_for_each(|p| f.write_str(p))
    }
}

const fn fault(code: ErrorCode, message: &'static [&'static str]) -> Fault<'static> {
    Fault {
        code,
        message: Pieces(message),
        requested: None,
    }
}

const MISSING: &str = "params._meta is missing the required envelope key(s): ";

/// The ladder: `_meta` present, both keys present, the version a string we
/// speak, the capabilities an object, the log level (if any) known.
///
/// `initialize` on a modern connection: a handshake `initialize` (no
/// envelope) is cross-era traffic, refused first with `-32022` and the
/// supported versions; an enveloped one speaks 2026-07-28 itself, so it
/// climbs the ladder like any request and is then answered as the method
/// that revision removed (`-32601`).
///
/// `keys`: the request's `params._meta` and its members ([`MetaKeys::of`]).
pub(crate) fn check<'a>(
    is_initialize: bool,
    params: Option<Value<'a>>,
    keys: &MetaKeys<'a>,
    claimed: bool,
) -> Result<Modern, Fault<'a>> {
    // On a modern connection an `initialize` is refused (`-32022`): unless
    // the transport claims 2026-07-28 for an enveloped one (HTTP), which is
    // then a request for a method that revision removed.
    if is_initialize && !(claimed && keys.is_enveloped()) {
        let requested = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(|v| v.as_str());
        return Err(Fault {
            requested: Some(requested),
            ..fault(
                UNSUPPORTED_PROTOCOL_VERSION,
                &[
                    "connection is serving the 2026-07-28 protocol; the initialize handshake is not accepted",
                ],
            )
        });
    }
    if !keys.meta.is_some_and(|m| m.kind() == Kind::Object) {
        return Err(fault(
            INVALID_PARAMS,
            &[
                "params._meta must be an object carrying the required '",
                PROTOCOL_VERSION_KEY,
                "' and '",
                CLIENT_CAPABILITIES_KEY,
                "' envelope keys",
            ],
        ));
    };
    let level = keys.level;
    let (version, caps) = match (keys.version, keys.caps) {
        (Some(v), Some(c)) => (v, c),
        (None, None) => {
            return Err(fault(
                INVALID_PARAMS,
                &[MISSING, PROTOCOL_VERSION_KEY, ", ", CLIENT_CAPABILITIES_KEY],
            ));
        }
        (None, Some(_)) => {
            return Err(fault(INVALID_PARAMS, &[MISSING, PROTOCOL_VERSION_KEY]));
        }
        (Some(_), None) => {
            return Err(fault(INVALID_PARAMS, &[MISSING, CLIENT_CAPABILITIES_KEY]));
        }
    };
    let Some(version) = version.as_str() else {
        return Err(fault(
            INVALID_PARAMS,
            &["the protocol-version envelope value must be a string"],
        ));
    };
    if !ProtocolVersion::MODERN
        .iter()
        .any(|v| version.eq_str(v.as_str()))
    {
        return Err(Fault {
            requested: Some(Some(version)),
            ..fault(
                UNSUPPORTED_PROTOCOL_VERSION,
                &["Unsupported protocol version"],
            )
        });
    }
    if caps.kind() != Kind::Object {
        return Err(fault(
            INVALID_PARAMS,
            &["the client-capabilities envelope value must be an object"],
        ));
    }
    let log_level = match level {
        None => None,
        Some(level) => match level.as_str().and_then(LogLevel::from_json) {
            Some(l) => Some(l),
            None => {
                return Err(fault(
                    INVALID_PARAMS,
                    &["Invalid log level in ", LOG_LEVEL_KEY],
                ));
            }
        },
    };
    Ok(Modern {
        log_level,
        client: client_capabilities(caps),
    })
}

/// `["2026-07-28"]`: the versions of the stateless era.
pub(crate) fn write_supported_versions(w: &mut Writer<'_>) {
    w.raw(b"[");
    for (i, v) in ProtocolVersion::MODERN.iter().enumerate() {
        if i > 0 {
            w.raw(b",");
        }
        w.string(v.as_str());
    }
    w.raw(b"]");
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::error::UNSUPPORTED_PROTOCOL_VERSION;

    /// [`check`] of `params` (its `_meta` found by `Value::get`).
    fn check_p<'a>(
        is_initialize: bool,
        params: Option<Value<'a>>,
        claimed: bool,
    ) -> Result<Modern, Fault<'a>> {
        let keys = MetaKeys::of(params.and_then(|p| p.get("_meta")));
        check(is_initialize, params, &keys, claimed)
    }

    fn run(params: &[u8]) -> Result<Modern, (i32, std::string::String, bool)> {
        let v = Value::parse(params, &crate::wire::json::Limits::DEFAULT).unwrap();
        check_p(false, Some(v), false).map_err(|f| {
            (
                f.code.get(),
                std::format!("{}", f.message),
                f.requested.is_some(),
            )
        })
    }

    #[test]
    fn the_ladder_in_order() {
        let caps = r#""io.modelcontextprotocol/clientCapabilities":{}"#;
        let version = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28""#;
        // No _meta, then each missing key, then a wrong version type.
        assert!(
            run(b"{}")
                .unwrap_err()
                .1
                .starts_with("params._meta must be an object")
        );
        assert!(run(br#"{"_meta":[]}"#).is_err());
        let only_caps = std::format!(r#"{{"_meta":{{{caps}}}}}"#);
        assert!(
            run(only_caps.as_bytes())
                .unwrap_err()
                .1
                .ends_with("protocolVersion")
        );
        let only_version = std::format!(r#"{{"_meta":{{{version}}}}}"#);
        assert!(
            run(only_version.as_bytes())
                .unwrap_err()
                .1
                .ends_with("clientCapabilities")
        );
        let both_missing = run(br#"{"_meta":{}}"#).unwrap_err().1;
        assert!(
            both_missing.ends_with("protocolVersion, io.modelcontextprotocol/clientCapabilities")
        );
        let number =
            std::format!(r#"{{"_meta":{{"io.modelcontextprotocol/protocolVersion":5,{caps}}}}}"#);
        assert_eq!(run(number.as_bytes()).unwrap_err().0, INVALID_PARAMS.get());
        // An unknown version names itself in data.
        let old = std::format!(
            r#"{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2025-11-25",{caps}}}}}"#
        );
        let e = run(old.as_bytes()).unwrap_err();
        assert_eq!((e.0, e.2), (UNSUPPORTED_PROTOCOL_VERSION.get(), true));
        // Capabilities must be an object; a log level must be known.
        let bad_caps = std::format!(
            r#"{{"_meta":{{{version},"io.modelcontextprotocol/clientCapabilities":1}}}}"#
        );
        assert!(
            run(bad_caps.as_bytes())
                .unwrap_err()
                .1
                .contains("must be an object")
        );
        let bad_level = std::format!(
            r#"{{"_meta":{{{version},{caps},"io.modelcontextprotocol/logLevel":"loud"}}}}"#
        );
        assert!(
            run(bad_level.as_bytes())
                .unwrap_err()
                .1
                .starts_with("Invalid log level")
        );
        // A good envelope.
        let good = std::format!(
            r#"{{"_meta":{{{version},"io.modelcontextprotocol/clientCapabilities":{{"sampling":{{}}}},"io.modelcontextprotocol/logLevel":"debug"}}}}"#
        );
        let m = run(good.as_bytes()).unwrap();
        assert_eq!(m.log_level(), Some(LogLevel::Debug));
        assert!(m.client().sampling && !m.client().elicitation);
    }

    #[test]
    fn initialize_is_refused_with_the_supported_versions() {
        let v = Value::parse(
            br#"{"protocolVersion":"2025-11-25"}"#,
            &crate::wire::json::Limits::DEFAULT,
        )
        .unwrap();
        let f = check_p(true, Some(v), false).unwrap_err();
        assert_eq!(f.code, UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            f.requested.flatten().map(|r| r.raw()),
            Some(&b"2025-11-25"[..])
        );
    }

    #[test]
    fn era_rule() {
        assert_eq!(era_of(false, true, false), Era::Modern);
        assert_eq!(era_of(true, true, false), Era::Handshake);
        assert_eq!(era_of(false, false, false), Era::Handshake);
        assert_eq!(era_of(true, false, false), Era::Handshake);
        // The transport's 2026-07-28 claim decides, initialize included.
        assert_eq!(era_of(true, true, true), Era::Modern);
        assert_eq!(era_of(true, false, true), Era::Modern);
        assert_eq!(era_of(false, false, true), Era::Modern);
    }

    #[test]
    fn an_enveloped_initialize_climbs_the_ladder_where_the_transport_claims_2026() {
        let parse =
            |json: &'static [u8]| Value::parse(json, &crate::wire::json::Limits::DEFAULT).unwrap();
        // Over HTTP under `MCP-Protocol-Version: 2026-07-28` it speaks
        // 2026-07-28: checked like any request (and then answered as a
        // removed method by the dispatcher).
        let enveloped = parse(
            br#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}"#,
        );
        assert!(check_p(true, Some(enveloped), true).is_ok());
        // On a stream's modern connection it is refused, enveloped or not.
        let f = check_p(true, Some(enveloped), false).unwrap_err();
        assert_eq!(f.code, UNSUPPORTED_PROTOCOL_VERSION);
        let bad_version = parse(
            br#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}"#,
        );
        let f = check_p(true, Some(bad_version), true).unwrap_err();
        assert_eq!(f.code, UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            f.requested.flatten().map(|r| r.raw()),
            Some(&b"2099-01-01"[..])
        );
        // Without the envelope it is handshake traffic: -32022 first.
        let f = check_p(true, None, true).unwrap_err();
        assert_eq!(f.code, UNSUPPORTED_PROTOCOL_VERSION);
        assert!(matches!(f.requested, Some(None)));
    }
}
