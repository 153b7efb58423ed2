//! The bookshop MCP server over stdio.
//!
//! ```sh
//! cargo run --release -p bookshop
//! ```
//!
//! Then type (or pipe) one JSON-RPC message per line, or point an MCP client
//! at the binary (`target/release/bookshop`). `bookshop --help` lists the
//! options ([`USAGE`]).

mod key;
mod shop;

use std::sync::OnceLock;

use picomcp::changes::{Changes, Subscriptions};
use picomcp::server::{ListCache, Waiting};
use picomcp::transport::{Stdio, StdioWaker, serve_subscribed};

/// Wakes the serve loop when a change is announced while it waits for input.
static WAKER: OnceLock<StdioWaker> = OnceLock::new();

fn wake() {
    if let Some(w) = WAKER.get() {
        w.wake();
    }
}

/// This process's change registry: `buy`s, and the deliveries of
/// `--restock-every`, which no request causes.
static CHANGES: Changes = Changes::new().on_change(wake);

/// `bookshop --help` (stdout, exit 0); after an unknown option or a bad
/// value, on stderr with exit status 2.
const USAGE: &str = "\
usage: bookshop [--page-size N] [--max-message BYTES] [--max-response BYTES] [--key-file PATH]
                [--restock-every SECONDS] [--state-ttl-s SECONDS]

The picomcp bookshop: an MCP server on stdin/stdout, one JSON-RPC message per line.

options:
  --page-size N         items per page of every list; 0: only the output
                        buffer ends a page (default: 0)
  --max-message BYTES   the largest message served, its line terminator
                        (\\n or \\r\\n) not counted; a longer one is answered
                        'message too large: limit BYTES bytes' (>= 64,
                        default: 1048576)
  --max-response BYTES  the largest answer, notifications included
                        (>= 256, default: 262144)
  --key-file PATH       the secret (at least 32 bytes) that seals request
                        state and tags list cursors (default: a random key
                        for this process, with a warning)
  --restock-every SECONDS
                        deliver one copy of a sold-out or short title every
                        SECONDS (a change no request makes: subscribers of
                        books://stock are told at once); 0: never (default)
  --state-ttl-s SECONDS how long a sealed request state (reserve's second
                        round, 2026-07-28) stays valid; 0: forever
                        (default: 300)
  -h, --help            print this help and exit
";

/// What the command line asks for.
#[derive(Debug, PartialEq)]
struct Options {
    page_size: usize,
    max_message: usize,
    max_response: usize,
    key_file: Option<String>,
    restock_every: usize,
    state_ttl: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            page_size: 0,
            max_message: 1 << 20,
            max_response: 256 << 10,
            key_file: None,
            restock_every: 0,
            state_ttl: 300,
        }
    }
}

/// `Ok(None)` for `--help`; `Err` names what is wrong.
fn parse(mut args: impl Iterator<Item = String>) -> Result<Option<Options>, String> {
    let mut options = Options::default();
    while let Some(arg) = args.next() {
        let (slot, min) = match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--key-file" => {
                options.key_file = Some(args.next().ok_or("--key-file needs a path")?);
                continue;
            }
            "--page-size" => (&mut options.page_size, 0),
            "--max-message" => (&mut options.max_message, 64),
            "--max-response" => (&mut options.max_response, 256),
            "--restock-every" => (&mut options.restock_every, 0),
            "--state-ttl-s" => (&mut options.state_ttl, 0),
            _ => return Err(format!("unknown option '{arg}'")),
        };
        *slot = match args.next().map(|v| v.parse::<usize>()) {
            Some(Ok(n)) if n >= min => n,
            _ => return Err(format!("{arg} needs a number >= {min}")),
        };
    }
    Ok(Some(options))
}

