#!/usr/bin/env bash
# Hostile HTTP clients against the hyper adapter the examples use
# (examples/http/serve.rs), loopback only, raw sockets
# (tests/interop/hostile_http.py): a declared 100 MB body is 413 at once, slow
# headers are cut after --header-timeout-s, an idle keep-alive connection
# after --idle-timeout-s, a stalled body is 408 after --body-timeout-s,
# request state sealed for the --subject-header subject is refused from
# another, --max-connections holds further clients in the backlog
# until one closes, and, under a descriptor limit of 48, accept's EMFILE backs
# off instead of spinning and the server recovers; with --shutdown-s, SIGTERM
# ends a GET stream and an idle connection, finishes a call in flight,
# refuses new clients, and the process exits 0. Then the soak
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

# A graceful shutdown (--shutdown-s 5): SIGTERM with a GET stream open, an
# idle connection and an 800 ms call in flight; the process must then exit
# 0 within the deadline.
start_http_server hostile_http target/hostile-http-shutdown.log "$BIN" --port 0 \
    --shutdown-s 5 --delay-ms 800
timeout -k 5 60 python3 tests/interop/hostile_http.py "$URL" --pid "$SERVER_PID" --shutdown || status=$?
signalled=$(date +%s)
rc=0
wait "$SERVER_PID" || rc=$?
took=$(($(date +%s) - signalled))
if [ "$rc" -eq 0 ] && [ "$took" -le 4 ]; then
    echo "ok   shutdown: the server exited 0 (${took} s after the checks)"
else
    echo "FAIL shutdown: the server exited $rc, ${took} s after the checks" >&2
    status=1
fi

# The soak: bodies up to 500 KB (so an id longer than the 256 KiB output
# buffer reaches the core), stalled headers cut after 2 s.
seconds=${SOAK_SECONDS:-60}
start_http_server hostile_http target/hostile-http-soak.log "$BIN" --port 0 \
    --max-body 512000 --header-timeout-s 2
timeout -k 5 $((seconds + 60)) python3 tests/interop/soak_http.py "$URL" --pid "$SERVER_PID" \
    --seconds "$seconds" --workers 8 || status=$?
stop_http_server
exit "$status"
