//! `prompts/get`: the prompt, its declared arguments (each a string; the
//! required ones present), then the handler's messages.

use core::ops::Range;

use super::Server;
use super::invoke::RequestInfo;
#[cfg(feature = "async-handlers")]
use super::invoke::{Deferral, Deferred};
use super::out::{Data, Out, Wrote};
use super::params::{named_call, span, split_spans};
use crate::context::Mrtr;
use crate::error::INVALID_PARAMS;
use crate::prompt::{MAX_PROMPT_ARGUMENTS, Messages, Prompt, PromptRequest};
use crate::seal::Binding;
use crate::wire::json;

/// The spans of a prompt's declared arguments' values, then of
/// `requestState` and `inputResponses`.
pub(super) type PromptSpans = [Option<Range<usize>>; MAX_PROMPT_ARGUMENTS + 2];

impl<'s, S> Server<'s, S> {
    pub(super) fn get_prompt(
        &self,
        mut info: RequestInfo<'_>,
        frame: &mut [u8],
        params: Option<Range<usize>>,
        resp: Out<'_, '_>,
    ) -> Wrote {
        #[cfg(feature = "async-handlers")]
        let params_span = params.clone();
        let (at, spans, binding, resp) = match self.prompt_phase1(&info, frame, params, resp) {
            Ok(found) => found,
            Err(wrote) => return wrote,
        };
        #[cfg(feature = "async-handlers")]
        if let Some(prompt) = self.prompts.get(at)
            && prompt.awaits.is_some()
        {
            let _ = (spans, binding);
            let Some(slot) = info.take_defer() else {
                let name = prompt.descriptor.name;
                return resp.error(
                    crate::error::INTERNAL_ERROR,
                    format_args!("prompt {name} is async: this server does not await handlers"),
                    Data::None,
                );
            };
            *slot = Some(Deferred {
                what: Deferral::Prompt {
                    at,
                    params: params_span,
                },
                info: info.detach(),
                out: resp.mark(),
            });
            return Wrote::Deferred;
        }
        let Some(prompt) = self.prompts.get(at) else {
            return resp.invalid_params();
        };
        let mut resp = resp;
        let (request, input) = match Self::prompt_input(prompt, frame, spans, binding, info.retry())
        {
            Ok(parts) => parts,
            Err(()) => return Self::bad_state(resp),
        };
        let (outcome, ran) = self.run_handler(&mut resp, &mut info, &input, &mut (), |ctx, ()| {
            (prompt.handler)(&self.state, request, Messages::new(ctx))
        });
        match outcome {
            Ok(_) => Self::close_handled(resp, &info, &ran, None, "prompt"),
            Err(e) => resp.protocol(&e),
        }
    }

    /// Phase 1 (shared borrow of the frame): the prompt (its index), the
    /// spans of its declared arguments' values (each a string; the required
    /// ones present) and the MRTR pieces; or the error answered.
    #[allow(clippy::type_complexity)]
    pub(super) fn prompt_phase1<'w, 'o>(
        &self,
        info: &RequestInfo<'_>,
        frame: &[u8],
        params: Option<Range<usize>>,
        resp: Out<'w, 'o>,
    ) -> Result<(usize, PromptSpans, Option<Binding<'s>>, Out<'w, 'o>), Wrote> {
        const N: usize = MAX_PROMPT_ARGUMENTS + 2;
        let Some((params, name, args)) = named_call(frame, params, info.named()) else {
            return Err(resp.invalid_params());
        };
        let Some(at) = self
            .prompts
            .iter()
            .position(|p| name.eq_str(p.descriptor.name))
        else {
            return Err(resp.error(
                INVALID_PARAMS,
                format_args!("Unknown prompt: {name}"),
                Data::None,
            ));
        };
        let Some(prompt) = self.prompts.get(at) else {
            return Err(resp.invalid_params());
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
                        return Err(resp.error(
                            INVALID_PARAMS,
                            format_args!("Argument {} must be a string", a.name),
                            Data::None,
                        ));
                    }
                },
                None if a.required => {
                    return Err(resp.error(
                        INVALID_PARAMS,
                        format_args!("Missing required argument: {}", a.name),
                        Data::None,
                    ));
                }
                None => {}
            }
        }
        let args_raw = args.map_or(&b"{}"[..], |a| a.raw());
        let name: &'s [u8] = prompt_name(self.prompts, at);
        let Ok(mrtr) = self.mrtr_spans(info, &params, frame, "prompts/get", name, args_raw) else {
            return Err(resp.invalid_params());
        };
        let [.., state, responses] = &mut spans;
        (*state, *responses) = (mrtr.state, mrtr.responses);
        Ok((at, spans, mrtr.binding, resp))
    }

    /// Phase 2's input: the arguments' values unescaped in place, and the
    /// MRTR input (a retry's answers, or the verified `requestState`).
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