/// Seconds since the Unix epoch: the clock of sealed request state.
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn main() {
    let options = match parse(std::env::args().skip(1)) {
        Ok(Some(options)) => options,
        Ok(None) => {
            print!("{USAGE}");
            return;
        }
        Err(e) => {
            eprint!("bookshop: {e}\n{USAGE}");
            std::process::exit(2);
        }
    };
    let Options {
        page_size,
        max_message,
        max_response,
        key_file,
        restock_every,
        state_ttl,
    } = options;
    // The only allocations: the two buffers, once, before serving.
    let mut input = vec![0u8; max_message];
    let mut output = vec![0u8; max_response];
    // The secret that seals MRTR request state and tags list cursors: from
    // --key-file, else fresh for this process (never a key in the source).
    let key: &'static [u8] = match key_file {
        Some(path) => match std::fs::read(&path) {
            Ok(key) if key.len() >= 32 => Box::leak(key.into_boxed_slice()),
            Ok(key) => {
                eprintln!(
                    "bookshop: {path}: the key must be at least 32 bytes (it has {})",
                    key.len()
                );
                std::process::exit(2);
            }
            Err(e) => {
                eprintln!("bookshop: cannot read the key file {path}: {e}");
                std::process::exit(2);
            }
        },
        None => {
            eprintln!("bookshop: warning: no --key-file: a random key for this process");
            Box::leak(key::random_key().into())
        }
    };
    // Each list's first page is written once per protocol version, then
    // copied (picomcp::server::ListCache): 4,096 words (32 KiB on 64-bit) for
    // the four lists under each protocol version (about 11 KB of pages).
    static LISTS: ListCache<4096, 24> = ListCache::new();
    let mut server = shop::server_in(page_size, key, &CHANGES).list_cache(&LISTS);
    if state_ttl > 0 {
        server = server.request_state_ttl(state_ttl as u64, unix_now);
    }
    let server: &'static _ = Box::leak(Box::new(server));
    // A change no request makes (the restock timer) must reach subscribers
    // while the loop waits for input: stdin read in a thread of its own
    // (Stdio::live). Without the timer every change is made by a request and
    // written before the loop reads again, so stdin is read in place: no
    // thread, no channel, no copy of the input between them.
    let stdio = if restock_every > 0 {
        Stdio::live()
    } else {
        Stdio::new()
    };
    if let Some(w) = stdio.waker() {
        let _ = WAKER.set(w);
    }
    if restock_every > 0 {
        let every = std::time::Duration::from_secs(restock_every as u64);
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(every);
                server.state().restock();
            }
        });
    }
    // Subscriptions of this connection: 8 URIs of up to 256 bytes.
    let mut subs = Box::new(Subscriptions::<8, 256>::new());
    // Calls that ask the client (reserve, blurb) on a handshake-era
    // connection wait here: 4 at once, each up to 16 KiB (request, state and
    // the client's answers). On the heap, once, like the buffers.
    let mut waiting = Box::new(Waiting::<4, { 16 << 10 }>::new());
    let mut stdio = stdio;
    match serve_subscribed(
        server,
        &mut stdio,
        &mut input,
        &mut output,
        &mut waiting,
        &mut subs,
        Stdio::wait,
    ) {
        Ok(()) => {}
        Err(picomcp::error::Error::Write(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            eprintln!("bookshop: {e}");
            std::process::exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_args(args: &[&str]) -> Result<Option<Options>, String> {
        parse(args.iter().map(|a| a.to_string()))
    }

    #[test]
    fn options_and_their_bounds() {
        assert_eq!(parse_args(&[]), Ok(Some(Options::default())));
        assert_eq!(
            parse_args(&[
                "--max-message",
                "64",
                "--max-response",
                "256",
                "--page-size",
                "2",
                "--key-file",
                "k.bin"
            ]),
            Ok(Some(Options {
                page_size: 2,
                max_message: 64,
                max_response: 256,
                key_file: Some("k.bin".into()),
                restock_every: 0,
                state_ttl: 300,
            }))
        );
        assert_eq!(
            parse_args(&["--key-file"]),
            Err("--key-file needs a path".into())
        );
        assert!(parse_args(&["--max-message", "63"]).is_err());
        assert!(parse_args(&["--max-response", "255"]).is_err());
        assert_eq!(
            parse_args(&["--max-message", "1", "-h"]),
            Err("--max-message needs a number >= 64".into())
        );
        assert_eq!(parse_args(&["--page-size", "1", "-h"]), Ok(None));
    }

    #[test]
    fn usage_states_the_real_defaults() {
        let d = Options::default();
        for (option, default) in [
            ("--page-size N", d.page_size),
            ("--max-message BYTES", d.max_message),
            ("--max-response BYTES", d.max_response),
        ] {
            // The option's paragraph: from its name to the next option.
            let at = USAGE.find(&format!("  {option}")).expect(option);
            let rest = &USAGE[at + 2..];
            let paragraph = &rest[..rest.find("\n  -").unwrap_or(rest.len())];
            assert!(
                paragraph.contains(&format!("default: {default})")),
                "{option}: {paragraph}"
            );
        }
    }
}
