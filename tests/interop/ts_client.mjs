#!/usr/bin/env node
// Interop test: the official MCP TypeScript SDK client (npm
// @modelcontextprotocol/sdk, pinned in tests/interop/package.json) drives
// picomcp's bookshop on stdio and over Streamable HTTP, in the handshake era
// (the SDK's Client always sends `initialize`, offering 2025-11-25; the 1.x SDK
// has no 2026-07-28: no server/discover, no input_required retries).
//
// Run (normally through scripts/interop_ts.sh, which installs the SDK and
// starts http_bookshop):
//
//   node tests/interop/ts_client.mjs -- target/release/bookshop            # stdio
//   node tests/interop/ts_client.mjs --http http://127.0.0.1:3102/mcp      # HTTP
//   node tests/interop/ts_client.mjs --http URL -- target/release/bookshop # both
//
// Options: --http URL (Streamable HTTP endpoint; loopback only), --modules DIR
// (the node_modules holding the SDK; default target/interop-ts/node_modules of
// this checkout, or $PICOMCP_TS_MODULES), and the stdio server command after `--`.
//
// Checks, once per transport (names `stdio.NAME` / `http.NAME`): initialize
// (serverInfo, negotiated 2025-11-25, the client's capabilities on the wire),
// tools/list (the six tools in order, the schemas of get_author, reserve and
// blurb), get_author (text and structuredContent; unknown title is a tool
// error), resources/list and reads (books://Dune, books://catalog), and the
// tools that ask the client, answered by the SDK's own request handlers
// (client.setRequestHandler(ElicitRequestSchema / CreateMessageRequestSchema),
// capabilities {elicitation: {}, sampling: {}}):
//
// * reserve: the server sends `elicitation/create` (form `Reserve TITLE?`,
//   requestedSchema one required boolean `confirm`) with an id of its own; the
//   handler answers accept / accept with confirm false / decline / cancel, and
//   only then is the `tools/call` answered, once, with its own id
//   (`Reserved TITLE` / `Not reserved: TITLE`). A handler that throws (code -1)
//   makes the SDK answer a JSON-RPC error, and the server fails the call
//   -32603 naming the input request.
// * blurb: `sampling/createMessage` (one user message `Write a one-line blurb
//   for TITLE by AUTHOR.`, maxTokens 100); the handler's text (with a quote, a
//   backslash and a non-ASCII character) is the tool's one text block.
// * A second client without the capability (it declares only the other one)
//   gets -32021 `Missing required client capability: NAME` with
//   data.requiredCapabilities, and no request from the server.
// * get_author called from inside the elicitation handler (served while
//   reserve waits on the server), two reserves outstanding at once, and a
//   reserve cancelled (AbortSignal: notifications/cancelled) while it waits:
//   never answered, and the connection goes on.
// * wire_era_consistent: no 2026-07-28 envelope, no server/discover; the
//   server's own requests are only elicitation/create and
//   sampling/createMessage, each with a fresh id, each answered exactly once.
//
// Over HTTP also (from a recording fetch): every POST of a request is answered
// with JSON or with an SSE stream whose last message is that request's answer;
// the server's requests come on the stream of the POST that made the call, the
// client's answers go in POSTs of their own answered 202 with no body, every
// POST after initialize carries the session id and MCP-Protocol-Version.
//
// Prints `ok NAME` / `FAIL NAME: DETAIL` per check (a failure is followed by
// the messages it exchanged, as `#` comments), a `# TRANSPORT: ...` tally per
// transport, and a closing `N passed, M failed` line; exits 1 when a check
// failed, 2 on a usage error. Each check has a 20 s budget, the whole run
// 150 s; a watchdog then kills the stdio servers it started and exits 3.

import { isDeepStrictEqual } from 'node:util';
import { CheckFailed, Problems, loadSdk, parseArgs, show } from './common.mjs';

const CHECK_TIMEOUT_MS = 20_000;
const TOTAL_TIMEOUT_MS = 150_000;
const REQUEST_TIMEOUT_MS = 15_000;
const MAX_FAILED_RESTARTS = 2;
const HANDSHAKE_VERSION = '2025-11-25';
const NOT_FOUND = "No book titled 'Nothing' in the catalog.";
const TOOLS = ['get_author', 'get_author_strict', 'top', 'reserve', 'blurb', 'buy', 'count'];
const GET_AUTHOR_OUTPUT_SCHEMA = {
  type: 'object',
  properties: { result: { type: 'string' } },
  required: ['result'],
};
const CONFIRM_SCHEMA = {
  type: 'object',
  properties: { confirm: { type: 'boolean', description: 'Reserve this book?' } },
  required: ['confirm'],
};
const BLURB = 'Case is "jacked in" to cyberspace \\ a café in Chiba.';
const BLURB_PROMPT = 'Write a one-line blurb for Neuromancer by William Gibson.';
const ASKING_METHODS = ['elicitation/create', 'sampling/createMessage'];
const ENVELOPE_KEY = 'io.modelcontextprotocol/protocolVersion';
const WIRE_LINES_ON_FAILURE = 14;
const WIRE_LINE_CHARS = 600;

// ------------------------------------------------------------------ arguments

const { httpUrl, modulesDir, stdioArgv } = parseArgs('ts_client.mjs');
const { sdkVersion, sdk } = loadSdk('ts_client.mjs', modulesDir);
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { ElicitRequestSchema, CreateMessageRequestSchema, McpError, ErrorCode, LATEST_PROTOCOL_VERSION } =
  await sdk('types.js');

// ------------------------------------------------------------------ helpers

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const sameId = (a, b) => a !== undefined && JSON.stringify(a) === JSON.stringify(b);

async function waitUntil(cond, ms = 2000) {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await sleep(10);
  return cond();
}

function texts(result) {
  return (result?.content ?? []).map((b) => (b.type === 'text' ? b.text : `<${b.type}>`));
}

function describe(result) {
  return `isError=${result?.isError} content=${show(texts(result))} structuredContent=${show(result?.structuredContent)}`;
}

