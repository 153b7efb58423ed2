//! The async serve loop with async tools (features `embedded-io-async` and
//! `async-handlers`): [`serve_async_tools`], and
//! [`serve_async_tools_subscribed`] with waiting calls and subscriptions.

use core::cell::RefCell;
use core::future::poll_fn;
use core::pin::pin;
use core::task::Poll;

use embedded_io_async::{Read, Write};

use super::asynch::{send, write_all};
use super::state::LoopState;
use crate::asynch::AsyncHandlers;
use crate::changes::{Subscriber, Subscriptions};
use crate::error::Error;
use crate::server::deferred::Finished;
use crate::server::{Connection, Server, Waiting, WaitingView};
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
/// A 2025-03-26 batch's async calls are awaited in turn, the batch going
/// on after each; they are not watched for cancellation (the batch is one
/// answer).
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
pub fn serve_async_tools<T, S, A>(
    server: &Server<'_, S>,
    io: &mut T,
    input: &mut [u8],
    output: &mut [u8],
    notes: &mut [u8],
    tools: &A,
) -> impl Future<Output = Result<(), Error<T::Error>>>
where
    T: Read + Write,
    A: AsyncHandlers<S>,
{
    let (waiting, subs) = (None::<&mut Waiting<0, 0>>, None::<&mut Subscriptions<0, 0>>);
    serve_tools_in::<false, _, _, _, _, 0, 0, 0, 0>(
        server, io, input, output, notes, tools, waiting, subs, pending,
    )
}

/// [`serve_async_tools`] on a connection that keeps waiting calls in
/// `waiting` and subscriptions in `subs`, as
/// [`serve_async_subscribed`](super::serve_async_subscribed) does for a
/// server without async tools:
///
/// * a call whose handler asks the client for input (handshake era: an
///   elicitation, a sampling request, the roots) has its requests sent on
///   this stream and waits in `waiting` while the loop serves on; when the
///   client's answers are in, the handler runs again with them, an async
///   one awaited as its first run was (one call at a time, as above), and
///   the call is answered. The store is the loop's alone while a handler
///   runs, which is what lets an async call wait there (over HTTP, where
///   other requests share the store meanwhile, it cannot: `-32603`). On
///   2026-07-28 handlers ask through `input_required`, which needs no
///   store;
/// * the notifications due ([`Server::pending`]) are written before each
///   frame is answered, after the last one, and whenever the future
///   `changed()` returns is ready while the loop waits for input (signal
///   it from [`Changes::on_change`](crate::changes::Changes::on_change));
///   while an async handler runs they wait for its answer.
///
/// It links the parking, client-answer and subscription code, which
/// [`serve_async_tools`] leaves out: the async firmware measured 71,104 B
/// of flash through `serve_async_tools` and 81,708 B through this loop
/// with a two-call store and subscriptions (2026-12-07, README "On an
/// async executor").
///
/// # Errors
///
/// As [`serve_async_tools`].
#[allow(clippy::too_many_arguments)]
pub fn serve_async_tools_subscribed<
    'w,
    T,
    S,
    A,
    F,
    const N: usize,
    const B: usize,
    const K: usize,
    const U: usize,
>(
    server: &Server<'_, S>,
    io: &mut T,
    input: &mut [u8],
    output: &mut [u8],
    notes: &mut [u8],
    tools: &A,
    waiting: &'w mut Waiting<N, B>,
    subs: &'w mut Subscriptions<K, U>,
    changed: impl FnMut() -> F,
) -> impl Future<Output = Result<(), Error<T::Error>>>
where
    T: Read + Write,
    A: AsyncHandlers<S>,
    F: Future<Output = ()>,
{
    serve_tools_in::<true, _, _, _, _, N, B, K, U>(
        server,
        io,
        input,
        output,
        notes,
        tools,
        Some(waiting),
        Some(subs),
        changed,
    )
}

/// The loop of both: `KEEPS`, whether the connection keeps waiting calls
/// and subscriptions. Without, every route passes none of them as a
/// constant (never read from the loop's state), so the optimiser drops
/// their code (parking, client answers, subscriptions). The store and the subscriptions come by reference, and the
/// loop's state is made here: an argument of an async fn is kept twice in
/// its future (as given, and as the local it is moved into).
#[allow(clippy::too_many_arguments)]
async fn serve_tools_in<
    const KEEPS: bool,
    T,
    S,
    A,
    F,
    const N: usize,
    const B: usize,
    const K: usize,
    const U: usize,
