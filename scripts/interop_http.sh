#!/usr/bin/env bash
# Interop test over Streamable HTTP: the official MCP Python SDK client
# (mcp==2.3.0, its streamable_http_client) drives http_bookshop on a loopback
# port in the handshake era (tests/interop/test_http.py: test_bookshop.py's
# legacy checks, the asking ones included, plus the HTTP exchanges).
# Then tests/interop/subscribe.py --url: two clients, one subscribes (its
# session's GET stream; a 2026-07-28 listen stream), the other buys, the first
# is told. Meanwhile GET /health, an ordinary route of the axum Router
# behind the same server (picomcp-tower's McpService is mounted at /mcp in
# front of it, a Mount), must answer 200 "ok" throughout.
#
# Usage, from anywhere (runs in the repo root):
#   scripts/interop_http.sh            # every legacy check (--all)
#   scripts/interop_http.sh --asking   # only the reserve/blurb ones and what they stand on
#   PORT=3103 scripts/interop_http.sh
#   SERVER_ARGS="--delay-ms 20" scripts/interop_http.sh   # get_author, reserve, blurb async
# Build first: cargo build --release --example http_bookshop
#
# The venv is that of scripts/interop.sh (${PICOMCP_VENV:-target/interop-venv},
# created on first use). Exit status: that of the test (0 all passed, 1 some
# failed, 2 usage, 3 watchdog), 124 when the outer timeout killed it, 1 when
# the server could not be started.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
PORT=${PORT:-0}  # 0: a free port the OS picks (read back from the server's first line)
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/http_bookshop
venv="${PICOMCP_VENV:-target/interop-venv}"
requirements="tests/interop/requirements.txt"

which=--all
case "${1:-}" in
    "") ;;
    --asking) which= ;;
    *) echo "usage: scripts/interop_http.sh [--asking]" >&2; exit 2 ;;
esac

if [ ! -x "$venv/bin/python" ]; then
    echo "interop_http: creating venv $venv"
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"

[ -x "$BIN" ] || { echo "interop_http: $BIN not found (cargo build --release --example http_bookshop)" >&2; exit 1; }
source scripts/lib/serve_http.sh
LOG=target/interop-http-server.log
# shellcheck disable=SC2086 # SERVER_ARGS is a list of words
start_http_server interop_http "$LOG" "$BIN" --port "$PORT" ${SERVER_ARGS:-}

# MCP is the example's endpoint at /mcp (picomcp-tower's McpService in a
# Mount); /health is a route of the axum Router behind it. While the Python client runs against /mcp,
# /health must keep answering 200 "ok" on the same server.
health_url=${URL%/mcp}/health
health_body=target/interop-http-health-body.txt
health_check() {
    local code
    code=$(curl -s -m 5 -o "$health_body" -w '%{http_code}' "$health_url") || return 1
    [ "$code" = 200 ] && [ "$(cat "$health_body")" = ok ]
}
health_watch() {
    # Every 0.2 s until killed: one line per check (ok / failed) to file $1.
    while sleep 0.2; do
        if health_check; then echo ok; else echo failed; fi >>"$1"
    done
}

echo "interop_http: tests/interop/test_http.py ${which:-(asking checks)} against $URL (and GET $health_url meanwhile)"
status=0
health_check || { echo "interop_http: GET $health_url did not answer 200 ok before the client ran" >&2; status=1; }
health_checks=target/interop-http-health.txt
: >"$health_checks"
health_watch "$health_checks" &
watcher=$!
# The test has its own 180 s budget and watchdog; this bounds it from outside too.
timeout -k 5 240 "$venv/bin/python" tests/interop/test_http.py --url "$URL" $which || status=$?
kill "$watcher" 2>/dev/null || true
wait "$watcher" 2>/dev/null || true
health_ok=$(grep -c '^ok$' "$health_checks" || true)
health_failed=$(grep -c '^failed$' "$health_checks" || true)
if [ "$health_failed" != 0 ] || [ "$health_ok" = 0 ] || ! health_check; then
    echo "interop_http: GET /health beside /mcp: $health_ok answered 200 ok, $health_failed did not" >&2
    status=1
else
    echo "interop_http: GET /health beside /mcp: 200 ok before, after, and $health_ok times during the client's run"
fi
if [ -n "$which" ]; then
    # Two clients: one subscribes (handshake GET stream; 2026-07-28 listen),
    # the other buys, the first is told.
    echo "interop_http: tests/interop/subscribe.py against $URL"
    timeout -k 5 120 "$venv/bin/python" tests/interop/subscribe.py --url "$URL" || status=$?
fi
if [ "$status" != 0 ]; then
    echo "# http_bookshop stderr (last 15 lines):"
    tail -n 15 "$LOG" | sed 's/^/#   /'
fi
exit "$status"
