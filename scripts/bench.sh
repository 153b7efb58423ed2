#!/usr/bin/env bash
# Benchmarks: criterion micro-benchmarks of the core (benches/core.rs), then
# end-to-end stdio throughput and peak RSS of the release bookshop
# (examples/throughput.rs); then, with valgrind, the instruction counts
# (scripts/list_cost.sh, stdio_cost.sh, registry_scale.sh, http_cost.sh);
# with wrk, HTTP req/s against a canned hyper server (scripts/http_load.sh).
# The firmware's flash and RAM: scripts/embedded.sh.
#
# Usage: scripts/bench.sh                          full: N = 10 000 and 1 000 000
#        PICOMCP_BENCH_QUICK=1 scripts/bench.sh    CI:   short criterion runs, N = 10 000 and 100 000
# Exits non-zero if any step fails. Results: benches/RESULTS.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n==> %s\n' "$*"; }
started=$(date +%s)

export PICOMCP_BENCH_QUICK="${PICOMCP_BENCH_QUICK:-0}"
if [ "$PICOMCP_BENCH_QUICK" = 1 ]; then
    mode=quick
    sizes=(10000 100000)
else
    mode=full
    sizes=(10000 1000000)
fi
target_dir="${CARGO_TARGET_DIR:-target}"

step "machine: $(nproc) cores, $(uptime | sed 's/.*load average/load average/'), $(rustc --version)"

step "cargo bench --bench core ($mode)"
cargo bench --bench core | tee "$target_dir/bench-core.log"

# Median time per iteration (ns) of one criterion benchmark, from its last run.
median_ns() {
    sed -E 's/.*"median":\{"confidence_interval":\{[^}]*\},"point_estimate":([0-9.eE+-]+).*/\1/' \
        "$target_dir/criterion/$1/new/estimates.json"
}
bytes_of() {
    sed -E 's/.*"Bytes":([0-9]+).*/\1/' "$target_dir/criterion/$1/new/benchmark.json"
}

step "summary: median time per request, both including the copy into the scratch buffer"
printf '%-26s %6s %12s %12s %12s %8s\n' case bytes copy picomcp serde_json ratio
for dir in "$target_dir"/criterion/handle_*/; do
    case_dir=$(basename "$dir")
    copy=$(median_ns "$case_dir/copy")
    ours=$(median_ns "$case_dir/picomcp")
    theirs=$(median_ns "$case_dir/serde_json")
    bytes=$(bytes_of "$case_dir/picomcp")
    awk -v c="${case_dir#handle_}" -v b="$bytes" -v cp="$copy" -v o="$ours" -v t="$theirs" 'BEGIN {
        printf "%-26s %6d %9.1f ns %9.1f ns %9.1f ns %7.2fx\n", c, b, cp, o, t, t / o }'
done
grep '^paired' "$target_dir/bench-core.log" || true
for b in schema/top_n3 schema/object_8_properties framer/read_1 framer/read_64 framer/read_4096; do
    ns=$(median_ns "$b")
    bytes=$(bytes_of "$b")
    awk -v n="$b" -v b="$bytes" -v t="$ns" 'BEGIN {
        printf "%-26s %6d %12.1f ns  %8.1f MiB/s\n", n, b, t, b / t * 1e9 / 1048576 }'
done

step "cargo build --release -p bookshop; cargo build --release --example throughput"
cargo build --release -p bookshop
cargo build --release --example throughput

# Full mode runs each size three times: on a shared VM one run can land in
# a burst of the neighbours' load (see steal_pct).
runs=1
[ "$mode" = full ] && runs=3
results=()
for n in "${sizes[@]}"; do
    for _ in $(seq "$runs"); do
        step "throughput N=$n"
        line=$("$target_dir/release/examples/throughput" "$target_dir/release/bookshop" --n "$n")
        echo "$line"
        results+=("$line")
    done
done

step "stdio throughput ($mode)"
printf '%s\n' "${results[@]}"

if command -v valgrind >/dev/null; then
    step "scripts/list_cost.sh: instructions per stdio request (ping, the four lists, hits, a miss, errors, reads)"
    scripts/list_cost.sh
    step "scripts/stdio_cost.sh: the stdio mix against the echo server (instructions, req/s, RSS)"
    scripts/stdio_cost.sh
    step "scripts/registry_scale.sh: a hit with 5 to 5,000 tools, paging, argument and schema size"
    scripts/registry_scale.sh
    step "scripts/http_cost.sh: instructions per HTTP request (bookshop, canned hyper server, the mapping)"
    scripts/http_cost.sh
else
    echo "bench: valgrind not installed: the instruction counts are skipped"
fi
if command -v wrk >/dev/null || [ "$(id -u)" = 0 ]; then
    step "scripts/http_load.sh: HTTP req/s against the canned hyper server, same run (installs wrk)"
    scripts/http_load.sh
fi
step "done in $(( $(date +%s) - started )) s"
