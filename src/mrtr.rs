//! Asking the client for input: elicitation (a form, or a URL), sampling
//! (`sampling/createMessage`) and roots (`roots/list`), on every era.
//!
//! A tool, prompt or resource handler that needs input answers "input
//! required" with keyed input requests ([`InputRequired::elicit`],
//! [`InputRequired::elicit_url`], [`InputRequired::sample`],
//! [`InputRequired::roots`]) and optional state ([`InputRequired::state`]);
//! it is run again with the answers
//! ([`Reply::input_response`](crate::tool::Reply::input_response)) and its
//! state ([`Reply::request_state`](crate::tool::Reply::request_state)). It
//! never needs to know which era carried them:
//!
//! * 2026-07-28 (MRTR): the answer is an `input_required` result
//!   (`inputRequests`, sealed `requestState`); the client retries the same
//!   request with `inputResponses`.
//! * Handshake era: the server sends each input request to the client as a
//!   JSON-RPC request of its own (`elicitation/create`,
//!   `sampling/createMessage`, `roots/list`), keeps the call waiting in
//!   memory the caller gives ([`Waiting`](crate::server::Waiting)), and runs
//!   the handler again when every answer is in; the original request gets
//!   exactly one answer, its final one. See [`Server::handle_waiting`](crate::Server::handle_waiting).
//!
//! An input request needs the matching client capability (`elicitation`
//! from 2025-06-18 on, `sampling`, `roots`), declared at `initialize` or in
//! the request's 2026-07-28 envelope; without it the request is answered
//! `-32021` (Missing required client capability).
//!
//! `requestState` is attacker-controlled, so picomcp seals it: the wire form
//! is base64url of `1 ‖ payload ‖ tag`, where the tag is the first 16 bytes of
//! HMAC-SHA256 under the application's key (see
//! [`Server::request_state_key`](crate::Server::request_state_key)) over the
//! method, the tool/prompt/resource name, a SHA-256 of the request's
//! arguments (JSON whitespace outside strings ignored) and the payload. A
//! state that was edited, issued under another key, or replayed onto another
//! method, tool or set of arguments is refused with `-32602` before the
//! handler runs. The payload (at most [`MAX_STATE`] bytes) is the handler's.

use core::fmt;

use crate::context::{Ctx, Done};
pub use crate::context::{ElicitAction, InputResponse};
use crate::error::ClientCapability;
use crate::mcp::tool::ToolDescriptor;
use crate::mcp::{Era, ProtocolVersion, Role};
use crate::schema::Schema;
pub use crate::seal::MAX_STATE;
use crate::seal::seal;
use crate::wire::emit::Writer;
use crate::wire::json::Number;

/// Writes an `input_required` result. Consumed by [`finish`](Self::finish).
pub struct InputRequired<'r> {
    ctx: Ctx<'r>,
    requests: u32,
    state: bool,
}

impl<'r> InputRequired<'r> {
    pub(crate) fn new(mut ctx: Ctx<'r>) -> Self {
        ctx.w.truncate(ctx.track.body_start);
        ctx.w.raw(b"\"resultType\":\"input_required\"");
        ctx.input_required = true;
        Self {
            ctx,
            requests: 0,
            state: false,
        }
    }

