//! `prompts/get`: the prompt, its declared arguments (each a string; the
//! required ones present), then the handler's messages.

use core::ops::Range;

use super::Server;
use super::invoke::RequestInfo;
#[cfg(feature = "async-handlers")]
use super::invoke::{Deferral, defer};
use super::out::{Data, Out, Wrote};
use super::params::{named_call, span, split_spans};
use crate::context::Mrtr;
use crate::error::INVALID_PARAMS;
use crate::prompt::{MAX_PROMPT_ARGUMENTS, Messages, Prompt, PromptRequest};
use crate::seal::Binding;
use crate::wire::json::{self, JsonStr};

/// The spans of a prompt's declared arguments' values, then of
/// `requestState` and `inputResponses`.
pub(super) type PromptSpans = [Option<Range<usize>>; MAX_PROMPT_ARGUMENTS + 2];

impl<'s, S> Server<'s, S> {
    #[inline(never)]
    pub(super) fn get_prompt(
        &self,
        info: &mut RequestInfo<'_>,
        frame: &mut [u8],
        params: Option<Range<usize>>,
        mut resp: Out<'_, '_>,
    ) -> Wrote {
        #[cfg(feature = "async-handlers")]
        let params_span = params.clone();
        let (at, spans, binding) = match self.prompt_phase1(info, frame, params) {
            Ok(found) => found,
            Err(refusal) => return refusal.answer(resp),
        };
        #[cfg(feature = "async-handlers")]
        if let Some(prompt) = self.prompts.get(at)
            && prompt.awaits.is_some()
        {
            let name = prompt.descriptor.name;
            let call = Deferral::Prompt {
                params: params_span,
            };
            return defer(info, call, resp, format_args!("prompt {name}"));
        }
        let Some(prompt) = self.prompts.get(at) else {
            return resp.invalid_params();
        };
        let (request, input) =
            match Self::prompt_input(prompt, frame, spans, binding, info.retry_ref().copied()) {
                Ok(parts) => parts,
                Err(()) => return Self::bad_state(resp),
            };
        let (outcome, ran) = self.run_handler(&mut resp, info, &input, &mut (), |ctx, ()| {
            (prompt.handler)(&self.state, request, Messages::new(ctx))
        });
        match outcome {
            Ok(_) => Self::close_handled(resp, info, &ran, None, "prompt"),
            Err(e) => resp.protocol(&e),
        }
    }

    /// Phase 1 (shared borrow of the frame): the prompt (its index), the
    /// spans of its declared arguments' values (each a string; the required
    /// ones present) and the MRTR pieces; or why the request is refused.
    #[inline(always)] // one call in a sync build: no second copy, no call
    pub(super) fn prompt_phase1<'f>(
        &self,
        info: &RequestInfo<'_>,
        frame: &'f [u8],
        params: Option<Range<usize>>,
    ) -> Result<(usize, PromptSpans, Option<Binding<'s>>), Refusal<'f>> {
        const N: usize = MAX_PROMPT_ARGUMENTS + 2;
        let Some((name, args)) = named_call(frame, params, info.named()) else {
            return Err(Refusal::InvalidParams);
        };
        let Some(at) = self
            .prompts
            .iter()
            .position(|p| name.eq_str(p.descriptor.name))
        else {
            return Err(Refusal::Unknown(name));
        };
        let Some(prompt) = self.prompts.get(at) else {
            return Err(Refusal::InvalidParams);
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
                    None => return Err(Refusal::NotString(a.name)),
                },
                None if a.required => return Err(Refusal::Missing(a.name)),
                None => {}
            }
        }
        let args_raw = args.map_or(&b"{}"[..], |a| a.raw());
        let name: &'s [u8] = prompt_name(self.prompts, at);
        let Ok(mrtr) = self.mrtr_spans(info, frame, "prompts/get", name, args_raw) else {
            return Err(Refusal::InvalidParams);
        };
        let [.., state, responses] = &mut spans;
        (*state, *responses) = (mrtr.state, mrtr.responses);
        Ok((at, spans, mrtr.binding))
    }

    /// Phase 2's input: the arguments' values unescaped in place, and the
    /// MRTR input (a retry's answers, or the verified `requestState`).
    #[inline(always)]
    pub(super) fn prompt_input<'f>(
        prompt: &Prompt<S>,
        frame: &'f mut [u8],
        spans: PromptSpans,
        binding: Option<Binding<'f>>,
        retry: Option<Mrtr<'f>>,
    ) -> Result<(PromptRequest<'f>, Mrtr<'f>), ()> {
        const N: usize = MAX_PROMPT_ARGUMENTS + 2;
        let mut parts = split_spans(frame, spans);
        let responses = parts.get_mut(N - 1).and_then(Option::take);
        let state = parts.get_mut(N - 2).and_then(Option::take);
        let values: [Option<&str>; MAX_PROMPT_ARGUMENTS] = core::array::from_fn(|i| {
            parts
                .get_mut(i)
                .and_then(Option::take)
                .and_then(|r| json::unescape_str_in_place(r).ok())
        });
        let input = match retry {
            Some(answers) => answers,
            None => Self::mrtr_input(binding, state, responses)?,
        };
        Ok((
            PromptRequest::new(prompt.descriptor.arguments, values),
            input,
        ))
    }
}

/// The name of prompt `at`, borrowed for as long as the registry.
fn prompt_name<S>(prompts: &[Prompt<S>], at: usize) -> &[u8] {
    prompts
        .get(at)
        .map_or(&[][..], |p| p.descriptor.name.as_bytes())
}

/// Why phase 1 refused a `prompts/get`.
pub(super) enum Refusal<'f> {
    InvalidParams,
    Unknown(JsonStr<'f>),
    NotString(&'static str),
    Missing(&'static str),
}

impl Refusal<'_> {
    /// The error answer.
    pub(super) fn answer(self, resp: Out<'_, '_>) -> Wrote {
        match self {
            Refusal::InvalidParams => resp.invalid_params(),
            Refusal::Unknown(name) => resp.error(
                INVALID_PARAMS,
                format_args!("Unknown prompt: {name}"),
                Data::None,
            ),
            Refusal::NotString(name) => resp.error(
                INVALID_PARAMS,
                format_args!("Argument {name} must be a string"),
                Data::None,
            ),
            Refusal::Missing(name) => resp.error(
                INVALID_PARAMS,
                format_args!("Missing required argument: {name}"),
                Data::None,
            ),
        }
    }
}
