#!/usr/bin/env node
// Interop test for roots: the official MCP TypeScript SDK client (npm
// @modelcontextprotocol/sdk, pinned in tests/interop/package.json) answers the
// conformance fixture's `roots/list` requests with its own request handler
// (client.setRequestHandler(ListRootsRequestSchema, ...), capabilities
// {roots: {}}), on stdio (`conformance_fixture --stdio`) and over Streamable
// HTTP (`conformance_fixture --port 0`), in the handshake era (2025-11-25: the
// 1.x SDK always sends `initialize` and has no input_required retries). The
// server sends `roots/list` with an id of its own (stdio: on the same stream;
// HTTP: on the SSE stream of the POST that made the call, the answer in a POST
// of its own), then answers the call.
//
//   node tests/interop/roots.mjs --modules target/interop-ts/node_modules \
//       --http http://127.0.0.1:PORT/mcp -- target/release/examples/conformance_fixture --stdio
//
// Checks, per transport (names `TRANSPORT.NAME`):
// * list_roots: test_input_required_result_list_roots with a handler returning
//   two roots (one with a name): the handler ran once, for the server's one
//   roots/list request, whose answer carried the roots; the tool answers
//   `Client has 2 root(s)` and one `root: URI` per root.
// * list_roots_empty: the handler returns no roots: `Client has 0 root(s)`.
// * without_roots_capability: a client declaring only elicitation gets -32021
//   `Missing required client capability: roots`, and no request from the server.
// * three_inputs: test_input_required_result_multiple_inputs with elicitation,
//   sampling and roots handlers: one request of each kind, each handler once,
//   the answer `name=NAME, greeting=TEXT, roots=2`.
//
// Every check opens a client of its own (stdio: a server process of its own).
// Prints `ok NAME` / `FAIL NAME: DETAIL` (a failure is followed by its wire
// lines), a tally per transport and `N passed, M failed`; exits 1 when a check
// failed, 2 on a usage error, 3 when the watchdog fired (each check 20 s, the
// whole run 120 s; the watchdog kills the servers this process started).

import { isDeepStrictEqual } from 'node:util';
import { CheckFailed, Problems, loadSdk, parseArgs, show } from './common.mjs';

const CHECK_TIMEOUT_MS = 20_000;
const TOTAL_TIMEOUT_MS = 120_000;
const REQUEST_TIMEOUT_MS = 15_000;
const HANDSHAKE_VERSION = '2025-11-25';
const LIST_ROOTS = 'test_input_required_result_list_roots';
const THREE_INPUTS = 'test_input_required_result_multiple_inputs';
const ROOTS = [{ uri: 'file:///srv/picomcp/project', name: 'Project' }, { uri: 'file:///tmp/scratch' }];
const NAME = 'Ada';
const GREETING = 'Hello from the model';
const WIRE_LINES_ON_FAILURE = 14;
const WIRE_LINE_CHARS = 600;

const { httpUrl, modulesDir, stdioArgv } = parseArgs('roots.mjs');
const { sdkVersion, sdk } = loadSdk('roots.mjs', modulesDir);
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { ElicitRequestSchema, CreateMessageRequestSchema, ListRootsRequestSchema, McpError } = await sdk('types.js');

const texts = (r) => (r?.content ?? []).map((b) => (b.type === 'text' ? b.text : `<${b.type}>`));
const isRequest = (m) => m && typeof m === 'object' && 'method' in m && 'id' in m;

/** The servers spawned on stdio, killed at the end and by the watchdog. */
const CHILDREN = new Set();

/** A transport wrapper recording every JSON-RPC message, both ways, in `wire`. */
class TeeTransport {
  constructor(inner, wire) {
    this.inner = inner;
    this.wire = wire;
    inner.onmessage = (msg, extra) => {
      wire.push({ dir: '<-', msg: structuredClone(msg) });
      this.onmessage?.(msg, extra);
    };
    inner.onclose = () => this.onclose?.();
    inner.onerror = (err) => this.onerror?.(err);
  }
  async start() {
    await this.inner.start();
    if (this.inner._process) CHILDREN.add(this.inner._process);
  }
  send(msg, options) {
    this.wire.push({ dir: '->', msg: structuredClone(msg) });
    return this.inner.send(msg, options);
  }
  close() {
    return this.inner.close();
  }
  get sessionId() {
    return this.inner.sessionId;
  }
  setProtocolVersion(version) {
    this.inner.setProtocolVersion?.(version);
  }
}

