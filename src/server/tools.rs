//! `tools/call`: find the tool, check the arguments against its input
//! schema (the one place that picks a schema violation's channel), run the
//! handler, and close its result: structured content checked against the
//! output schema, tool errors, and a result too large for the buffer.

use core::ops::Range;

use super::Server;
#[cfg(feature = "async-handlers")]
use super::invoke::{Deferral, defer};
use super::invoke::{Ran, RequestInfo};
use super::out::{Data, Out, Text, Wrote, write_stamp, write_tool_error};
use super::params::{named_call, span, split_spans};
use crate::context::{Mrtr, Track};
use crate::error::{INTERNAL_ERROR, INVALID_PARAMS, Message};
use crate::mcp::ProtocolVersion;
use crate::schema::derived::Spans;
use crate::tool::{Arguments, Reply, ReplyState, Tool, ToolFailure, ToolOutcome};
use crate::wire::emit::Decimal;
use crate::wire::json::{self, JsonStr, Kind, Limits, Value};
use crate::wire::swar::same_bytes;

/// The lead of a handler's tool error (`Error executing tool NAME: …`).
const EXECUTING: &str = "Error executing tool ";
/// The lead of a schema violation (`Invalid arguments for tool NAME: …`).
const INVALID_ARGUMENTS: &str = "Invalid arguments for tool ";

