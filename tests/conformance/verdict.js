// The verdict of scripts/conformance.sh: reads every scenario's checks.json
// under RESULTS/RUN/ (RUN: all@VERSION or requirements@REVISION, with the
// suite's log in RESULTS/RUN.log) and compares the FAILURE/WARNING checks
// with tests/conformance/expected-failures.yml (format: see that file).
//
//   node verdict.js RESULTS EXPECTED_YML      (NODE_PATH must reach `yaml`)
//
// Exit 1 on: a failing check no entry covers, a scenario that ran without
// writing checks.json (it crashed), an entry without a reason, an entry
// naming a run or check that is not there, and a stale entry (its scenario,
// or one of its checks, no longer fails in a run it is keyed to).
"use strict";
const fs = require("fs"), path = require("path");
const yaml = require("yaml");

const [results, expectedFile] = process.argv.slice(2);
const spec = yaml.parse(fs.readFileSync(expectedFile, "utf8")) || {};
let bad = 0;
const problem = (msg) => { console.log(msg); bad++; };

const entries = (spec.server || []).map((e, i) => {
  if (typeof e !== "object" || !e || !e.scenario) {
    problem(`expected-failures.yml: server[${i}] is not {scenario, reason, runs?, checks?}`);
    return null;
  }
  if (!e.reason || !String(e.reason).trim()) problem(`expected-failures.yml: ${e.scenario} has no reason`);
  return { scenario: e.scenario, runs: e.runs || null, checks: e.checks || null, used: new Set() };
}).filter(Boolean);

const runs = fs.readdirSync(results)
  .filter(d => fs.statSync(path.join(results, d)).isDirectory()).sort();
const bad_status = (c) => c.status === "FAILURE" || c.status === "WARNING";
const rows = [];
for (const run of runs) {
  const log = fs.existsSync(path.join(results, `${run}.log`))
    ? fs.readFileSync(path.join(results, `${run}.log`), "utf8") : "";
  for (const dir of fs.readdirSync(path.join(results, run)).sort()) {
    const scenario = dir.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
    const file = path.join(results, run, dir, "checks.json");
    let checks;
    if (fs.existsSync(file)) {
      checks = JSON.parse(fs.readFileSync(file, "utf8"));
    } else if (log.includes(`SKIPPED: scenario '${scenario}'`)) {
      continue;
    } else {
      // The runner caught an exception: no checks.json, a line in the log.
      const m = log.match(new RegExp(`Failed to run scenario ${scenario}:(.*)`));
      checks = [{ id: scenario, status: "FAILURE",
                  errorMessage: `no checks.json: ${m ? m[1].trim() : "the scenario did not finish"}` }];
    }
    const failed = checks.filter(bad_status);
    const entry = entries.find(e => e.scenario === scenario && (!e.runs || e.runs.includes(run)));
    const covered = (c) => entry && (!entry.checks || entry.checks.includes(c.id));
    const unexpected = failed.filter(c => !covered(c));
    if (entry) entry.used.add(run);
    if (entry && failed.length === 0) problem(`stale expected failure (now passes): ${scenario} in ${run}`);
    if (entry && entry.checks) {
      for (const id of entry.checks) {
        if (!failed.some(c => c.id === id))
          problem(`stale expected failure (check now passes or is gone): ${scenario} ${id} in ${run}`);
      }
    }
    bad += unexpected.length ? 1 : 0;
    rows.push({
      run, scenario,
      passed: checks.filter(c => c.status === "SUCCESS").length,
      failed: failed.length,
      skipped: checks.filter(c => c.status === "SKIPPED").length,
      skippedIds: checks.filter(c => c.status === "SKIPPED").map(c => c.id),
      verdict: unexpected.length ? "UNEXPECTED" : failed.length ? "expected" : "ok",
      why: failed.map(c => `${covered(c) ? "" : "UNEXPECTED "}${c.id}: ${c.errorMessage || c.status}`),
    });
  }
}
for (const e of entries) {
  if (e.runs) {
    for (const r of e.runs) if (!e.used.has(r)) problem(`expected failure for ${e.scenario} in ${r}, which did not run it`);
  } else if (e.used.size === 0) {
    problem(`expected failure for a scenario that did not run: ${e.scenario}`);
  }
}

const w = Math.max(8, ...rows.map(r => r.scenario.length));
const rw = Math.max(3, ...rows.map(r => r.run.length));
console.log(`\n| ${"scenario".padEnd(w)} | ${"run".padEnd(rw)} | passed | failed | verdict    |`);
console.log(`|${"-".repeat(w + 2)}|${"-".repeat(rw + 2)}|--------|--------|------------|`);
for (const r of rows)
  console.log(`| ${r.scenario.padEnd(w)} | ${r.run.padEnd(rw)} | ${String(r.passed).padStart(6)} | ${String(r.failed).padStart(6)} | ${r.verdict.padEnd(10)} |`);
for (const r of rows.filter(r => r.failed)) {
  console.log(`  ${r.verdict} ${r.scenario} (${r.run}):`);
  for (const why of r.why) console.log(`    ${why}`);
}
for (const r of rows.filter(r => r.skippedIds.length))
  console.log(`  skipped in ${r.scenario} (${r.run}): ${r.skippedIds.join(", ")}`);
console.log(`\n| ${"run".padEnd(rw)} | scenarios | checks passed | checks failed | of them expected | skipped |`);
console.log(`|${"-".repeat(rw + 2)}|-----------|---------------|---------------|------------------|---------|`);
for (const run of runs) {
  const rs = rows.filter(r => r.run === run);
  const sum = (f) => rs.reduce((a, r) => a + f(r), 0);
  const exp = sum(r => r.why.filter(x => !x.startsWith("UNEXPECTED")).length);
  console.log(`| ${run.padEnd(rw)} | ${String(rs.length).padStart(9)} | ${String(sum(r => r.passed)).padStart(13)} | ${String(sum(r => r.failed)).padStart(13)} | ${String(exp).padStart(16)} | ${String(sum(r => r.skipped)).padStart(7)} |`);
}
if (rows.length === 0) problem("no results");
process.exit(bad ? 1 : 0);
