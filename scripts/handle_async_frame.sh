#!/usr/bin/env bash
# The stack frames of a caller that runs its own loop over
# `Server::handle_async` (an embassy task, say) on thumbv7m: a probe crate,
# built as the firmware is (opt-level "z", LTO, one codegen unit, abort on
# panic), whose `serve_one` pins the bookshop's `handle_async` future for
# one request and polls it. Prints its largest frames (scripts/frames.py)
# and fails when `serve_one`'s frame, the future included, exceeds
# MAX_FRAME bytes (default 3072: it was 4,320 B while the awaited
# handler's poll was inlined into it, 2,328 B with it polled apart;
# src/asynch.rs, poll_apart). Run by scripts/embedded.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
max=${MAX_FRAME:-3072}
target=thumbv7m-none-eabi
tools="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin"
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
mkdir -p "$probe/src"
# The firmware's lock file: the same versions of what they share.
cp examples/firmware/Cargo.lock "$probe/Cargo.lock"
cat > "$probe/Cargo.toml" <<EOF
[package]
name = "handle-async-probe"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[lib]
crate-type = ["staticlib"]

[dependencies]
picomcp = { path = "$root", default-features = false, features = ["derive", "async-handlers"] }
serde = { version = "1.0.220", default-features = false, features = ["derive"] }

[profile.release]
opt-level = "z"
lto = true
codegen-units = 1
panic = "abort"
EOF
cat > "$probe/src/lib.rs" <<EOF
#![no_std]
#[path = "$root/examples/bookshop/src/shop.rs"]
#[allow(dead_code)]
mod shop;

use core::future::Future;
use core::pin::pin;
use core::task::{Context, Poll, Waker};
use picomcp::tool::{Arguments, Reply, ToolOutcome};

/// get_author as an async tool: the call is deferred to phase 2.
async fn get_author<'a>(shop: &'a shop::Shop, args: Arguments<'a>, reply: Reply<'_>) -> ToolOutcome<'a> {
    (shop::TOOLS[0].handler)(shop, args, reply)
}

picomcp::async_tools! {
    struct Awaiting for shop::Shop {
        GET_AUTHOR: shop::TOOLS[0].descriptor => get_author,
    }
}

static SERVER: picomcp::Server<'static, shop::Shop> = shop::server();

/// One request through handle_async, polled to its answer.
#[unsafe(no_mangle)]
pub extern "C" fn serve_one(frame: &mut [u8; 512], out: &mut [u8; 2048]) -> usize {
    let mut conn = picomcp::Connection::new();
    let mut fut = pin!(SERVER.handle_async(&mut conn, frame, out, &Awaiting));
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(n) = fut.as_mut().poll(&mut cx) {
            return n;
        }
    }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {}
}
EOF
# The firmware's own flags (examples/firmware/.cargo/config.toml) but the
# linker script's, which a staticlib does not link.
out=${CARGO_TARGET_DIR:-$root/target}/handle-async-probe
CARGO_TARGET_DIR=$out \
    RUSTFLAGS="-C llvm-args=-inline-threshold=12" \
    cargo build -q --release --manifest-path "$probe/Cargo.toml" --target "$target"
lib="$out/$target/release/libhandle_async_probe.a"
report=$(python3 scripts/frames.py "$tools/llvm-objdump" "$lib" '^serve_one$' 6)
echo "$report"
frame=$(awk '$2 == "serve_one" { print $1; exit }' <<<"$report")
[ -n "$frame" ] || { echo "handle_async_frame: no frame found for serve_one" >&2; exit 1; }
echo "serve_one (a handle_async caller): frame $frame B (limit $max B)"
if [ "$frame" -gt "$max" ]; then
    echo "handle_async_frame: serve_one's frame $frame B > $max B" >&2
    exit 1
fi
