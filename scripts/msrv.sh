#!/usr/bin/env bash
# Keep `rust-version` (Cargo.toml: 1.88) honest without a 1.88 toolchain:
#
# 1. clippy's `incompatible_msrv` lint reads `rust-version` and flags every
#    use of a std/core/alloc API stabilized after it. Cargo.toml denies it
#    ([lints.clippy]), and `scripts/ci.sh` runs clippy with -D warnings on
#    every target. This script proves the lint is live on our own crate: in a
#    clone of HEAD it appends one function using `NonNull::from_ref` (stable
#    since 1.89) to src/lib.rs and requires plain `cargo clippy --lib` (no
#    -D warnings) to fail with exactly that lint.
# 2. No normal (non-dev) dependency of the library, with every feature on,
#    may declare a `rust-version` above ours (`cargo metadata`, the
#    versions in Cargo.lock).
#
# What this does not catch: language features newer than rust-version
# (clippy's lint covers library APIs), and dependencies without a declared
# rust-version (listed as "undeclared").
#
# Usage: scripts/msrv.sh    (from anywhere; runs in the repo root).
# CARGO_TARGET_DIR is honoured; the clone builds into its msrv-probe/
# subdirectory (never into this checkout's: cargo would take the probe
# clone's artifacts for this checkout's, their paths being the same
# relative to the workspace).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
target_dir=$(realpath -m "${CARGO_TARGET_DIR:-target}")

msrv=$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys
print(next(p["rust_version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "picomcp"))')
echo "msrv: picomcp declares rust-version $msrv"
# The probe API below must be newer than our rust-version.
probe_since=1.89
if [ "$(printf '%s\n' "$msrv" "$probe_since" | sort -V | tail -1)" = "$msrv" ]; then
    echo "msrv: rust-version $msrv >= $probe_since: pick a newer API for the probe in $0" >&2
    exit 1
fi

echo "msrv: dependencies of the library (normal and build, all features)"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cargo metadata --format-version 1 --all-features >"$scratch/metadata.json"
python3 - "$scratch/metadata.json" <<'PY'
import json, sys

with open(sys.argv[1]) as f:
    meta = json.load(f)
packages = {p["id"]: p for p in meta["packages"]}
nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
root = next(p for p in meta["packages"] if p["name"] == "picomcp" and p["source"] is None)
ours = root["rust_version"]


def version(v):
    return tuple(int(x) for x in v.split("."))


# Everything the library builds with: follow normal and build edges, not dev.
seen, todo = set(), [root["id"]]
while todo:
    pkg = todo.pop()
    if pkg in seen:
        continue
    seen.add(pkg)
    for dep in nodes[pkg]["deps"]:
        if any(k["kind"] != "dev" for k in dep["dep_kinds"]):
            todo.append(dep["pkg"])
seen.discard(root["id"])
newer, undeclared = [], []
for p in sorted((packages[i] for i in seen), key=lambda p: (p["name"], p["version"])):
    name = f'{p["name"]} {p["version"]}'
    if p["rust_version"] is None:
        undeclared.append(name)
    elif version(p["rust_version"]) > version(ours):
        newer.append(f'{name} needs {p["rust_version"]}')
if undeclared:
    print("msrv: undeclared rust-version:", ", ".join(undeclared))
if newer:
    sys.exit(f"msrv: dependencies newer than rust-version {ours}:\n  " + "\n  ".join(newer))
print(f"msrv: {len(seen)} dependencies, none declares a rust-version above {ours}")
PY

echo "msrv: the incompatible_msrv lint on our crate (a probe in a clone of HEAD)"
clone=$scratch
git clone -q . "$clone/picomcp"
cat >>"$clone/picomcp/src/lib.rs" <<'RS'

/// MSRV probe (scripts/msrv.sh): `NonNull::from_ref` is stable since 1.89.
pub fn msrv_probe(x: &u8) -> core::ptr::NonNull<u8> {
    core::ptr::NonNull::from_ref(x)
}
RS
log=$clone/clippy.txt
if (cd "$clone/picomcp" && CARGO_TARGET_DIR=$target_dir/msrv-probe cargo clippy -q --lib) >"$log" 2>&1; then
    cat "$log"
    echo "msrv: clippy accepted an API newer than rust-version $msrv: incompatible_msrv is not denied" >&2
    exit 1
fi
if ! grep -q "is stable since \`$probe_since" "$log" || ! grep -q "incompatible_msrv" "$log"; then
    cat "$log"
    echo "msrv: clippy failed, but not with incompatible_msrv on the probe" >&2
    exit 1
fi
grep -m1 "current MSRV" "$log"
echo "msrv: ok"