impl<S> Server<'_, S> {
    /// The tool `name` that clients of `version` may call (also what the
    /// HTTP mapping reads the `x-mcp-header` annotations from).
    pub(crate) fn find_tool(
        &self,
        name: JsonStr<'_>,
        version: ProtocolVersion,
    ) -> Option<&Tool<S>> {
        let tools = self.tools;
        // A name without an escape is its own bytes (validated text; no
        // `str` needed): the index holds names as bytes, and the walk
        // compares bytes (equal bytes are then equal names).
        let plain = (!name.has_escape()).then(|| name.raw());
        if let (Some(index), Some(plain)) = (self.tool_index, plain) {
            let names = |i: usize| {
                tools
                    .get(i)
                    .map_or(&[][..], |t| t.descriptor.name.as_bytes())
            };
            match index.find(plain, tools.len(), &names) {
                Ok(None) => return None,
                Ok(Some(i)) => {
                    // A later tool of the same name may be the one offered
                    // to this version: then the walk finds it.
                    if let Some(t) = tools.get(i).filter(|t| t.descriptor.offered_to(version)) {
                        return Some(t);
                    }
                }
                Err(()) => {}
            }
        }
        // (64-bit targets: small ones keep the one walk, for flash.)
        match plain {
            Some(plain) if cfg!(target_pointer_width = "64") => tools.iter().find(|t| {
                same_bytes(plain, t.descriptor.name.as_bytes()) && t.descriptor.offered_to(version)
            }),
            _ => tools
                .iter()
                .find(|t| name.eq_str(t.descriptor.name) && t.descriptor.offered_to(version)),
        }
    }

    #[inline(never)]
    pub(super) fn call_tool(
        &self,
        info: &mut RequestInfo<'_>,
        frame: &mut [u8],
        params_span: Option<Range<usize>>,
        mut resp: Out<'_, '_>,
    ) -> Wrote {
        let version = info.version();
        // Phase 1 (shared borrow of the frame): find the tool, check the arguments.
        let mut spans = Spans::default();
        let (tool, args_span, mrtr, vouched) = {
            let Some((name, given)) = named_call(frame, params_span.clone(), info.named()) else {
                return resp.invalid_params();
            };
            let Some(tool) = self.find_tool(name, version) else {
                return resp.error(
                    INVALID_PARAMS,
                    format_args!("Unknown tool: {name}"),
                    Data::None,
                );
            };
            let args = given.unwrap_or_else(|| Value::trusted(b"{}"));
            // The one place that decides the channel of a schema violation:
            // a tool error, which the model can correct (MCP 2025-11-25).
            let vouched = match tool.descriptor.check_arguments(&args, &mut spans) {
                Ok(vouched) => vouched,
                Err(violation) => {
                    let name = tool.descriptor.name;
                    let body_start = resp.open_result();
                    let text = Text::Fmt(format_args!("{violation}"));
                    write_tool_error(resp.w, INVALID_ARGUMENTS, name, text);
                    return self.close_tool_result(name, body_start, resp);
                }
            };
            #[cfg(feature = "async-handlers")]
            if tool.awaits.is_some() {
                return self.defer_tool(tool, info, frame, params_span, given, resp);
            }
            // MRTR (2026-07-28) only: the handshake era has no request
            // state to look up, and keeps no binding to copy around. On
            // 64-bit targets: small ones keep the one way (flash: 224 B).
            let mrtr = match info.is_modern() || cfg!(not(target_pointer_width = "64")) {
                false => None,
                true => {
                    let name = tool.descriptor.name.as_bytes();
                    match self.mrtr_spans(info, frame, "tools/call", name, args.raw()) {
                        Ok(mrtr) => Some(mrtr),
                        Err(()) => return resp.invalid_params(),
                    }
                }
            };
            (tool, given.map(|a| span(frame, a.raw())), mrtr, vouched)
        };
        // Phase 2: hand the handler the arguments (mutable, for in-place
        // unescaping), the verified MRTR input and the output writer.
        let mut empty = *b"{}";
        // The input by reference: the answers of a handshake-era retry, none,
        // or what the request's state and responses hold (no copies).
        let opened;
        let (args, input): (_, &Mrtr<'_>) = match mrtr {
            None => (
                args_span.and_then(|r| frame.get_mut(r)),
                info.retry_ref().unwrap_or(&Mrtr::NONE),
            ),
            Some(mrtr) => {
                let [args, state, responses] =
                    split_spans(frame, [args_span, mrtr.state, mrtr.responses]);
                let input = match info.retry_ref() {
                    Some(answers) => answers,
                    None => match Self::mrtr_input(mrtr.binding, state, responses) {
                        Ok(input) => {
                            opened = input;
                            &opened
                        }
                        Err(()) => return Self::bad_state(resp),
                    },
                };
                (args, input)
            }
        };
        let args = Arguments::new(args.unwrap_or(&mut empty), vouched.map(|s| (s, spans)));
        let mut state = ReplyState::default();
        let (outcome, ran) = self.run_handler(&mut resp, info, input, &mut state, |ctx, state| {
            (tool.handler)(&self.state, args, Reply::new(ctx, state))
        });
        self.tool_answer(tool, outcome, &ran, state, info, resp)
    }

    /// Close a tool call after its handler (sync or async) returned.
    #[inline(never)]
    pub(super) fn tool_answer(
        &self,
        tool: &Tool<S>,
        outcome: ToolOutcome<'_>,
        ran: &Ran,
        state: ReplyState,
        info: &RequestInfo<'_>,
        resp: Out<'_, '_>,
    ) -> Wrote {
        let Ran {
            body_start,
            ref track,
        } = *ran;
        let name = tool.descriptor.name;
        match outcome {
            Ok(_) if track.finished && track.input_required => Self::asked(resp, info, ran),
            Ok(_) => self.finish_tool_result(tool, info.version(), track, state, body_start, resp),
            Err(ToolFailure::Tool(e)) => {
                resp.w.truncate(body_start);
                write_tool_error(resp.w, EXECUTING, name, Text::Str(e.message()));
                self.close_tool_result(name, body_start, resp)
            }
            Err(ToolFailure::Protocol(e)) => resp.protocol(&e),
        }
    }

    /// An async tool's call, stopped before its handler: recorded for
    /// [`Server::handle_async`] (which finishes it), or `-32603` where no
    /// one awaits handlers.
    #[cfg(feature = "async-handlers")]
    fn defer_tool(
        &self,
        tool: &Tool<S>,
        info: &mut RequestInfo<'_>,
        frame: &[u8],
        params: Option<Range<usize>>,
        given: Option<Value<'_>>,
        resp: Out<'_, '_>,
    ) -> Wrote {
        // Its place in the registry (`tool` is an element of it).
        let at = (tool as *const Tool<S> as usize).wrapping_sub(self.tools.as_ptr() as usize)
            / core::mem::size_of::<Tool<S>>();
        let call = Deferral::Tool {
            at,
            params,
            args: given.map(|a| span(frame, a.raw())),
        };
        let name = tool.descriptor.name;
        defer(info, call, resp, format_args!("tool {name}"))
    }

    fn finish_tool_result(
        &self,
        tool: &Tool<S>,
        version: ProtocolVersion,
        track: &Track,
        state: ReplyState,
        body_start: usize,
        resp: Out<'_, '_>,
    ) -> Wrote {
        let name = tool.descriptor.name;
        if !track.finished {
            return resp.error(
                INTERNAL_ERROR,
                format_args!("tool {name} returned without finishing its reply"),
                Data::None,
            );
        }
        if resp.w.is_overflowed() {
            return self.tool_too_large(name, body_start, resp);
        }
        let fields = version.fields();
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
                let bytes = resp.w.as_bytes().get(start..stop).unwrap_or(&[]);
                // Written by a type whose every value matches this very
                // schema (and by the core's writer, so it is JSON): no need
                // to parse and check it again.
                // By address: `tool!` and the derive share one static (a
                // descriptor built by hand with another copy of the same
                // schema is simply checked).
                let exact = match (state.exact, schema) {
                    (Some(e), Some(s)) => core::ptr::eq(e, s),
                    _ => false,
                };
                let object = if exact {
                    Value::trusted(bytes).kind() == Kind::Object
                } else {
                    match structured_object(bytes, schema) {
                        Some(object) => object,
                        None => return invalid_structured(name, start..stop, schema, resp),
                    }
                };
                // Before 2026-07-28 structuredContent must be an object; the
                // text block still carries the JSON.
                if !fields.structured_content || (!fields.non_object_structured && !object) {
                    resp.w.cut(cut_start, cut_end);
                }
            }
            (None, None) => {}
        }
        resp.w.raw(b",\"isError\":false");
        self.close_tool_result(name, body_start, resp)
    }

    fn close_tool_result(&self, name: &str, body_start: usize, resp: Out<'_, '_>) -> Wrote {
        if let Some(stamp) = resp.stamp {
            write_stamp(resp.w, stamp, false, true, None);
        }
        resp.w.raw(b"}}");
        if resp.w.is_overflowed() {
            return self.tool_too_large(name, body_start, resp);
        }
        resp.done()
    }

    /// The result does not fit: a tool error the model can act on.
    fn tool_too_large(&self, name: &str, body_start: usize, resp: Out<'_, '_>) -> Wrote {
        let cap = resp.w.capacity();
        resp.w.truncate(body_start);
        let text = Text::Fmt(format_args!(
            "result exceeds the {}-byte response buffer",
            Decimal::from(cap)
        ));
        write_tool_error(resp.w, EXECUTING, name, text);
        if let Some(stamp) = resp.stamp {
            write_stamp(resp.w, stamp, false, true, None);
        }
        resp.w.raw(b"}}");
        if resp.w.is_overflowed() {
            return resp.too_large();
        }
        resp.done()
    }
}

