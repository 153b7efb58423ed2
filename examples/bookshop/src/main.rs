//! The bookshop MCP server over stdio.
//!
//! ```sh
//! cargo run --release -p bookshop
//! ```
//!
//! Then type (or pipe) one JSON-RPC message per line, or point an MCP client
//! at the binary (`target/release/bookshop`). Options:
//! `--page-size N` (list page size, default: only the buffer ends a page),
//! `--max-message BYTES` (input buffer, default 1 MiB) and
//! `--max-response BYTES` (output buffer, default 256 KiB).

mod shop;

use picomcp::transport::{Stdio, serve};

/// 32 bytes from the OS's randomness (std's hasher keys are seeded from it).
fn random_key() -> [u8; 32] {
    use std::hash::{BuildHasher, Hasher};
    let mut key = [0u8; 32];
    for (i, chunk) in key.chunks_mut(8).enumerate() {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_usize(i);
        chunk.copy_from_slice(&h.finish().to_le_bytes());
    }
    key
}

fn main() {
    let mut page_size = 0;
    let mut max_message = 1 << 20;
    let mut max_response = 256 << 10;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().and_then(|v| v.parse::<usize>().ok());
        match (arg.as_str(), value) {
            ("--page-size", Some(n)) => page_size = n,
            ("--max-message", Some(n)) if n >= 64 => max_message = n,
            ("--max-response", Some(n)) if n >= 256 => max_response = n,
            _ => {
                eprintln!(
                    "usage: bookshop [--max-message BYTES (>= 64)] [--max-response BYTES (>= 256)]"
                );
                std::process::exit(2);
            }
        }
    }
    // The only allocations: the two buffers, once, before serving.
    let mut input = vec![0u8; max_message];
    let mut output = vec![0u8; max_response];
    // A fresh key per process for sealing MRTR request state (`reserve`).
    let key: &'static [u8] = Box::leak(random_key().into());
    let server = shop::server_with(page_size, key);
    match serve(&server, &mut Stdio::new(), &mut input, &mut output) {
        Ok(()) => {}
        Err(picomcp::error::Error::Write(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            eprintln!("bookshop: {e}");
            std::process::exit(1);
        }
    }
}