    /// Open the next input request, if the client can take it: `None` when
    /// it lacks `capability` (the answer becomes `-32021`) or the state was
    /// already written (requests come first).
    fn next_request(&mut self, key: &str, capability: ClientCapability) -> Option<&mut Writer<'r>> {
        if self.state {
            self.ctx.w.set_overflow(); // requests must come before the state
            return None;
        }
        let client = self.ctx.client;
        let declared = match capability {
            ClientCapability::Elicitation => {
                client.elicitation && self.ctx.version.fields().elicitation
            }
            ClientCapability::Sampling => client.sampling,
            ClientCapability::Roots => client.roots,
        };
        if !declared {
            self.ctx.missing.get_or_insert(capability);
            return None;
        }
        let w = &mut self.ctx.w;
        w.raw(if self.requests == 0 {
            b",\"inputRequests\":{"
        } else {
            b","
        });
        self.requests += 1;
        w.string(key);
        w.raw(b":");
        Some(w)
    }

    /// Ask the user to fill in a form (`elicitation/create`, mode `form`):
    /// `schema` is the requested schema (flat object of primitive
    /// properties).
    pub fn elicit(
        &mut self,
        key: &str,
        message: fmt::Arguments<'_>,
        schema: &Schema<'_>,
    ) -> &mut Self {
        self.form(key, message, |w| schema.write(w))
    }

    /// An `elicitation/create` form request whose schema `schema` writes.
    fn form(
        &mut self,
        key: &str,
        message: fmt::Arguments<'_>,
        schema: impl FnOnce(&mut Writer<'r>),
    ) -> &mut Self {
        if let Some(w) = self.next_request(key, ClientCapability::Elicitation) {
            w.raw(b"{\"method\":\"elicitation/create\",\"params\":{\"mode\":\"form\",\"message\":");
            w.string_fmt(message);
            w.raw(b",\"requestedSchema\":");
            schema(w);
            w.raw(b"}}");
        }
        self
    }

    /// [`elicit`](Self::elicit) with the requested schema given as JSON text,
    /// for what the `const` schema does not describe (`enumNames`, titled
    /// `oneOf` options, defaults of any type). Text that is not one JSON
    /// object is not sent (the handler then asked for nothing).
    pub fn elicit_json(
        &mut self,
        key: &str,
        message: fmt::Arguments<'_>,
        requested_schema: &str,
    ) -> &mut Self {
        let valid = crate::wire::json::Value::parse(
            requested_schema.as_bytes(),
            &crate::wire::json::Limits::DEFAULT,
        )
        .is_ok_and(|v| v.kind() == crate::wire::json::Kind::Object);
        if !valid {
            return self;
        }
        self.form(key, message, |w| w.raw_str(requested_schema.trim()))
    }

    /// Ask the user to open a URL (`elicitation/create`, mode `url`), e.g.
    /// to sign in somewhere; `elicitation_id` names this elicitation.
    pub fn elicit_url(
        &mut self,
        key: &str,
        message: fmt::Arguments<'_>,
        url: &str,
        elicitation_id: &str,
    ) -> &mut Self {
        if let Some(w) = self.next_request(key, ClientCapability::Elicitation) {
            w.raw(b"{\"method\":\"elicitation/create\",\"params\":{\"mode\":\"url\",\"message\":");
            w.string_fmt(message);
            w.raw(b",\"url\":");
            w.string(url);
            w.raw(b",\"elicitationId\":");
            w.string(elicitation_id);
            w.raw(b"}}");
        }
        self
    }

    /// Ask the client's model (`sampling/createMessage`).
    pub fn sample(&mut self, key: &str, request: &Sampling<'_>) -> &mut Self {
        let version = self.ctx.version;
        if let Some(w) = self.next_request(key, ClientCapability::Sampling) {
            w.raw(b"{\"method\":\"sampling/createMessage\",\"params\":");
            request.write(w, version);
            w.raw(b"}");
        }
        self
    }

    /// Ask for the client's roots (`roots/list`).
    pub fn roots(&mut self, key: &str) -> &mut Self {
        if let Some(w) = self.next_request(key, ClientCapability::Roots) {
            w.raw(b"{\"method\":\"roots/list\",\"params\":{}}");
        }
        self
    }

    /// Attach sealed state (at most [`MAX_STATE`] bytes) that the retry will
    /// hand back verified. Needs
    /// [`Server::request_state_key`](crate::Server::request_state_key).
    pub fn state(&mut self, payload: &[u8]) -> &mut Self {
        if self.requests > 0 {
            self.ctx.w.raw(b"}");
        }
        self.state = true;
        let binding = self.ctx.mrtr.binding;
        let handshake = self.ctx.version.era() == Era::Handshake;
        let w = &mut self.ctx.w;
        w.raw(b",\"requestState\":\"");
        match binding {
            // Handshake era: the state never reaches the client (the server
            // keeps it with the waiting call), so it is not sealed.
            _ if handshake && payload.len() <= MAX_STATE => crate::seal::write_b64url(w, payload),
            Some(b) if payload.len() <= MAX_STATE && seal(w, &b, payload) => {}
            _ => {
                self.ctx.state_error = true;
                w.set_overflow();
            }
        }
        self.ctx.w.raw(b"\"");
        self
    }

    /// Finish the `input_required` result.
    pub fn finish<E>(mut self) -> Result<Done, E> {
        if self.requests > 0 && !self.state {
            self.ctx.w.raw(b"}");
        }
        if self.requests == 0 && !self.state {
            self.ctx.state_error = true; // MCP requires at least one of the two
        }
        Ok(self.ctx.finish())
    }
}

impl fmt::Debug for InputRequired<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InputRequired")
            .field("requests", &self.requests)
            .finish_non_exhaustive()
    }
}

