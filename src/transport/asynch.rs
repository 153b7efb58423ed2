//! The async serve loop over `embedded-io-async` (feature `embedded-io-async`).
//!
//! [`serve_async`] is [`serve`](super::serve) with `.await` on every read,
//! write and flush: the same framing, the same dispatch through the `Server`,
//! the same answers byte for byte. It needs no runtime of its own and
//! allocates nothing; any executor (embassy, a `block_on`) can poll it.
//!
//! # Notifications are not streamed
//!
//! [`Notify::notify`](crate::Notify::notify) is a plain `fn`: a handler calls
//! it synchronously in the middle of its work, so it cannot `.await` a write.
//! Buffering notifications in a side queue would need memory the caller did
//! not give, and blocking on an async transport from inside a poll is not
//! possible in general. So the async loop answers with
//! [`Server::handle`]: a handler's progress and log notifications are written
//! into `output` ahead of its response and sent with it, in order, in one
//! `write_all` once the handler returns. The client sees exactly the bytes
//! the blocking loop sends, only not while the handler is still running, and
//! notifications share the `output` buffer with the response (a notification
//! that no longer fits is dropped, as `Reply::progress` reports).
//!
//! Handlers are synchronous in these loops; they await only the transport,
//! so they yield to other tasks whenever input is not there yet or output
//! cannot be taken. For async tools (feature `async-handlers`), whose
//! notifications are written while they run and which a
//! `notifications/cancelled` drops, see `serve_async_tools`.
//!
//! [`Server::handle`]: crate::Server::handle

use core::future::{Future, poll_fn};
use core::pin::pin;
use core::task::Poll;

use embedded_io_async::{Read, Write};

use crate::changes::Subscriptions;

use super::state::{LoopState, answer, rest_after_write};
use crate::error::Error;
use crate::server::{Server, Waiting};

/// Serve `io` until end of input: the async twin of
/// [`serve`](super::serve).
///
/// `input.len()` is the largest message served, its line terminator (`\n`
/// or `\r\n`) not counted: a longer one is answered `-32600 message too
/// large: limit N bytes` (N = `input.len()`) and skipped. `output`
/// bounds one answer, notifications included (see the module docs).
///
/// # Errors
///
/// The first read or write error of the transport; [`Error::WriteZero`]
/// when its `write` accepts no bytes of a non-empty buffer (where
/// embedded-io's `write_all` would panic).
pub async fn serve_async<T, S>(
    server: &Server<'_, S>,
    io: &mut T,
    input: &mut [u8],
    output: &mut [u8],
) -> Result<(), Error<T::Error>>
where
    T: Read + Write,
{
    serve_async_in(server, io, LoopState::new(input, None), output).await
}

/// [`serve_waiting`](super::serve_waiting)'s async twin: calls that ask the
/// client for input wait in `waiting` while the loop serves on.
///
/// # Errors
///
/// As [`serve_async`].
pub async fn serve_async_waiting<T, S, const N: usize, const B: usize>(
    server: &Server<'_, S>,
    io: &mut T,
    input: &mut [u8],
    output: &mut [u8],
    waiting: &mut Waiting<N, B>,
) -> Result<(), Error<T::Error>>
where
    T: Read + Write,
{
    serve_async_in(
        server,
        io,
        LoopState::new(input, Some(waiting.view())),
        output,
    )
    .await
}

/// [`serve_async_waiting`] on a connection that keeps subscriptions in
/// `subs` and learns of changes while it waits for input: it waits for
/// input *or* the future `changed()` returns (signal it from
/// [`Changes::on_change`](crate::changes::Changes::on_change)), whichever
/// comes first, and writes the notifications due before every read. The
/// read future is dropped when a change comes first: `io`'s `read` must be
/// cancel-safe.
#[allow(clippy::too_many_arguments)]
pub async fn serve_async_subscribed<
    T,
    S,
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
    waiting: &mut Waiting<N, B>,
    subs: &mut Subscriptions<K, U>,
    mut changed: impl FnMut() -> F,
) -> Result<(), Error<T::Error>>
where
    T: Read + Write,
    F: Future<Output = ()>,
{
    let mut state =
        LoopState::new(input, Some(waiting.view())).with_subscriptions(subs.subscriber());
    loop {
        loop {
            let n = state.pending(server, output);
            send(io, output, n).await?;
            let Some(n) = state.answer_next(server, output, None) else {
                break;
            };
            send(io, output, n).await?;
        }
        io.flush().await.map_err(Error::Write)?;
        let spare = state.spare();
        if spare.is_empty() {
            continue;
        }
        let read = {
            let mut read = pin!(io.read(spare));
            let mut change = pin!(changed());
            poll_fn(|cx| {
                if let Poll::Ready(r) = read.as_mut().poll(cx) {
                    return Poll::Ready(Some(r));
                }
                match change.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(None),
                    Poll::Pending => Poll::Pending,
                }
            })
            .await
        };
        let Some(read) = read else { continue };
        let n = read.map_err(Error::Read)?;
        if n == 0 {
            let n = state.finish(server, output);
            send(io, output, n).await?;
            let n = state.pending(server, output);
            send(io, output, n).await?;
            io.flush().await.map_err(Error::Write)?;
            return Ok(());
        }
        state.commit(n);
    }
}

async fn serve_async_in<T, S>(
    server: &Server<'_, S>,
    io: &mut T,
    mut state: LoopState<'_, '_>,
    output: &mut [u8],
) -> Result<(), Error<T::Error>>
where
    T: Read + Write,
{
    loop {
        while let Some(n) = state.answer_next(server, output, None) {
            send(io, output, n).await?;
        }
        io.flush().await.map_err(Error::Write)?;
        let spare = state.spare();
        if spare.is_empty() {
            continue;
        }
        let n = io.read(spare).await.map_err(Error::Read)?;
        if n == 0 {
            let n = state.finish(server, output);
            send(io, output, n).await?;
            io.flush().await.map_err(Error::Write)?;
            return Ok(());
        }
        state.commit(n);
    }
}

pub(super) async fn send<T: Write>(
    io: &mut T,
    output: &[u8],
    n: usize,
) -> Result<(), Error<T::Error>> {
    match answer(output, n) {
        [] => Ok(()),
        bytes => write_all(io, bytes).await,
    }
}

/// `Write::write_all` without its panics: a `write` that returns `Ok(0)`
/// for a non-empty buffer, or more than it was given, is [`Error::WriteZero`].
pub(super) async fn write_all<T: Write>(
    io: &mut T,
    mut bytes: &[u8],
) -> Result<(), Error<T::Error>> {
    while !bytes.is_empty() {
        let n = io.write(bytes).await.map_err(Error::Write)?;
        bytes = rest_after_write(bytes, n)?;
    }
    Ok(())
}
