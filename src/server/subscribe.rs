//! Subscriptions: `resources/subscribe` and `resources/unsubscribe`
//! (handshake era), `subscriptions/listen` (2026-07-28), and the
//! notifications due on a connection ([`Server::pending`]).

use core::ops::Range;

use super::Server;
use super::out::{Data, Out, Wrote, write_identity};
use super::params::Span;
use crate::changes::{List, ListenRefused, Refused, Subscriber, write_tag};
use crate::error::{INTERNAL_ERROR, INVALID_PARAMS};
use crate::server::Connection;
use crate::wire::emit::{Decimal, Writer};
use crate::wire::json::{self, Kind, Value};

impl<S> Server<'_, S> {
    /// Write the notifications due on this connection into `out`, one JSON
    /// line each, as many as fit (the rest stay due): after a change to a
    /// subscribed URI, `notifications/resources/updated`; after a list
    /// change, its `list_changed` (handshake era: to every initialized
    /// session, for the lists the capabilities say change; 2026-07-28: to
    /// the open `subscriptions/listen` request, as its filter says, tagged
    /// with its id). Returns the bytes written; 0 without a
    /// [`changes`](Self::changes) registry.
    ///
    /// The serve loops call it before reading each request and when told
    /// of a change (the HTTP mapping does not serve subscriptions yet).
    #[must_use = "the notifications are out[..n]: send them"]
    pub fn pending(&self, conn: &Connection, subs: &mut Subscriber<'_>, out: &mut [u8]) -> usize {
        let era = match conn {
            Connection::Ready(_) => Some(false),
            Connection::Modern => Some(true),
            _ => None,
        };
        self.pending_era(era, subs, out)
    }

    /// [`pending`](Self::pending) for a stream whose era is known (`Some(true)`:
    /// a 2026-07-28 listen; `Some(false)`: an initialized handshake session;
    /// `None`: before the handshake, nothing is due).
    pub(crate) fn pending_era(
        &self,
        modern: Option<bool>,
        subs: &mut Subscriber<'_>,
        out: &mut [u8],
    ) -> usize {
        let Some(changes) = self.changes else {
            return 0;
        };
        let mut w = Writer::new(out);
        match modern {
            Some(false) => subs.write_due(changes, self.list_bits(), &mut w),
            Some(true) => subs.write_due(changes, 0, &mut w),
            None => subs.skip(changes),
        }
        w.len()
    }

    /// End the open listen request of `subs` with its result (an HTTP
    /// listen stream whose `notifications/cancelled` came in another
    /// request); the bytes written, 0 when none is open.
    pub(crate) fn end_open_listen(&self, subs: &mut Subscriber<'_>, out: &mut [u8]) -> usize {
        let mut copy = [0u8; crate::changes::MAX_LISTEN_ID];
        let n = match subs.listening() {
            Some(l) => {
                let mut w = Writer::new(&mut copy);
                w.raw(l.id());
                w.len()
            }
            None => return 0,
        };
        let mut w = super::out::answer_writer(out);
        self.end_listen(subs, copy.get(..n).unwrap_or_default(), &mut w);
        super::out::finish(w)
    }

    /// The lists this server has (and so can announce changes of).
    fn list_bits(&self) -> u8 {
        let mut bits = 0;
        if !self.tools.is_empty() {
            bits |= 1 << List::Tools as u8;
        }
        if !self.prompts.is_empty() {
            bits |= 1 << List::Prompts as u8;
        }
        if self.has_resources() {
            bits |= 1 << List::Resources as u8;
        }
        bits
    }

    /// A resource or a template names `uri`.
    fn names_resource(&self, uri: &str) -> bool {
        self.resources.iter().any(|r| r.descriptor.uri == uri)
            || self
                .templates
                .iter()
                .any(|t| crate::resource::match_template(t.descriptor.uri_template, uri).is_some())
    }

    /// `resources/subscribe` (`add`) or `resources/unsubscribe`.
    pub(super) fn subscribe(
        &self,
        subs: &mut Subscriber<'_>,
        add: bool,
        frame: &mut [u8],
        uri: Option<Span>,
        resp: Out<'_, '_>,
    ) -> Wrote {
        let Some(changes) = self.changes else {
            return resp.invalid_params();
        };
        // `params.uri`, found by the request's one validation.
        let uri_span = uri
            .and_then(|u| u.get(frame))
            .map(Value::trusted)
            .and_then(|u| u.as_str())
            .map(|u| super::params::span(frame, u.raw()));
        let Some(uri) = uri_span
            .and_then(|r| frame.get_mut(r))
            .and_then(|u| json::unescape_str_in_place(u).ok())
        else {
            return resp.invalid_params();
        };
        let uri: &str = uri;
        if !self.names_resource(uri) {
            return resp.error(
                INVALID_PARAMS,
                format_args!("Unknown resource: {uri}"),
                Data::Uri(uri),
            );
        }
        if !add {
            subs.remove(uri);
            return resp.result(|w| w.raw(b"{}"));
        }
        let k;
        let why = if subs.capacity() == 0 {
            // An HTTP endpoint whose stream table had no room for this
            // session (crate::http::Streams).
            format_args!("every notification stream slot of this server is in use")
        } else {
            match subs.add(changes, uri) {
                Ok(()) => return resp.result(|w| w.raw(b"{}")),
                Err(Refused::Full(n)) => {
                    k = Decimal::from(n);
                    format_args!("all {k} subscriptions of this session are in use")
                }
                Err(Refused::TooLong(u)) => {
                    k = Decimal::from(u);
                    format_args!("the URI is longer than the {k}-byte subscription slot")
                }
            }
        };
        resp.error(
            INTERNAL_ERROR,
            format_args!("cannot subscribe to {uri}: {why}"),
            Data::None,
        )
    }

    /// `subscriptions/listen` (2026-07-28): check the filter, hold the
    /// request open, and acknowledge it.
    pub(super) fn listen(
        &self,
        subs: &mut Subscriber<'_>,
        frame: &[u8],
        id: Range<usize>,
        params: Option<Range<usize>>,
        resp: Out<'_, '_>,
    ) -> Wrote {
        let Some(changes) = self.changes else {
            return resp.invalid_params();
        };
        let Some(filter) = params
            .and_then(|r| frame.get(r))
            .map(Value::trusted)
            .and_then(|p| p.get("notifications"))
            .filter(|f| f.kind() == Kind::Object)
        else {
            return resp.error(
                INVALID_PARAMS,
                format_args!("Invalid params: notifications must be an object"),
                Data::None,
            );
        };
        let mut lists = 0u8;
        for list in List::ALL {
            match filter.get(list.filter_field()).map(|v| v.as_bool()) {
                None | Some(Some(false)) => {}
                Some(Some(true)) => lists |= 1 << list as u8,
                Some(None) => {
                    return resp.error(
                        INVALID_PARAMS,
                        format_args!(
                            "Invalid params: notifications.{} must be a boolean",
                            list.filter_field()
                        ),
                        Data::None,
                    );
                }
            }
        }
        let uris = filter.get("resourceSubscriptions");
        if uris
            .is_some_and(|u| u.kind() != Kind::Array || u.items().any(|i| i.kind() != Kind::String))
        {
            return resp.error(
                INVALID_PARAMS,
                format_args!("Invalid params: notifications.resourceSubscriptions must be an array of strings"),
                Data::None,
            );
        }
        let accepted = lists & self.list_bits() & changes.list_bits();
        let id = frame.get(id).unwrap_or(b"null");
        let items = uris
            .into_iter()
            .flat_map(|u| u.items())
            .filter_map(|i| i.as_str());
        if let Err(e) = subs.open_listen(changes, id, accepted, items) {
            let message = match e {
                ListenRefused::Busy => format_args!(
                    "cannot listen: a subscriptions/listen request is already open on this connection"
                ),
                ListenRefused::IdTooLong => format_args!(
                    "cannot listen: the request id is longer than {} bytes",
                    Decimal::from(crate::changes::MAX_LISTEN_ID)
                ),
                ListenRefused::Uri(Refused::Full(k)) => format_args!(
                    "cannot listen: more than {} resource subscriptions on one connection",
                    Decimal::from(k)
                ),
                ListenRefused::Uri(Refused::TooLong(u)) => format_args!(
                    "cannot listen: a resource URI is longer than the {}-byte subscription slot",
                    Decimal::from(u)
                ),
            };
            return resp.error(INTERNAL_ERROR, message, Data::None);
        }
        let checked = match subs.uris().find(|u| !self.names_resource(u)) {
            Some(unknown) => Err(resp.error(
                INVALID_PARAMS,
                format_args!("Unknown resource: {unknown}"),
                Data::Uri(unknown),
            )),
            None => Ok(resp),
        };
        let resp = match checked {
            Ok(resp) => resp,
            Err(wrote) => {
                subs.close_listen(id);
                return wrote;
            }
        };
        let wrote = resp.notification(id, |w| {
            w.raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":{\"notifications\":{");
            let mut first = true;
            for list in List::ALL {
                if accepted & (1 << list as u8) != 0 {
                    if !first {
                        w.raw(b",");
                    }
                    first = false;
                    w.string(list.filter_field());
                    w.raw(b":true");
                }
            }
            if uris.is_some() {
                if !first {
                    w.raw(b",");
                }
                w.raw(b"\"resourceSubscriptions\":[");
                for (i, uri) in subs.uris().enumerate() {
                    if i > 0 {
                        w.raw(b",");
                    }
                    w.string(uri);
                }
                w.raw(b"]");
            }
            w.raw(b"},");
            write_tag(w, id);
            w.raw(b"}}");
        });
        if !matches!(wrote, Wrote::Listening) {
            subs.close_listen(id);
        }
        wrote
    }

    /// `notifications/cancelled` naming the open listen request: it ends
    /// with its result (`resultType` and the subscription id).
    pub(super) fn end_listen(
        &self,
        subs: &mut Subscriber<'_>,
        id: &[u8],
        w: &mut Writer<'_>,
    ) -> Wrote {
        if !subs.close_listen(id) {
            return Wrote::Nothing;
        }
        let info = self.id.info;
        Out::begin(w, Some(id)).result(|w| {
            w.raw(b"{\"resultType\":\"complete\",");
            write_tag(w, id);
            // Reopen `_meta` for the server's identity.
            w.truncate(w.len().saturating_sub(1));
            w.raw(b",");
            write_identity(w, &info);
            w.raw(b"}}");
        })
    }
}