/** Handlers that record what they were handed (the server's request id) and answer. */
function recorder(roots = ROOTS) {
  const rec = { roots: [], elicit: [], sample: [] };
  rec.handlers = {
    roots: async (request, extra) => {
      rec.roots.push(extra.requestId);
      return { roots };
    },
    elicitation: async (request, extra) => {
      rec.elicit.push(extra.requestId);
      return { action: 'accept', content: { name: NAME } };
    },
    sampling: async (request, extra) => {
      rec.sample.push(extra.requestId);
      return { role: 'assistant', content: { type: 'text', text: GREETING }, model: 'interop-test', stopReason: 'endTurn' };
    },
  };
  return rec;
}

const SCHEMAS = { roots: ListRootsRequestSchema, elicitation: ElicitRequestSchema, sampling: CreateMessageRequestSchema };

/** Run `body(client)` on a client of its own declaring `kinds` (with their handlers). */
async function withClient(kind, wire, rec, kinds, body) {
  const caps = Object.fromEntries(kinds.map((k) => [k, {}]));
  const client = new Client({ name: 'picomcp-interop-ts-roots', version: '1.0.0' }, { capabilities: caps });
  for (const k of kinds) client.setRequestHandler(SCHEMAS[k], rec.handlers[k]);
  const inner =
    kind === 'stdio'
      ? new StdioClientTransport({ command: stdioArgv[0], args: stdioArgv.slice(1), env: { ...process.env }, stderr: 'ignore' })
      : new StreamableHTTPClientTransport(new URL(httpUrl), {
          reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
        });
  const transport = new TeeTransport(inner, wire);
  await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
  try {
    const init = wire.find((l) => l.dir === '<-' && l.msg?.result?.protocolVersion);
    if (init?.msg.result.protocolVersion !== HANDSHAKE_VERSION) throw new CheckFailed(`initialize answered ${show(init?.msg)}`);
    return await body(client);
  } finally {
    try {
      if (kind === 'http') await inner.terminateSession();
    } catch {
      // the session may already be gone
    }
    await client.close().catch(() => {});
  }
}

const call = (client, name) =>
  client.callTool({ name, arguments: {} }, undefined, { timeout: REQUEST_TIMEOUT_MS });
const fromServer = (wire) => wire.filter((l) => l.dir === '<-').map((l) => l.msg);
const toServer = (wire) => wire.filter((l) => l.dir === '->').map((l) => l.msg);
const serverRequests = (wire) => fromServer(wire).filter(isRequest);

/** The server's roots/list requests: `n` of them, each answered once with `roots`, ids = the handler's. */
function expectRootsAsked(wire, rec, p, roots = ROOTS) {
  const reqs = serverRequests(wire).filter((m) => m.method === 'roots/list');
  p.eq(reqs.length, 1, 'roots/list requests from the server');
  p.eq(rec.roots, reqs.map((m) => m.id), 'handler request ids (the server request ids)');
  for (const req of reqs) {
    const answers = toServer(wire).filter((m) => !('method' in m) && isDeepStrictEqual(m.id, req.id));
    p.eq(answers.map((m) => m.result?.roots), [roots], `answers to roots/list ${show(req.id)}`);
  }
}

