#!/usr/bin/env bash
# Fuzz picomcp's core with cargo-fuzz (libFuzzer + AddressSanitizer, debug
# assertions on): targets framer, json, schema, server and http in fuzz/.
#
# Usage: scripts/fuzz.sh               (from anywhere; runs in the repo root)
#   FUZZ_SECONDS=N   seconds per target (default 60)
#   FUZZ_TARGETS="json server"   a subset (default: all five)
#
# Needs the nightly toolchain (exits 0 with a message when there is none) and
# installs cargo-fuzz when missing. Seeds fuzz/corpus/ from tests/data (see
# fuzz/seed.sh), builds every target, runs each for FUZZ_SECONDS, writes the
# executions and result per target to target/fuzz-summary.txt (and stdout),
# and fails if any target crashed (reproducer in fuzz/artifacts/<target>/,
# log in target/fuzz-logs/<target>.log).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=${FUZZ_SECONDS:-60}
read -r -a targets <<<"${FUZZ_TARGETS:-framer json schema server http}"
started=$(date +%s)

if ! rustup toolchain list 2>/dev/null | grep -q nightly; then
    echo "nightly not available: fuzzing skipped"
    exit 0
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "==> installing cargo-fuzz"
    cargo install --locked cargo-fuzz
fi
cargo fuzz --version

echo "==> seeding fuzz/corpus"
bash fuzz/seed.sh

echo "==> building the fuzz targets"
cargo +nightly fuzz build
built=$(date +%s)

mkdir -p target/fuzz-logs
summary=target/fuzz-summary.txt
printf '%-8s %12s %8s  %s\n' target executions seconds result >"$summary"
failed=0
for t in "${targets[@]}"; do
    log=target/fuzz-logs/$t.log
    dict=()
    if [[ $t != framer ]]; then
        dict=(-dict="$PWD/fuzz/mcp.dict")
    fi
    echo "==> fuzzing $t for ${seconds}s"
    if cargo +nightly fuzz run "$t" -- \
        -max_total_time="$seconds" -max_len=4096 -rss_limit_mb=2048 \
        -timeout=10 -print_final_stats=1 "${dict[@]}" >"$log" 2>&1; then
        result=ok
    else
        result="CRASH: see $log and fuzz/artifacts/$t/"
        failed=1
    fi
    # libFuzzer's last line on success: "Done N runs in S second(s)".
    done_line=$(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$log" | tail -n 1 || true)
    if [[ -n $done_line ]]; then
        runs=$(awk '{print $2}' <<<"$done_line")
        secs=$(awk '{print $5}' <<<"$done_line")
    else
        runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -n 1 || true)
        runs=${runs:-?}
        secs='?'
    fi
    printf '%-8s %12s %8s  %s\n' "$t" "$runs" "$secs" "$result" | tee -a "$summary"
    if [[ $result != ok ]]; then
        grep -E 'panicked at|ERROR: libFuzzer|ERROR: AddressSanitizer|Test unit written' "$log" | head -n 5 || true
    fi
done

ended=$(date +%s)
{
    echo "build (incl. cargo-fuzz install, seeding): $((built - started)) s"
    echo "total: $((ended - started)) s"
} | tee -a "$summary"
echo "summary: $summary"
exit "$failed"