/// A `sampling/createMessage` request: what to ask the client's model.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Sampling<'s> {
    /// The conversation so far.
    pub messages: &'s [SamplingMessage<'s>],
    /// The most tokens the model may answer with.
    pub max_tokens: u32,
    /// A system prompt.
    pub system_prompt: Option<&'s str>,
    /// Model preferences (`hints` by name; priorities 0 to 1).
    pub model_preferences: Option<ModelPreferences<'s>>,
    /// Stop sequences.
    pub stop_sequences: &'s [&'s str],
    /// `includeContext`: `"none"`, `"thisServer"` or `"allServers"`.
    pub include_context: Option<&'s str>,
    /// `temperature` (a number as text: no floating point in the core).
    pub temperature: Option<Number<'s>>,
    /// Tools the client's model may call while it answers (2025-11-25+;
    /// left out for older versions).
    pub tools: &'s [ToolDescriptor<'s>],
    /// Whether (and which) tools the model must use (2025-11-25+).
    pub tool_choice: Option<ToolChoice>,
}

/// `toolChoice` of a sampling request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// The model must call a tool.
    Required,
    /// The model must not call a tool.
    None,
}

impl<'s> Sampling<'s> {
    /// Ask with `messages`, allowing at most `max_tokens` tokens.
    pub const fn new(messages: &'s [SamplingMessage<'s>], max_tokens: u32) -> Self {
        Self {
            messages,
            max_tokens,
            system_prompt: None,
            model_preferences: None,
            stop_sequences: &[],
            include_context: None,
            temperature: None,
            tools: &[],
            tool_choice: None,
        }
    }

    crate::mcp::setters! {
        /// Set the system prompt.
        system_prompt?: &'s str;
        /// Set the model preferences.
        model_preferences?: ModelPreferences<'s>;
        /// Set the stop sequences.
        stop_sequences: &'s [&'s str];
        /// Set `includeContext`.
        include_context?: &'s str;
        /// Set `temperature` (e.g. `Number::literal("0.7")`).
        temperature?: Number<'s>;
        /// Offer the client's model these tools (2025-11-25+).
        tools: &'s [ToolDescriptor<'s>];
        /// Set `toolChoice` (2025-11-25+).
        tool_choice?: ToolChoice;
    }

    fn write(&self, w: &mut Writer<'_>, version: ProtocolVersion) {
        w.raw(b"{\"messages\":[");
        for (i, m) in self.messages.iter().enumerate() {
            if i > 0 {
                w.raw(b",");
            }
            m.write(w, version);
        }
        w.raw(b"],\"maxTokens\":");
        w.u64(u64::from(self.max_tokens));
        if let Some(p) = self.system_prompt {
            w.raw(b",\"systemPrompt\":");
            w.string(p);
        }
        if let Some(p) = self.model_preferences {
            w.raw(b",\"modelPreferences\":");
            p.write(w);
        }
        if !self.stop_sequences.is_empty() {
            w.raw(b",\"stopSequences\":[");
            for (i, s) in self.stop_sequences.iter().enumerate() {
                if i > 0 {
                    w.raw(b",");
                }
                w.string(s);
            }
            w.raw(b"]");
        }
        if let Some(c) = self.include_context {
            w.raw(b",\"includeContext\":");
            w.string(c);
        }
        if let Some(t) = self.temperature {
            w.raw(b",\"temperature\":");
            w.raw_str(t.raw());
        }
        let fields = version.fields();
        if fields.sampling_tools && !self.tools.is_empty() {
            w.raw(b",\"tools\":[");
            for (i, t) in self.tools.iter().enumerate() {
                if i > 0 {
                    w.raw(b",");
                }
                t.write(w, fields);
            }
            w.raw(b"]");
        }
        if let (true, Some(choice)) = (fields.sampling_tools, self.tool_choice) {
            w.raw(match choice {
                ToolChoice::Auto => b",\"toolChoice\":{\"mode\":\"auto\"}",
                ToolChoice::Required => b",\"toolChoice\":{\"mode\":\"required\"}",
                ToolChoice::None => b",\"toolChoice\":{\"mode\":\"none\"}",
            });
        }
        w.raw(b"}");
    }
}

/// One message of a sampling request.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct SamplingMessage<'s> {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: SamplingContent<'s>,
}

impl<'s> SamplingMessage<'s> {
    /// A user message.
    pub const fn user(content: SamplingContent<'s>) -> Self {
        Self {
            role: Role::User,
            content,
        }
    }

    /// An assistant message.
    pub const fn assistant(content: SamplingContent<'s>) -> Self {
        Self {
            role: Role::Assistant,
            content,
        }
    }

    fn write(&self, w: &mut Writer<'_>, version: ProtocolVersion) {
        w.raw(match self.role {
            Role::User => b"{\"role\":\"user\",\"content\":",
            Role::Assistant => b"{\"role\":\"assistant\",\"content\":",
        });
        let block = crate::content::Block::new(w, version);
        match self.content {
            SamplingContent::Text(t) => block.text(t),
            SamplingContent::Image { mime_type, data } => block.image(mime_type, data),
            SamplingContent::Audio { mime_type, data } => block.audio(mime_type, data),
        }
        w.raw(b"}");
    }
}

