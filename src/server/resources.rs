//! `resources/read`: exact URIs first, then templates in order; a handler's
//! `ResourceNotFound` is `-32602` with `data.uri`.

use core::ops::Range;

use super::Server;
use super::invoke::RequestInfo;
use super::out::{Data, Out, Wrote};
use super::params::{span, split_spans};
use crate::error::INVALID_PARAMS;
use crate::resource::{Contents, ReadRequest, ResourceFailure, Vars};
use crate::wire::json::{self, Value};

impl<S> Server<'_, S> {
    pub(super) fn read_resource(
        &self,
        mut info: RequestInfo<'_>,
        frame: &mut [u8],
        params: Option<Range<usize>>,
        mut resp: Out<'_, '_>,
    ) -> Wrote {
        // Phase 1: find the URI string's raw bytes and the MRTR pieces.
        let (uri_span, mrtr) = {
            let Some(params) = params.and_then(|r| frame.get(r)).map(Value::trusted) else {
                return resp.invalid_params();
            };
            let Some(uri) = params.get("uri").and_then(|v| v.as_str()) else {
                return resp.invalid_params();
            };
            let Ok(mrtr) = self.mrtr_spans(&info, &params, frame, "resources/read", b"", uri.raw())
            else {
                return resp.invalid_params();
            };
            (span(frame, uri.raw()), mrtr)
        };
        // Phase 2: unescape the URI in place; it borrows the frame from here on.
        let [uri, state, responses] =
            split_spans(frame, [Some(uri_span), mrtr.state, mrtr.responses]);
        let Some(uri) = uri.and_then(|u| json::unescape_str_in_place(u).ok()) else {
            return resp.invalid_params();
        };
        let uri: &str = uri;
        let target = self
            .resources
            .iter()
            .find(|r| r.descriptor.uri == uri)
            .map(|r| (r.handler, Vars::default(), r.descriptor.cache))
            .or_else(|| {
                self.templates.iter().find_map(|t| {
                    crate::resource::match_template(t.descriptor.uri_template, uri)
                        .map(|vars| (t.handler, vars, t.descriptor.cache))
                })
            });
        let Some((handler, vars, cache)) = target else {
            return resp.error(
                INVALID_PARAMS,
                format_args!("Unknown resource: {uri}"),
                Data::Uri(uri),
            );
        };
        let input = match info.retry() {
            Some(answers) => answers,
            None => match Self::mrtr_input(mrtr.binding, state, responses) {
                Ok(input) => input,
                Err(()) => return Self::bad_state(resp),
            },
        };
        let (outcome, ran) = self.run_handler(&mut resp, &mut info, &input, &mut (), |ctx, ()| {
            handler(&self.state, ReadRequest::new(uri, vars), Contents::new(ctx))
        });
        match outcome {
            Ok(_) => Self::close_handled(
                resp,
                &info,
                &ran,
                Some(cache.unwrap_or(self.cache)),
                "resource",
            ),
            Err(ResourceFailure::NotFound(e)) => resp.error(
                INVALID_PARAMS,
                format_args!("{}", e.message()),
                Data::Uri(uri),
            ),
            Err(ResourceFailure::Protocol(e)) => resp.protocol(&e),
        }
    }
}
