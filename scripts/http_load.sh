#!/usr/bin/env bash
# Load test of the HTTP bookshop (examples/http_bookshop.rs) with wrk.
#
#   scripts/http_load.sh                 # 10 s, 64 connections, 2 wrk threads
#   DURATION=20 CONNECTIONS=256 scripts/http_load.sh
#
# Each request is an initialize-free 2026-07-28 `tools/call` (get_author
# "Dune") with the required MCP-Protocol-Version / Mcp-Method / Mcp-Name
# headers, over keep-alive connections. Prints wrk's requests/s and latency
# percentiles and the server's peak RSS (VmHWM), then stops the server.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PORT=${PORT:-8187}
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-2}
[ "$DURATION" -le 20 ] || { echo "DURATION is capped at 20 s" >&2; exit 2; }
command -v wrk >/dev/null || { apt-get install -y wrk >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y wrk >/dev/null; }; }

cargo build --release --example http_bookshop
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/http_bookshop
source scripts/lib/serve_http.sh
start_http_server http_load target/http-load-server.log "$BIN" --port "$PORT"

LUA=$(mktemp --suffix=.lua)
cat > "$LUA" <<'LUA'
wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "get_author"
done = function(summary, latency, requests)
  io.write(string.format("requests/s: %.0f\n", summary.requests / (summary.duration / 1e6)))
  for _, p in ipairs({50, 90, 99, 99.9}) do
    io.write(string.format("latency p%s: %.3f ms\n", p, latency:percentile(p) / 1000))
  end
  io.write(string.format("errors (connect/read/write/status/timeout): %d/%d/%d/%d/%d\n",
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.status, summary.errors.timeout))
end
LUA
# One checked request first.
curl -sf -X POST "$URL" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
  -H 'Mcp-Method: tools/call' -H 'Mcp-Name: get_author' \
  -d "$(sed -n "s/^wrk.body = '\(.*\)'$/\1/p" "$LUA")" | grep -q 'Frank Herbert' \
  || { echo "http_load: the server did not answer the request" >&2; exit 1; }
echo "wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s --latency (get_author, 2026-07-28, keep-alive)"
wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$LUA" "$URL"
echo "server peak RSS: $(grep VmHWM /proc/$SERVER_PID/status | awk '{print $2, $3}')"
rm -f "$LUA"
