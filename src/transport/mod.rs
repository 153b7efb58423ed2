//! Transports: one blocking serve loop over `embedded-io`, its async twin, and
//! std adapters.
//!
//! [`serve`] is the blocking loop: firmware drives it over a UART that
//! implements [`embedded_io::Read`] + [`embedded_io::Write`], the std build
//! over [`Stdio`] (feature `std`). It frames lines with
//! [`LineFramer`], answers every complete
//! frame with [`Server::handle_with`], flushes only when no complete frame is
//! left (so pipelined requests are answered in batches of writes), and returns
//! `Ok(())` at end of input after answering everything already received.
//!
//! `serve_async` (feature `embedded-io-async`) is the same loop over
//! `embedded_io_async::Read` + `embedded_io_async::Write`. Both loops share
//! the framing and dispatch steps below; only the I/O calls differ.
//!
//! # Cancellation
//!
//! The blocking loop runs one handler at a time, to completion: a
//! `notifications/cancelled` that arrives while a handler runs is read only
//! after it returns, so it cannot interrupt it (and, like every
//! notification, it is never answered); `is_cancelled()` is always `false`
//! here. Progress and log notifications are written and flushed the moment
//! a handler sends them (blocking loop) or sent ahead of the response in the
//! same write (async loop, see `serve_async`).

#[cfg(feature = "embedded-io-async")]
mod asynch;
#[cfg(feature = "std")]
mod stdio;

#[cfg(feature = "embedded-io-async")]
pub use asynch::serve_async;
#[cfg(feature = "std")]
pub use stdio::Stdio;

use embedded_io::{Read, Write};

use crate::content::Notify;
use crate::error::Error;
use crate::server::{Connection, Server};
use crate::wire::frame::{LineFramer, Status};

/// Serve `io` until end of input.
///
/// `input.len()` is the largest message served, its line terminator (`\n`
/// or `\r\n`) not counted: a longer one is answered `-32600 message too
/// large: limit N bytes` (N = `input.len()`) and skipped. `output`
/// bounds one answer.
///
/// # Errors
///
/// The first read or write error of the transport; [`Error::WriteZero`]
/// when its `write` accepts no bytes of a non-empty buffer (where
/// embedded-io's `write_all` would panic).
pub fn serve<T, S>(
    server: &Server<'_, S>,
    io: &mut T,
    input: &mut [u8],
    output: &mut [u8],
) -> Result<(), Error<T::Error>>
where
    T: Read + Write,
{
    let mut state = LoopState::new(input);
    loop {
        loop {
            let mut sink = Sink {
                io: &mut *io,
                error: None,
            };
            let next = state.answer_next(server, output, Some(&mut sink));
            if let Some(e) = sink.error {
                return Err(e);
            }
            let Some(n) = next else { break };
            send(io, output, n)?;
        }
        io.flush().map_err(Error::Write)?;
        let spare = state.spare();
        if spare.is_empty() {
            continue;
        }
        let n = io.read(spare).map_err(Error::Read)?;
        if n == 0 {
            let n = state.finish(server, output);
            send(io, output, n)?;
            io.flush().map_err(Error::Write)?;
            return Ok(());
        }
        state.commit(n);
    }
}

/// The I/O-free part of a serve loop: framing, dispatch and the connection.
/// Both [`serve`] and `serve_async` drive it; they only add the I/O calls.
struct LoopState<'i> {
    framer: LineFramer<&'i mut [u8]>,
    conn: Connection,
}

impl<'i> LoopState<'i> {
    fn new(input: &'i mut [u8]) -> Self {
        Self {
            framer: LineFramer::new(input),
            conn: Connection::new(),
        }
    }

    /// Answer the next buffered frame into `output`: `Some(n)` bytes to send
    /// (`n` may be 0), or `None` when no complete frame is left (flush, then
    /// read more). With `notify`, a handler's notifications go there as they
    /// are written; without, they come first in `output`.
    fn answer_next<S>(
        &mut self,
        server: &Server<'_, S>,
        output: &mut [u8],
        notify: Option<&mut dyn Notify>,
    ) -> Option<usize> {
        match self.framer.next_frame() {
            Status::Partial => None,
            Status::Complete(line) => Some(match notify {
                Some(sink) => server.handle_with(&mut self.conn, line, output, sink),
                None => server.handle(&mut self.conn, line, output),
            }),
            Status::Overflow { limit } => Some(server.handle_overflow(limit, output)),
        }
    }

    /// Free input space to read into; empty only while a full buffer waits
    /// for [`answer_next`](Self::answer_next) to report it.
    fn spare(&mut self) -> &mut [u8] {
        self.framer.spare()
    }

    /// `n` bytes were read into [`spare`](Self::spare).
    fn commit(&mut self, n: usize) {
        self.framer.commit(n);
    }

    /// End of input: answer a last line that had no newline, if any; the
    /// bytes to send (notifications included, ahead of the response).
    fn finish<S>(&mut self, server: &Server<'_, S>, output: &mut [u8]) -> usize {
        match self.framer.finish() {
            Some(line) => server.handle(&mut self.conn, line, output),
            None => 0,
        }
    }
}

/// Streams a handler's notifications to the transport as they are written
/// (flushed, so progress is seen while the handler runs).
struct Sink<'a, T: Write> {
    io: &'a mut T,
    error: Option<Error<T::Error>>,
}

impl<T: Write> Notify for Sink<'_, T> {
    fn notify(&mut self, message: &[u8]) {
        if self.error.is_none()
            && let Err(e) =
                write_all(self.io, message).and_then(|()| self.io.flush().map_err(Error::Write))
        {
            self.error = Some(e);
        }
    }
}

/// The bytes of `output` to send: `output[..n]`, or nothing.
fn answer(output: &[u8], n: usize) -> &[u8] {
    output.get(..n).unwrap_or(&[])
}

fn send<T: Write>(io: &mut T, output: &[u8], n: usize) -> Result<(), Error<T::Error>> {
    match answer(output, n) {
        [] => Ok(()),
        bytes => write_all(io, bytes),
    }
}

/// `Write::write_all` without its panics: a `write` that returns `Ok(0)`
/// for a non-empty buffer, or more than it was given, is [`Error::WriteZero`].
fn write_all<T: Write>(io: &mut T, mut bytes: &[u8]) -> Result<(), Error<T::Error>> {
    while !bytes.is_empty() {
        let n = io.write(bytes).map_err(Error::Write)?;
        bytes = rest_after_write(bytes, n)?;
    }
    Ok(())
}

/// What is left of `bytes` after a `write` that took `n` of them: taking
/// none of a non-empty buffer, or more than was given, is
/// [`Error::WriteZero`]. Shared by both loops' `write_all`.
fn rest_after_write<E>(bytes: &[u8], n: usize) -> Result<&[u8], Error<E>> {
    match bytes.get(n..) {
        Some(rest) if n > 0 => Ok(rest),
        _ => Err(Error::WriteZero),
    }
}
