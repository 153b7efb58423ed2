#!/usr/bin/env bash
# Every test and check picomcp has. Installs what it needs (rustup targets,
# a Python venv with the official MCP SDK for the interop test).
# Usage: scripts/ci.sh            (from anywhere; runs in the repo root)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n==> %s\n' "$*"; }
started=$(date +%s)

step "toolchain and targets"
rustup target add thumbv7em-none-eabihf >/dev/null 2>&1 || rustup target add thumbv7em-none-eabihf
cargo --version

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy --all-targets -- -D warnings"
cargo clippy --all-targets -- -D warnings

step "cargo test"
cargo test

step "cargo doc (warnings denied)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --features std

step "no_std build for thumbv7em-none-eabihf"
cargo build --lib --no-default-features --target thumbv7em-none-eabihf

step "interop: the official MCP Python SDK client drives the bookshop"
cargo build --release --example bookshop
scripts/interop.sh target/release/examples/bookshop
scripts/interop.sh target/release/examples/bookshop --page-size 1

step "done in $(( $(date +%s) - started )) s"
