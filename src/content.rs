//! Content blocks and the request context every handler writes through.
//!
//! [`Block`] writes one MCP content block (text, image, audio, resource link,
//! embedded resource), shaped for the negotiated version: audio and resource
//! links become text blocks for versions that lack them. Tool results write
//! any number of blocks; a prompt message holds exactly one.
//!
//! The request context also carries the notification path: progress
//! (`notifications/progress`, only when the request carried
//! `_meta.progressToken`) and logging (`notifications/message`, filtered by
//! the session's level). A notification is written into the free part of the
//! output buffer and either streamed at once through a [`Notify`] sink
//! ([`Server::handle_with`](crate::Server::handle_with), which the serve loop
//! uses), or stashed and sent ahead of the response
//! ([`Server::handle`](crate::Server::handle)). A notification that does not
//! fit the free space is dropped (the method returns `false`).

use core::fmt;

use crate::mcp::{Fields, LogLevel, ProtocolVersion};
use crate::tool::ResourceLink;
use crate::wire::emit::{TextWriter, ValueWriter, Writer};

/// Receives complete notification messages (one JSON line each, `\n`
/// included) as handlers emit them.
pub trait Notify {
    /// Send one message. Errors are the sink's to record (the serve loop
    /// reports the first one after the request).
    fn notify(&mut self, message: &[u8]);
}

impl<F: FnMut(&[u8])> Notify for F {
    fn notify(&mut self, message: &[u8]) {
        self(message);
    }
}

/// Longest progress token (string or integer, as written) that is kept; a
/// longer one disables progress notifications for that request.
pub const MAX_PROGRESS_TOKEN: usize = 64;

/// Where a handler's writer leaves its position when it is dropped, however
/// the handler ends (finished reply, error, or early return).
#[derive(Debug, Default)]
pub(crate) struct Track {
    pub(crate) len: usize,
    pub(crate) limit: usize,
    pub(crate) overflow: bool,
    /// The handler finished its writer (rather than returning without).
    pub(crate) finished: bool,
    /// The answer is an `input_required` result.
    pub(crate) input_required: bool,
    /// A `requestState` could not be sealed (no key, too long) or the
    /// `input_required` result was empty.
    pub(crate) state_error: bool,
}

/// Per-request context: the output writer and the notification path.
pub(crate) struct Ctx<'r> {
    pub(crate) track: &'r mut Track,
    /// Where the result body starts (an `input_required` answer rewinds here).
    pub(crate) body_start: usize,
    pub(crate) finished: bool,
    pub(crate) input_required: bool,
    pub(crate) state_error: bool,
    pub(crate) mrtr: &'r crate::mrtr::Mrtr<'r>,
    pub(crate) client: crate::server::ClientCapabilities,
    pub(crate) w: Writer<'r>,
    pub(crate) version: ProtocolVersion,
    /// The request's progress token, as written (at most
    /// [`MAX_PROGRESS_TOKEN`] bytes).
    pub(crate) progress_token: Option<&'r [u8]>,
    pub(crate) last_progress: Option<u64>,
    /// `None`: logging is off for this request.
    pub(crate) log_level: Option<LogLevel>,
    pub(crate) notify: Option<&'r mut dyn Notify>,
    pub(crate) cancelled: bool,
}

impl Drop for Ctx<'_> {
    fn drop(&mut self) {
        (self.track.len, self.track.limit, self.track.overflow) = self.w.position();
        self.track.finished = self.finished;
        self.track.input_required = self.input_required;
        self.track.state_error = self.state_error;
    }
}

