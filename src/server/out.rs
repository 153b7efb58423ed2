//! The one writer of JSON-RPC answers: `{"jsonrpc":"2.0","id":…` then a
//! result or an error, never a partial message; the 2026-07-28 stamp; the
//! tool-error block; the answer's closing newline and stashed notifications.

use core::fmt;

use super::listing::Pages;
use crate::context::Track;
use crate::error::{
    ErrorCode, ErrorData, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, ProtocolError,
};
use crate::mcp::envelope;
use crate::mcp::{Cache, CacheScope, ProtocolVersion, ServerInfo};
use crate::wire::emit::Decimal;
use crate::wire::emit::Writer;
use crate::wire::json::{self, JsonStr, Limits};

/// `data` of an error answer.
pub(super) enum Data<'x> {
    None,
    Str(&'x str),
    Json(JsonStr<'x>),
    Uri(&'x str),
    User(Option<ErrorData<'x>>),
    Fmt(fmt::Arguments<'x>),
    /// `{"supported":["2026-07-28"],"requested":...}`
    Versions(Option<JsonStr<'x>>),
}

/// What handling one message wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wrote {
    /// A result.
    Answer,
    /// An error response, with its code.
    Error(ErrorCode),
    /// Nothing, by design (notification, client response).
    Nothing,
    /// An answer was due but did not fit.
    Failed,
    /// A handshake-era handler asked for input: its `input_required` body
    /// (from `body_start`, not closed) is in the writer after the message
    /// start `start`, to become requests to the client (`slot` waits).
    Asked {
        slot: usize,
        start: usize,
        body_start: usize,
    },
    /// Requests to the client were written (the call waits for answers).
    Requests,
    /// A `subscriptions/listen` request was acknowledged and stays open.
    Listening,
    /// An async tool's call stopped before its handler, recorded in the
    /// caller's `Deferred` slot: the answer is open in the writer, for
    /// `Server::handle_async` to finish.
    #[cfg_attr(not(feature = "async-handlers"), allow(dead_code))]
    Deferred,
}

/// Where an open answer stands: enough to take it up again over the same
/// buffer (an async tool's call, after its handler).
#[cfg(feature = "async-handlers")]
#[derive(Clone, Copy, Debug)]
pub(super) struct OutMark {
    start: usize,
    id_end: usize,
    stamped: bool,
    /// The writer's position, limit and overflow flag.
    at: (usize, usize, bool),
}

#[cfg(feature = "async-handlers")]
impl OutMark {
    /// The bytes of the buffer the open answer holds.
    pub(super) fn written(&self) -> usize {
        self.at.0
    }

    /// The id the answer echoes, in the buffer it is written in.
    #[cfg(any(feature = "embedded-io-async", feature = "async-handlers"))]
    pub(super) fn id<'o>(&self, out: &'o [u8]) -> &'o [u8] {
        out.get(self.start + PREFIX.len()..self.id_end)
            .unwrap_or(&[])
    }
}

/// A response under construction: `{"jsonrpc":"2.0","id":ID` is written.
pub(super) struct Out<'w, 'o> {
    pub(super) w: &'w mut Writer<'o>,
    start: usize,
    id_end: usize,
    /// 2026-07-28: results carry `resultType` and the server identity.
    pub(super) stamp: Option<&'w Identity<'w>>,
    id_refused: bool,
}

/// What a 2026-07-28 result is stamped with: the server's identity, and
/// where its JSON is kept once written (the server's list cache, when it
/// has one, the one the lists use: the identity is the same bytes on
/// every answer). One field of the server, so an answer holds one
/// reference to it.
pub(super) struct Identity<'s> {
    pub(super) info: ServerInfo<'s>,
    pub(super) kept: Option<&'s (dyn Pages + Sync)>,
}

/// The list cache's key for the stamp's server identity (beside the lists'
/// `List` numbers 1 to 4).
const STAMP_PAGE: u8 = 0xff;

/// The fallback error, written when an answer does not fit: its head, the
/// buffer size (at most 20 digits), its tail.
const FALLBACK_HEAD: &[u8] = b",\"error\":{\"code\":-32603,\"message\":\"response exceeds the ";
const FALLBACK_TAIL: &[u8] = b"-byte output buffer\"}}";

/// Room after the id that any error answer of the core fits in: the
/// fallback, or the refusal of an id that is too long (whose id is `null`).
pub(super) const ERROR_ROOM: usize = FALLBACK_HEAD.len() + 20 + FALLBACK_TAIL.len();

/// Write the 2026-07-28 result fields (`first`: nothing precedes them in the
/// result object).
pub(super) fn write_stamp(
    w: &mut Writer<'_>,
    stamp: &Identity<'_>,
    first: bool,
    result_type: bool,
    cache: Option<Cache>,
) {
    let mut sep = !first;
    let mut comma = |w: &mut Writer<'_>| {
        if sep {
            w.raw(b",");
        }
        sep = true;
    };
    if result_type {
        comma(w);
        w.raw(b"\"resultType\":\"complete\"");
    }
    if let Some(c) = cache {
        comma(w);
        w.raw(b"\"ttlMs\":");
        w.u64(c.ttl_ms);
        w.raw(match c.scope {
            CacheScope::Public => b",\"cacheScope\":\"public\"",
            CacheScope::Private => b",\"cacheScope\":\"private\"",
        });
    }
    comma(w);
    let version = ProtocolVersion::V2026_07_28;
    match stamp.kept {
        // `"_meta":{…}`: written once, copied since.
        Some(kept) if kept.write(STAMP_PAGE, version, w) => {}
        kept => {
            let at = w.len();
            w.raw(b"\"_meta\":{");
            write_identity(w, &stamp.info);
            w.raw(b"}");
            if let Some(kept) = kept
                && !w.is_overflowed()
            {
                kept.keep(STAMP_PAGE, version, w.as_bytes().get(at..).unwrap_or(&[]));
            }
        }
    }
}

