#!/usr/bin/env bash
# Async handlers over HTTP, measured: the HTTP bookshop with `--delay-ms N`
# (get_author awaits a timer of N ms, a stand-in for an upstream call) takes
# CALLS concurrent stateless 2026-07-28 `tools/call get_author` requests,
# one connection each, all sent at once; every answer must be the right
# one. Then the same with `--blocking-delay` (the wait blocks a worker
# thread, as a sync handler's I/O would), for comparison.
#
#   scripts/http_delay.sh                    # 200 calls, 200 ms
#   CALLS=100 DELAY_MS=500 scripts/http_delay.sh
#   BLOCKING=0 scripts/http_delay.sh         # skip the blocking comparison
#
# Fails when a call fails, or when the async run takes longer than
# LIMIT_S (default 2 s: the 200 waits overlap, about one delay in all).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CALLS=${CALLS:-200}
DELAY_MS=${DELAY_MS:-200}
LIMIT_S=${LIMIT_S:-2}
BLOCKING=${BLOCKING:-1}

cargo build --release --example http_bookshop
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/http_bookshop
source scripts/lib/serve_http.sh

measure() {
    python3 - "$URL" "$CALLS" <<'PY'
import http.client, json, sys, threading, time, urllib.parse
url, calls = urllib.parse.urlsplit(sys.argv[1]), int(sys.argv[2])
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
    "name": "get_author", "arguments": {"title": "Dune"},
    "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {}}}})
headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
           "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_author"}
# Connect every client first, then send every request at once.
conns = [http.client.HTTPConnection(url.hostname, url.port, timeout=120) for _ in range(calls)]
for c in conns:
    c.connect()
go = threading.Barrier(calls + 1)
ok, failures, lock = [0], [], threading.Lock()
def one(c):
    go.wait()
    try:
        c.request("POST", url.path, body, headers)
        r = c.getresponse()
        text = r.read().decode()
        good = r.status == 200 and "Frank Herbert" in text
    except Exception as e:  # noqa: BLE001 - reported below
        good, text = False, repr(e)
    with lock:
        if good:
            ok[0] += 1
        else:
            failures.append(text[:200])
threads = [threading.Thread(target=one, args=(c,)) for c in conns]
for t in threads:
    t.start()
go.wait()
start = time.monotonic()
for t in threads:
    t.join()
elapsed = time.monotonic() - start
print(f"{ok[0]}/{calls} calls answered correctly in {elapsed:.2f} s")
for f in failures[:3]:
    print("failure:", f)
print(f"ELAPSED={elapsed:.3f} OK={ok[0]}")
PY
}

echo "== async: --delay-ms $DELAY_MS, $CALLS concurrent calls"
start_http_server http_delay target/http-delay-server.log "$BIN" --port 0 --delay-ms "$DELAY_MS"
async_out=$(measure)
echo "$async_out"
stop_http_server
trap - EXIT

if [ "$BLOCKING" = 1 ]; then
    echo "== blocking: --delay-ms $DELAY_MS --blocking-delay, $CALLS concurrent calls"
    start_http_server http_delay target/http-delay-server.log "$BIN" --port 0 --delay-ms "$DELAY_MS" --blocking-delay
    measure
    stop_http_server
    trap - EXIT
fi

elapsed=$(sed -n 's/^ELAPSED=\([0-9.]*\) OK=.*/\1/p' <<<"$async_out")
okn=$(sed -n 's/^ELAPSED=.* OK=\([0-9]*\)/\1/p' <<<"$async_out")
if [ "$okn" != "$CALLS" ]; then
    echo "http_delay: only $okn of $CALLS async calls succeeded" >&2
    exit 1
fi
if ! python3 -c "import sys; sys.exit(0 if float('$elapsed') <= float('$LIMIT_S') else 1)"; then
    echo "http_delay: $CALLS async calls took ${elapsed} s, over the ${LIMIT_S} s limit" >&2
    exit 1
fi
echo "http_delay: ok"