function expectSuccess(result, p, { text, structured }) {
  if (!p.expect(!result.isError, `expected success, got a tool error: ${describe(result)}`)) return;
  p.eq(texts(result), [text], 'content texts');
  p.eq(result.structuredContent, structured, 'structuredContent');
}

function expectToolError(result, p, text) {
  if (!p.expect(result.isError === true, `expected isError true, got ${describe(result)}`)) return;
  p.eq(texts(result), [text], 'error content texts');
  p.eq(result.structuredContent, undefined, 'structuredContent of a tool error');
}

/** Await `call`, which must reject with McpError `code` whose wire message is `message`. */
async function expectProtocolError(call, p, { code, message, data }) {
  let result;
  try {
    result = await call;
  } catch (err) {
    if (!(err instanceof McpError)) {
      p.add(`expected McpError ${code}, got ${err?.name}: ${err?.message}`);
      return null;
    }
    if (err.code === ErrorCode.ConnectionClosed || err.code === ErrorCode.RequestTimeout) throw err;
    p.eq(err.code, code, 'error code');
    if (message !== undefined) p.eq(err.message, `MCP error ${code}: ${message}`, 'error message');
    if (data !== undefined) p.eq(err.data, data, 'error data');
    return err;
  }
  p.add(`expected McpError ${code} ${JSON.stringify(message)}, got a result: ${describe(result)}`);
  return null;
}

// ------------------------------------------------------------------ wire recording

let seq = 0; // one order for every recorded message and HTTP exchange

const isRequest = (m) => m && typeof m === 'object' && 'method' in m && 'id' in m;
const isNotification = (m) => m && typeof m === 'object' && 'method' in m && !('id' in m);
const isResponse = (m) => m && typeof m === 'object' && !('method' in m) && ('result' in m || 'error' in m);

