//! Transports: one blocking serve loop over `embedded-io`, its async twin, and
//! std adapters.
//!
//! [`serve`] is the blocking loop: firmware drives it over a UART that
//! implements [`embedded_io::Read`] + [`embedded_io::Write`], the std build
//! over [`Stdio`] (feature `std`). It frames lines with
//! [`LineFramer`](crate::wire::frame::LineFramer), answers every complete
//! frame with [`Server::handle_with`], flushes only when no complete frame is
//! left (so pipelined requests are answered in batches of writes), and returns
//! `Ok(())` at end of input after answering everything already received.
//!
//! `serve_async` (feature `embedded-io-async`) is the same loop over
//! `embedded_io_async::Read` + `embedded_io_async::Write`. Both loops share
//! the framing and dispatch steps below; only the I/O calls differ.
//!
//! # Notifications the server sends first
//!
//! With a [`Server::changes`] registry and [`Subscriptions`] for the
//! connection, the loops write the notifications due
//! ([`Server::pending`]) before the answer to every request read and after
//! it. A change made while the loop waits for input — another thread, a
//! timer, an interrupt — must reach the client without a request:
//!
//! * [`serve_subscribed`] (blocking) asks the stream
//!   [`ReadReady`] before each read; when no input
//!   is ready it calls your `idle` function (sleep until an interrupt —
//!   `wfi` — or until [`Stdio::wait`] returns) and then looks at the
//!   registry again. It never blocks in `read` while nothing is ready.
//! * `serve_async_subscribed` waits for input *or* the future your
//!   `changed` function returns (e.g. an embassy `Signal`, a tokio
//!   `Notify`, woken by [`Changes::on_change`](crate::changes::Changes::on_change)),
//!   whichever comes first. The stream's `read` must be cancel-safe (a read
//!   dropped unfinished loses no byte), as embedded-io-async's are meant to be.
//!   `serve_async_tools_subscribed` (feature `async-handlers`) does the
//!   same with async tools.
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
#[cfg(all(feature = "embedded-io-async", feature = "async-handlers"))]
mod awaiting;
mod state;
#[cfg(feature = "std")]
mod stdio;

#[cfg(feature = "embedded-io-async")]
pub use asynch::{serve_async, serve_async_subscribed, serve_async_waiting};
#[cfg(all(feature = "embedded-io-async", feature = "async-handlers"))]
pub use awaiting::{MAX_CANCEL_ID, serve_async_tools, serve_async_tools_subscribed};
#[cfg(feature = "std")]
pub use stdio::{Stdio, StdioWaker};

use embedded_io::{Read, ReadReady, Write};

use crate::changes::Subscriptions;

use crate::content::Notify;
use crate::error::Error;
use crate::server::{Server, Waiting};
use state::{LoopState, answer, rest_after_write};

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
    serve_in(server, io, LoopState::new(input, None), output)
}

/// [`serve`], on a connection whose calls can wait for the client: a
/// handshake-era handler that asks for input (an elicitation, a sampling
/// request, the client's roots; see [`crate::mrtr`]) has its requests sent
/// to the client on this same stream, waits in `waiting` while the loop
/// goes on serving other requests, and is answered when the client's
/// answers have come in ([`Server::handle_waiting`]).
///
/// # Errors
///
/// As [`serve`].
pub fn serve_waiting<T, S, const N: usize, const B: usize>(
    server: &Server<'_, S>,
    io: &mut T,
    input: &mut [u8],
    output: &mut [u8],
    waiting: &mut Waiting<N, B>,
) -> Result<(), Error<T::Error>>
where
    T: Read + Write,
{
    serve_in(
        server,
        io,
        LoopState::new(input, Some(waiting.view())),
        output,
    )
}

/// [`serve_waiting`] on a connection that keeps subscriptions in `subs`
/// and learns of changes while it waits for input: before each read it
/// asks `io` whether input is ready, and when none is it calls
/// `idle(io)` (which should sleep until input or a change may have come:
/// `wfi` on a microcontroller, [`Stdio::wait`] on std) and writes the
/// notifications due. See the [module docs](self#notifications-the-server-sends-first).
#[allow(clippy::too_many_arguments)]
pub fn serve_subscribed<T, S, const N: usize, const B: usize, const K: usize, const U: usize>(
    server: &Server<'_, S>,
    io: &mut T,
    input: &mut [u8],
    output: &mut [u8],
    waiting: &mut Waiting<N, B>,
    subs: &mut Subscriptions<K, U>,
    mut idle: impl FnMut(&mut T),
) -> Result<(), Error<T::Error>>
where
    T: Read + Write + ReadReady,
{
    let mut state =
        LoopState::new(input, Some(waiting.view())).with_subscriptions(subs.subscriber());
    loop {
        drain(server, io, &mut state, output)?;
        if state.spare().is_empty() {
            continue;
        }
        if !io.read_ready().map_err(Error::Read)? {
            idle(io);
            continue;
        }
        let n = io.read(state.spare()).map_err(Error::Read)?;
        if n == 0 {
            return end(server, io, &mut state, output);
        }
        state.commit(n);
    }
}

/// Answer every complete frame, the notifications due before and after
/// each, and flush.
fn drain<T: Write, S>(
    server: &Server<'_, S>,
    io: &mut T,
    state: &mut LoopState<'_, '_>,
    output: &mut [u8],
) -> Result<(), Error<T::Error>> {
    loop {
        let n = state.pending(server, output);
        send(io, output, n)?;
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
    io.flush().map_err(Error::Write)
}

/// End of input: the last line, then the notifications due.
fn end<T: Write, S>(
    server: &Server<'_, S>,
    io: &mut T,
    state: &mut LoopState<'_, '_>,
    output: &mut [u8],
) -> Result<(), Error<T::Error>> {
    let n = state.finish(server, output);
    send(io, output, n)?;
    let n = state.pending(server, output);
    send(io, output, n)?;
    io.flush().map_err(Error::Write)
}

fn serve_in<T, S>(
    server: &Server<'_, S>,
    io: &mut T,
    mut state: LoopState<'_, '_>,
    output: &mut [u8],
) -> Result<(), Error<T::Error>>
where
    T: Read + Write,
{
    loop {
        drain(server, io, &mut state, output)?;
        let spare = state.spare();
        if spare.is_empty() {
            continue;
        }
        let n = io.read(spare).map_err(Error::Read)?;
        if n == 0 {
            return end(server, io, &mut state, output);
        }
        state.commit(n);
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
