//! `resources/read`: exact URIs first, then templates in order; a handler's
//! `ResourceNotFound` is `-32602` with `data.uri`.

use core::ops::Range;

use super::Server;
#[cfg(feature = "async-handlers")]
use super::invoke::{Deferral, defer};
use super::invoke::{Ran, RequestInfo};
use super::out::{Data, Out, Wrote};
use super::params::{span, split_spans};
use crate::error::INVALID_PARAMS;
use crate::mcp::Cache;
use crate::resource::{Contents, ReadRequest, ResourceFailure, ResourceFn, ResourceOutcome, Vars};
use crate::wire::json::{self, Value};

impl<S> Server<'_, S> {
    #[inline(never)]
    pub(super) fn read_resource(
        &self,
        info: &mut RequestInfo<'_>,
        frame: &mut [u8],
        params: Option<Range<usize>>,
        mut resp: Out<'_, '_>,
    ) -> Wrote {
        // Phase 1: find the URI string's raw bytes and the MRTR pieces.
        let (uri_span, mrtr) = {
            // `params.uri`, found by the request's one reading of `params`.
            let uri = params
                .and_then(|r| frame.get(r))
                .and(info.named().name)
                .and_then(|s| s.get(frame))
                .and_then(|v| Value::trusted(v).as_str());
            let Some(uri) = uri else {
                return resp.invalid_params();
            };
            let Ok(mrtr) = self.mrtr_spans(info, frame, "resources/read", b"", uri.raw()) else {
                return resp.invalid_params();
            };
            (span(frame, uri.raw()), mrtr)
        };
        // Phase 2: unescape the URI in place; it borrows the frame from here on.
        #[cfg(feature = "async-handlers")]
        let (base, spans) = (
            frame.as_ptr() as usize,
            (mrtr.state.clone(), mrtr.responses.clone()),
        );
        let [uri, state, responses] =
            split_spans(frame, [Some(uri_span), mrtr.state, mrtr.responses]);
        let Some(uri) = uri.and_then(|u| json::unescape_str_in_place(u).ok()) else {
            return resp.invalid_params();
        };
        let uri: &str = uri;
        let mut vars = Vars::default();
        let Some(found) = self.find_read(uri, &mut vars) else {
            return resp.error(
                INVALID_PARAMS,
                format_args!("Unknown resource: {uri}"),
                Data::Uri(uri),
            );
        };
        let Found { handler, cache, .. } = found;
        #[cfg(feature = "async-handlers")]
        if found.awaits.is_some() {
            let start = (uri.as_ptr() as usize).wrapping_sub(base);
            let call = Deferral::Read {
                uri: start..start + uri.len(),
                binding: mrtr.binding.map(|b| (b.args, b.expiry)),
                state: spans.0,
                responses: spans.1,
            };
            return defer(info, call, resp, format_args!("resource {uri}"));
        }
        let input = match info.retry_ref().copied() {
            Some(answers) => answers,
            None => match Self::mrtr_input(mrtr.binding, state, responses) {
                Ok(input) => input,
                Err(()) => return Self::bad_state(resp),
            },
        };
        let (outcome, ran) = self.run_handler(&mut resp, info, &input, &mut (), |ctx, ()| {
            handler(&self.state, ReadRequest::new(uri, vars), Contents::new(ctx))
        });
        self.read_answer(outcome, &ran, info, cache, uri, resp)
    }

    /// The resource, or template, that reads `uri`: exact URIs first, then
    /// templates in order.
    pub(super) fn find_read<'u>(&self, uri: &'u str, vars: &mut Vars<'u>) -> Option<Found<S>> {
        self.resources
            .iter()
            .find(|r| r.descriptor.uri == uri)
            .map(|r| Found {
                handler: r.handler,
                cache: r.descriptor.cache,
                #[cfg(feature = "async-handlers")]
                awaits: r.awaits.map(|i| (false, i)),
            })
            .or_else(|| {
                self.templates.iter().find_map(|t| {
                    crate::resource::match_into(t.descriptor.uri_template, uri, vars).then_some(
                        Found {
                            handler: t.handler,
                            cache: t.descriptor.cache,
                            #[cfg(feature = "async-handlers")]
                            awaits: t.awaits.map(|i| (true, i)),
                        },
                    )
                })
            })
    }

    /// Close a read after its handler (sync or async) returned.
    pub(super) fn read_answer(
        &self,
        outcome: ResourceOutcome<'_>,
        ran: &Ran,
        info: &RequestInfo<'_>,
        cache: Option<Cache>,
        uri: &str,
        resp: Out<'_, '_>,
    ) -> Wrote {
        match outcome {
            Ok(_) => Self::close_handled(
                resp,
                info,
                ran,
                Some(cache.unwrap_or(self.cache)),
                "resource",
            ),
            Err(ResourceFailure::NotFound(e)) => {
                resp.error_str(INVALID_PARAMS, e.message(), Data::Uri(uri))
            }
            Err(ResourceFailure::Protocol(e)) => resp.protocol(&e),
        }
    }
}

/// What reads a URI: the handler, the caching hint, and (async) whether a
/// template and its async handler's index (the template's variables are
/// written into the caller's `Vars`).
pub(super) struct Found<S> {
    pub(super) handler: ResourceFn<S>,
    pub(super) cache: Option<Cache>,
    #[cfg(feature = "async-handlers")]
    pub(super) awaits: Option<(bool, u16)>,
}