>(
    server: &Server<'_, S>,
    io: &mut T,
    input: &mut [u8],
    output: &mut [u8],
    notes: &mut [u8],
    tools: &A,
    waiting: Option<&mut Waiting<N, B>>,
    subs: Option<&mut Subscriptions<K, U>>,
    mut changed: impl FnMut() -> F,
) -> Result<(), Error<T::Error>>
where
    T: Read + Write,
    A: AsyncHandlers<S>,
    F: Future<Output = ()>,
{
    let mut state = match (waiting, subs) {
        (Some(waiting), Some(subs)) if KEEPS => {
            LoopState::new(input, Some(waiting.view())).with_subscriptions(subs.subscriber())
        }
        _ => LoopState::new(input, None),
    };
    let notes = Staging {
        buf: RefCell::new((notes, 0)),
    };
    let mut eof = false;
    // With `KEEPS`, the notifications due go out before each frame is
    // answered: `due` alternates the two through one `send` (an await
    // only one loop had would be a state of both loops' futures).
    let mut due = KEEPS;
    loop {
        loop {
            let mut read = 0;
            let n = if KEEPS && due {
                due = false;
                Some(state.pending(server, output))
            } else {
                due = KEEPS;
                let (framer, conn, waiting, subs) = state.parts();
                let (status, rest, filled) = framer.next_frame_with_rest();
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
                        let kept = Kept { waiting, subs };
                        let answer = one::<KEEPS, _, _, _>(
                            server, conn, kept, io, line, output, &notes, call, tools,
                        );
                        Some(answer.await?)
                    }
                }
            };
            state.framer.commit(read);
            let Some(n) = n else { break };
            send(io, output, n).await?;
        }
        io.flush().await.map_err(Error::Write)?;
        if eof {
            break;
        }
        let spare = state.spare();
        if spare.is_empty() {
            continue;
        }
        // Input or a change, whichever comes first (the read dropped when a
        // change does: `io`'s read is cancel-safe). One await for both
        // loops: `serve_async_tools`' change never comes.
        let woke = {
            let mut reading = pin!(io.read(spare));
            let mut change = pin!(changed());
            poll_fn(|cx| {
                if let Poll::Ready(r) = reading.as_mut().poll(cx) {
                    return Poll::Ready(Some(r));
                }
                if KEEPS {
                    change.as_mut().poll(cx).map(|()| None)
                } else {
                    Poll::Pending
                }
            })
            .await
        };
        let Some(read) = woke else { continue };
        let n = read.map_err(Error::Read)?;
        if n == 0 {
            break;
        }
        state.commit(n);
    }
    // One call site of `end`: each await of it would be a state of this
    // future (150 B of the async firmware's flash for the second).
    end::<KEEPS, _, _, _>(server, io, &mut state, output, &notes, tools).await
}

/// A `changed` that never comes: [`serve_async_tools`] keeps no
/// subscriptions.
fn pending() -> core::future::Pending<()> {
    core::future::pending()
}

/// The end of input: a last line without a newline is answered as any
/// other (an async tool's call awaited, no input left to watch), then the
/// notifications due.
async fn end<const KEEPS: bool, T: Read + Write, S, A: AsyncHandlers<S>>(
    server: &Server<'_, S>,
    io: &mut T,
    state: &mut LoopState<'_, '_>,
    output: &mut [u8],
    notes: &Staging<'_>,
    tools: &A,
) -> Result<(), Error<T::Error>> {
    // As `state.finish`, but (without `KEEPS`) with no waiting store and
    // no subscriptions as constants, not read from `state`.
    let (mut read, mut eof) = (0, true);
    let (framer, conn, waiting, subs) = state.parts();
    let n = match framer.finish() {
        Some(line) => {
            let call = Call {
                rest: &mut [],
                filled: 0,
                read: &mut read,
                eof: &mut eof,
            };
            let kept = Kept { waiting, subs };
            one::<KEEPS, _, _, _>(server, conn, kept, io, line, output, notes, call, tools).await?
        }
        None => 0,
    };
    send(io, output, n).await?;
    if KEEPS {
        let n = state.pending(server, output);
        send(io, output, n).await?;
    }
    io.flush().await.map_err(Error::Write)
}

