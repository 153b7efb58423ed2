#!/usr/bin/env bash
# Whole-process instruction counts per request of the release HTTP bookshop
# (examples/http_bookshop.rs) and of a canned-answer hyper server on the
# same stack (examples/http_canned.rs), under callgrind; then what the
# sans-IO mapping adds to the core (examples/http_mapping.rs: the same
# request through `Server::handle` and through `Http::handle`, no I/O).
#
# Each server runs under `valgrind --tool=callgrind` three times: answering
# N stateless 2026-07-28 `tools/call get_author "Dune"` requests sent over
# one keep-alive connection by a Python client (another process, not
# counted), answering one, and answering none (start-up and shut-down
# alone). (N run - one-request run) / (N - 1) is what each further request
# costs the whole server process: hyper, tokio, axum, allocation, the
# mapping, the core and the handler; the first request's one-off work
# (thread-local buffers, caches, a connection's setup) is in both runs.
# (N run - empty run) / N, which counts that work too, is printed beside
# it. Needs valgrind (apt-get install valgrind) and python3.
#
# Usage: scripts/http_cost.sh [DIR]   (DIR: keep the callgrind outputs and
#                                      a per-request inclusive profile of
#                                      each server there)
#        N=5000 scripts/http_cost.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v valgrind >/dev/null || { echo "http_cost: needs valgrind" >&2; exit 1; }
N=${N:-2000}
PORT=${PORT:-8193}
keep=${1:-}
cargo build -q --release --example http_bookshop --example http_canned --example http_mapping
dir=${CARGO_TARGET_DIR:-target}/release/examples
source scripts/lib/callgrind.sh
tmp=$(mktemp -d)
server=
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

# The client: N requests on one keep-alive connection; every answer checked.
cat > "$tmp/client.py" <<'PY'
import http.client, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
headers = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "get_author",
}
c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
for _ in range(n):
    c.request("POST", "/mcp", body, headers)
    r = c.getresponse()
    answer = r.read()
    if r.status != 200 or b'"text":"Frank Herbert"' not in answer:
        sys.exit(f"http_cost: unexpected answer {r.status} {answer[:200]!r}")
c.close()
PY

# Run $1 (a server binary) under callgrind, send it $2 requests, stop it;
# prints the instructions collected.
run() {
    local bin=$1 n=$2 out=$3
    : > "$tmp/log"
    valgrind --tool=callgrind --callgrind-out-file="$out" --log-file="$tmp/vg" \
        "$bin" --port "$PORT" 2> "$tmp/log" &
    server=$!
    for _ in $(seq 600); do
        grep -q 'http://' "$tmp/log" && break
        kill -0 "$server" 2>/dev/null || { cat "$tmp/log" "$tmp/vg" >&2; exit 1; }
        sleep 0.1
    done
    grep -q 'http://' "$tmp/log" || { echo "http_cost: $bin did not start" >&2; exit 1; }
    [ "$n" -gt 0 ] && python3 "$tmp/client.py" "$PORT" "$n"
    kill -TERM "$server"
    wait "$server" 2>/dev/null || true
    server=
    callgrind_total "$tmp/vg"
}

# Inclusive cost per function, (N run - baseline run) / divisor ($3, or N),
# largest first.
profile() {
    python3 - "$1" "$2" "${3:-$N}" <<'PY'
import re, subprocess, sys
def inclusive(path):
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
                          capture_output=True, text=True, check=True).stdout
    costs = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+(.*)$", line)
        if m and not m.group(2).startswith("PROGRAM TOTALS"):
            name = re.sub(r" \[[^\]]*\]$", "", m.group(2))
            costs[name] = costs.get(name, 0) + int(m.group(1).replace(",", ""))
    return costs
full, empty, n = inclusive(sys.argv[1]), inclusive(sys.argv[2]), int(sys.argv[3])
rows = sorted(((c - empty.get(k, 0)) / n, k) for k, c in full.items())
for per, name in reversed(rows):
    if per >= 50:
        print(f"{per:10.0f}  {name}")
PY
}

# (run - empty run) / N of http_mapping MODE.
mapping() {
    local total=()
    for n in 0 "$N"; do
        valgrind --tool=callgrind --callgrind-out-file="$tmp/mapping.$1.$n.out" \
            "$dir/http_mapping" "$1" --hits "$n" > /dev/null 2> "$tmp/vg"
        total+=("$(callgrind_total "$tmp/vg")")
    done
    echo $(((total[1] - total[0]) / N))
}

core=$(mapping core)
http=$(mapping http)
printf '%-14s %8d instructions per request (Server::handle, no I/O)\n' "core" "$core"
printf '%-14s %8d instructions per request (Http::handle, no I/O): the mapping adds %d\n' \
    "mapping" "$http" $((http - core))
if [ -n "$keep" ]; then
    mkdir -p "$keep"
    for m in core http; do
        cp "$tmp/mapping.$m.$N.out" "$keep/"
        profile "$tmp/mapping.$m.$N.out" "$tmp/mapping.$m.0.out" > "$keep/mapping.$m.profile"
    done
fi

# Per request: (a run of N requests - a run of one) / (N - 1). Both runs
# start and stop the server, open the connection, and serve a first
# request (which fills what a server fills once: thread-local buffers,
# caches, the runtime's first allocations); what is left is what each
# further request on a kept-alive connection costs. For comparison, the
# same over a run that serves none: (N run - none) / N.
for name in http_bookshop http_canned; do
    empty=$(run "$dir/$name" 0 "$tmp/$name.0.out")
    first=$(run "$dir/$name" 1 "$tmp/$name.1.out")
    full=$(run "$dir/$name" "$N" "$tmp/$name.n.out")
    printf '%-14s %8d instructions per request (whole process; %d requests: %d, one: %d; against none (%d): %d)\n' \
        "$name" $(((full - first) / (N - 1))) "$N" "$full" "$first" "$empty" $(((full - empty) / N))
    if [ -n "$keep" ]; then
        mkdir -p "$keep"
        cp "$tmp/$name.1.out" "$tmp/$name.n.out" "$keep/"
        profile "$tmp/$name.n.out" "$tmp/$name.1.out" $((N - 1)) > "$keep/$name.profile"
    fi
done