function checks(kind) {
  return [
    [
      'list_roots',
      async (wire) => {
        const rec = recorder();
        const result = await withClient(kind, wire, rec, ['roots'], (c) => call(c, LIST_ROOTS));
        const p = new Problems();
        p.expect(!result.isError, `expected success, got ${show(result)}`);
        p.eq(texts(result), ['Client has 2 root(s)', ...ROOTS.map((r) => `root: ${r.uri}`)], 'content texts');
        p.eq(rec.roots.length, 1, 'roots handler calls');
        expectRootsAsked(wire, rec, p);
        p.done();
        return `server request id ${show(rec.roots[0])}`;
      },
    ],
    [
      'list_roots_empty',
      async (wire) => {
        const rec = recorder([]);
        const result = await withClient(kind, wire, rec, ['roots'], (c) => call(c, LIST_ROOTS));
        const p = new Problems();
        p.expect(!result.isError, `expected success, got ${show(result)}`);
        p.eq(texts(result), ['Client has 0 root(s)'], 'content texts');
        expectRootsAsked(wire, rec, p, []);
        p.done();
      },
    ],
    [
      'without_roots_capability',
      async (wire) => {
        const rec = recorder();
        const p = new Problems();
        let data;
        await withClient(kind, wire, rec, ['elicitation'], async (c) => {
          try {
            const result = await call(c, LIST_ROOTS);
            p.expect(false, `expected McpError -32021, got a result: ${show(result)}`);
          } catch (err) {
            if (!p.expect(err instanceof McpError, `expected McpError -32021, got ${err?.name}: ${err?.message}`)) return;
            p.eq(err.code, -32021, 'error code');
            p.eq(err.message, 'MCP error -32021: Missing required client capability: roots', 'error message');
            data = err.data;
          }
        });
        const caps = toServer(wire).filter((m) => m.method === 'initialize').map((m) => m.params.capabilities);
        p.eq(caps, [{ elicitation: {} }], 'initialize capabilities');
        p.eq(serverRequests(wire).map((m) => m.method), [], 'requests from the server');
        p.eq(rec.elicit.length, 0, 'elicitation handler calls');
        p.done();
        return `data=${show(data)}`;
      },
    ],
    [
      'three_inputs',
      async (wire) => {
        const rec = recorder();
        const result = await withClient(kind, wire, rec, ['elicitation', 'sampling', 'roots'], (c) => call(c, THREE_INPUTS));
        const p = new Problems();
        p.expect(!result.isError, `expected success, got ${show(result)}`);
        p.eq(texts(result), [`name=${NAME}, greeting=${GREETING}, roots=2`], 'content texts');
        p.eq([rec.elicit.length, rec.sample.length, rec.roots.length], [1, 1, 1], 'handler calls (elicitation, sampling, roots)');
        p.eq(
          serverRequests(wire).map((m) => m.method).sort(),
          ['elicitation/create', 'roots/list', 'sampling/createMessage'],
          'requests from the server',
        );
        expectRootsAsked(wire, rec, p);
        p.done();
      },
    ],
  ];
}

let passed = 0;
let failed = 0;
const tally = {};
const started = Date.now();

function killChildren() {
  for (const child of CHILDREN) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

const watchdog = setTimeout(() => {
  console.log(`FAIL watchdog: the run still had not finished after ${(TOTAL_TIMEOUT_MS + 15_000) / 1000}s; killing the servers`);
  killChildren();
  console.log(`${passed} passed, ${failed + 1} failed`);
  process.exit(3);
}, TOTAL_TIMEOUT_MS + 15_000);
watchdog.unref();
process.on('unhandledRejection', (err) => console.log(`# unhandled rejection: ${err?.message ?? err}`));

async function runCheck(kind, name, fn) {
  const fullName = `${kind}.${name}`;
  const wire = [];
  const budget = Math.min(CHECK_TIMEOUT_MS, started + TOTAL_TIMEOUT_MS - Date.now());
  tally[kind] ??= [0, 0];
  let timer;
  try {
    if (budget <= 0) throw new CheckFailed(`not run: the whole-run budget of ${TOTAL_TIMEOUT_MS / 1000}s is used up`);
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new CheckFailed(`timed out after ${Math.round(budget / 1000)}s`)), budget);
    });
    const note = await Promise.race([fn(wire), timeout]);
    passed++;
    tally[kind][0]++;
    console.log(`ok ${fullName}${note ? ` (${note})` : ''}`);
  } catch (err) {
    failed++;
    tally[kind][1]++;
    const detail = err instanceof CheckFailed ? err.message : `raised ${err?.name}: ${err?.message}`;
    console.log(`FAIL ${fullName}: ${String(detail).replace(/\s*\n\s*/g, ' ')}`);
    const shown = wire.slice(-WIRE_LINES_ON_FAILURE);
    if (shown.length) console.log(`#   wire of ${fullName} (last ${shown.length} of ${wire.length} messages):`);
    for (const l of shown) {
      const text = JSON.stringify(l.msg);
      console.log(`#     ${l.dir} ${text.length <= WIRE_LINE_CHARS ? text : `${text.slice(0, WIRE_LINE_CHARS)}...`}`);
    }
  } finally {
    clearTimeout(timer);
  }
}

console.log(`# @modelcontextprotocol/sdk ${sdkVersion}; node ${process.version}`);
const kinds = [];
if (stdioArgv) kinds.push('stdio');
if (httpUrl) kinds.push('http');
for (const kind of kinds) {
  console.log(`# ${kind}: ${kind === 'stdio' ? stdioArgv.join(' ') : httpUrl} (Client + ${kind === 'stdio' ? 'StdioClientTransport' : 'StreamableHTTPClientTransport'}, handshake era ${HANDSHAKE_VERSION})`);
  for (const [name, fn] of checks(kind)) await runCheck(kind, name, fn);
}
killChildren();
for (const [kind, [p, f]] of Object.entries(tally)) console.log(`# ${kind}: ${p} passed, ${f} failed`);
console.log(`# ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
