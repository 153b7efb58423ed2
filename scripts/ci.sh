#!/usr/bin/env bash
# Every test and check picomcp has. Installs what it needs: rustup targets
# and components, a Python venv with the official MCP SDK (interop), the
# official TypeScript SDK from npm (interop), QEMU (firmware), nginx and
# redis-server from Debian's packages (scale-out), Node 22 and the
# MCP conformance suite from npm, cargo-fuzz, cargo-hack.
# Usage: scripts/ci.sh            (from anywhere; runs in the repo root)
#   PICOMCP_CI_QUICK=1            skip the long stages (fuzzing, Miri, benches)
# Reads nothing outside the checkout but what it installs: the test data is
# in tests/data/, and the "self-contained" steps below prove it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
target_dir=$(realpath -m "${CARGO_TARGET_DIR:-target}")

step() { printf '\n==> %s (%s s)\n' "$*" "$(( $(date +%s) - started ))"; }
started=$(date +%s)
quick=${PICOMCP_CI_QUICK:-0}
have_nightly() { rustup toolchain list 2>/dev/null | grep -q nightly; }

step "toolchain and targets"
rustup target add thumbv7em-none-eabihf >/dev/null 2>&1 || rustup target add thumbv7em-none-eabihf
cargo --version

step "cargo fmt --check (the workspace, and the fuzz and firmware workspaces)"
cargo fmt --all -- --check
(cd fuzz && cargo fmt -- --check)
(cd examples/firmware && cargo fmt -- --check)

step "layout: file sizes, layer order and import cycles of src/ (scripts/layout.py)"
python3 scripts/layout.py

step "cargo clippy --workspace --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo clippy -D warnings for thumbv7em-none-eabihf (the no_std feature sets)"
for features in "" defmt,embedded-io-async,derive log,embedded-io-async,derive async-handlers,derive; do
    echo "-- features: ${features:-none}"
    cargo clippy --lib --no-default-features --features "$features" \
        --target thumbv7em-none-eabihf -- -D warnings
done

step "every feature combination of the library (cargo hack, host, no dev-dependencies)"
command -v cargo-hack >/dev/null || cargo install cargo-hack --locked
# defmt and log are mutually exclusive (a compile_error! says so; checked
# just below): the powerset of std, defmt, log, embedded-io-async, derive,
# async-handlers without the two together (`default` is empty) is 48
# `cargo check`s of the library alone. --no-dev-deps edits Cargo.toml while it runs, and restores it.
cargo hack check -p picomcp --lib --feature-powerset --no-dev-deps \
    --exclude-features default --mutually-exclusive-features defmt,log
if cargo check -q --lib --features defmt,log 2>"$target_dir/defmt-log.txt" ||
    ! grep -q "mutually exclusive" "$target_dir/defmt-log.txt"; then
    echo "ci: features defmt + log must be refused with a compile_error!" >&2
    exit 1
fi

step "MSRV: rust-version 1.88 kept honest without a 1.88 toolchain"
# clippy's incompatible_msrv (denied in Cargo.toml) flags std/core APIs newer
# than rust-version; scripts/msrv.sh proves it fires on our crate and that no
# normal dependency of the library declares a newer rust-version.
scripts/msrv.sh

step "self-contained: no path outside the checkout"
# Tests, scripts and tools read the repository only: no path into the
# shared folder beside the checkout, no absolute path of the development
# machine. (Each pattern is written so that it does not match itself.)
if git grep -n -e '\.\./shared' -e '/wor[k]/' -- tests fuzz benches scripts src examples; then
    echo "ci: the lines above point outside the checkout" >&2
    exit 1
fi

step "self-contained: a clone in an empty folder runs the tests that read tests/data"
# A clone of HEAD (commit first: uncommitted changes are not in it), in a
# fresh temporary folder where nothing lies beside the checkout. Then the
# fuzz seeding (no nightly). Its own target directory: cargo names a
# workspace's artifacts by paths relative to the workspace, so a clone
# building into this checkout's target directory would leave binaries that
# this checkout then takes for fresh (with the clone's CARGO_MANIFEST_DIR
# compiled in, and HEAD's sources). The clone and that target directory
# (about 1.5 GB) are removed when the step ends, passed or failed: the
# disk of the CI machine is shared, and a full run needs several GB.
clone=$(mktemp -d)
remove_clone() { rm -rf "$clone" "$target_dir/self-contained"; }
trap remove_clone EXIT
git clone -q . "$clone/picomcp"
(cd "$clone/picomcp" && CARGO_TARGET_DIR=$target_dir/self-contained cargo test \
    --test jsontestsuite --test vectors --test limits && bash fuzz/seed.sh)
remove_clone
trap - EXIT

step "cargo test --workspace"
cargo test --workspace

step "packaging: cargo publish --dry-run for picomcp-macros, picomcp and picomcp-tower, package contents (scripts/publish_check.sh)"
scripts/publish_check.sh

step "cargo doc (warnings denied)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --features std,derive,embedded-io-async,async-handlers
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p picomcp-tower

step "no_std build for thumbv7em-none-eabihf (no features; log)"
cargo build --lib --no-default-features --target thumbv7em-none-eabihf
cargo build --lib --no-default-features --features log --target thumbv7em-none-eabihf