/// The content of a sampling message.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum SamplingContent<'s> {
    /// Text.
    Text(&'s str),
    /// An image (base64-encoded as it is written).
    Image {
        /// Its MIME type.
        mime_type: &'s str,
        /// Its bytes.
        data: &'s [u8],
    },
    /// Audio (2025-03-26+; older versions get a text block saying so).
    Audio {
        /// Its MIME type.
        mime_type: &'s str,
        /// Its bytes.
        data: &'s [u8],
    },
}

/// `modelPreferences` of a sampling request.
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub struct ModelPreferences<'s> {
    /// Model name hints, in order of preference.
    pub hints: &'s [&'s str],
    /// `costPriority`, in 0..=1.
    pub cost_priority: Option<Number<'s>>,
    /// `speedPriority`, in 0..=1.
    pub speed_priority: Option<Number<'s>>,
    /// `intelligencePriority`, in 0..=1.
    pub intelligence_priority: Option<Number<'s>>,
}

impl<'s> ModelPreferences<'s> {
    /// Preferences with model name hints.
    pub const fn hints(hints: &'s [&'s str]) -> Self {
        Self {
            hints,
            cost_priority: None,
            speed_priority: None,
            intelligence_priority: None,
        }
    }

    fn write(&self, w: &mut Writer<'_>) {
        w.raw(b"{\"hints\":[");
        for (i, h) in self.hints.iter().enumerate() {
            if i > 0 {
                w.raw(b",");
            }
            w.raw(b"{\"name\":");
            w.string(h);
            w.raw(b"}");
        }
        w.raw(b"]");
        for (key, value) in [
            (&b",\"costPriority\":"[..], self.cost_priority),
            (&b",\"speedPriority\":"[..], self.speed_priority),
            (
                &b",\"intelligencePriority\":"[..],
                self.intelligence_priority,
            ),
        ] {
            if let Some(v) = value {
                w.raw(key);
                w.raw_str(v.raw());
            }
        }
        w.raw(b"}");
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    fn written(request: &Sampling<'_>, version: ProtocolVersion) -> std::string::String {
        let mut buf = [0u8; 1024];
        let mut w = Writer::new(&mut buf);
        request.write(&mut w, version);
        let n = w.finish().unwrap();
        std::string::String::from_utf8(buf[..n].to_vec()).unwrap()
    }

    #[test]
    fn sampling_requests_are_shaped_per_version() {
        const ARGS: Schema = Schema::object(&[]);
        const TOOLS: [ToolDescriptor<'static>; 1] =
            [ToolDescriptor::new("lookup", &ARGS).title("Look up")];
        const PREFS: ModelPreferences<'static> = ModelPreferences {
            cost_priority: Some(Number::literal("0.3")),
            ..ModelPreferences::hints(&["small"])
        };
        let messages = [
            SamplingMessage::user(SamplingContent::Text("hi \"there\"")),
            SamplingMessage::assistant(SamplingContent::Audio {
                mime_type: "audio/wav",
                data: b"ab",
            }),
        ];
        let request = Sampling::new(&messages, 50)
            .system_prompt("brief")
            .model_preferences(PREFS)
            .stop_sequences(&["END"])
            .temperature(Number::literal("0.7"))
            .tools(&TOOLS)
            .tool_choice(ToolChoice::Required);
        assert_eq!(
            written(&request, ProtocolVersion::V2025_11_25),
            r#"{"messages":[{"role":"user","content":{"type":"text","text":"hi \"there\""}},{"role":"assistant","content":{"type":"audio","data":"YWI=","mimeType":"audio/wav"}}],"maxTokens":50,"systemPrompt":"brief","modelPreferences":{"hints":[{"name":"small"}],"costPriority":0.3},"stopSequences":["END"],"temperature":0.7,"tools":[{"name":"lookup","title":"Look up","inputSchema":{"type":"object","properties":{}}}],"toolChoice":{"mode":"required"}}"#
        );
        // Before 2025-11-25: no tools, no toolChoice, no titles; before
        // 2025-03-26 audio becomes text.
        let old = written(&request, ProtocolVersion::V2024_11_05);
        assert!(
            !old.contains("tools") && !old.contains("toolChoice"),
            "{old}"
        );
        assert!(
            old.contains(r#"{"type":"text","text":"[audio/wav audio omitted"#),
            "{old}"
        );
    }
}