impl<'r> Ctx<'r> {
    /// Format a notification in the free space, then stream or stash it.
    fn notification(&mut self, method: &str, params: impl FnOnce(&mut Writer<'_>)) -> bool {
        let n = {
            let mut nw = Writer::new(self.w.free_mut());
            nw.raw(b"{\"jsonrpc\":\"2.0\",\"method\":");
            nw.string(method);
            nw.raw(b",\"params\":");
            params(&mut nw);
            nw.raw(b"}\n");
            match nw.finish() {
                Ok(n) => n,
                Err(_) => return false,
            }
        };
        match self.notify.as_deref_mut() {
            Some(sink) => {
                if let Some(msg) = self.w.free_mut().get(..n) {
                    sink.notify(msg);
                }
                true
            }
            None => self.w.stash(n),
        }
    }

    pub(crate) fn progress(
        &mut self,
        progress: u64,
        total: Option<u64>,
        message: Option<&str>,
    ) -> bool {
        if self.last_progress.is_some_and(|last| progress <= last) {
            return false;
        }
        let Some(token) = self.progress_token else {
            return false;
        };
        let sent = self.notification("notifications/progress", |w| {
            w.raw(b"{\"progressToken\":");
            w.raw(token);
            w.raw(b",\"progress\":");
            w.u64(progress);
            if let Some(t) = total {
                w.raw(b",\"total\":");
                w.u64(t);
            }
            if let Some(m) = message {
                w.raw(b",\"message\":");
                w.string(m);
            }
            w.raw(b"}");
        });
        if sent {
            self.last_progress = Some(progress);
        }
        sent
    }

    pub(crate) fn log(
        &mut self,
        level: LogLevel,
        logger: Option<&str>,
        data: impl FnOnce(ValueWriter<'_, '_>),
    ) -> bool {
        if self.log_level.is_none_or(|min| level < min) {
            return false;
        }
        self.notification("notifications/message", |w| {
            w.raw(b"{\"level\":");
            w.string(level.as_str());
            if let Some(l) = logger {
                w.raw(b",\"logger\":");
                w.string(l);
            }
            w.raw(b",\"data\":");
            data(w.value());
            w.raw(b"}");
        })
    }
}

/// The notification methods every handler's writer offers.
macro_rules! notify_methods {
    ($($ctx:ident).+) => {
        /// Send `notifications/progress` if the request asked for progress
        /// (`_meta.progressToken`). `progress` must increase from call to
        /// call; returns whether a notification was sent.
        pub fn progress(&mut self, progress: u64, total: Option<u64>, message: Option<&str>) -> bool {
            self.$($ctx).+.progress(progress, total, message)
        }

        /// Send `notifications/message` with a text `data`, if the session's
        /// log level lets `level` through; returns whether it was sent.
        pub fn log(&mut self, level: $crate::mcp::LogLevel, logger: Option<&str>, message: &str) -> bool {
            self.$($ctx).+.log(level, logger, |v| v.str(message))
        }

        /// Send `notifications/message` with any JSON `data`.
        pub fn log_json(
            &mut self,
            level: $crate::mcp::LogLevel,
            logger: Option<&str>,
            data: impl FnOnce($crate::wire::emit::ValueWriter<'_, '_>),
        ) -> bool {
            self.$($ctx).+.log(level, logger, data)
        }

        /// Whether the client cancelled this request. The blocking serve loop
        /// reads input only between requests, so this is `false` there; an
        /// async transport that sees `notifications/cancelled` while the
        /// handler runs can report it.
        pub fn is_cancelled(&self) -> bool {
            self.$($ctx).+.cancelled
        }

        /// The protocol version of this request.
        pub fn version(&self) -> $crate::mcp::ProtocolVersion {
            self.$($ctx).+.version
        }

        /// What the client declared it can do (from `initialize`, or from
        /// this request's `_meta` envelope in 2026-07-28).
        pub fn client_capabilities(&self) -> $crate::server::ClientCapabilities {
            self.$($ctx).+.client
        }

        /// On an MRTR retry (2026-07-28): the payload of the `requestState`
        /// this handler sealed in its `input_required` answer, verified.
        pub fn request_state(&self) -> Option<&[u8]> {
            self.$($ctx).+.mrtr.state
        }

        /// On an MRTR retry: the client's answer to input request `key`.
        pub fn input_response(&self, key: &str) -> Option<$crate::mrtr::InputResponse<'_>> {
            self.$($ctx).+.mrtr.response(key)
        }
    };
}
pub(crate) use notify_methods;

