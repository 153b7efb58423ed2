//! The request context every handler writes through.
//!
//! A handler gets one [`Ctx`] (inside its `Reply`, `Contents`, `Messages` or
//! `Completions`): the output writer positioned at the result body, the
//! request's facts (version, client capabilities, progress token, log level),
//! the notification path, and the MRTR input of a retry. When the handler
//! returns, however it returns, the context leaves its position in a
//! [`Track`] the server reads; [`Ctx::finish`] is the one way to mint the
//! [`Done`] proof that a reply was written completely.
//!
//! The notification path: progress (`notifications/progress`, only when the
//! request carried `_meta.progressToken`) and logging (`notifications/message`,
//! filtered by the session's level). A notification is written into the free
//! part of the output buffer and either streamed at once through a [`Notify`]
//! sink ([`Server::handle_with`](crate::Server::handle_with), which the serve
//! loop uses), or stashed and sent ahead of the response
//! ([`Server::handle`](crate::Server::handle)). A notification that does not
//! fit the free space is dropped (the method returns `false`).

use crate::error::ClientCapability;
use crate::mcp::{ClientCapabilities, LogLevel, ProtocolVersion};
use crate::seal::Binding;
use crate::wire::emit::{ValueWriter, Writer};
use crate::wire::json::{Kind, Value};

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
    /// Where the result body starts (an `input_required` answer rewinds
    /// here): kept here, not in [`Ctx`], which moves with every `Reply`.
    pub(crate) body_start: usize,
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
    /// An input request needs a capability the client did not declare.
    pub(crate) missing: Option<ClientCapability>,
}

/// Per-request context: the output writer and the notification path.
pub(crate) struct Ctx<'r> {
    pub(crate) track: &'r mut Track,
    pub(crate) finished: bool,
    pub(crate) input_required: bool,
    pub(crate) state_error: bool,
    pub(crate) missing: Option<ClientCapability>,
    pub(crate) mrtr: &'r Mrtr<'r>,
    pub(crate) client: ClientCapabilities,
    pub(crate) w: Writer<'r>,
    pub(crate) version: ProtocolVersion,
    /// The request's progress token, as written (at most
    /// [`MAX_PROGRESS_TOKEN`] bytes).
    pub(crate) progress_token: Option<&'r [u8]>,
    /// The last progress sent, when `progressed` (not an `Option<u64>`:
    /// its tag would cost a word in a context that moves with every reply).
    pub(crate) last_progress: u64,
    pub(crate) progressed: bool,
    /// `None`: logging is off for this request.
    pub(crate) log_level: Option<LogLevel>,
    pub(crate) notify: Option<&'r mut dyn Notify>,
    pub(crate) cancelled: bool,
    /// A content block was written (`Content`'s, kept here).
    pub(crate) blocks: bool,
}

impl Drop for Ctx<'_> {
    #[inline(never)]
    fn drop(&mut self) {
        (self.track.len, self.track.limit, self.track.overflow) = self.w.position();
        self.track.finished = self.finished;
        self.track.input_required = self.input_required;
        self.track.state_error = self.state_error;
        self.track.missing = self.missing;
    }
}

impl<'r> Ctx<'r> {
    /// Mark the reply finished: the one place a [`Done`] is made.
    pub(crate) fn finish(&mut self) -> Done {
        self.finished = true;
        Done(())
    }

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
        if self.progressed && progress <= self.last_progress {
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
            self.last_progress = progress;
            self.progressed = true;
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
        pub fn client_capabilities(&self) -> $crate::mcp::ClientCapabilities {
            self.$($ctx).+.client
        }

        /// On an MRTR retry (2026-07-28): the payload of the `requestState`
        /// this handler sealed in its `input_required` answer, verified.
        pub fn request_state(&self) -> Option<&'r [u8]> {
            self.$($ctx).+.mrtr.state
        }