/// The server's identity as a member of a 2026-07-28 result's `_meta`
/// (the stamp's, and the one a listen request ends with).
pub(super) fn write_identity(w: &mut Writer<'_>, info: &ServerInfo<'_>) {
    w.string(envelope::SERVER_INFO_KEY);
    w.raw(b":");
    info.write(w, ProtocolVersion::V2026_07_28.fields());
}

pub(super) const PREFIX: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":";

impl<'w, 'o> Out<'w, 'o> {
    /// Start an answer with `id`. An id that leaves no room for the longest
    /// error answer ([`ERROR_ROOM`]) is not echoed: the answer gets
    /// `"id": null` and [`id_refused`](Self::id_refused) is set, so the
    /// request is refused before its handler runs. Either way exactly one
    /// answer can always be written.
    pub(super) fn begin(w: &'w mut Writer<'o>, id: Option<&[u8]>) -> Self {
        let start = w.len();
        let room = PREFIX.len() + ERROR_ROOM;
        let fits = |id: &[u8]| id.len().saturating_add(room) <= w.free();
        let (id, id_refused) = match id {
            Some(id) if fits(id) => (id, false),
            Some(_) => (&b"null"[..], true),
            None => (&b"null"[..], false),
        };
        w.raw(PREFIX);
        w.raw(id);
        let id_end = w.len();
        Self {
            w,
            start,
            id_end,
            stamp: None,
            id_refused,
        }
    }

    /// Where this answer stands, to take it up again with [`Out::resume`].
    #[cfg(feature = "async-handlers")]
    pub(super) fn mark(&self) -> OutMark {
        OutMark {
            start: self.start,
            id_end: self.id_end,
            stamped: self.stamp.is_some(),
            at: self.w.position(),
        }
    }

    /// Take up an answer where [`mark`](Self::mark) left it, over a writer
    /// on the same buffer; `info` is the stamp's server identity.
    #[cfg(feature = "async-handlers")]
    pub(super) fn resume(w: &'w mut Writer<'o>, mark: OutMark, stamp: &'w Identity<'w>) -> Self {
        let (len, limit, overflow) = mark.at;
        w.resume(len, limit, overflow);
        Self {
            w,
            start: mark.start,
            id_end: mark.id_end,
            stamp: mark.stamped.then_some(stamp),
            id_refused: false,
        }
    }

    /// The request's id was too long to echo within the output buffer.
    pub(super) fn id_refused(&self) -> bool {
        self.id_refused
    }

    pub(super) fn done(self) -> Wrote {
        self.done_as(Wrote::Answer)
    }

    pub(super) fn done_as(self, kind: Wrote) -> Wrote {
        if self.w.is_overflowed() {
            self.w.truncate(self.start);
            Wrote::Failed
        } else {
            kind
        }
    }

    pub(super) fn error(
        self,
        code: ErrorCode,
        message: fmt::Arguments<'_>,
        data: Data<'_>,
    ) -> Wrote {
        self.error_text(code, Text::Fmt(message), data)
    }

