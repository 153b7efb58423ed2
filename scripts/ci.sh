#!/usr/bin/env bash
# Every test and check picomcp has. Installs what it needs: rustup targets
# and components, a Python venv with the official MCP SDK (interop), QEMU
# (firmware), Node 22 and the MCP conformance suite from npm, cargo-fuzz.
# Usage: scripts/ci.sh            (from anywhere; runs in the repo root)
#   PICOMCP_CI_QUICK=1            skip the long stages (fuzzing, Miri, benches)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n==> %s (%s s)\n' "$*" "$(( $(date +%s) - started ))"; }
started=$(date +%s)
quick=${PICOMCP_CI_QUICK:-0}
have_nightly() { rustup toolchain list 2>/dev/null | grep -q nightly; }

step "toolchain and targets"
rustup target add thumbv7em-none-eabihf >/dev/null 2>&1 || rustup target add thumbv7em-none-eabihf
cargo --version

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy --workspace --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo test --workspace"
cargo test --workspace

step "cargo doc (warnings denied)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --features std,derive,embedded-io-async

step "no_std build for thumbv7em-none-eabihf"
cargo build --lib --no-default-features --target thumbv7em-none-eabihf

step "interop: the official MCP Python SDK client drives the bookshop (both eras)"
cargo build --release -p bookshop
bookshop=${CARGO_TARGET_DIR:-target}/release/bookshop
scripts/interop.sh "$bookshop"
scripts/interop.sh "$bookshop" --page-size 1

step "embedded: no_std targets, the firmware under QEMU, its footprint"
# Budgets: flash <= 64 KiB, static RAM + peak stack <= 16 KiB (the
# defaults of scripts/embedded.sh).
scripts/embedded.sh

step "Streamable HTTP: the official conformance suite"
scripts/conformance.sh

if [ "$quick" != 1 ] && have_nightly; then
    step "fuzzing (60 s per target)"
    FUZZ_SECONDS=${FUZZ_SECONDS:-60} scripts/fuzz.sh

    step "Miri on the unit tests"
    if rustup +nightly component add miri rust-src >/dev/null 2>&1; then
        # The exhaustive and very deep inputs take hours under Miri; they run
        # natively above.
        cargo +nightly miri test --lib -- --skip never_panics --skip deep --skip depth_limit
    else
        echo "Miri not available: skipped"
    fi
else
    echo "nightly not available or quick mode: fuzzing and Miri skipped"
fi

if [ "$quick" != 1 ]; then
    step "benchmarks (quick mode)"
    PICOMCP_BENCH_QUICK=1 scripts/bench.sh
fi

step "done"
