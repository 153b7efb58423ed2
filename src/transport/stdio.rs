//! stdin/stdout as an `embedded-io` transport (feature `std`).

extern crate std;

use std::io::{self, BufWriter, Read as _, StdinLock, StdoutLock, Write as _};

/// Locked stdin and a buffered, locked stdout.
///
/// Nothing but protocol messages may go to stdout: log to stderr.
#[derive(Debug)]
pub struct Stdio {
    stdin: StdinLock<'static>,
    stdout: BufWriter<StdoutLock<'static>>,
}

impl Stdio {
    /// Lock the process's stdin and stdout.
    pub fn new() -> Self {
        Self {
            stdin: io::stdin().lock(),
            stdout: BufWriter::with_capacity(64 * 1024, io::stdout().lock()),
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
        loop {
            match self.stdin.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => return r,
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