/** A transport wrapper that appends every JSON-RPC message, both ways, to conn.wire. */
class TeeTransport {
  constructor(inner, conn, label) {
    this.inner = inner;
    this.conn = conn;
    this.label = label;
    inner.onmessage = (msg, extra) => {
      this.record('<-', msg);
      this.onmessage?.(msg, extra);
    };
    inner.onclose = () => this.onclose?.();
    inner.onerror = (err) => this.onerror?.(err);
  }
  record(dir, msg) {
    this.conn.wire.push({ seq: ++seq, label: this.label, dir, msg: structuredClone(msg) });
  }
  async start() {
    await this.inner.start();
    // The spawned server (stdio), kept so that the end of the run and the watchdog can
    // kill it: the SDK's close() forgets the process before it has exited, and the
    // close after a failed connect is not awaited.
    if (this.inner._process) STDIO_CHILDREN.add(this.inner._process);
  }
  send(msg, options) {
    this.record('->', msg);
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

/** A fetch for StreamableHTTPClientTransport that records every exchange (and each body as it streams). */
function recordingFetch(conn, label) {
  return async (url, init = {}) => {
    const headers = new Headers(init.headers);
    let body;
    try {
      body = init.body === undefined ? undefined : JSON.parse(init.body);
    } catch {
      body = init.body;
    }
    const ex = {
      seq: ++seq,
      label,
      method: init.method ?? 'GET',
      sessionHeader: headers.get('mcp-session-id'),
      versionHeader: headers.get('mcp-protocol-version'),
      body,
      status: null,
      contentType: null,
      chunks: [],
      ended: false,
    };
    conn.http.push(ex);
    const response = await fetch(url, init);
    ex.status = response.status;
    ex.contentType = response.headers.get('content-type');
    ex.sessionId = response.headers.get('mcp-session-id');
    if (!response.body || [101, 204, 205, 304].includes(response.status)) {
      ex.ended = true;
      return response;
    }
    const decoder = new TextDecoder();
    const tap = new TransformStream({
      transform(chunk, controller) {
        ex.chunks.push({ seq: ++seq, text: decoder.decode(chunk, { stream: true }) });
        controller.enqueue(chunk);
      },
      flush() {
        ex.ended = true;
      },
    });
    return new Response(response.body.pipeThrough(tap), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** The JSON-RPC messages of one exchange's response body (SSE `data:` events, or one JSON body). */
function bodyMessages(ex) {
  const text = ex.chunks.map((c) => c.text).join('');
  const mediaType = (ex.contentType ?? '').split(';')[0].trim();
  const parse = (t) => {
    try {
      return JSON.parse(t);
    } catch {
      return { unparsed: t };
    }
  };
  if (mediaType === 'application/json') return text.trim() ? [parse(text)] : [];
  if (mediaType !== 'text/event-stream') return [];
  const out = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''));
    if (data.length) out.push(parse(data.join('\n')));
  }
  return out;
}

const sent = (lines, method) => lines.filter((l) => l.dir === '->' && isRequest(l.msg) && (!method || l.msg.method === method));
const serverRequests = (lines) => lines.filter((l) => l.dir === '<-' && isRequest(l.msg));
const responseTo = (lines, dir, id) => lines.find((l) => l.dir === dir && isResponse(l.msg) && sameId(l.msg.id, id));

function summary(m) {
  if (isRequest(m)) return `request ${m.method} ${JSON.stringify(m.id)}`;
  if (isNotification(m)) return `notification ${m.method}`;
  if (isResponse(m)) return `${'error' in m ? 'error' : 'result'} ${JSON.stringify(m.id)}`;
  return `other ${show(m)}`;
}

/**
 * Over HTTP: every exchange of the check follows the Streamable HTTP rules this
 * server keeps. A POST of a request (not initialize's) is answered 200 with JSON
 * or an SSE stream whose messages are requests/notifications from the server
 * followed by exactly one answer, to that request, last; a held stream
 * (cancelled) may end without one when `unanswered` names its id. A POST of a
 * response or a notification is answered 202 with no body. Every POST but
 * initialize carries the session id and MCP-Protocol-Version.
 */
function checkHttpExchanges(p, exchanges, { unanswered = [] } = {}) {
  let session = null;
  for (const ex of exchanges) {
    const what = `POST #${ex.seq} (${summary(ex.body)})`;
    if (ex.method !== 'POST') continue;
    const init = isRequest(ex.body) && ex.body.method === 'initialize';
    if (!init) {
      p.expect(!!ex.sessionHeader, `${what} carried no Mcp-Session-Id`);
      p.eq(ex.versionHeader, HANDSHAKE_VERSION, `${what} MCP-Protocol-Version header`);
      if (session && ex.sessionHeader && ex.label === session.label) {
        p.eq(ex.sessionHeader, session.id, `${what} session id (same client)`);
      }
      session = session ?? { label: ex.label, id: ex.sessionHeader };
    }
    if (isRequest(ex.body)) {
      if (!p.eq(ex.status, 200, `${what} status`)) continue;
      const msgs = bodyMessages(ex);
      const answers = msgs.filter(isResponse);
      const cancelled = unanswered.some((id) => sameId(id, ex.body.id));
      if (cancelled) {
        p.eq(answers.map(summary), [], `${what} (cancelled) answers on its stream`);
      } else {
        p.expect(
          answers.length === 1 && sameId(answers[0].id, ex.body.id),
          `${what}: expected one answer, to ${JSON.stringify(ex.body.id)}, in its body; got ${show(answers.map(summary))}`,
        );
        p.expect(msgs.length === 0 || isResponse(msgs[msgs.length - 1]), `${what}: the answer is not its body's last message: ${msgs.map(summary)}`);
      }
      p.expect(ex.ended, `${what}: its response body never ended`);
    } else {
      p.eq(ex.status, 202, `${what} status`);
      p.eq(ex.chunks.map((c) => c.text).join(''), '', `${what} body`);
    }
  }
}

/** The exchange whose POST body is `msg` (by kind and id, or method for a notification). */
function exchangeOf(exchanges, line) {
  return exchanges.find((ex) => ex.method === 'POST' && isDeepStrictEqual(ex.body, line.msg));
}

/** The exchange on whose response body the server sent `line` (a message received). */
function streamOf(exchanges, line) {
  return exchanges.find((ex) => bodyMessages(ex).some((m) => isDeepStrictEqual(m, line.msg)));
}

// ------------------------------------------------------------------ one transport

const STDIO_CHILDREN = new Set(); // ChildProcess objects of the stdio servers

class Conn {
  constructor(kind, target) {
    this.kind = kind; // 'stdio' | 'http'
    this.target = target; // argv | url
    this.wire = [];
    this.http = [];
    this.stderr = [];
    this.main = null; // {client, transport}
    this.broken = 'not started';
    this.fatal = null;
    this.failedRestarts = 0;
    this.starts = 0;
    this.auxCount = 0;
    this.reset();
  }

  reset(elicitReply = { action: 'cancel' }) {
    this.elicitations = []; // request.params
    this.elicitExtras = [];
    this.elicitReply = elicitReply; // a result, an Error to throw, or a function of params
    this.duringElicit = null; // awaited before the handler answers
    this.elicitAnswered = 0;
    this.samplings = [];
    this.sampleExtras = [];
    this.sampleReply = sampled(BLURB);
  }

  transport(label) {
    let inner;
    if (this.kind === 'stdio') {
      inner = new StdioClientTransport({
        command: this.target[0],
        args: this.target.slice(1),
        env: { ...process.env },
        stderr: 'pipe',
      });
      inner.stderr?.on('data', (d) => {
        this.stderr.push(...String(d).split('\n').filter(Boolean).map((l) => `${label}: ${l}`));
        if (this.stderr.length > 200) this.stderr.splice(0, this.stderr.length - 200);
      });
    } else {
      inner = new StreamableHTTPClientTransport(new URL(this.target), {
        fetch: recordingFetch(this, label),
        reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
      });
    }
    return new TeeTransport(inner, this, label);
  }

  /** A connected client; `caps` its capabilities, with the handlers for those it declares. */
  async open(label, caps) {
    const client = new Client({ name: 'picomcp-interop-ts', version: '1.0.0' }, { capabilities: caps });
    if (caps.elicitation) {
      client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
        this.elicitations.push(request.params);
        this.elicitExtras.push(extra);
        try {
          if (this.duringElicit) await this.duringElicit(request.params, extra);
          const reply = typeof this.elicitReply === 'function' ? this.elicitReply(request.params) : this.elicitReply;
          if (reply instanceof Error) throw reply;
          return reply;
        } finally {
          this.elicitAnswered++;
        }
      });
    }
    if (caps.sampling) {
      client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
        this.samplings.push(request.params);
        this.sampleExtras.push(extra);
        const reply = this.sampleReply;
        if (reply instanceof Error) throw reply;
        return reply;
      });
    }
    const transport = this.transport(label);
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
    return { client, transport, label };
  }

  async close(c) {
    if (!c) return;
    try {
      if (this.kind === 'http') await c.transport.inner.terminateSession();
    } catch (err) {
      console.log(`# terminating the ${c.label} HTTP session: ${err?.message}`);
    }
    try {
      await c.client.close();
    } catch (err) {
      console.log(`# closing ${c.label}: ${err?.message}`);
    }
  }

  async start() {
    await this.close(this.main);
    this.main = null;
    this.starts++;
    this.main = await this.open(`main${this.starts}`, { elicitation: {}, sampling: {} });
    this.broken = null;
  }

  /** A second client for one check (its own server process on stdio, its own session over HTTP). */
  async withAux(caps, fn) {
    const c = await this.open(`aux${++this.auxCount}`, caps);
    try {
      return await fn(c.client);
    } finally {
      await this.close(c);
    }
  }
}

function sampled(text) {
  return { role: 'assistant', content: { type: 'text', text }, model: 'interop-test', stopReason: 'endTurn' };
}

// ------------------------------------------------------------------ the checks

