#!/usr/bin/env bash
# Whole-process instruction counts per request (callgrind) of the release
# stdio bookshop on the pipelined mix of issue 19 (out of every 20 on
# average: 13 `get_author` hits, 2 misses, 1 wrong-type argument, 1
# `tools/list`, 1 `resources/read` found, 1 not found, 1 `ping`; the input
# `examples/throughput` generates), and of the I/O-only echo server
# (`throughput --serve-echo`) on the same input; per request is the
# difference between that run and one with `initialize` alone, divided by
# the requests (start-up and shut-down are not a request's cost; as
# scripts/http_cost.sh and list_cost.sh count); then, unless
# STDIO_COST_RUNS=0, the req/s of both in interleaved runs
# (`throughput --echo RUNS`, medians) and the bookshop's peak RSS at 10,000
# and 1,000,000 requests. Needs valgrind (apt-get install valgrind).
#
# Usage: scripts/stdio_cost.sh [DIR]   (DIR: keep the callgrind outputs there)
# Environment: STDIO_COST_N (requests counted, default 20000),
#              STDIO_COST_RUNS (interleaved runs, default 5; 0: none),
#              STDIO_COST_LOAD_N (requests per timed run, default 200000).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v valgrind >/dev/null || { echo "stdio_cost: needs valgrind" >&2; exit 1; }
cargo build -q --release -p bookshop
cargo build -q --release --example throughput
dir=${CARGO_TARGET_DIR:-target}/release
source scripts/lib/callgrind.sh
n=${STDIO_COST_N:-20000}
runs=${STDIO_COST_RUNS:-5}
load_n=${STDIO_COST_LOAD_N:-200000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
keep=${1:-}
"$dir/examples/throughput" --n "$n" --write-input "$tmp/mix.in"
head -n 2 "$tmp/mix.in" > "$tmp/empty.in" # initialize and initialized alone
count() { # name, command...
    local name=$1
    shift
    valgrind --tool=callgrind --callgrind-out-file="$tmp/$name.out" "$@" < "$tmp/mix.in" > "$tmp/$name.answers" 2> "$tmp/$name.err"
    valgrind --tool=callgrind --callgrind-out-file="$tmp/$name.empty.out" "$@" < "$tmp/empty.in" > /dev/null 2> "$tmp/$name.empty.err"
    local total empty
    total=$(callgrind_total "$tmp/$name.err")
    empty=$(callgrind_total "$tmp/$name.empty.err")
    printf '%-9s %8d instructions per request (whole process, %d pipelined requests after initialize: %d, none: %d)\n' \
        "$name" $(((total - empty) / n)) "$n" "$total" "$empty"
    if [ -n "$keep" ]; then mkdir -p "$keep"; cp "$tmp/$name.out" "$keep/$name.out"; fi
}
count mix "$dir/bookshop"
count echo "$dir/examples/throughput" --serve-echo
answers=$(wc -l < "$tmp/mix.answers")
[ "$answers" -eq $((n + 1)) ] || { echo "stdio_cost: the bookshop gave $answers answers, not $((n + 1))" >&2; exit 1; }
[ "$runs" -gt 0 ] || exit 0
"$dir/examples/throughput" "$dir/bookshop" --n "$load_n" --echo "$runs" 2>/dev/null
for rss_n in 10000 1000000; do
    "$dir/examples/throughput" "$dir/bookshop" --n "$rss_n" 2>/dev/null
done
