#!/usr/bin/env bash
# Hostile HTTP clients against the hyper adapter the examples use
# (examples/http/serve.rs), loopback only, raw sockets
# (tests/interop/hostile_http.py): a declared 100 MB body is 413 at once, slow
# headers are cut after --header-timeout-s, an idle keep-alive connection
# after --idle-timeout-s, a stalled body is 408 after --body-timeout-s,
# request state sealed for the --subject-header subject is refused from
# another, --max-connections holds further clients in the backlog
# until one closes, and, under a descriptor limit of 48, accept's EMFILE backs
# off instead of spinning and the server recovers. Then the soak
# (tests/interop/soak_http.py): valid and hostile traffic mixed for
# ${SOAK_SECONDS:-60} s, every answer checked by its own id, RSS sampled.
#
# Usage: scripts/hostile_http.sh   (build first: cargo build --release --example http_bookshop)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/http_bookshop
[ -x "$BIN" ] || { echo "hostile_http: $BIN not found (cargo build --release --example http_bookshop)" >&2; exit 1; }
source scripts/lib/serve_http.sh

status=0
start_http_server hostile_http target/hostile-http-server.log "$BIN" --port 0 \
    --header-timeout-s 1 --body-timeout-s 1 --idle-timeout-s 2 --session-idle-s 2 --keep-alive-s 1 \
    --max-connections 8 --max-body 4096 --subject-header X-Test-Subject
timeout -k 5 60 python3 tests/interop/hostile_http.py "$URL" || status=$?
stop_http_server

# A descriptor limit of 48: idle sockets exhaust it and accept fails (EMFILE).
start_http_server hostile_http target/hostile-http-emfile.log \
    bash -c 'ulimit -n 48; exec "$0" "$@"' "$BIN" --port 0 --max-connections 1000
timeout -k 5 60 python3 tests/interop/hostile_http.py "$URL" --pid "$SERVER_PID" --emfile || status=$?
stop_http_server

# The soak: bodies up to 500 KB (so an id longer than the 256 KiB output
# buffer reaches the core), stalled headers cut after 2 s.
seconds=${SOAK_SECONDS:-60}
start_http_server hostile_http target/hostile-http-soak.log "$BIN" --port 0 \
    --max-body 512000 --header-timeout-s 2
timeout -k 5 $((seconds + 60)) python3 tests/interop/soak_http.py "$URL" --pid "$SERVER_PID" \
    --seconds "$seconds" --workers 8 || status=$?
stop_http_server
exit "$status"
