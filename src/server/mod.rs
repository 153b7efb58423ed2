//! The sans-IO server: bytes of one frame in, bytes of the answer out.
//!
//! # Drive loop
//!
//! A [`Server`] is immutable configuration plus your application state; it can
//! be shared (`&Server`) by any number of connections. Each connection keeps a
//! [`Connection`] (a few bytes of lifecycle state). For every complete frame:
//!
//! 1. call [`Server::handle`] with the frame (a mutable slice: strings are
//!    unescaped in place) and an output buffer;
//! 2. send `out[..n]` if `n > 0` — it is one or more complete JSON-RPC
//!    messages, each ending in `\n`, never a partial one;
//! 3. for a line the framer reported as too long, call
//!    [`Server::handle_overflow`] instead.
//!
//! [`crate::transport::serve`] is this loop over an `embedded-io` stream.
//!
//! # Output buffer
//!
//! Everything is written straight into `out`. If a tool's result does not
//! fit, the answer is a tool error saying so (the model can ask for less); if
//! any other answer does not fit, it is `-32603` naming the buffer size. A
//! buffer of at least 256 bytes is needed for error answers with short ids.

mod session;

pub use session::{ClientCapabilities, Connection, Ready, Session, Uninitialized};

use core::fmt;
use core::ops::Range;

use crate::error::{
    ErrorCode, ErrorData, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
    PARSE_ERROR, ProtocolError,
};
use crate::mcp::{Fields, Method, ProtocolVersion, ServerInfo};
use crate::resource::{
    ContentsState, ReadRequest, Resource, ResourceFailure, ResourceTemplate, Vars,
};
use crate::tool::{Arguments, Reply, ReplyState, Tool, ToolFailure};
use crate::wire::emit::Writer;
use crate::wire::envelope::{self, Envelope};
use crate::wire::json::{self, JsonStr, Kind, Limits, Value};

/// An MCP server: identity, registries and application state `S`.
///
/// Built with `const fn`s, so it can be a `static`:
///
/// ```
/// use picomcp::{Server, ServerInfo};
/// static SERVER: Server<'static, ()> = Server::new(ServerInfo::new("Bookshop", "0.1.0"), ())
///     .instructions("Ask about books.");
///
/// let mut conn = picomcp::Connection::new();
/// let mut line = *br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
/// let mut out = [0u8; 256];
/// let n = SERVER.handle(&mut conn, &mut line, &mut out);
/// assert_eq!(&out[..n], b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
/// ```
pub struct Server<'s, S> {
    info: ServerInfo<'s>,
    instructions: Option<&'s str>,
    tools: &'s [Tool<S>],
    resources: &'s [Resource<S>],
    templates: &'s [ResourceTemplate<S>],
    limits: Limits,
    state: S,
}

impl<S> fmt::Debug for Server<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.info)
            .field("tools", &self.tools.len())
            .field("resources", &self.resources.len())
            .field("templates", &self.templates.len())
            .finish_non_exhaustive()
    }
}