function checksFor(conn) {
  const http = conn.kind === 'http';
  const client = () => conn.main.client;
  const opts = (extra = {}) => ({ timeout: REQUEST_TIMEOUT_MS, ...extra });
  const call = (name, args, extra) => client().callTool({ name, arguments: args }, undefined, opts(extra));

  async function initialize() {
    const p = new Problems();
    const init = sent(conn.wire, 'initialize');
    if (!p.eq(init.length, 1, 'initialize requests')) p.done();
    const req = init[0].msg;
    p.eq(req.params.protocolVersion, HANDSHAKE_VERSION, 'initialize protocolVersion offered');
    p.eq(req.params.capabilities, { elicitation: {}, sampling: {} }, 'initialize capabilities');
    const answer = responseTo(conn.wire, '<-', req.id)?.msg?.result ?? {};
    p.eq(answer.protocolVersion, HANDSHAKE_VERSION, 'negotiated protocolVersion');
    p.eq(client().getServerVersion()?.name, 'Bookshop', 'serverInfo.name');
    const caps = client().getServerCapabilities() ?? {};
    for (const k of ['tools', 'resources', 'prompts']) p.expect(caps[k] !== undefined, `capabilities.${k} missing`);
    p.eq(
      conn.wire.filter((l) => l.dir === '->' && isNotification(l.msg)).map((l) => l.msg.method).slice(0, 1),
      ['notifications/initialized'],
      'first notification',
    );
    let note = `SDK ${sdkVersion} (latest protocol ${LATEST_PROTOCOL_VERSION}), negotiated ${answer.protocolVersion}`;
    if (http) {
      const sid = conn.main.transport.sessionId;
      p.expect(typeof sid === 'string' && sid.length > 0, `no Mcp-Session-Id issued: ${show(sid)}`);
      const ex = conn.http.find((e) => isRequest(e.body) && e.body.method === 'initialize');
      p.eq(ex?.sessionId, sid, 'Mcp-Session-Id on the initialize answer');
      note += '; session id issued';
    }
    p.done();
    return note;
  }

  async function toolsList() {
    const result = await client().listTools(undefined, opts());
    const p = new Problems();
    p.eq(result.tools.map((t) => t.name), TOOLS, 'tool names in order');
    p.eq(result.nextCursor, undefined, 'nextCursor');
    const byName = Object.fromEntries(result.tools.map((t) => [t.name, t]));
    const ga = byName.get_author;
    if (p.expect(ga, 'get_author not listed')) {
      p.eq(ga.inputSchema?.properties?.title?.type, 'string', 'get_author inputSchema title.type');
      p.eq(ga.inputSchema?.required, ['title'], 'get_author inputSchema.required');
      p.eq(ga.outputSchema, GET_AUTHOR_OUTPUT_SCHEMA, 'get_author outputSchema');
    }
    for (const name of ['reserve', 'blurb']) {
      const t = byName[name];
      if (!p.expect(t, `${name} not listed`)) continue;
      p.eq(t.inputSchema?.type, 'object', `${name} inputSchema.type`);
      p.eq(t.inputSchema?.properties?.title?.type, 'string', `${name} inputSchema title.type`);
      p.expect((t.inputSchema?.required ?? []).includes('title'), `${name} inputSchema.required lacks title`);
      p.eq(t.outputSchema, undefined, `${name} outputSchema`);
    }
    p.done();
    return `${result.tools.length} tools`;
  }

  const getAuthor = (title, author) => async () => {
    const p = new Problems();
    expectSuccess(await call('get_author', { title }), p, { text: author, structured: { result: author } });
    p.done();
  };

  async function getAuthorUnknown() {
    const p = new Problems();
    expectToolError(await call('get_author', { title: 'Nothing' }), p, `Error executing tool get_author: ${NOT_FOUND}`);
    p.done();
  }

  async function unknownTool() {
    const p = new Problems();
    await expectProtocolError(call('nope', {}), p, { code: -32602, message: 'Unknown tool: nope' });
    p.done();
  }

  async function resourcesList() {
    const p = new Problems();
    const r = await client().listResources(undefined, opts());
    p.eq(r.resources.map((x) => [x.uri, x.mimeType]), [['books://catalog', 'application/json'], ['books://stock', 'application/json']], 'resources (uri, mimeType)');
    const t = await client().listResourceTemplates(undefined, opts());
    p.eq(
      t.resourceTemplates.map((x) => [x.uriTemplate, x.name, x.mimeType]),
      [['books://{title}', 'book', 'text/plain']],
      'resource templates (uriTemplate, name, mimeType)',
    );
    p.done();
  }

  const readText = (uri, want) => async () => {
    const p = new Problems();
    const r = await client().readResource({ uri }, opts());
    p.eq(r.contents.map((c) => [c.uri, c.text]), [[uri, want]], 'contents (uri, text)');
    p.done();
  };

  async function readUnknown() {
    const p = new Problems();
    await expectProtocolError(client().readResource({ uri: 'books://Nothing' }, opts()), p, {
      code: -32602,
      message: NOT_FOUND,
      data: { uri: 'books://Nothing' },
    });
    p.done();
  }

  // -------------------------------------------------------------- asking the client

  /**
   * The wire of one tools/call that asked the client once (handshake era): one
   * tools/call; after it one request from the server (`method`, an id of its
   * own); the client's answer to it; only then the call's one answer, with its
   * id and no inputRequests. Over HTTP: the server's request and the call's
   * answer came on the call's POST stream; the client's answer went in a POST
   * of its own, answered 202. Returns [the server's request, the client's answer].
   */
  function askedOnWire(p, lines, exchanges, method) {
    const calls = sent(lines, 'tools/call');
    const asks = serverRequests(lines);
    if (!p.eq(calls.length, 1, 'tools/call requests on the wire')) return [null, null];
    if (!p.eq(asks.map((l) => l.msg.method), [method], 'requests from the server')) return [null, null];
    const [callLine, askLine] = [calls[0], asks[0]];
    p.expect(askLine.seq > callLine.seq, "the server's request came before the call was sent");
    p.expect(!sameId(askLine.msg.id, callLine.msg.id), `the server's request reuses the call's id ${show(askLine.msg.id)}`);
    const reply = responseTo(lines, '->', askLine.msg.id);
    if (!p.expect(reply, `the client never answered the server's ${method} (id ${show(askLine.msg.id)})`)) return [askLine.msg, null];
    const final = responseTo(lines, '<-', callLine.msg.id);
    if (p.expect(final, 'the call was never answered')) {
      p.expect(final.seq > reply.seq, "the call was answered before the client answered the server's request");
      p.expect(!('inputRequests' in (final.msg.result ?? {})), `input_required on the handshake era: ${show(final.msg)}`);
    }
    p.eq(lines.filter((l) => l.dir === '<-' && isResponse(l.msg) && sameId(l.msg.id, callLine.msg.id)).length, 1, 'answers to the call');
    if (http) {
      const post = exchangeOf(exchanges, callLine);
      if (p.expect(post, 'no POST recorded for the tools/call')) {
        p.eq((post.contentType ?? '').split(';')[0], 'text/event-stream', "the call's POST answer Content-Type");
        p.eq(bodyMessages(post).map(summary), [summary(askLine.msg), summary(final?.msg ?? {})], "messages on the call's POST stream");
      }
      const answerPost = exchangeOf(exchanges, reply);
      if (p.expect(answerPost, "no POST recorded for the client's answer")) {
        p.eq(answerPost.status, 202, "the client's answer POST status");
        p.expect(answerPost.seq > (post?.seq ?? Infinity) || !post, "the answer POST was sent before the call's POST");
      }
      checkHttpExchanges(p, exchanges);
    }
    return [askLine.msg, reply.msg.result ?? reply.msg.error];
  }

  function checkElicitation(p, title) {
    if (!p.eq(conn.elicitations.length, 1, 'elicitation handler calls')) return;
    const params = conn.elicitations[0];
    p.eq(params.message, `Reserve ${title}?`, 'elicitation message');
    p.eq(params.mode ?? 'form', 'form', 'elicitation mode');
    p.eq(params.requestedSchema, CONFIRM_SCHEMA, 'requestedSchema');
  }

  const mark = () => ({ wire: conn.wire.length, http: conn.http.length });
  const since = (m) => [conn.wire.slice(m.wire), conn.http.slice(m.http)];

  const reserve = (title, reply, want) => async () => {
    conn.reset(reply);
    const m = mark();
    const result = await call('reserve', { title });
    await settle();
    const [lines, exchanges] = since(m);
    const p = new Problems();
    expectSuccess(result, p, { text: want, structured: undefined });
    checkElicitation(p, title);
    p.eq(conn.samplings.length, 0, 'sampling handler calls');
    const [asked, answered] = askedOnWire(p, lines, exchanges, 'elicitation/create');
    if (asked) {
      p.eq(asked.params?.message, `Reserve ${title}?`, 'message on the wire');
      p.eq(asked.params?.mode, 'form', 'mode on the wire');
      p.eq(asked.params?.requestedSchema, CONFIRM_SCHEMA, 'requestedSchema on the wire');
      if (conn.elicitExtras.length) p.eq(conn.elicitExtras[0].requestId, asked.id, 'handler extra.requestId');
    }
    if (answered) p.eq(answered, reply, "the client's answer on the wire");
    p.done();
    return `handler answered ${reply.action}; elicitation/create answered, then the call${http ? ' (on its POST stream)' : ''}`;
  };

  /** Over HTTP, let the response bodies finish streaming (the SDK resolves on the message, before the end). */
  async function settle() {
    if (http) await waitUntil(() => conn.http.every((ex) => ex.ended || !isRequest(ex.body) || ex.status === null), 2000);
  }

  async function reserveUnknown() {
    conn.reset({ action: 'accept', content: { confirm: true } });
    const m = mark();
    const result = await call('reserve', { title: 'Nothing' });
    const p = new Problems();
    expectToolError(result, p, `Error executing tool reserve: ${NOT_FOUND}`);
    p.eq(conn.elicitations.length, 0, 'elicitation handler calls');
    p.eq(serverRequests(since(m)[0]).map((l) => l.msg.method), [], 'requests from the server');
    p.done();
  }

  async function reserveHandlerError() {
    conn.reset(Object.assign(new Error('User rejected'), { code: -1 }));
    const m = mark();
    const p = new Problems();
    await expectProtocolError(call('reserve', { title: 'Dune' }), p, {
      code: -32603,
      message: 'the client refused input request confirm (elicitation/create): User rejected',
    });
    await settle();
    const [lines, exchanges] = since(m);
    const asks = serverRequests(lines);
    if (p.eq(asks.map((l) => l.msg.method), ['elicitation/create'], 'requests from the server')) {
      const reply = responseTo(lines, '->', asks[0].msg.id);
      p.eq(reply?.msg?.error, { code: -1, message: 'User rejected' }, "the client's error answer");
    }
    p.eq(conn.elicitations.length, 1, 'elicitation handler calls');
    if (http) checkHttpExchanges(p, exchanges);
    p.done();
    return 'the SDK answered the error; the server failed the call -32603';
  }

  async function blurb() {
    conn.reset();
    const m = mark();
    const result = await call('blurb', { title: 'Neuromancer' });
    await settle();
    const [lines, exchanges] = since(m);
    const p = new Problems();
    expectSuccess(result, p, { text: BLURB, structured: undefined });
    if (p.eq(conn.samplings.length, 1, 'sampling handler calls')) {
      const params = conn.samplings[0];
      p.eq(params.maxTokens, 100, 'maxTokens');
      p.eq(params.messages, [{ role: 'user', content: { type: 'text', text: BLURB_PROMPT } }], 'messages');
    }
    p.eq(conn.elicitations.length, 0, 'elicitation handler calls');
    const [asked, answered] = askedOnWire(p, lines, exchanges, 'sampling/createMessage');
    if (asked) {
      const want = { messages: [{ role: 'user', content: { type: 'text', text: BLURB_PROMPT } }], maxTokens: 100 };
      p.eq(asked.params, want, 'sampling/createMessage params on the wire');
      if (conn.sampleExtras.length) p.eq(conn.sampleExtras[0].requestId, asked.id, 'handler extra.requestId');
    }
    if (answered) p.eq(answered.content?.text, BLURB, "the client's sampled text on the wire");
    p.done();
    return `sampled ${JSON.stringify(BLURB)} came back as the tool's text`;
  }

  async function blurbUnknown() {
    conn.reset();
    const m = mark();
    const result = await call('blurb', { title: 'Nothing' });
    const p = new Problems();
    expectToolError(result, p, `Error executing tool blurb: ${NOT_FOUND}`);
    p.eq(conn.samplings.length, 0, 'sampling handler calls');
    p.eq(serverRequests(since(m)[0]).map((l) => l.msg.method), [], 'requests from the server');
    p.done();
  }

  const withoutCapability = (tool, missing, declared) => async () => {
    conn.reset();
    const m = mark();
    const p = new Problems();
    await conn.withAux({ [declared]: {} }, async (bare) => {
      await expectProtocolError(bare.callTool({ name: tool, arguments: { title: 'Dune' } }, undefined, opts()), p, {
        code: -32021,
        message: `Missing required client capability: ${missing}`,
        data: { requiredCapabilities: { [missing]: {} } },
      });
    });
    await settle();
    const [lines, exchanges] = since(m);
    const caps = sent(lines, 'initialize').map((l) => l.msg.params.capabilities);
    p.eq(caps, [{ [declared]: {} }], 'initialize capabilities of the second client');
    p.eq(serverRequests(lines).map((l) => l.msg.method), [], 'requests from the server');
    p.eq([conn.elicitations.length, conn.samplings.length], [0, 0], 'handler calls (elicitation, sampling)');
    if (http) checkHttpExchanges(p, exchanges.filter((ex) => ex.method === 'POST'));
    p.done();
    return `a client declaring only ${declared} (${http ? 'its own session' : 'its own server process'})`;
  };

  async function getAuthorWhileReserveWaits() {
    const got = [];
    conn.reset({ action: 'accept', content: { confirm: true } });
    conn.duringElicit = async () => {
      got.push(await call('get_author', { title: 'Neuromancer' }));
    };
    const m = mark();
    const result = await call('reserve', { title: 'Dune' });
    await settle();
    const [lines, exchanges] = since(m);
    const p = new Problems();
    expectSuccess(result, p, { text: 'Reserved Dune', structured: undefined });
    if (p.eq(got.length, 1, 'get_author results from inside the handler')) {
      expectSuccess(got[0], p, { text: 'William Gibson', structured: { result: 'William Gibson' } });
    }
    const calls = sent(lines, 'tools/call');
    const outer = calls.filter((l) => l.msg.params.name === 'reserve');
    const inner = calls.filter((l) => l.msg.params.name === 'get_author');
    const asks = serverRequests(lines);
    if (p.eq([outer.length, inner.length, asks.length], [1, 1, 1], 'tools/call reserve, get_author; requests from the server')) {
      const steps = [
        ['reserve sent', outer[0].seq],
        ['elicitation/create received', asks[0].seq],
        ['get_author sent', inner[0].seq],
        ['get_author answered', responseTo(lines, '<-', inner[0].msg.id)?.seq ?? -1],
        ['elicitation/create answered', responseTo(lines, '->', asks[0].msg.id)?.seq ?? -1],
        ['reserve answered', responseTo(lines, '<-', outer[0].msg.id)?.seq ?? -1],
      ];
      const at = steps.map(([, s]) => s);
      p.expect(!at.includes(-1) && isDeepStrictEqual(at, [...at].sort((a, b) => a - b)), `wire order: ${show(steps)}`);
    }
    if (http) checkHttpExchanges(p, exchanges);
    p.done();
    return 'get_author answered while reserve waited on the server';
  }

  async function twoReservesAtOnce() {
    let release;
    const both = new Promise((r) => (release = r));
    conn.reset((params) =>
      params.message === 'Reserve Dune?' ? { action: 'accept', content: { confirm: true } } : { action: 'decline' },
    );
    conn.duringElicit = async () => {
      if (conn.elicitations.length >= 2) release(true);
      await Promise.race([both, sleep(5000)]);
    };
    const m = mark();
    const [dune, neuro] = await Promise.all([call('reserve', { title: 'Dune' }), call('reserve', { title: 'Neuromancer' })]);
    await settle();
    const [lines, exchanges] = since(m);
    const p = new Problems();
    p.eq(conn.elicitations.map((e) => e.message).sort(), ['Reserve Dune?', 'Reserve Neuromancer?'], 'elicitation messages');
    p.expect(
      await Promise.race([both, sleep(0).then(() => false)]),
      'the two elicitations were never outstanding at once',
    );
    const sub = new Problems();
    expectSuccess(dune, sub, { text: 'Reserved Dune', structured: undefined });
    expectSuccess(neuro, sub, { text: 'Not reserved: Neuromancer', structured: undefined });
    p.items.push(...sub.items);
    const asks = serverRequests(lines);
    if (p.eq(asks.map((l) => l.msg.method), ['elicitation/create', 'elicitation/create'], 'requests from the server')) {
      p.expect(!sameId(asks[0].msg.id, asks[1].msg.id), `both requests from the server have id ${show(asks[0].msg.id)}`);
      const replies = asks.map((a) => responseTo(lines, '->', a.msg.id));
      p.expect(replies.every((r) => r && r.seq > asks[1].seq), 'the client answered the first elicitation/create before the second arrived');
    }
    if (http) {
      // Each call's stream carries its own elicitation and its own answer.
      for (const c of sent(lines, 'tools/call')) {
        const post = exchangeOf(exchanges, c);
        const title = c.msg.params.arguments.title;
        const own = bodyMessages(post ?? { chunks: [] }).filter((x) => isRequest(x)).map((x) => x.params?.message);
        p.eq(own, [`Reserve ${title}?`], `elicitations on the stream of reserve ${title}`);
      }
      checkHttpExchanges(p, exchanges);
    }
    p.done();
    return `both calls waited on the server at once${http ? ', each on its own POST stream' : ''}`;
  }

  async function reserveCancelledWhileWaiting() {
    const ac = new AbortController();
    conn.reset({ action: 'accept', content: { confirm: true } });
    conn.duringElicit = async () => {
      ac.abort('the user gave up');
      await sleep(300); // the cancellation reaches the server first; this answer comes late
    };
    const m = mark();
    const p = new Problems();
    try {
      const r = await call('reserve', { title: 'Dune' }, { signal: ac.signal });
      p.add(`the cancelled call resolved: ${describe(r)}`);
    } catch (err) {
      p.expect(ac.signal.aborted, `the call failed before it was cancelled: ${err?.message}`);
    }
    await waitUntil(() => conn.elicitAnswered >= 1, 3000);
    await sleep(300);
    // The connection goes on.
    const after = await call('get_author', { title: 'Dune' });
    await settle();
    const [lines, exchanges] = since(m);
    expectSuccess(after, p, { text: 'Frank Herbert', structured: { result: 'Frank Herbert' } });
    const reserveCall = sent(lines, 'tools/call').find((l) => l.msg.params.name === 'reserve');
    if (p.expect(reserveCall, 'no tools/call reserve on the wire')) {
      const cancels = lines.filter((l) => l.dir === '->' && l.msg.method === 'notifications/cancelled');
      p.eq(cancels.map((l) => l.msg.params.requestId), [reserveCall.msg.id], 'notifications/cancelled requestId');
      p.eq(responseTo(lines, '<-', reserveCall.msg.id)?.msg, undefined, 'an answer to the cancelled call');
      const asks = serverRequests(lines);
      if (p.eq(asks.map((l) => l.msg.method), ['elicitation/create'], 'requests from the server')) {
        const late = responseTo(lines, '->', asks[0].msg.id);
        p.expect(late && cancels.length && late.seq > cancels[0].seq, "the handler's answer was not sent after the cancellation");
      }
      if (http) {
        const post = exchangeOf(exchanges, reserveCall);
        if (post) {
          p.eq(bodyMessages(post).map(summary), [summary(asks[0]?.msg ?? {})], "messages on the cancelled call's stream");
          p.expect(post.ended, "the cancelled call's stream was not ended");
        }
        checkHttpExchanges(p, exchanges, { unanswered: [reserveCall.msg.id] });
      }
    }
    p.done();
    return `never answered; the late elicitation answer was ignored${http ? '; its stream ended' : ''}`;
  }

  async function wireEraConsistent() {
    const p = new Problems();
    const mainLines = conn.wire.filter((l) => l.label.startsWith('main'));
    const requests = sent(mainLines);
    p.eq(requests[0]?.msg?.method, 'initialize', 'first request');
    p.eq(requests.filter((l) => l.msg.method === 'server/discover').length, 0, 'server/discover requests');
    p.eq(requests.filter((l) => ENVELOPE_KEY in (l.msg.params?._meta ?? {})).map((l) => l.msg.method), [], 'requests with the 2026-07-28 envelope');
    let asked = 0;
    for (const label of [...new Set(conn.wire.map((l) => l.label))].sort()) {
      const lines = conn.wire.filter((l) => l.label === label);
      const asks = serverRequests(lines);
      asked += asks.length;
      p.eq([...new Set(asks.map((l) => l.msg.method))].filter((x) => !ASKING_METHODS.includes(x)), [], `${label}: requests from the server`);
      const ids = asks.map((l) => JSON.stringify(l.msg.id));
      p.eq(ids.filter((id, i) => ids.indexOf(id) !== i), [], `${label}: request ids the server reused`);
      for (const a of asks) {
        const n = lines.filter((l) => l.dir === '->' && isResponse(l.msg) && sameId(l.msg.id, a.msg.id)).length;
        p.eq(n, 1, `${label}: answers to the server's ${a.msg.method} ${JSON.stringify(a.msg.id)}`);
      }
      // Every request the client sent was answered at most once.
      for (const r of sent(lines)) {
        const n = lines.filter((l) => l.dir === '<-' && isResponse(l.msg) && sameId(l.msg.id, r.msg.id)).length;
        p.expect(n <= 1, `${label}: ${r.msg.method} ${JSON.stringify(r.msg.id)} answered ${n} times`);
      }
    }
    p.done();
    return `${requests.length} requests, none enveloped; ${asked} requests from the server, each answered once`;
  }

  return [
    ['initialize', initialize],
    ['tools_list', toolsList],
    ['call_get_author_dune', getAuthor('Dune', 'Frank Herbert')],
    ['call_get_author_neuromancer', getAuthor('Neuromancer', 'William Gibson')],
    ['call_get_author_unknown_title_is_tool_error', getAuthorUnknown],
    ['call_unknown_tool_is_protocol_error', unknownTool],
    ['resources_and_templates_list', resourcesList],
    ['read_books_dune', readText('books://Dune', 'Dune by Frank Herbert')],
    ['read_books_catalog_json', readText('books://catalog', '["Dune","Neuromancer"]')],
    ['read_books_nothing_not_found', readUnknown],
    ['call_reserve_accept', reserve('Dune', { action: 'accept', content: { confirm: true } }, 'Reserved Dune')],
    ['call_reserve_accept_unconfirmed', reserve('Dune', { action: 'accept', content: { confirm: false } }, 'Not reserved: Dune')],
    ['call_reserve_decline', reserve('Dune', { action: 'decline' }, 'Not reserved: Dune')],
    ['call_reserve_cancel', reserve('Neuromancer', { action: 'cancel' }, 'Not reserved: Neuromancer')],
    ['call_reserve_unknown_title_is_tool_error', reserveUnknown],
    ['call_reserve_handler_error', reserveHandlerError],
    ['call_reserve_without_elicitation_capability', withoutCapability('reserve', 'elicitation', 'sampling')],
    ['call_blurb_via_sampling', blurb],
    ['call_blurb_unknown_title_is_tool_error', blurbUnknown],
    ['call_blurb_without_sampling_capability', withoutCapability('blurb', 'sampling', 'elicitation')],
    ['call_get_author_while_reserve_waits', getAuthorWhileReserveWaits],
    ['call_two_reserves_at_once', twoReservesAtOnce],
    ['call_reserve_cancelled_while_waiting', reserveCancelledWhileWaiting],
    ['wire_era_consistent', wireEraConsistent],
  ];
}

