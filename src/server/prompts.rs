//! `prompts/get`: the prompt, its declared arguments (each a string; the
//! required ones present), then the handler's messages.

use core::ops::Range;

use super::Server;
use super::invoke::RequestInfo;
use super::out::{Data, Out, Wrote};
use super::params::{named_call, span, split_spans};
use crate::error::INVALID_PARAMS;
use crate::prompt::{MAX_PROMPT_ARGUMENTS, Messages, PromptRequest};
use crate::wire::json;

impl<S> Server<'_, S> {
    pub(super) fn get_prompt(
        &self,
        mut info: RequestInfo<'_>,
        frame: &mut [u8],
        params: Option<Range<usize>>,
        mut resp: Out<'_, '_>,
    ) -> Wrote {
        const N: usize = MAX_PROMPT_ARGUMENTS + 2;
        // Phase 1: the prompt, the spans of its declared arguments' values,
        // and the MRTR pieces (the last two spans).
        let (prompt, spans, binding) = {
            let Some((params, name, args)) = named_call(frame, params, info.named()) else {
                return resp.invalid_params();
            };
            let Some(prompt) = self.prompts.iter().find(|p| name.eq_str(p.descriptor.name)) else {
                return resp.error(
                    INVALID_PARAMS,
                    format_args!("Unknown prompt: {name}"),
                    Data::None,
                );
            };
            let mut spans: [Option<Range<usize>>; N] = Default::default();
            for (i, a) in prompt
                .descriptor
                .arguments
                .iter()
                .enumerate()
                .take(MAX_PROMPT_ARGUMENTS)
            {
                match args.and_then(|args| args.get(a.name)) {
                    Some(v) => match v.as_str() {
                        Some(s) => {
                            if let Some(slot) = spans.get_mut(i) {
                                *slot = Some(span(frame, s.raw()));
                            }
                        }
                        None => {
                            return resp.error(
                                INVALID_PARAMS,
                                format_args!("Argument {} must be a string", a.name),
                                Data::None,
                            );
                        }
                    },
                    None if a.required => {
                        return resp.error(
                            INVALID_PARAMS,
                            format_args!("Missing required argument: {}", a.name),
                            Data::None,
                        );
                    }
                    None => {}
                }
            }
            let args_raw = args.map_or(&b"{}"[..], |a| a.raw());
            let name = prompt.descriptor.name.as_bytes();
            let Ok(mrtr) = self.mrtr_spans(&info, &params, frame, "prompts/get", name, args_raw)
            else {
                return resp.invalid_params();
            };
            let [.., state, responses] = &mut spans;
            (*state, *responses) = (mrtr.state, mrtr.responses);
            (prompt, spans, mrtr.binding)
        };
        let mut parts = split_spans(frame, spans);
        let responses = parts.get_mut(N - 1).and_then(Option::take);
        let state = parts.get_mut(N - 2).and_then(Option::take);
        let values: [Option<&str>; MAX_PROMPT_ARGUMENTS] = core::array::from_fn(|i| {
            parts
                .get_mut(i)
                .and_then(Option::take)
                .and_then(|r| json::unescape_str_in_place(r).ok())
        });
        let input = match info.retry() {
            Some(answers) => answers,
            None => match Self::mrtr_input(binding, state, responses) {
                Ok(input) => input,
                Err(()) => return Self::bad_state(resp),
            },
        };
        let request = PromptRequest::new(prompt.descriptor.arguments, values);
        let (outcome, ran) = self.run_handler(&mut resp, &mut info, &input, &mut (), |ctx, ()| {
            (prompt.handler)(&self.state, request, Messages::new(ctx))
        });
        match outcome {
            Ok(_) => Self::close_handled(resp, &info, &ran, None, "prompt"),
            Err(e) => resp.protocol(&e),
        }
    }
}
