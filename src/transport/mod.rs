//! Transports: one blocking serve loop over `embedded-io`, and std adapters.
//!
//! [`serve`] is the only loop: firmware drives it over a UART that implements
//! [`embedded_io::Read`] + [`embedded_io::Write`], the std build over
//! [`Stdio`] (feature `std`). It frames lines with
//! [`LineFramer`], answers every complete
//! frame with [`Server::handle`], flushes only when no complete frame is left
//! (so pipelined requests are answered in batches of writes), and returns
//! `Ok(())` at end of input after answering everything already received.
//!
//! # Cancellation
//!
//! The blocking loop runs one handler at a time, to completion: a
//! `notifications/cancelled` that arrives while a handler runs is read only
//! after it returns, so it cannot interrupt it (and, like every
//! notification, it is never answered); `is_cancelled()` is always `false`
//! here. Progress and log notifications are written and flushed the moment
//! a handler sends them.

#[cfg(feature = "std")]
mod stdio;

#[cfg(feature = "std")]
pub use stdio::Stdio;

use embedded_io::{Read, Write};

use crate::error::Error;
use crate::server::{Connection, Server};
use crate::wire::frame::{LineFramer, Status};

/// Serve `io` until end of input.
///
/// `input` bounds the size of one message (line terminator included): a
/// longer line is answered `-32600 message too large` and skipped. `output`
/// bounds one answer.
///
/// # Errors
///
/// The first read or write error of the transport.
pub fn serve<T, S>(
    server: &Server<'_, S>,
    io: &mut T,
    input: &mut [u8],
    output: &mut [u8],
) -> Result<(), Error<T::Error>>
where
    T: Read + Write,
{
    let mut framer = LineFramer::new(input);
    let mut conn = Connection::new();
    loop {
        loop {
            let n = match framer.next_frame() {
                Status::Partial => break,
                Status::Complete(line) => {
                    let mut sink = Sink {
                        io: &mut *io,
                        error: None,
                    };
                    let n = server.handle_with(&mut conn, line, output, &mut sink);
                    if let Some(e) = sink.error {
                        return Err(Error::Write(e));
                    }
                    n
                }
                Status::Overflow { limit } => server.handle_overflow(limit, output),
            };
            send(io, output, n)?;
        }
        io.flush().map_err(Error::Write)?;
        let spare = framer.spare();
        if spare.is_empty() {
            continue;
        }
        let n = io.read(spare).map_err(Error::Read)?;
        if n == 0 {
            if let Some(line) = framer.finish() {
                let n = server.handle(&mut conn, line, output);
                send(io, output, n)?;
            }
            io.flush().map_err(Error::Write)?;
            return Ok(());
        }
        framer.commit(n);
    }
}

/// Streams a handler's notifications to the transport as they are written
/// (flushed, so progress is seen while the handler runs).
struct Sink<'a, T: Write> {
    io: &'a mut T,
    error: Option<T::Error>,
}

impl<T: Write> crate::content::Notify for Sink<'_, T> {
    fn notify(&mut self, message: &[u8]) {
        if self.error.is_none()
            && let Err(e) = self.io.write_all(message).and_then(|()| self.io.flush())
        {
            self.error = Some(e);
        }
    }
}

fn send<T: Write>(io: &mut T, output: &[u8], n: usize) -> Result<(), Error<T::Error>> {
    match output.get(..n) {
        Some(bytes) if !bytes.is_empty() => io.write_all(bytes).map_err(Error::Write),
        _ => Ok(()),
    }
}