    /// [`Self::error`] with a message string (a handler's `ProtocolError`,
    /// a `ResourceNotFound`): written as it is on 64-bit targets, not
    /// through `core::fmt` (the bookshop's missing book 173 instructions
    /// less: `resources/read-miss` in `scripts/list_cost.sh`); small
    /// targets keep the one writer (flash).
    #[inline]
    pub(super) fn error_str(self, code: ErrorCode, message: &str, data: Data<'_>) -> Wrote {
        if cfg!(not(target_pointer_width = "64")) {
            return self.error(code, format_args!("{message}"), data);
        }
        self.error_text(code, Text::Str(message), data)
    }

    /// The error writer of [`Self::error`] and [`Self::error_str`].
    #[inline(always)]
    fn error_text(self, code: ErrorCode, message: Text<'_>, data: Data<'_>) -> Wrote {
        self.w.truncate(self.id_end);
        self.w.raw(b",\"error\":{\"code\":");
        self.w.i64(i64::from(code.get()));
        self.w.raw(b",\"message\":");
        match message {
            Text::Str(s) => self.w.string(s),
            Text::Fmt(args) => self.w.string_fmt(args),
        }
        match data {
            Data::None | Data::User(None) => {}
            Data::Str(s) | Data::User(Some(ErrorData::String(s))) => {
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
            Data::Versions(requested) => {
                self.w.raw(b",\"data\":{\"supported\":");
                envelope::write_supported_versions(self.w);
                self.w.raw(b",\"requested\":");
                match requested {
                    Some(r) => self.w.json_str(r),
                    None => self.w.null(),
                }
                self.w.raw(b"}");
            }
        }
        self.w.raw(b"}}");
        if self.w.is_overflowed() {
            let cap = self.w.capacity();
            self.w.truncate(self.id_end);
            // The answer matters more than notifications stashed ahead of it.
            self.w.drop_stash();
            self.w.raw(FALLBACK_HEAD);
            self.w.u64(cap as u64);
            self.w.raw(FALLBACK_TAIL);
            return self.done_as(Wrote::Error(INTERNAL_ERROR));
        }
        self.done_as(Wrote::Error(code))
    }

    /// Answer with a notification instead of a response (the
    /// acknowledgment of a listen request, which stays open): `body`
    /// writes the whole message.
    pub(super) fn notification(self, id: &[u8], body: impl FnOnce(&mut Writer<'o>)) -> Wrote {
        let start = self.start;
        self.w.truncate(start);
        body(self.w);
        if self.w.is_overflowed() {
            self.w.truncate(start);
            return Out::begin(self.w, Some(id)).too_large();
        }
        Wrote::Listening
    }

    /// Leave a handshake-era `input_required` body open for the router to
    /// turn into requests to the client.
    pub(super) fn asked(self, slot: usize, body_start: usize) -> Wrote {
        Wrote::Asked {
            slot,
            start: self.start,
            body_start,
        }
    }

    /// A request refused by the 2026-07-28 envelope ladder.
    pub(super) fn fault(self, f: envelope::Fault<'_>) -> Wrote {
        let data = match f.requested {
            Some(requested) => Data::Versions(requested),
            None => Data::None,
        };
        self.error(f.code, format_args!("{}", f.message), data)
    }

    pub(super) fn protocol(self, e: &ProtocolError<'_>) -> Wrote {
        self.error_str(e.code(), e.message(), Data::User(e.error_data()))
    }

    /// `-32600 Invalid Request`, with `data` (the reason, when there is one
    /// to give): the one place its text is written.
    pub(super) fn invalid_request(self, data: Data<'_>) -> Wrote {
        self.error(INVALID_REQUEST, format_args!("Invalid Request"), data)
    }

    pub(super) fn invalid_params(self) -> Wrote {
        self.error(
            INVALID_PARAMS,
            format_args!("Invalid request parameters"),
            Data::Str(""),
        )
    }

    pub(super) fn too_large(self) -> Wrote {
        self.exceeds("response exceeds")
    }

    /// `-32603`: `what` (`response exceeds`, ...) `the N-byte output
    /// buffer`.
    pub(super) fn exceeds(self, what: &str) -> Wrote {
        let cap = self.w.capacity();
        self.error(
            INTERNAL_ERROR,
            format_args!("{what} the {}-byte output buffer", Decimal::from(cap)),
            Data::None,
        )
    }

    /// `,"result":` + the body (one JSON object) + `}`; too large → `-32603`.
    pub(super) fn result(self, body: impl FnOnce(&mut Writer<'o>)) -> Wrote {
        self.result_cached(body, None)
    }

    /// Like [`result`](Self::result), for a cacheable result.
    pub(super) fn result_cached(
        self,
        body: impl FnOnce(&mut Writer<'o>),
        cache: Option<Cache>,
    ) -> Wrote {
        self.w.raw(b",\"result\":");
        body(self.w);
        self.end_result(cache)
    }

    /// The non-generic end of [`result_cached`](Self::result_cached): one
    /// copy, whatever the body.
    fn end_result(self, cache: Option<Cache>) -> Wrote {
        if let Some(stamp) = self.stamp {
            // Reopen the body's object to add the 2026-07-28 fields.
            let end = self.w.len();
            let empty = self.w.as_bytes().get(end.saturating_sub(2)..end) == Some(b"{}");
            self.w.truncate(end.saturating_sub(1));
            write_stamp(self.w, stamp, empty, true, cache);
            self.w.raw(b"}");
        }
        self.w.raw(b"}");
        if self.w.is_overflowed() {
            return self.too_large();
        }
        self.done()
    }

    /// Open `,"result":{` for a handler and return where its body starts.
    pub(super) fn open_result(&mut self) -> usize {
        self.w.raw(b",\"result\":{");
        self.w.len()
    }

    /// Close a handler's result (`}` + `}`), stamped for 2026-07-28.
    pub(super) fn close_result(
        self,
        body_start: usize,
        track: &Track,
        cache: Option<Cache>,
    ) -> Wrote {
        if let Some(stamp) = self.stamp {
            let first = self.w.len() == body_start;
            let complete = !track.input_required;
            write_stamp(self.w, stamp, first, complete, cache.filter(|_| complete));
        }
        self.w.raw(b"}}");
        if self.w.is_overflowed() {
            return self.too_large();
        }
        self.done()
    }
}

/// Text given as a string or formatted.
pub(super) enum Text<'x> {
    Str(&'x str),
    Fmt(fmt::Arguments<'x>),
}

/// The one tool-error writer: the result's content, one text block
/// `LEAD TOOL: MESSAGE` (written piece by piece, not through `core::fmt`),
/// and `isError: true`. Every tool error goes through it: a handler's, a
/// schema violation, a result too large, a tool the version cannot serve.
pub(super) fn write_tool_error(w: &mut Writer<'_>, lead: &str, tool: &str, message: Text<'_>) {
    w.raw(b"\"content\":[{\"type\":\"text\",\"text\":\"");
    w.str_content(lead);
    w.str_content(tool);
    w.raw(b": ");
    match message {
        Text::Str(s) => w.str_content(s),
        Text::Fmt(args) => w.str_fmt_content(args),
    }
    w.raw(b"\"}],\"isError\":true");
}

/// Terminate the message (if any) with `\n` and put stashed notifications
/// ahead of it.
pub(super) fn finish(mut w: Writer<'_>) -> usize {
    w.set_reserve(0);
    if !w.is_empty() {
        w.raw(b"\n");
    }
    w.finish_with_stash()
}

/// A writer for one answer, keeping a byte free for its newline.
pub(super) fn answer_writer(out: &mut [u8]) -> Writer<'_> {
    let mut w = Writer::new(out);
    w.set_reserve(1);
    w
}

/// What handling a frame left in `out`: `len` bytes, and the code of the
/// answer when it is a JSON-RPC error. The HTTP mapping takes its status
/// from `code`, never from re-reading the bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Answer {
    pub(crate) len: usize,
    pub(crate) code: Option<ErrorCode>,
    /// A `subscriptions/listen` request was acknowledged: it stays open.
    pub(crate) listening: bool,
    /// The output is one line: an answer (or error) with no notification
    /// stashed ahead of it (an adapter need not look for more lines).
    pub(crate) alone: bool,
}

impl Answer {
    /// Nothing written (a notification, a response, a blank line).
    pub(crate) const NOTHING: Answer = Answer {
        len: 0,
        code: None,
        listening: false,
        alone: false,
    };

    /// What `w` holds after `wrote`, finished.
    pub(super) fn of(wrote: Wrote, w: Writer<'_>) -> Self {
        let code = match wrote {
            Wrote::Error(code) => Some(code),
            _ => None,
        };
        let alone = matches!(wrote, Wrote::Answer | Wrote::Error(_)) && !w.has_stash();
        Answer {
            len: finish(w),
            code,
            listening: matches!(wrote, Wrote::Listening),
            alone,
        }
    }
}

/// A JSON-RPC error answer `{"jsonrpc":"2.0","id":ID,"error":{…}}` and its
/// newline, for a request an adapter refuses before the core sees it (the
/// HTTP mapping's 403/406/415/…): the same writer as every other answer.
pub(crate) fn write_error(
    out: &mut [u8],
    id: Option<&[u8]>,
    code: ErrorCode,
    message: &str,
) -> usize {
    let mut w = answer_writer(out);
    Out::begin(&mut w, id).error(code, format_args!("{message}"), Data::None);
    finish(w)
}
