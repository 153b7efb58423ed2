//! The async serve loop with async tools (features `embedded-io-async` and
//! `async-handlers`): [`serve_async_tools`].

use core::cell::RefCell;
use core::future::poll_fn;
use core::pin::pin;
use core::task::Poll;

use embedded_io_async::{Read, Write};

use super::asynch::{send, write_all};
use super::state::LoopState;
use crate::asynch::AsyncHandlers;
use crate::error::Error;
use crate::server::{Connection, Server};
use crate::wire::envelope::{self as jsonrpc, Envelope};
use crate::wire::frame::Status;
use crate::wire::json::{Limits, Value};

/// Longest request id (as written) whose `notifications/cancelled` a
/// running call watches for; a call with a longer id runs to its answer.
pub const MAX_CANCEL_ID: usize = 64;

/// Serve `io` until end of input, awaiting async tools' handlers
/// ([`crate::asynch`]) from `tools`: the async twin of
/// [`serve`](super::serve) for a server with async tools (its sync tools,
/// resources and prompts are served as by [`serve_async`](super::serve_async)).
///
/// **One call at a time.** A stream carries one answer after another, and
/// the handler's arguments live in the input buffer, so while an async
/// handler runs the loop does not start another request; it keeps reading
/// input into the free part of `input` (until it is full) so that it sees:
///
/// * `notifications/cancelled` naming the running call (an id of at most
///   [`MAX_CANCEL_ID`] bytes): the handler's future is dropped and the call
///   gets no answer; the notification itself and every other request read
///   meanwhile are then handled in order;
/// * the end of input: the call still runs to its answer, then the loop
///   ends as [`serve`](super::serve) does.
///
/// **Notifications as they happen.** A handler's progress and log
/// notifications go into `notes` and are written to `io` whenever the
/// handler awaits, before it goes on, and always ahead of its answer. What
/// does not fit in `notes` between two awaits is dropped (size it for the
/// notifications a handler sends between two `.await`s; 256 bytes hold a
/// progress notification with a 64-byte token and message).
///
/// `io`'s `read` must be cancel-safe: a read in flight is dropped when the
/// handler finishes or has a notification to send.
///
/// # Errors
///
/// As [`serve_async`](super::serve_async).
pub async fn serve_async_tools<T, S, A>(
    server: &Server<'_, S>,
    io: &mut T,
    input: &mut [u8],
    output: &mut [u8],
    notes: &mut [u8],
    tools: &A,
) -> Result<(), Error<T::Error>>
where
    T: Read + Write,
    A: AsyncHandlers<S>,
{
    let mut state = LoopState::new(input, None);
    let notes = Staging {
        buf: RefCell::new((notes, 0)),
    };
    let mut eof = false;
    loop {
        loop {
            let mut read = 0;
            let n = {
                let (status, rest, filled) = state.framer.next_frame_with_rest();
                match status {
                    Status::Partial => None,
                    Status::Overflow { limit } => Some(server.handle_overflow(limit, output)),
                    Status::Complete(line) => {
                        let call = Call {
                            rest,
                            filled,
                            read: &mut read,
                            eof: &mut eof,
                        };
                        let conn = &mut state.conn;
                        Some(one(server, conn, io, line, output, &notes, call, tools).await?)
                    }
                }
            };
            state.framer.commit(read);
            let Some(n) = n else { break };
            send(io, output, n).await?;
        }
        io.flush().await.map_err(Error::Write)?;
        if eof {
            return end(server, io, &mut state, output, &notes, tools).await;
        }
        let spare = state.spare();
        if spare.is_empty() {
            continue;
        }
        let n = io.read(spare).await.map_err(Error::Read)?;
        if n == 0 {
            return end(server, io, &mut state, output, &notes, tools).await;
        }
        state.commit(n);
    }
}

/// The end of input: a last line without a newline is answered as any
/// other (an async tool's call awaited, no input left to watch).
async fn end<T: Read + Write, S, A: AsyncHandlers<S>>(
    server: &Server<'_, S>,
    io: &mut T,
    state: &mut LoopState<'_, '_>,
    output: &mut [u8],
    notes: &Staging<'_>,
    tools: &A,
) -> Result<(), Error<T::Error>> {
    // As `state.finish`, but with no waiting store and no subscriptions
    // as constants, not read from `state`: every route this loop takes
    // then has them as constants, and the optimiser drops their code
    // (parking, client answers, subscriptions: 9.6 KB of the async
    // firmware).
    let (mut read, mut eof) = (0, true);
    let n = match state.framer.finish() {
        Some(line) => {
            let call = Call {
                rest: &mut [],
                filled: 0,
                read: &mut read,
                eof: &mut eof,
            };
            one(
                server,
                &mut state.conn,
                io,
                line,
                output,
                notes,
                call,
                tools,
            )
            .await?
        }
        None => 0,
    };
    send(io, output, n).await?;
    io.flush().await.map_err(Error::Write)
}

/// The input around a running call: `rest[..filled]` was buffered after
/// its frame, `rest[filled..]` is free; `read` counts what the call's
/// reads added, `eof` records the end of input.
struct Call<'c> {
    rest: &'c mut [u8],
    filled: usize,
    read: &'c mut usize,
    eof: &'c mut bool,
}