/// Writes exactly one content block.
pub struct Block<'x, 'r> {
    w: &'x mut Writer<'r>,
    version: ProtocolVersion,
}

impl<'x, 'r> Block<'x, 'r> {
    pub(crate) fn new(w: &'x mut Writer<'r>, version: ProtocolVersion) -> Self {
        Self { w, version }
    }

    fn fields(&self) -> Fields {
        self.version.fields()
    }

    /// A text block.
    pub fn text(self, text: &str) {
        self.w.raw(b"{\"type\":\"text\",\"text\":");
        self.w.string(text);
        self.w.raw(b"}");
    }

    /// A text block from formatted text.
    pub fn text_fmt(self, args: fmt::Arguments<'_>) {
        self.w.raw(b"{\"type\":\"text\",\"text\":");
        self.w.string_fmt(args);
        self.w.raw(b"}");
    }

    /// A text block written through [`core::fmt::Write`].
    pub fn text_with(self, write: impl FnOnce(&mut TextWriter<'_, 'r>)) {
        self.w.raw(b"{\"type\":\"text\",\"text\":\"");
        write(&mut TextWriter::new(self.w));
        self.w.raw(b"\"}");
    }

    /// An image block; `data` is base64-encoded as it is written.
    pub fn image(self, mime_type: &str, data: &[u8]) {
        self.media("image", mime_type, data);
    }

    /// An audio block (2025-03-26+). Older versions get a text block saying
    /// audio was left out.
    pub fn audio(self, mime_type: &str, data: &[u8]) {
        if !self.fields().audio {
            let version = self.version;
            return self.text_fmt(format_args!(
                "[{mime_type} audio omitted: protocol {version} has no audio content]"
            ));
        }
        self.media("audio", mime_type, data);
    }

    fn media(self, kind: &str, mime_type: &str, data: &[u8]) {
        self.w.raw(b"{\"type\":");
        self.w.string(kind);
        self.w.raw(b",\"data\":\"");
        self.w.base64(data);
        self.w.raw(b"\",\"mimeType\":");
        self.w.string(mime_type);
        self.w.raw(b"}");
    }

    /// A `resource_link` block (2025-06-18+). Older versions get a text
    /// block `NAME: URI`.
    pub fn resource_link(self, link: &ResourceLink<'_>) {
        let fields = self.fields();
        if !fields.resource_link {
            return self.text_fmt(format_args!("{}: {}", link.name, link.uri));
        }
        let w = self.w;
        w.raw(b"{\"type\":\"resource_link\",\"uri\":");
        w.string(link.uri);
        w.raw(b",\"name\":");
        w.string(link.name);
        if let (true, Some(t)) = (fields.title, link.title) {
            w.raw(b",\"title\":");
            w.string(t);
        }
        if let Some(d) = link.description {
            w.raw(b",\"description\":");
            w.string(d);
        }
        if let Some(m) = link.mime_type {
            w.raw(b",\"mimeType\":");
            w.string(m);
        }
        if let Some(s) = link.size {
            w.raw(b",\"size\":");
            w.u64(s);
        }
        w.raw(b"}");
    }

    /// An embedded text resource.
    pub fn embedded_text(mut self, uri: &str, mime_type: Option<&str>, text: &str) {
        self.embedded_head(uri, mime_type);
        self.w.raw(b",\"text\":");
        self.w.string(text);
        self.w.raw(b"}}");
    }

    /// An embedded binary resource (base64 written on the fly).
    pub fn embedded_blob(mut self, uri: &str, mime_type: Option<&str>, data: &[u8]) {
        self.embedded_head(uri, mime_type);
        self.w.raw(b",\"blob\":\"");
        self.w.base64(data);
        self.w.raw(b"\"}}");
    }

    fn embedded_head(&mut self, uri: &str, mime_type: Option<&str>) {
        self.w.raw(b"{\"type\":\"resource\",\"resource\":{\"uri\":");
        self.w.string(uri);
        if let Some(m) = mime_type {
            self.w.raw(b",\"mimeType\":");
            self.w.string(m);
        }
    }
}