/// A connection's waiting calls and subscriptions, for one frame.
struct Kept<'k, 'w> {
    waiting: Option<&'k mut WaitingView<'w>>,
    subs: Option<&'k mut Subscriber<'w>>,
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
    /// The handler finished: what it wrote in the output buffer.
    Done(Finished),
    /// It sent a notification (and is pending).
    Noted,
    /// A read finished.
    Read(R),
}

/// Answer one frame; an async tool's call runs here, with notifications
/// written as they come and input watched for its cancellation. Returns the
/// bytes to send from `output` (0 when cancelled).
#[allow(clippy::too_many_arguments)]
async fn one<const KEEPS: bool, T, S, A>(
    server: &Server<'_, S>,
    conn: &mut Connection,
    kept: Kept<'_, '_>,
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
    // Without `KEEPS`, none as constants: `kept` is a field of this
    // future, which the optimiser does not see through.
    let (mut waiting, mut subs) = if KEEPS {
        (kept.waiting, kept.subs)
    } else {
        (None, None)
    };
    let mut next = match server.handle_or_defer(
        conn,
        line,
        output,
        None,
        waiting.as_deref_mut(),
        subs.as_deref_mut(),
    ) {
        Ok(d) => d,
        Err(n) => return Ok(n),
    };
    let Call {
        rest,
        filled,
        read,
        eof,
    } = call;
    let mut sink = |m: &[u8]| notes.push(m);
    // Each async handler's call in turn: one, or a batch's (2025-03-26),
    // each followed by the batch's next elements up to the next.
    loop {
        let (deferred, span) = next.with_span();
        // A call alone is watched for its cancellation; a batch's calls
        // run to their answers (the batch is one answer).
        let mut id = heapless::Vec::<u8, MAX_CANCEL_ID>::new();
        let watch = span.is_none() && id.extend_from_slice(deferred.id(output)).is_ok();
        // The store is left to the call until it is over (this loop runs
        // one call at a time): a handler that asks waits in it.
        let finished = {
            // A batch element's spans are within the element.
            let element = match span {
                Some(span) => line.get_mut(span).unwrap_or(&mut []),
                None => &mut *line,
            };
            let mut handler = pin!(server.finish_deferred::<KEEPS, _, _>(
                deferred,
                element,
                output,
                Some(&mut sink),
                tools,
                waiting.as_deref_mut(),
            ));
            loop {
                let woke = {
                    let free = rest.get_mut(filled + *read..).unwrap_or(&mut []);
                    let reading = !*eof && !free.is_empty();
                    let mut pending_read = pin!(io.read(free));
                    poll_fn(|cx| {
                        if let Poll::Ready(done) = crate::asynch::poll_apart(handler.as_mut(), cx) {
                            return Poll::Ready(Woke::Done(done));
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
                    Woke::Done(done) => break Some(done),
                    Woke::Noted => notes.flush(io).await?,
                    Woke::Read(Err(e)) => return Err(Error::Read(e)),
                    Woke::Read(Ok(0)) => *eof = true,
                    Woke::Read(Ok(n)) => {
                        let before = filled + *read;
                        *read += n;
                        let seen = rest.get(..filled + *read).unwrap_or(&[]);
                        if watch && cancels_in(seen, before, &id, server.json_limits()) {
                            break None;
                        }
                    }
                }
            }
        };
        // Cancelled: the handler's future is dropped. A call run again
        // keeps its slot until the cancel notification, read and buffered,
        // is handled next, in order, and drops it as any waiting call's.
        notes.flush(io).await?;
        let Some(done) = finished else {
            return Ok(0);
        };
        next = match server.after_deferred::<KEEPS>(
            conn,
            line,
            output,
            done,
            None,
            waiting.as_deref_mut(),
            subs.as_deref_mut(),
        ) {
            Ok(next) => next,
            Err(n) => return Ok(n),
        };
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
