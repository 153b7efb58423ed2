#!/usr/bin/env bash
# Ready to publish: `cargo publish --dry-run` for picomcp-macros, picomcp,
# picomcp-tower and picomcp-redis together. Cargo packages the four, then
# builds each from its packaged .crate alone, each against the packaged
# crates it depends on through a local registry overlay: what crates.io
# users would download is what compiles.
# Then the package contents: the library, its README, CHANGELOG and licences,
# and no test data, tests, examples, benches, fuzz targets or scripts.
# Needs the crates.io index (as any build of a fresh clone does).
#
# Usage: scripts/publish_check.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Cargo unpacks each crate of the local overlay into
# $CARGO_HOME/registry/src/<hash of the overlay's path>/ once, and builds
# it once (registry crates are taken to be immutable): a later run from the
# same checkout would reuse both even when the crate has changed since, and
# verify a dependent against the old code. So our own crates' unpacked
# copies (only these four names) go first, and the verification builds
# into a target directory of its own, made anew each run.
cargo_home=${CARGO_HOME:-$HOME/.cargo}
for name in picomcp picomcp-macros picomcp-tower picomcp-redis; do
    rm -rf "$cargo_home"/registry/src/*/"$name"-[0-9]*
done
target_dir=$(realpath -m "${CARGO_TARGET_DIR:-target}")
export CARGO_TARGET_DIR=$target_dir/publish-check
rm -rf "$CARGO_TARGET_DIR"

echo "-- cargo publish --dry-run -p picomcp-macros -p picomcp -p picomcp-tower -p picomcp-redis"
cargo publish --dry-run --locked ${PICOMCP_ALLOW_DIRTY:+--allow-dirty} \
    -p picomcp-macros -p picomcp -p picomcp-tower -p picomcp-redis

status=0
for pkg in picomcp picomcp-macros picomcp-tower picomcp-redis; do
    list=$(cargo package --list --locked ${PICOMCP_ALLOW_DIRTY:+--allow-dirty} -p "$pkg" 2>/dev/null)
    n=$(printf '%s\n' "$list" | wc -l)
    echo "-- $pkg: $n files in the package"
    bad=$(printf '%s\n' "$list" | grep -Ev '^(src/.*\.rs|Cargo\.toml|Cargo\.toml\.orig|Cargo\.lock|README\.md|CHANGELOG\.md|LICENSE-APACHE|LICENSE-MIT|\.cargo_vcs_info\.json)$' || true)
    if [ -n "$bad" ]; then
        echo "publish_check: $pkg packages files it does not need:" >&2
        printf '  %s\n' $bad >&2
        status=1
    fi
    for need in README.md LICENSE-APACHE LICENSE-MIT src/lib.rs; do
        printf '%s\n' "$list" | grep -qx "$need" || { echo "publish_check: $pkg lacks $need" >&2; status=1; }
    done
done
# The README's Rust examples are doctests of the packaged crate too (its
# lib.rs includes README.md under cfg(doctest)); `cargo test --doc` runs them.
exit "$status"