/// A handler's notifications between two of its awaits.
struct Staging<'b> {
    buf: RefCell<(&'b mut [u8], usize)>,
}

impl Staging<'_> {
    fn push(&self, message: &[u8]) {
        if let Ok(mut b) = self.buf.try_borrow_mut() {
            let (buf, len) = &mut *b;
            let at = *len;
            if let Some(dst) = buf.get_mut(at..at + message.len()) {
                dst.copy_from_slice(message);
                *len += message.len();
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.buf.try_borrow().map_or(true, |b| b.1 == 0)
    }

    /// Write what is staged to `io` and empty it. The staged bytes stay
    /// borrowed across the write: the only other user, the handler's sink,
    /// runs only while the handler is polled, never during this write (and
    /// it would drop a message rather than conflict).
    #[allow(clippy::await_holding_refcell_ref)]
    async fn flush<T: Write>(&self, io: &mut T) -> Result<(), Error<T::Error>> {
        let staged = {
            let b = self.buf.try_borrow().map_err(|_| Error::WriteZero)?;
            b.1
        };
        if staged > 0 {
            {
                let b = self.buf.try_borrow().map_err(|_| Error::WriteZero)?;
                write_all(io, b.0.get(..staged).unwrap_or(&[])).await?;
            }
            io.flush().await.map_err(Error::Write)?;
            if let Ok(mut b) = self.buf.try_borrow_mut() {
                b.1 = 0;
            }
        }
        Ok(())
    }
}

/// What woke a running call.
enum Woke<R> {
    /// The handler finished: the answer's length in the output buffer.
    Done(usize),
    /// It sent a notification (and is pending).
    Noted,
    /// A read finished.
    Read(R),
}

/// Answer one frame; an async tool's call runs here, with notifications
/// written as they come and input watched for its cancellation. Returns the
/// bytes to send from `output` (0 when cancelled).
#[allow(clippy::too_many_arguments)]
async fn one<T, S, A>(
    server: &Server<'_, S>,
    conn: &mut Connection,
    io: &mut T,
    line: &mut [u8],
    output: &mut [u8],
    notes: &Staging<'_>,
    call: Call<'_>,
    tools: &A,
) -> Result<usize, Error<T::Error>>
where
    T: Read + Write,
    A: AsyncHandlers<S>,
{
    let deferred = match server.handle_or_defer(conn, line, output, None) {
        Ok(d) => d,
        Err(n) => return Ok(n),
    };
    let mut id = heapless::Vec::<u8, MAX_CANCEL_ID>::new();
    let watch = id.extend_from_slice(deferred.id(output)).is_ok();
    let Call {
        rest,
        filled,
        read,
        eof,
    } = call;
    let mut sink = |m: &[u8]| notes.push(m);
    let mut handler = pin!(server.finish_deferred(deferred, line, output, Some(&mut sink), tools));
    loop {
        let woke = {
            let free = rest.get_mut(filled + *read..).unwrap_or(&mut []);
            let reading = !*eof && !free.is_empty();
            let mut pending_read = pin!(io.read(free));
            poll_fn(|cx| {
                if let Poll::Ready(answer) = crate::asynch::poll_apart(handler.as_mut(), cx) {
                    return Poll::Ready(Woke::Done(answer.len));
                }
                if reading && let Poll::Ready(r) = pending_read.as_mut().poll(cx) {
                    return Poll::Ready(Woke::Read(r));
                }
                if !notes.is_empty() {
                    return Poll::Ready(Woke::Noted);
                }
                Poll::Pending
            })
            .await
        };
        match woke {
            Woke::Done(n) => {
                notes.flush(io).await?;
                return Ok(n);
            }
            Woke::Noted => notes.flush(io).await?,
            Woke::Read(Err(e)) => return Err(Error::Read(e)),
            Woke::Read(Ok(0)) => *eof = true,
            Woke::Read(Ok(n)) => {
                let before = filled + *read;
                *read += n;
                let seen = rest.get(..filled + *read).unwrap_or(&[]);
                if watch && cancels_in(seen, before, &id, server.json_limits()) {
                    notes.flush(io).await?;
                    return Ok(0);
                }
            }
        }
    }
}

/// Whether a complete line of `buffered` that ends at or after `from`
/// (new bytes) is `notifications/cancelled` for request `id`.
fn cancels_in(buffered: &[u8], from: usize, id: &[u8], limits: &Limits) -> bool {
    let mut start = 0;
    for (i, &b) in buffered.iter().enumerate() {
        if b != b'\n' {
            continue;
        }
        let line = buffered.get(start..i).unwrap_or(&[]);
        if i >= from && cancels(line, id, limits) {
            return true;
        }
        start = i + 1;
    }
    false
}

/// Whether `line` is a JSON-RPC `notifications/cancelled` naming `id`.
fn cancels(line: &[u8], id: &[u8], limits: &Limits) -> bool {
    let Ok(value) = Value::parse(line, limits) else {
        return false;
    };
    let Ok(Envelope::Notification(n)) = jsonrpc::parse(value) else {
        return false;
    };
    crate::mcp::cancelled_request(&n) == Some(id)
}
