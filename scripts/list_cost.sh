#!/usr/bin/env bash
# Whole-process instruction counts per request of the release stdio
# bookshop (callgrind): `ping`, the four lists (`tools/list`,
# `resources/list`, `resources/templates/list`, `prompts/list`: served from
# the ListCache after the first), a `tools/call` hit (also in the
# TypeScript SDK's member order) and a miss (the
# bookshop's "No book titled" tool error), arguments of the wrong type (a
# schema rejection), a `resources/read` found and not found (`-32602`),
# each as 2,000
# pipelined requests after `initialize`. Per request is the difference
# between that run and one with `initialize` alone, divided by 2,000 (as
# scripts/http_cost.sh does): process start-up and shut-down, the same
# whatever the number of requests, are not a request's cost. Needs
# valgrind (apt-get install valgrind).
#
# Usage: scripts/list_cost.sh [DIR]   (DIR: keep the callgrind outputs there,
#                                      for callgrind_annotate --inclusive=yes)
#        LC_ONLY="ping tools/call" scripts/list_cost.sh   (only those kinds)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v valgrind >/dev/null || { echo "list_cost: needs valgrind" >&2; exit 1; }
cargo build -q --release -p bookshop
bin=${CARGO_TARGET_DIR:-target}/release/bookshop
source scripts/lib/callgrind.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
keep=${1:-}
python3 - "$tmp" <<'PY'
import sys
d = sys.argv[1]
init = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}'
reqs = {
    "ping": '{"jsonrpc":"2.0","id":%d,"method":"ping"}',
    "tools/list": '{"jsonrpc":"2.0","id":%d,"method":"tools/list"}',
    "resources/list": '{"jsonrpc":"2.0","id":%d,"method":"resources/list"}',
    "resources/templates/list": '{"jsonrpc":"2.0","id":%d,"method":"resources/templates/list"}',
    "prompts/list": '{"jsonrpc":"2.0","id":%d,"method":"prompts/list"}',
    "tools/call": '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}',
    # The same hit in the TypeScript SDK's member order (its request
    # spread first, then `jsonrpc` and `id`): the outline's expected order
    # from its third member, one guess missed.
    "tools/call-ts-order": '{"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}},"jsonrpc":"2.0","id":%d}',
    # A miss: the bookshop's "No book titled" tool error (Message::concat).
    "tools/call-miss": '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Nothing"}}}',
    # A schema rejection: its message is the violation's `Display`.
    "tools/call-wrongtype": '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_author","arguments":{"title":45}}}',
    "resources/read": '{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"books://Neuromancer"}}',
    # Not found: `-32602` with the handler's `ResourceNotFound` message.
    "resources/read-miss": '{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"books://Nothing"}}',
}
head = init + "\n" + '{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
with open(f"{d}/empty.in", "w") as f:
    f.write(head)
for name, req in reqs.items():
    with open(f"{d}/{name.replace('/', '_')}.in", "w") as f:
        f.write(head)
        for i in range(1, 2001):
            f.write(req % i + "\n")
PY
collected() { # input file, callgrind output file
    valgrind --tool=callgrind --callgrind-out-file="$2" "$bin" < "$1" > /dev/null 2> "$2.err"
    callgrind_total "$2.err"
}
empty=$(collected "$tmp/empty.in" "$tmp/empty.out")
for name in ${LC_ONLY:-ping tools/list resources/list resources/templates/list prompts/list tools/call tools/call-ts-order tools/call-miss tools/call-wrongtype resources/read resources/read-miss}; do
    f=$tmp/${name//\//_}
    total=$(collected "$f.in" "$f.out")
    printf '%-26s %8d instructions per request (whole process; 2,000 requests: %d, none: %d)\n' \
        "$name" $(((total - empty) / 2000)) "$total" "$empty"
    if [ -n "$keep" ]; then mkdir -p "$keep"; cp "$f.out" "$keep/${name//\//_}.out"; fi
done
