// What the TypeScript SDK interop clients (ts_client.mjs, roots.mjs) share:
// their command line, loading the pinned SDK from a node_modules folder, and
// the check bookkeeping (CheckFailed, Problems, show).

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isDeepStrictEqual, inspect } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * `[--http URL] [--modules DIR] [-- SERVER_CMD ARGS...]` of the client
 * `script` (a name for messages): at least one of --http (a loopback URL) and
 * a stdio server command. A usage error exits 2.
 */
export function parseArgs(script, argv = process.argv.slice(2)) {
  const usage = (msg) => {
    console.error(`${script}: ${msg}`);
    console.error(`usage: node tests/interop/${script} [--http URL] [--modules DIR] [-- SERVER_CMD ARGS...]`);
    process.exit(2);
  };
  let httpUrl = null;
  let modulesDir = process.env.PICOMCP_TS_MODULES || join(here, '..', '..', 'target', 'interop-ts', 'node_modules');
  let stdioArgv = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      stdioArgv = argv.slice(i + 1);
      break;
    } else if (a === '--http' && i + 1 < argv.length) {
      httpUrl = argv[++i];
    } else if (a === '--modules' && i + 1 < argv.length) {
      modulesDir = argv[++i];
    } else {
      usage(`unknown argument ${JSON.stringify(a)}`);
    }
  }
  if (stdioArgv !== null && stdioArgv.length === 0) usage('no server command after --');
  if (!httpUrl && !stdioArgv) usage('nothing to run: give --http URL and/or a stdio server command after --');
  if (httpUrl) {
    let u;
    try {
      u = new URL(httpUrl);
    } catch {
      usage(`--http ${httpUrl}: not a URL`);
    }
    if (!['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) usage(`--http ${httpUrl}: loopback addresses only`);
  }
  return { httpUrl, modulesDir, stdioArgv };
}

/**
 * The SDK installed in `modulesDir` (by scripts/interop_ts.sh): its version
 * and `sdk(path)`, which imports `dist/esm/PATH`. Not installed: exits 2.
 */
export function loadSdk(script, modulesDir) {
  const sdkDir = join(resolve(modulesDir), '@modelcontextprotocol', 'sdk');
  if (!existsSync(join(sdkDir, 'package.json'))) {
    console.error(`${script}: the SDK is not installed in ${modulesDir} (run scripts/interop_ts.sh)`);
    process.exit(2);
  }
  const sdkVersion = JSON.parse(readFileSync(join(sdkDir, 'package.json'), 'utf8')).version;
  const sdk = (p) => import(pathToFileURL(join(sdkDir, 'dist', 'esm', p)).href);
  return { sdkVersion, sdk };
}

export const show = (v) => inspect(v, { depth: 6, breakLength: Infinity });

export class CheckFailed extends Error {}

/** Collects every mismatch of one check so a failure reports all of them. */
export class Problems {
  constructor() {
    this.items = [];
  }
  add(msg) {
    this.items.push(msg);
  }
  expect(cond, msg) {
    if (!cond) this.add(msg);
    return !!cond;
  }
  eq(actual, expected, what) {
    return this.expect(isDeepStrictEqual(actual, expected), `${what}: expected ${show(expected)}, got ${show(actual)}`);
  }
  done() {
    if (this.items.length) throw new CheckFailed(this.items.join('; '));
  }
}