// ------------------------------------------------------------------ runner

const started = Date.now();
const tally = {}; // transport -> [passed, failed]
let passed = 0;
let failed = 0;

function count(name, i) {
  const t = (tally[name.split('.')[0]] ??= [0, 0]);
  t[i]++;
}

function ok(name, note) {
  passed++;
  count(name, 0);
  console.log(`ok ${name}${note ? ` (${note})` : ''}`);
}

function fail(name, detail) {
  failed++;
  count(name, 1);
  console.log(`FAIL ${name}: ${String(detail).replace(/\s*\n\s*/g, ' ')}`);
}

function errText(err) {
  if (err instanceof McpError) return `McpError code=${err.code} message=${JSON.stringify(err.message)} data=${show(err.data)}`;
  return `${err?.name ?? 'Error'}: ${err?.message ?? err}`;
}

function printWire(name, conn, m) {
  const lines = conn.wire.slice(m.wire);
  if (lines.length) {
    const shown = lines.slice(-WIRE_LINES_ON_FAILURE);
    console.log(`#   wire of ${name} (last ${shown.length} of ${lines.length} messages):`);
    for (const l of shown) {
      const text = JSON.stringify(l.msg);
      console.log(`#     ${l.label} ${l.dir} ${text.length > WIRE_LINE_CHARS ? `${text.slice(0, WIRE_LINE_CHARS)}...` : text}`);
    }
  }
  const exchanges = conn.http.slice(m.http);
  for (const ex of exchanges.slice(-WIRE_LINES_ON_FAILURE)) {
    const body = bodyMessages(ex).map(summary).join(', ');
    console.log(
      `#     http ${ex.label} ${ex.method} (${ex.body === undefined ? '-' : summary(ex.body)}) -> ${ex.status} ${ex.contentType ?? ''}` +
        `${body ? ` [${body}]` : ''}${ex.ended ? '' : ' (body not ended)'}`,
    );
  }
}

