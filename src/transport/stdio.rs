//! stdin/stdout as an `embedded-io` transport (feature `std`).

extern crate std;

use std::io::{self, BufWriter, Read as _, StdinLock, StdoutLock, Write as _};
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::vec::Vec;

/// Locked stdin and a buffered, locked stdout.
///
/// Nothing but protocol messages may go to stdout: log to stderr.
///
/// [`Stdio::new`] reads stdin in the serving thread (reads block).
/// [`Stdio::live`] reads it in a thread of its own, so the serve loop can
/// ask whether input is ready ([`embedded_io::ReadReady`]) and
/// [`wait`](Stdio::wait) for input *or* a wake-up from a
/// [`StdioWaker`] — what [`serve_subscribed`](super::serve_subscribed)
/// needs to deliver a change made while no request is coming.
#[derive(Debug)]
pub struct Stdio {
    input: Input,
    stdout: BufWriter<StdoutLock<'static>>,
}

#[derive(Debug)]
enum Input {
    Locked(StdinLock<'static>),
    Thread {
        rx: Receiver<Event>,
        tx: Sender<Event>,
        pending: Vec<u8>,
        pos: usize,
        eof: bool,
    },
}

#[derive(Debug)]
enum Event {
    Data(Vec<u8>),
    End(Option<io::Error>),
    Wake,
}

/// Wakes a [`Stdio::live`] transport waiting in [`Stdio::wait`] (cheap to
/// clone, `Send`): call [`wake`](Self::wake) after announcing a change.
#[derive(Clone, Debug)]
pub struct StdioWaker(Sender<Event>);

impl StdioWaker {
    /// Wake the waiting serve loop (nothing happens once it has ended).
    pub fn wake(&self) {
        let _ = self.0.send(Event::Wake);
    }
}

impl Stdio {
    /// Lock the process's stdin and stdout.
    pub fn new() -> Self {
        Self {
            input: Input::Locked(io::stdin().lock()),
            stdout: BufWriter::with_capacity(64 * 1024, io::stdout().lock()),
        }
    }

    /// Read stdin in a thread of its own (see the type's docs).
    pub fn live() -> Self {
        let (tx, rx) = channel();
        let reader = tx.clone();
        std::thread::spawn(move || {
            let mut stdin = io::stdin().lock();
            let mut buf = std::vec![0u8; 64 * 1024];
            loop {
                let event = match stdin.read(&mut buf) {
                    Ok(0) => Event::End(None),
                    Ok(n) => Event::Data(buf.get(..n).unwrap_or_default().to_vec()),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => Event::End(Some(e)),
                };
                let end = matches!(event, Event::End(_));
                if reader.send(event).is_err() || end {
                    return;
                }
            }
        });
        Self {
            input: Input::Thread {
                rx,
                tx,
                pending: Vec::new(),
                pos: 0,
                eof: false,
            },
            stdout: BufWriter::with_capacity(64 * 1024, io::stdout().lock()),
        }
    }

    /// A waker for [`wait`](Self::wait) (`None` for [`Stdio::new`]).
    pub fn waker(&self) -> Option<StdioWaker> {
        match &self.input {
            Input::Thread { tx, .. } => Some(StdioWaker(tx.clone())),
            Input::Locked(_) => None,
        }
    }

    /// Block until input is ready or a [`StdioWaker`] wakes this transport
    /// (returns at once for [`Stdio::new`], whose reads block anyway).
    pub fn wait(&mut self) {
        if let Input::Thread {
            rx,
            pending,
            pos,
            eof,
            ..
        } = &mut self.input
        {
            if *pos < pending.len() || *eof {
                return;
            }
            match rx.recv() {
                Ok(Event::Data(d)) => {
                    *pending = d;
                    *pos = 0;
                }
                Ok(Event::Wake) => {}
                Ok(Event::End(_)) | Err(_) => *eof = true,
            }
        }
    }
}

impl Default for Stdio {
    fn default() -> Self {
        Self::new()
    }
}

impl embedded_io::ErrorType for Stdio {
    type Error = io::Error;
}

impl embedded_io::Read for Stdio {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, io::Error> {
        match &mut self.input {
            Input::Locked(stdin) => loop {
                match stdin.read(buf) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    r => return r,
                }
            },
            Input::Thread {
                rx,
                pending,
                pos,
                eof,
                ..
            } => loop {
                if let Some(rest) = pending.get(*pos..)
                    && !rest.is_empty()
                {
                    let n = rest.len().min(buf.len());
                    if let (Some(dst), Some(src)) = (buf.get_mut(..n), rest.get(..n)) {
                        dst.copy_from_slice(src);
                    }
                    *pos += n;
                    return Ok(n);
                }
                if *eof {
                    return Ok(0);
                }
                match rx.recv() {
                    Ok(Event::Data(d)) => {
                        *pending = d;
                        *pos = 0;
                    }
                    Ok(Event::Wake) => {}
                    Ok(Event::End(None)) | Err(_) => *eof = true,
                    Ok(Event::End(Some(e))) => {
                        *eof = true;
                        return Err(e);
                    }
                }
            },
        }
    }
}

impl embedded_io::ReadReady for Stdio {
    fn read_ready(&mut self) -> Result<bool, io::Error> {
        match &mut self.input {
            // Reads block: always "ready".
            Input::Locked(_) => Ok(true),
            Input::Thread {
                rx,
                pending,
                pos,
                eof,
                ..
            } => {
                if *pos < pending.len() || *eof {
                    return Ok(true);
                }
                loop {
                    match rx.try_recv() {
                        Ok(Event::Data(d)) => {
                            *pending = d;
                            *pos = 0;
                            return Ok(true);
                        }
                        Ok(Event::Wake) => continue,
                        Ok(Event::End(_)) | Err(TryRecvError::Disconnected) => {
                            *eof = true;
                            return Ok(true);
                        }
                        Err(TryRecvError::Empty) => return Ok(false),
                    }
                }
            }
        }
    }
}

impl embedded_io::Write for Stdio {
    fn write(&mut self, buf: &[u8]) -> Result<usize, io::Error> {
        self.stdout.write(buf)
    }

    fn flush(&mut self) -> Result<(), io::Error> {
        self.stdout.flush()
    }
}