step "interop: the official MCP Python SDK client drives the bookshop (both eras)"
cargo build --release -p bookshop
bookshop=$target_dir/release/bookshop
scripts/interop.sh "$bookshop"
scripts/interop.sh "$bookshop" --page-size 1

step "interop, subscriptions: the Python SDK client is told of changes on stdio (resources/subscribe; 2026-07-28 listen), inside and outside requests"
"${PICOMCP_VENV:-target/interop-venv}/bin/python" tests/interop/subscribe.py "$bookshop"

step "interop, async tools on a stream: the Python SDK client drives examples/bookshop_async (serve_async_tools_subscribed; get_author, reserve and blurb async: calls that ask wait in the loop's store) and its subscriptions"
cargo build --release --example bookshop_async
scripts/interop.sh "$target_dir/release/examples/bookshop_async"
"${PICOMCP_VENV:-target/interop-venv}/bin/python" tests/interop/subscribe.py "$target_dir/release/examples/bookshop_async"

step "interop over HTTP: the Python SDK's streamable_http_client drives http_bookshop (handshake era) at /mcp (a Mount in front of its axum Router) while GET /health answers beside it"
cargo build --release --example http_bookshop
scripts/interop_http.sh

step "async tools over HTTP: 200 concurrent get_author calls awaiting a 200 ms timer answer within 2 s (scripts/http_delay.sh)"
BLOCKING=0 scripts/http_delay.sh

step "interop over HTTP with get_author, reserve and blurb as async tools (--delay-ms 20; reserve and blurb ask the client from an async handler): the Python SDK client's checks"
SERVER_ARGS="--delay-ms 20" scripts/interop_http.sh

step "hostile HTTP clients: declared 413, header and body timeouts, the connection cap, EMFILE back-off"
scripts/hostile_http.sh

step "interop: the official TypeScript SDK client drives the bookshop on stdio and over HTTP (handshake era)"
# @modelcontextprotocol/sdk 1.x (pinned in tests/interop/package.json) has no
# 2026-07-28 client; the Python SDK covers that era above.
scripts/interop_ts.sh

step "interop, roots: the Python and TypeScript SDK clients answer roots/list from conformance_fixture on stdio and over HTTP"
cargo build --release --example conformance_fixture
scripts/interop_roots.sh

step "scale-out: two http_bookshop replicas behind nginx (round-robin, no stickiness) sharing sessions, answers, subscriptions, changes and stock through Redis; the Python (both eras) and TypeScript SDK clients through nginx; a replica killed mid-run; a rolling restart under load (scripts/scaleout.sh)"
# nginx and redis-server from Debian's packages (installed when missing),
# loopback only, stopped on exit; about 40 s once http_bookshop is built.
scripts/scaleout.sh

step "embedded: no_std targets, the firmware under QEMU, its footprint"
# Budgets: flash <= 72 KiB (70 KiB async), static RAM + peak stack <=
# 12 KiB for every build (the defaults of scripts/embedded.sh).
scripts/embedded.sh

step "Streamable HTTP: the official conformance suite"
scripts/conformance.sh

if [ "$quick" != 1 ] && have_nightly; then
    # Miri and the fuzzer each keep one core busy for minutes (Miri's tests
    # about 7 minutes, the fuzz targets' build and the five targets about
    # 10), so they run side by side
    # on the two cores: Miri in the background, its output shown when it
    # ends, its failure the CI's.
    step "Miri on the unit tests (in the background, beside the fuzzing)"
    miri_pid=
    miri_log=$target_dir/miri.log
    if rustup +nightly component add miri rust-src >/dev/null 2>&1; then
        # The exhaustive and very deep inputs take hours under Miri; they run
        # natively above. The other exhaustive tests take smaller sizes under
        # cfg(miri) (the crate has no unsafe code: Miri checks its
        # dependencies' and core's under it, which a few sizes reach as well
        # as all): 615 s of Miri's clock became about 200 (2026-12-07).
        mkdir -p "$target_dir"
        cargo +nightly miri test --lib -- --skip never_panics --skip deep --skip depth_limit \
            > "$miri_log" 2>&1 &
        miri_pid=$!
        trap 'kill "$miri_pid" 2>/dev/null || true' EXIT
    else
        echo "Miri not available: skipped"
    fi

    step "fuzzing (60 s per target)"
    FUZZ_SECONDS=${FUZZ_SECONDS:-60} scripts/fuzz.sh

    if [ -n "$miri_pid" ]; then
        step "Miri on the unit tests: waiting for it to end"
        miri_rc=0
        wait "$miri_pid" || miri_rc=$?
        trap - EXIT
        cat "$miri_log"
        if [ "$miri_rc" != 0 ]; then
            echo "Miri failed (exit status $miri_rc)" >&2
            exit 1
        fi
    fi
else
    echo "nightly not available or quick mode: fuzzing and Miri skipped"
fi

if [ "$quick" != 1 ]; then
    step "benchmarks (quick mode)"
    PICOMCP_BENCH_QUICK=1 scripts/bench.sh
fi

step "done"