/// Whether structured content that is not known to match is an object;
/// `None` when it is not JSON or does not match the output schema. Out of
/// line, so the handler's call does not carry its frame.
#[inline(never)]
fn structured_object(bytes: &[u8], schema: Option<&crate::schema::Schema>) -> Option<bool> {
    let v = Value::parse(bytes, &Limits::DEFAULT.max_depth(json::MAX_DEPTH)).ok()?;
    match schema.map(|s| s.validate(&v)) {
        Some(Err(_)) => None,
        _ => Some(v.kind() == Kind::Object),
    }
}

/// The `-32603` answer to structured content [`structured_object`] refused:
/// checked again for the message (an error path; the message and the
/// violation stay out of the call's frame).
#[cold]
#[inline(never)]
fn invalid_structured(
    name: &str,
    structured: Range<usize>,
    schema: Option<&crate::schema::Schema>,
    resp: Out<'_, '_>,
) -> Wrote {
    let bytes = resp.w.as_bytes().get(structured).unwrap_or(&[]);
    let problem: Message<'static> =
        match Value::parse(bytes, &Limits::DEFAULT.max_depth(json::MAX_DEPTH)) {
            Err(_) => Message::new("it is not valid JSON"),
            Ok(v) => match schema.map(|s| s.validate(&v)) {
                Some(Err(viol)) => {
                    Message::format(format_args!("it does not match the output schema: {viol}"))
                }
                _ => Message::new("it is not valid JSON"),
            },
        };
    resp.error(
        INTERNAL_ERROR,
        format_args!("tool {name} returned invalid structured content: {problem}"),
        Data::None,
    )
}
