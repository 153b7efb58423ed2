#!/usr/bin/env bash
# Scale with the registry: instructions per `tools/call` hit (callgrind)
# with 5, 500 and 5,000 registered tools, short and 64-character names,
# walking the registry and through a ToolIndex (examples/registry_scale.rs:
# each figure is a run of H hits minus a run of none, over H); then the
# instructions per `tools/list` page and per listed tool for each page of
# 500 tools, 50 a page (the same subtraction, H/10 requests of that page);
# then the hit of one tool of 5 (indexed) with a `title` argument of 4 to
# 4,096 bytes, and with input schemas (and arguments) of 1 to 64 required
# string properties.
# Needs valgrind (apt-get install valgrind).
#
# Usage: scripts/registry_scale.sh [HITS]   (default 2000)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v valgrind >/dev/null || { echo "registry_scale: needs valgrind" >&2; exit 1; }
hits=${1:-2000}
cargo build -q --release --example registry_scale
bin=${CARGO_TARGET_DIR:-target}/release/examples/registry_scale
source scripts/lib/callgrind.sh
count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$@" 2>&1 >/dev/null |
        callgrind_total
}
printf '%-7s %-6s %-14s %s\n' tools names lookup "instructions per hit"
for names in short long; do
    flag=(); [ "$names" = long ] && flag=(--long)
    for n in 5 500 5000; do
        for lookup in walk index; do
            ix=(); [ "$lookup" = index ] && ix=(--index)
            with=$(count "$n" "${ix[@]}" "${flag[@]}" --hits "$hits")
            without=$(count "$n" "${ix[@]}" "${flag[@]}" --hits 0)
            printf '%-7s %-6s %-14s %d\n' "$n" "$names" "$lookup" $(( (with - without) / hits ))
        done
    done
done
pages=$((hits / 10))
printf '\n%-5s %-22s %s\n' page "instructions per page" "per tool listed (500 tools, 50 a page)"
for page in 1 2 3 4 5 6 7 8 9 10; do
    with=$(count 500 --page-size 50 --page "$page" --hits "$pages")
    without=$(count 500 --page-size 50 --page "$page" --hits 0)
    per=$(( (with - without) / pages ))
    printf '%-5s %-22d %d\n' "$page" "$per" $((per / 50))
done
printf '\n%-10s %s\n' "title bytes" "instructions per hit (5 tools, index, one property)"
for b in 4 64 256 1024 4096; do
    with=$(count 5 --index --arg-bytes "$b" --hits "$hits")
    without=$(count 5 --index --arg-bytes "$b" --hits 0)
    printf '%-11s %d\n' "$b" $(( (with - without) / hits ))
done
printf '\n%-10s %s\n' properties "instructions per hit (5 tools, index, every property given)"
for k in 1 4 16 64; do
    with=$(count 5 --index --props "$k" --hits "$hits")
    without=$(count 5 --index --props "$k" --hits 0)
    printf '%-10s %d\n' "$k" $(( (with - without) / hits ))
done
