//! The I/O-free core both serve loops share: framing, dispatch through the
//! server, and the connection's state; the loops add only the reads,
//! writes and flushes.

use crate::changes::Subscriber;
use crate::content::Notify;
use crate::error::Error;
use crate::server::{Connection, Server, WaitingView};
use crate::wire::frame::{LineFramer, Status};

/// The I/O-free part of a serve loop: framing, dispatch and the connection.
/// Both [`serve`] and `serve_async` drive it; they only add the I/O calls.
pub(super) struct LoopState<'i, 'w> {
    pub(super) framer: LineFramer<&'i mut [u8]>,
    pub(super) conn: Connection,
    /// Where this connection's calls wait for the client, if anywhere.
    waiting: Option<WaitingView<'w>>,
    /// This connection's subscriptions, if it keeps any.
    subs: Option<Subscriber<'w>>,
}

impl<'i, 'w> LoopState<'i, 'w> {
    pub(super) fn new(input: &'i mut [u8], waiting: Option<WaitingView<'w>>) -> Self {
        Self {
            framer: LineFramer::new(input),
            conn: Connection::new(),
            waiting,
            subs: None,
        }
    }

    /// Keep subscriptions in `subs`.
    pub(super) fn with_subscriptions(mut self, subs: Subscriber<'w>) -> Self {
        self.subs = Some(subs);
        self
    }

    /// The notifications due on this connection, into `output` (see
    /// [`Server::pending`]); 0 without subscriptions.
    // `#[inline]` on this and `answer_next`, run once per request: without
    // it, whether they are inlined into the serve loop depended on how the
    // binary's code was cut into codegen units (moving one helper function
    // of the stdio bookshop into a module of its own put them out of line:
    // +43 instructions a request, `scripts/list_cost.sh`).
    #[inline]
    pub(super) fn pending<S>(&mut self, server: &Server<'_, S>, output: &mut [u8]) -> usize {
        match self.subs.as_mut() {
            Some(subs) => server.pending(&self.conn, subs, output),
            None => 0,
        }
    }

    /// Answer the next buffered frame into `output`: `Some(n)` bytes to send
    /// (`n` may be 0), or `None` when no complete frame is left (flush, then
    /// read more). With `notify`, a handler's notifications go there as they
    /// are written; without, they come first in `output`.
    #[inline]
    pub(super) fn answer_next<S>(
        &mut self,
        server: &Server<'_, S>,
        output: &mut [u8],
        notify: Option<&mut dyn Notify>,
    ) -> Option<usize> {
        match self.framer.next_frame() {
            Status::Partial => None,
            Status::Complete(line) => Some(
                server
                    .handle_inner(
                        &mut self.conn,
                        line,
                        output,
                        notify,
                        self.waiting.as_mut(),
                        self.subs.as_mut(),
                        None,
                        None,
                    )
                    .len,
            ),
            Status::Overflow { limit } => Some(server.handle_overflow(limit, output)),
        }
    }

    /// The connection, its waiting calls and its subscriptions, beside
    /// the framer: for a loop that answers a frame while it still holds
    /// the framer's buffer (`serve_async_tools`' running call).
    #[cfg(all(feature = "embedded-io-async", feature = "async-handlers"))]
    pub(super) fn parts(
        &mut self,
    ) -> (
        &mut LineFramer<&'i mut [u8]>,
        &mut Connection,
        Option<&mut WaitingView<'w>>,
        Option<&mut Subscriber<'w>>,
    ) {
        (
            &mut self.framer,
            &mut self.conn,
            self.waiting.as_mut(),
            self.subs.as_mut(),
        )
    }

    /// Free input space to read into; empty only while a full buffer waits
    /// for [`answer_next`](Self::answer_next) to report it.
    pub(super) fn spare(&mut self) -> &mut [u8] {
        self.framer.spare()
    }

    /// `n` bytes were read into [`spare`](Self::spare).
    pub(super) fn commit(&mut self, n: usize) {
        self.framer.commit(n);
    }

    /// End of input: answer a last line that had no newline, if any; the
    /// bytes to send (notifications included, ahead of the response).
    pub(super) fn finish<S>(&mut self, server: &Server<'_, S>, output: &mut [u8]) -> usize {
        match self.framer.finish() {
            Some(line) => {
                server
                    .handle_inner(
                        &mut self.conn,
                        line,
                        output,
                        None,
                        self.waiting.as_mut(),
                        self.subs.as_mut(),
                        None,
                        None,
                    )
                    .len
            }
            None => 0,
        }
    }
}

/// The bytes of `output` to send: `output[..n]`, or nothing.
pub(super) fn answer(output: &[u8], n: usize) -> &[u8] {
    output.get(..n).unwrap_or(&[])
}

/// What is left of `bytes` after a `write` that took `n` of them: taking
/// none of a non-empty buffer, or more than was given, is
/// [`Error::WriteZero`]. Shared by both loops' `write_all`.
pub(super) fn rest_after_write<E>(bytes: &[u8], n: usize) -> Result<&[u8], Error<E>> {
    match bytes.get(n..) {
        Some(rest) if n > 0 => Ok(rest),
        _ => Err(Error::WriteZero),
    }
}
