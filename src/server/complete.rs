//! `completion/complete`: check the reference (a registered prompt or
//! template), then the application's completion handler.

use core::ops::Range;

use super::Server;
use super::invoke::RequestInfo;
#[cfg(feature = "async-handlers")]
use super::invoke::{Deferral, defer};
use super::out::{Data, Out, Wrote};
use super::params::{decode_spans, span};
use crate::completion::{CompleteRequest, CompletionRef, Completions};
use crate::context::Mrtr;
use crate::error::INVALID_PARAMS;
use crate::wire::json::Value;

impl<S> Server<'_, S> {
    #[inline(never)]
    pub(super) fn complete(
        &self,
        info: &mut RequestInfo<'_>,
        frame: &mut [u8],
        params: Option<Range<usize>>,
        mut resp: Out<'_, '_>,
    ) -> Wrote {
        let Some(handler) = self.completion else {
            return resp.invalid_params();
        };
        // Phase 1: check the reference, find the three strings.
        let (is_prompt, spans) = {
            let Some(params) = params.and_then(|r| frame.get(r)).map(Value::trusted) else {
                return resp.invalid_params();
            };
            let reference = params.get("ref");
            let argument = params.get("argument");
            let kind = reference
                .and_then(|r| r.get("type"))
                .and_then(|t| t.as_str());
            let arg_name = argument
                .and_then(|a| a.get("name"))
                .and_then(|n| n.as_str());
            let arg_value = argument
                .and_then(|a| a.get("value"))
                .and_then(|n| n.as_str());
            let (Some(kind), Some(arg_name), Some(arg_value)) = (kind, arg_name, arg_value) else {
                return resp.invalid_params();
            };
            let (is_prompt, target) = if kind.eq_str("ref/prompt") {
                let Some(name) = reference
                    .and_then(|r| r.get("name"))
                    .and_then(|n| n.as_str())
                else {
                    return resp.invalid_params();
                };
                if !self.prompts.iter().any(|p| name.eq_str(p.descriptor.name)) {
                    return resp.error(
                        INVALID_PARAMS,
                        format_args!("Unknown prompt: {name}"),
                        Data::None,
                    );
                }
                (true, name)
            } else if kind.eq_str("ref/resource") {
                let Some(uri) = reference
                    .and_then(|r| r.get("uri"))
                    .and_then(|n| n.as_str())
                else {
                    return resp.invalid_params();
                };
                if !self
                    .templates
                    .iter()
                    .any(|t| uri.eq_str(t.descriptor.uri_template))
                {
                    return resp.error(
                        INVALID_PARAMS,
                        format_args!("Unknown resource template: {uri}"),
                        Data::None,
                    );
                }
                (false, uri)
            } else {
                return resp.error(
                    INVALID_PARAMS,
                    format_args!("Unknown reference type: {kind}"),
                    Data::None,
                );
            };
            (
                is_prompt,
                [
                    Some(span(frame, target.raw())),
                    Some(span(frame, arg_name.raw())),
                    Some(span(frame, arg_value.raw())),
                ],
            )
        };
        #[cfg(feature = "async-handlers")]
        if self.completion_awaits {
            let call = Deferral::Complete { is_prompt, spans };
            return defer(info, call, resp, format_args!("completion"));
        }
        let Some(request) = complete_request(frame, is_prompt, spans) else {
            return resp.invalid_params();
        };
        let (outcome, ran) = self.run_handler(&mut resp, info, &Mrtr::NONE, &mut (), |ctx, ()| {
            handler(&self.state, request, Completions::new(ctx))
        });
        match outcome {
            Ok(_) => Self::close_handled(resp, info, &ran, None, "completion"),
            Err(e) => resp.protocol(&e),
        }
    }
}

/// The request phase 1 found: its three strings decoded in place.
pub(super) fn complete_request(
    frame: &mut [u8],
    is_prompt: bool,
    spans: [Option<Range<usize>>; 3],
) -> Option<CompleteRequest<'_>> {
    let [Some(target), Some(argument), Some(value)] = decode_spans(frame, spans) else {
        return None;
    };
    let reference = if is_prompt {
        CompletionRef::Prompt(target)
    } else {
        CompletionRef::ResourceTemplate(target)
    };
    Some(CompleteRequest {
        reference,
        argument,
        value,
    })
}
