#!/usr/bin/env bash
# Load test of the HTTP bookshop (examples/http_bookshop.rs) with wrk, side
# by side with a canned-answer hyper server on the same stack
# (examples/http_canned.rs: reads the body, answers the same bytes).
#
#   scripts/http_load.sh                 # 4 s each, 64 connections, 2 wrk threads, 5 rounds
#   DURATION=20 CONNECTIONS=256 ROUNDS=3 scripts/http_load.sh
#
# Each request is an initialize-free 2026-07-28 `tools/call` (get_author
# "Dune") with the required MCP-Protocol-Version / Mcp-Method / Mcp-Name
# headers, over keep-alive connections. Each round runs wrk against the
# bookshop, then against the canned server (one at a time: they share the
# machine's two cores with wrk); for each it prints wrk's requests/s and
# latency percentiles and the server's peak RSS (VmHWM), and for each
# round the bookshop's requests/s over the canned server's, then the
# median of the rounds' ratios. Wall-clock ratios on a shared VM move with
# its neighbours (one round's ratio moved between 0.61 and 1.05 on the same
# code): compare within a round, and take the median of several short
# interleaved rounds over one long one.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PORT=${PORT:-8187}
DURATION=${DURATION:-4}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-5}
[ "$DURATION" -le 20 ] || { echo "DURATION is capped at 20 s" >&2; exit 2; }
command -v wrk >/dev/null || { apt-get install -y wrk >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y wrk >/dev/null; }; }

cargo build --release --example http_bookshop --example http_canned
DIR=${CARGO_TARGET_DIR:-$ROOT/target}/release/examples
source scripts/lib/serve_http.sh

# (Not a temporary file: start_http_server's EXIT trap is the script's.)
LUA=target/http-load.lua
mkdir -p target
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

# Start $1, check one request, run wrk; prints wrk's output and sets RPS.
load() {
    local name=$1
    start_http_server http_load "target/http-load-$name.log" "$DIR/$name" --port "$PORT"
    curl -sf -X POST "$URL" -H 'Content-Type: application/json' \
      -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
      -H 'Mcp-Method: tools/call' -H 'Mcp-Name: get_author' \
      -d "$(sed -n "s/^wrk.body = '\(.*\)'$/\1/p" "$LUA")" | grep -q 'Frank Herbert' \
      || { echo "http_load: $name did not answer the request" >&2; exit 1; }
    echo "== $name: wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s --latency (get_author, 2026-07-28, keep-alive)"
    local out
    out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$LUA" "$URL")
    echo "$out"
    echo "server peak RSS: $(grep VmHWM /proc/$SERVER_PID/status | awk '{print $2, $3}')"
    stop_http_server
    RPS=$(echo "$out" | sed -n 's/^requests\/s: \([0-9]*\)$/\1/p')
}

ratios=()
for round in $(seq "$ROUNDS"); do
    load http_bookshop
    ours=$RPS
    load http_canned
    canned=$RPS
    ratio=$(awk -v a="$ours" -v b="$canned" 'BEGIN { printf "%.2f", a / b }')
    echo "== round $round: http_bookshop $ours req/s, http_canned $canned req/s: ${ratio}x"
    ratios+=("$ratio")
done
echo "http_bookshop / http_canned requests/s by round: ${ratios[*]}"
median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ r[NR] = $1 } END {
    if (NR % 2) print r[(NR + 1) / 2]; else printf "%.2f\n", (r[NR / 2] + r[NR / 2 + 1]) / 2 }')
echo "http_bookshop / http_canned requests/s, median of $ROUNDS rounds: $median"