async function runCheck(fullName, fn, conn) {
  const m = { wire: conn.wire.length, http: conn.http.length };
  const before = failed;
  const left = TOTAL_TIMEOUT_MS - (Date.now() - started);
  const budget = Math.min(CHECK_TIMEOUT_MS, left);
  try {
    if (budget <= 0) return fail(fullName, `not run: the whole-run budget of ${TOTAL_TIMEOUT_MS / 1000}s is used up`);
    if (conn.fatal) return fail(fullName, conn.fatal);
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new CheckFailed(`timed out after ${Math.round(budget / 1000)}s`)), budget);
    });
    try {
      if (conn.broken) {
        if (conn.failedRestarts >= MAX_FAILED_RESTARTS) {
          conn.fatal = `gave up after ${conn.failedRestarts} failed connects (last: ${conn.broken})`;
          return fail(fullName, conn.fatal);
        }
        if (conn.starts > 0) console.log(`# ${conn.kind} connection unusable (${conn.broken}); reconnecting`);
        try {
          await Promise.race([conn.start(), timeout]);
          conn.failedRestarts = 0;
        } catch (err) {
          conn.failedRestarts++;
          conn.broken = `connect failed: ${errText(err)}`;
          return fail(fullName, `could not connect: ${errText(err)}`);
        }
      }
      const t0 = Date.now();
      const note = await Promise.race([fn(), timeout]);
      const ms = Date.now() - t0;
      ok(fullName, [note, ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : null].filter(Boolean).join('; '));
    } catch (err) {
      if (err instanceof CheckFailed) {
        if (err.message.startsWith('timed out')) conn.broken = `check ${fullName} timed out`;
        fail(fullName, err.message);
      } else {
        if (err instanceof McpError && (err.code === ErrorCode.ConnectionClosed || err.code === ErrorCode.RequestTimeout)) {
          conn.broken = errText(err);
        }
        fail(fullName, `raised ${errText(err)}`);
      }
    } finally {
      clearTimeout(timer);
    }
  } finally {
    if (failed > before) printWire(fullName, conn, m);
  }
}