        /// On an MRTR retry: the client's answer to input request `key`.
        pub fn input_response(&self, key: &str) -> Option<$crate::context::InputResponse<'r>> {
            self.$($ctx).+.mrtr.response(key)
        }
    };
}
pub(crate) use notify_methods;

/// Proof that a reply was written completely. Only picomcp's writers make one.
#[derive(Debug)]
#[must_use = "return it from the handler"]
pub struct Done(pub(crate) ());

/// The user's answer to an elicitation form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ElicitAction {
    /// Submitted.
    Accept,
    /// Explicitly declined.
    Decline,
    /// Dismissed.
    Cancel,
}

/// One entry of the retry's `inputResponses`.
#[derive(Clone, Copy, Debug)]
pub struct InputResponse<'r> {
    value: Value<'r>,
}

impl<'r> InputResponse<'r> {
    /// The whole response object (an `ElicitResult`, `CreateMessageResult`
    /// or `ListRootsResult`).
    pub fn value(&self) -> Value<'r> {
        self.value
    }

    /// An elicitation's `action`.
    pub fn action(&self) -> Option<ElicitAction> {
        let a = self.value.get("action")?.as_str()?;
        [
            ("accept", ElicitAction::Accept),
            ("decline", ElicitAction::Decline),
            ("cancel", ElicitAction::Cancel),
        ]
        .into_iter()
        .find(|(s, _)| a.eq_str(s))
        .map(|(_, x)| x)
    }

    /// An accepted elicitation's form `content`.
    pub fn content(&self) -> Option<Value<'r>> {
        self.value
            .get("content")
            .filter(|c| c.kind() == Kind::Object)
    }
}

/// The MRTR part of a request context.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Mrtr<'r> {
    pub(crate) binding: Option<Binding<'r>>,
    /// The verified payload of the retry's `requestState`.
    pub(crate) state: Option<&'r [u8]>,
    pub(crate) responses: Option<Value<'r>>,
}

impl<'r> Mrtr<'r> {
    /// No MRTR input.
    pub(crate) const NONE: Mrtr<'static> = Mrtr {
        binding: None,
        state: None,
        responses: None,
    };

    pub(crate) fn response(&self, key: &str) -> Option<InputResponse<'r>> {
        let value = self.responses?.get(key)?;
        (value.kind() == Kind::Object).then_some(InputResponse { value })
    }
}

/// A registration: a static descriptor paired with its handler function
/// (`Tool`, `Resource`, `ResourceTemplate`, `Prompt`): the struct, its
/// `const fn new` and a `Debug` that shows the descriptor.
macro_rules! registration {
    ($(#[$doc:meta])* $name:ident($descriptor:ident, $handler:ident $(, $awaits:ident)?)) => {
        $(#[$doc])*
        pub struct $name<S> {
            /// The descriptor.
            pub descriptor: $descriptor<'static>,
            /// The handler (for an async tool, one that answers that it
            /// needs an async server).
            pub handler: $handler<S>,
            $(
            /// An async registration: its index in the server's async
            /// handlers (`crate::asynch`).
            #[cfg(feature = "async-handlers")]
            pub(crate) $awaits: Option<u16>,
            )?
        }

        impl<S> $name<S> {
            /// Pair a descriptor with its handler.
            pub const fn new(descriptor: $descriptor<'static>, handler: $handler<S>) -> Self {
                Self {
                    descriptor,
                    handler,
                    $(#[cfg(feature = "async-handlers")]
                    $awaits: None,)?
                }
            }
        }

        // Copied as a whole (no `S: Copy` bound): an async registration
        // stays async, which rebuilding one with `new` from its parts
        // would not.
        impl<S> Clone for $name<S> {
            fn clone(&self) -> Self {
                *self
            }
        }

        impl<S> Copy for $name<S> {}

        impl<S> core::fmt::Debug for $name<S> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("descriptor", &self.descriptor)
                    .finish_non_exhaustive()
            }
        }
    };
}
pub(crate) use registration;