/// `data` of an error answer.
enum Data<'x> {
    None,
    Str(&'x str),
    Json(JsonStr<'x>),
    Uri(&'x str),
    User(Option<ErrorData<'x>>),
    Fmt(fmt::Arguments<'x>),
}

/// A response under construction: `{"jsonrpc":"2.0","id":ID` is written.
struct Out<'o> {
    w: Writer<'o>,
    id_end: usize,
}

const PREFIX: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":";

impl<'o> Out<'o> {
    fn new(buf: &'o mut [u8], id: Option<&[u8]>) -> Self {
        let mut w = Writer::new(buf);
        w.raw(PREFIX);
        w.raw(id.unwrap_or(b"null"));
        let id_end = w.len();
        if w.is_overflowed() {
            // The id alone does not fit: answer with `null` instead.
            w.truncate(0);
            w.raw(PREFIX);
            w.raw(b"null");
        }
        let id_end = if w.is_overflowed() {
            0
        } else {
            w.len().min(id_end)
        };
        Self { w, id_end }
    }

    fn error(mut self, code: ErrorCode, message: fmt::Arguments<'_>, data: Data<'_>) -> usize {
        self.w.truncate(self.id_end);
        self.w.raw(b",\"error\":{\"code\":");
        self.w.i64(i64::from(code.get()));
        self.w.raw(b",\"message\":");
        self.w.string_fmt(message);
        match data {
            Data::None => {}
            Data::Str(s) => {
                self.w.raw(b",\"data\":");
                self.w.string(s);
            }
            Data::Json(s) => {
                self.w.raw(b",\"data\":");
                self.w.json_str(s);
            }
            Data::Uri(uri) => {
                self.w.raw(b",\"data\":{\"uri\":");
                self.w.string(uri);
                self.w.raw(b"}");
            }
            Data::User(None) => {}
            Data::User(Some(ErrorData::String(s))) => {
                self.w.raw(b",\"data\":");
                self.w.string(s);
            }
            Data::User(Some(ErrorData::Json(raw))) => {
                if json::validate(raw.as_bytes(), &Limits::DEFAULT).is_err() {
                    return self.error(
                        INTERNAL_ERROR,
                        format_args!(
                            "Internal error: a handler returned error data that is not valid JSON"
                        ),
                        Data::None,
                    );
                }
                self.w.raw(b",\"data\":");
                self.w.raw_str(raw);
            }
            Data::Fmt(args) => {
                self.w.raw(b",\"data\":");
                self.w.string_fmt(args);
            }
        }
        self.w.raw(b"}}\n");
        if self.w.is_overflowed() {
            let cap = self.w.capacity();
            self.w.truncate(self.id_end);
            self.w
                .raw(b",\"error\":{\"code\":-32603,\"message\":\"response exceeds the ");
            self.w.u64(cap as u64);
            self.w.raw(b"-byte output buffer\"}}\n");
        }
        self.w.finish().unwrap_or(0)
    }

    fn protocol(self, e: &ProtocolError<'_>) -> usize {
        self.error(
            e.code(),
            format_args!("{}", e.message()),
            Data::User(e.error_data()),
        )
    }

    fn invalid_params(self) -> usize {
        self.error(
            INVALID_PARAMS,
            format_args!("Invalid request parameters"),
            Data::Str(""),
        )
    }

    /// Write `,"result":` + the body + `}\n`; too large → `-32603`.
    fn result(mut self, body: impl FnOnce(&mut Writer<'o>)) -> usize {
        self.w.raw(b",\"result\":");
        body(&mut self.w);
        self.w.raw(b"}\n");
        if self.w.is_overflowed() {
            let cap = self.w.capacity();
            return self.error(
                INTERNAL_ERROR,
                format_args!("response exceeds the {cap}-byte output buffer"),
                Data::None,
            );
        }
        self.w.finish().unwrap_or(0)
    }
}

/// Where `part` (a sub-slice of `whole`) lies in `whole`.
fn span(whole: &[u8], part: &[u8]) -> Range<usize> {
    let start = (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize);
    start..start + part.len()
}

fn write_tool_error(w: &mut Writer<'_>, tool: &str, message: fmt::Arguments<'_>) {
    w.raw(b"\"content\":[{\"type\":\"text\",\"text\":\"");
    w.str_fmt_content(format_args!("Error executing tool {tool}: "));
    w.str_fmt_content(message);
    w.raw(b"\"}],\"isError\":true}");
}

impl<'s, S> Server<'s, S> {
    /// A server with no tools or resources yet.
    pub const fn new(info: ServerInfo<'s>, state: S) -> Self {
        Self {
            info,
            instructions: None,
            tools: &[],
            resources: &[],
            templates: &[],
            limits: Limits::DEFAULT,
            state,
        }
    }

    /// Set `instructions` (sent in the `initialize` result).
    pub const fn instructions(mut self, text: &'s str) -> Self {
        self.instructions = Some(text);
        self
    }

    /// Register the tools, in listing order.
    pub const fn tools(mut self, tools: &'s [Tool<S>]) -> Self {
        self.tools = tools;
        self
    }

    /// Register the fixed resources, in listing order.
    pub const fn resources(mut self, resources: &'s [Resource<S>]) -> Self {
        self.resources = resources;
        self
    }

    /// Register the URI templates, in matching and listing order.
    pub const fn templates(mut self, templates: &'s [ResourceTemplate<S>]) -> Self {
        self.templates = templates;
        self
    }

    /// Set the JSON scanner limits (default: depth 32, no other limit than
    /// the frame size).
    pub const fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The application state.
    pub fn state(&self) -> &S {
        &self.state
    }

    /// The server identity.
    pub fn info(&self) -> &ServerInfo<'s> {
        &self.info
    }

    /// Answer a frame the framer reported as too long (`limit` bytes):
    /// `-32600` with `"id": null`, message `message too large: limit N bytes`.
    pub fn handle_overflow(&self, limit: usize, out: &mut [u8]) -> usize {
        Out::new(out, None).error(
            INVALID_REQUEST,
            format_args!("message too large: limit {limit} bytes"),
            Data::None,
        )
    }

    /// Handle one frame (one line, without its terminator) and write the
    /// answer, if any, into `out`. Returns the number of bytes written (0 for
    /// notifications, responses and empty lines). Never panics; `frame` is
    /// modified (strings are unescaped in place).
    pub fn handle(&self, conn: &mut Connection, frame: &mut [u8], out: &mut [u8]) -> usize {
        if frame
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        {
            return 0;
        }
        if let Err(e) = json::validate(frame, &self.limits) {
            return Out::new(out, None).error(
                PARSE_ERROR,
                format_args!("Parse error"),
                Data::Fmt(format_args!("{e}")),
            );
        }
        let value = Value::trusted(frame);
        if value.kind() == Kind::Array {
            let out = Out::new(out, None);
            if value.is_empty() {
                return out.error(
                    INVALID_REQUEST,
                    format_args!("Invalid Request"),
                    Data::Str("empty batch"),
                );
            }
            return match conn.version() {
                Some(v) => out.error(
                    INVALID_REQUEST,
                    format_args!("batches are not supported by protocol version {v}"),
                    Data::None,
                ),
                None => out.error(
                    INVALID_REQUEST,
                    format_args!("batches are not supported before initialization"),
                    Data::None,
                ),
            };
        }
        let request = match envelope::parse(value) {
            Ok(Envelope::Request(r)) => r,
            Ok(_) => return 0, // notifications and client responses are never answered
            Err(invalid) => {
                return Out::new(out, invalid.id.map(|i| i.raw())).error(
                    INVALID_REQUEST,
                    format_args!("Invalid Request"),
                    Data::Str(invalid.reason),
                );
            }
        };
        let method = Method::from_json(request.method);
        let resp = Out::new(out, Some(request.id.raw()));
        match conn {
            Connection::Uninitialized(_) => match method {
                Method::Ping => resp.result(|w| w.raw(b"{}")),
                Method::Initialize => {
                    let (n, session) = self.initialize(request.params, resp);
                    if let Some((version, client)) = session {
                        *conn = Connection::Ready(Session::new().initialize(version, client));
                    }
                    n
                }
                _ => resp.error(
                    INVALID_REQUEST,
                    format_args!("session not initialized: send initialize first"),
                    Data::None,
                ),
            },
            Connection::Ready(session) => {
                let version = session.version();
                let fields = version.fields();
                match method {
                    Method::Ping => resp.result(|w| w.raw(b"{}")),
                    Method::Initialize => {
                        let (n, renegotiated) = self.initialize(request.params, resp);
                        if let Some((version, client)) = renegotiated {
                            *session = session.reinitialize(version, client);
                        }
                        n
                    }
                    Method::ToolsList if !self.tools.is_empty() => resp.result(|w| {
                        w.raw(b"{\"tools\":[");
                        for (i, t) in self.tools.iter().enumerate() {
                            if i > 0 {
                                w.raw(b",");
                            }
                            t.descriptor.write(w, fields);
                        }
                        w.raw(b"]}");
                    }),
                    Method::ResourcesList if self.has_resources() => resp.result(|w| {
                        w.raw(b"{\"resources\":[");
                        for (i, r) in self.resources.iter().enumerate() {
                            if i > 0 {
                                w.raw(b",");
                            }
                            r.descriptor.write(w, fields);
                        }
                        w.raw(b"]}");
                    }),
                    Method::ResourceTemplatesList if self.has_resources() => resp.result(|w| {
                        w.raw(b"{\"resourceTemplates\":[");
                        for (i, t) in self.templates.iter().enumerate() {
                            if i > 0 {
                                w.raw(b",");
                            }
                            t.descriptor.write(w, fields);
                        }
                        w.raw(b"]}");
                    }),
                    Method::ToolsCall if !self.tools.is_empty() => {
                        let params = request.params.map(|p| span(frame, p.raw()));
                        self.call_tool(session, frame, params, resp)
                    }
                    Method::ResourcesRead if self.has_resources() => {
                        let params = request.params.map(|p| span(frame, p.raw()));
                        self.read_resource(session, frame, params, resp)
                    }
                    _ => resp.error(
                        METHOD_NOT_FOUND,
                        format_args!("Method not found"),
                        Data::Json(request.method),
                    ),
                }
            }
        }
    }

    fn has_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty()
    }

    /// Negotiate and answer `initialize`. Returns the bytes written and, on
    /// success, the negotiated version and the client's capabilities.
    fn initialize(
        &self,
        params: Option<Value<'_>>,
        resp: Out<'_>,
    ) -> (usize, Option<(ProtocolVersion, ClientCapabilities)>) {
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
        let client = ClientCapabilities {
            roots: caps.get("roots").is_some(),
            sampling: caps.get("sampling").is_some(),
            elicitation: caps.get("elicitation").is_some(),
        };
        let fields = version.fields();
        let n = resp.result(|w| {
            w.raw(b"{\"protocolVersion\":");
            w.string(version.as_str());
            w.raw(b",\"capabilities\":");
            self.write_capabilities(w, fields);
            w.raw(b",\"serverInfo\":");
            self.info.write(w, fields);
            if let Some(text) = self.instructions {
                w.raw(b",\"instructions\":");
                w.string(text);
            }
            w.raw(b"}");
        });
        (n, Some((version, client)))
    }

    /// The capabilities this server has: derived from what is registered.
    fn write_capabilities(&self, w: &mut Writer<'_>, _fields: Fields) {
        let mut o = w.value().object();
        if self.has_resources() {
            o.object("resources")
                .bool("subscribe", false)
                .bool("listChanged", false);
        }
        if !self.tools.is_empty() {
            o.object("tools").bool("listChanged", false);
        }
    }

    fn call_tool(
        &self,
        session: &Session<Ready>,
        frame: &mut [u8],
        params: Option<Range<usize>>,
        resp: Out<'_>,
    ) -> usize {
        let version = session.version();
        // Phase 1 (shared borrow of the frame): find the tool, check the arguments.
        let (tool, args_span) = {
            let Some(params) = params.and_then(|r| frame.get(r)).map(Value::trusted) else {
                return resp.invalid_params();
            };
            let Some(name) = params.get("name").and_then(|v| v.as_str()) else {
                return resp.invalid_params();
            };
            let args = match params.get("arguments") {
                None => None,
                Some(a) if a.is_null() => None,
                Some(a) if a.kind() == Kind::Object => Some(a),
                Some(_) => return resp.invalid_params(),
            };
            let Some(tool) = self.tools.iter().find(|t| name.eq_str(t.descriptor.name)) else {
                return resp.error(
                    INVALID_PARAMS,
                    format_args!("Unknown tool: {name}"),
                    Data::None,
                );
            };
            let empty = Value::trusted(b"{}");
            if let Err(violation) = tool
                .descriptor
                .input_schema
                .validate(&args.unwrap_or(empty))
            {
                let tool_name = tool.descriptor.name;
                return resp.result(|w| {
                    w.raw(b"{\"content\":[{\"type\":\"text\",\"text\":");
                    w.string_fmt(format_args!(
                        "Invalid arguments for tool {tool_name}: {violation}"
                    ));
                    w.raw(b"}],\"isError\":true}");
                });
            }
            (tool, args.map(|a| span(frame, a.raw())))
        };
        // Phase 2: hand the handler the arguments (mutable, for in-place
        // unescaping) and the rest of the output buffer.
        let name = tool.descriptor.name;
        let Out { mut w, id_end } = resp;
        w.raw(b",\"result\":{");
        let body_start = w.len();
        if w.is_overflowed() {
            return Out { w, id_end }.error(
                INTERNAL_ERROR,
                format_args!("output buffer too small"),
                Data::None,
            );
        }
        let mut empty = *b"{}";
        let args: &mut [u8] = match args_span.and_then(|r| frame.get_mut(r)) {
            Some(a) => a,
            None => &mut empty,
        };
        let mut state = ReplyState::default();
        let outcome = {
            let tail = w.tail_mut();
            (tool.handler)(
                &self.state,
                Arguments::new(args),
                Reply::new(tail, &mut state, version),
            )
        };
        w.advance(state.len);
        let resp = Out { w, id_end };
        match outcome {
            Ok(_done) => self.finish_tool_result(tool, version, state, body_start, resp),
            Err(ToolFailure::Tool(e)) => {
                let mut resp = resp;
                resp.w.truncate(body_start);
                write_tool_error(&mut resp.w, name, format_args!("{}", e.message()));
                resp.w.raw(b"}\n");
                self.tool_overflow_or_done(name, body_start, resp)
            }
            Err(ToolFailure::Protocol(e)) => resp.protocol(&e),
        }
    }

    fn finish_tool_result(
        &self,
        tool: &Tool<S>,
        version: ProtocolVersion,
        state: ReplyState,
        body_start: usize,
        mut resp: Out<'_>,
    ) -> usize {
        let name = tool.descriptor.name;
        if !state.finished {
            return resp.error(
                INTERNAL_ERROR,
                format_args!("tool {name} returned without finishing its reply"),
                Data::None,
            );
        }
        if state.overflow {
            return self.tool_too_large(name, body_start, resp);
        }
        let mut end = body_start + state.len;
        match (state.structured, tool.descriptor.output_schema) {
            (None, Some(_)) => {
                return resp.error(
                    INTERNAL_ERROR,
                    format_args!(
                        "tool {name} has an output schema but returned no structured content"
                    ),
                    Data::None,
                );
            }
            (Some((start, stop, cut_start, cut_end)), schema) => {
                let bytes = resp
                    .w
                    .as_bytes()
                    .get(body_start + start..body_start + stop)
                    .unwrap_or(&[]);
                let checked = match Value::parse(bytes, &Limits::DEFAULT.max_depth(json::MAX_DEPTH))
                {
                    Err(_) => Err(None),
                    Ok(v) => match schema {
                        Some(s) => s
                            .validate(&v)
                            .map_err(|viol| Some(Message::from_violation(viol))),
                        None => Ok(()),
                    },
                };
                if let Err(why) = checked {
                    return match why {
                        Some(m) => resp.error(
                            INTERNAL_ERROR,
                            format_args!("tool {name} returned structured content that does not match its output schema: {}", m.as_str()),
                            Data::None,
                        ),
                        None => resp.error(
                            INTERNAL_ERROR,
                            format_args!("tool {name} returned structured content that is not valid JSON"),
                            Data::None,
                        ),
                    };
                }
                resp.w.truncate(end);
                if !version.fields().structured_content {
                    resp.w.cut(body_start + cut_start, body_start + cut_end);
                    end = resp.w.len();
                }
            }
            (None, None) => {}
        }
        resp.w.truncate(end);
        resp.w.raw(b",\"isError\":false}}\n");
        self.tool_overflow_or_done(name, body_start, resp)
    }

    fn tool_overflow_or_done(&self, name: &str, body_start: usize, resp: Out<'_>) -> usize {
        if resp.w.is_overflowed() {
            return self.tool_too_large(name, body_start, resp);
        }
        resp.w.finish().unwrap_or(0)
    }

    /// The result does not fit: a tool error the model can act on.
    fn tool_too_large(&self, name: &str, body_start: usize, mut resp: Out<'_>) -> usize {
        let cap = resp.w.capacity();
        resp.w.truncate(body_start);
        write_tool_error(
            &mut resp.w,
            name,
            format_args!("result exceeds the {cap}-byte response buffer"),
        );
        resp.w.raw(b"}\n");
        if resp.w.is_overflowed() {
            return resp.error(
                INTERNAL_ERROR,
                format_args!("response exceeds the {cap}-byte output buffer"),
                Data::None,
            );
        }
        resp.w.finish().unwrap_or(0)
    }

    fn read_resource(
        &self,
        session: &Session<Ready>,
        frame: &mut [u8],
        params: Option<Range<usize>>,
        resp: Out<'_>,
    ) -> usize {
        let version = session.version();
        // Phase 1: find the URI string's raw bytes.
        let uri_span = {
            let Some(params) = params.and_then(|r| frame.get(r)).map(Value::trusted) else {
                return resp.invalid_params();
            };
            let Some(uri) = params.get("uri").and_then(|v| v.as_str()) else {
                return resp.invalid_params();
            };
            span(frame, uri.raw())
        };
        // Phase 2: unescape the URI in place; it borrows the frame from here on.
        let Some(uri) = frame
            .get_mut(uri_span)
            .and_then(|raw| json::unescape_str_in_place(raw).ok())
        else {
            return resp.invalid_params();
        };
        let uri: &str = uri;
        let target = self
            .resources
            .iter()
            .find(|r| r.descriptor.uri == uri)
            .map(|r| (r.handler, Vars::default()))
            .or_else(|| {
                self.templates.iter().find_map(|t| {
                    crate::resource::match_template(t.descriptor.uri_template, uri)
                        .map(|vars| (t.handler, vars))
                })
            });
        let Some((handler, vars)) = target else {
            return resp.error(
                INVALID_PARAMS,
                format_args!("Unknown resource: {uri}"),
                Data::Uri(uri),
            );
        };
        let Out { mut w, id_end } = resp;
        w.raw(b",\"result\":{");
        let mut state = ContentsState::default();
        let outcome = {
            let tail = w.tail_mut();
            handler(
                &self.state,
                ReadRequest::new(uri, vars),
                crate::resource::Contents::new(tail, &mut state, version),
            )
        };
        w.advance(state.len);
        let mut resp = Out { w, id_end };
        match outcome {
            Ok(_done) if !state.finished => resp.error(
                INTERNAL_ERROR,
                format_args!("resource handler returned without finishing its contents"),
                Data::None,
            ),
            Ok(_done) => {
                let cap = resp.w.capacity();
                if state.overflow {
                    return resp.error(
                        INTERNAL_ERROR,
                        format_args!("resource contents exceed the {cap}-byte output buffer"),
                        Data::None,
                    );
                }
                resp.w.raw(b"}}\n");
                if resp.w.is_overflowed() {
                    return resp.error(
                        INTERNAL_ERROR,
                        format_args!("resource contents exceed the {cap}-byte output buffer"),
                        Data::None,
                    );
                }
                resp.w.finish().unwrap_or(0)
            }
            Err(ResourceFailure::NotFound(e)) => resp.error(
                INVALID_PARAMS,
                format_args!("{}", e.message()),
                Data::Uri(uri),
            ),
            Err(ResourceFailure::Protocol(e)) => resp.protocol(&e),
        }
    }
}

use crate::error::Message;

impl Message<'static> {
    fn from_violation(v: crate::schema::Violation<'_, '_>) -> Self {
        Message::format(format_args!("{v}"))
    }
}