/** Kill every stdio server this run spawned that has not exited (ChildProcess.kill never
 * signals a process Node has already reaped, so no other process can be hit). */
function killChildren() {
  for (const child of STDIO_CHILDREN) {
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
  console.log(`FAIL watchdog: the run still had not finished after ${(TOTAL_TIMEOUT_MS + 20_000) / 1000}s; killing the servers`);
  killChildren();
  console.log(`${passed} passed, ${failed + 1} failed`);
  process.exit(3);
}, TOTAL_TIMEOUT_MS + 20_000);
watchdog.unref();

process.on('unhandledRejection', (err) => {
  console.log(`# unhandled rejection: ${errText(err)}`);
});

console.log(`# @modelcontextprotocol/sdk ${sdkVersion} (Client: initialize, protocol ${LATEST_PROTOCOL_VERSION}); node ${process.version}`);
if (stdioArgv) console.log(`# stdio server: ${stdioArgv.join(' ')}`);
if (httpUrl) console.log(`# http endpoint: ${httpUrl}`);

const conns = [];
if (stdioArgv) conns.push(new Conn('stdio', stdioArgv));
if (httpUrl) conns.push(new Conn('http', httpUrl));
for (const conn of conns) {
  console.log(`# transport ${conn.kind}: Client + ${conn.kind === 'stdio' ? 'StdioClientTransport' : 'StreamableHTTPClientTransport'} (handshake era, ${HANDSHAKE_VERSION})`);
  try {
    for (const [name, fn] of checksFor(conn)) await runCheck(`${conn.kind}.${name}`, fn, conn);
  } finally {
    await Promise.race([conn.close(conn.main), sleep(5000)]);
    conn.main = null;
  }
  if (tally[conn.kind]?.[1] && conn.stderr.length) {
    console.log(`# ${conn.kind} server stderr (last ${Math.min(15, conn.stderr.length)} lines):`);
    for (const l of conn.stderr.slice(-15)) console.log(`#   ${l}`);
  }
}
killChildren();
for (const [kind, [p, f]] of Object.entries(tally)) console.log(`# ${kind}: ${p} passed, ${f} failed`);
console.log(`# ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
