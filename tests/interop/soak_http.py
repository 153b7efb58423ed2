"""Soak: valid and hostile HTTP traffic mixed against a running http_bookshop,
loopback only, for a bounded time; every answer is checked against the request
that asked for it (its own id, its own result).

Workers (threads, one keep-alive connection each, reconnecting when the server
closes) send, at random:
* valid 2026-07-28 ``tools/call get_author`` with a fresh id (numbers and
  strings) → 200, that id, ``Frank Herbert`` / ``William Gibson``;
* valid handshake-era calls in a session of the worker's own (initialize,
  then ``tools/call``) → 200, that id, the author;
* malformed JSON → 400 and ``id: null``;
* a header that disagrees with the body (``Mcp-Name``) → 400, ``-32020``, the id;
* random bytes → 400;
* a declared body over the cap → 413;
* an id longer than the output buffer allows → an error with ``id: null`` (never
  a result);
and a few connections that send half a header and stall (cut by the header
timeout). The server's RSS is sampled every 5 s.

Usage: soak_http.py URL --pid PID [--seconds N] [--workers N]
Exit status 0 when no answer was wrong and no request went unanswered.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import socket
import sys
import threading
import time
from urllib.parse import urlsplit

ENV = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
       "io.modelcontextprotocol/clientCapabilities": {}}
AUTHORS = {"Dune": "Frank Herbert", "Neuromancer": "William Gibson"}
BASE = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
MODERN = {**BASE, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_author"}


class Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: dict[str, int] = {}
        self.wrong: list[str] = []
        self.errors: dict[str, int] = {}

    def ok(self, kind: str) -> None:
        with self.lock:
            self.counts[kind] = self.counts.get(kind, 0) + 1

    def bad(self, kind: str, why: str) -> None:
        with self.lock:
            if len(self.wrong) < 20:
                self.wrong.append(f"{kind}: {why}")
            self.counts["WRONG"] = self.counts.get("WRONG", 0) + 1

    def error(self, kind: str, exc: BaseException) -> None:
        with self.lock:
            key = f"{kind}: {type(exc).__name__}"
            self.errors[key] = self.errors.get(key, 0) + 1


class Worker(threading.Thread):
    def __init__(self, n: int, host: str, port: int, stats: Stats, until: float) -> None:
        super().__init__(daemon=True)
        self.n, self.host, self.port, self.stats, self.until = n, host, port, stats, until
        self.conn: http.client.HTTPConnection | None = None
        self.session: str | None = None
        self.rng = random.Random(n)
        self.next_id = 0

    def post(self, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
            try:
                self.conn.request("POST", "/mcp", body=body, headers=headers)
                r = self.conn.getresponse()
                data = r.read()
                return r.status, {k.lower(): v for k, v in r.getheaders()}, data
            except (http.client.HTTPException, ConnectionError, socket.timeout, OSError):
                self.conn.close()
                self.conn = None
                if attempt == 1:
                    raise
        raise RuntimeError("unreachable")

    def fresh_id(self) -> object:
        self.next_id += 1
        return self.next_id if self.rng.random() < 0.5 else f"w{self.n}-{self.next_id}"

    def valid_modern(self) -> None:
        rid, title = self.fresh_id(), self.rng.choice(list(AUTHORS))
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                           "params": {"name": "get_author", "arguments": {"title": title}, "_meta": ENV}})
        status, _, data = self.post(MODERN, body.encode())
        v = json.loads(data)
        if status != 200 or v.get("id") != rid or v["result"]["structuredContent"]["result"] != AUTHORS[title]:
            self.stats.bad("modern", f"{status} {data[:200]!r} for id {rid!r}")
        else:
            self.stats.ok("modern")

    def valid_session(self) -> None:
        if self.session is None:
            init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "soak", "version": "1"}}}
            status, headers, data = self.post(BASE, json.dumps(init).encode())
            if status == 503:  # the table is full of live sessions: retry later
                self.stats.ok("session-503")
                return
            if status != 200 or "mcp-session-id" not in headers:
                self.stats.bad("initialize", f"{status} {data[:200]!r}")
                return
            self.session = headers["mcp-session-id"]
        rid, title = self.fresh_id(), self.rng.choice(list(AUTHORS))
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                           "params": {"name": "get_author", "arguments": {"title": title}}})
        status, _, data = self.post({**BASE, "Mcp-Session-Id": self.session}, body.encode())
        if status == 404:  # expired: initialize again
            self.session = None
            self.stats.ok("session-expired")
            return
        v = json.loads(data)
        if status != 200 or v.get("id") != rid or v["result"]["content"][0]["text"] != AUTHORS[title]:
            self.stats.bad("session", f"{status} {data[:200]!r} for id {rid!r}")
        else:
            self.stats.ok("session")

    def malformed(self) -> None:
        status, _, data = self.post(MODERN, b'{"jsonrpc":"2.0","id":1,"method":')
        v = json.loads(data)
        if status != 400 or v.get("id") is not None or v["error"]["code"] != -32700:
            self.stats.bad("malformed", f"{status} {data[:200]!r}")
        else:
            self.stats.ok("malformed")

    def mismatch(self) -> None:
        rid = self.fresh_id()
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                           "params": {"name": "get_author", "arguments": {"title": "Dune"}, "_meta": ENV}})
        status, _, data = self.post({**MODERN, "Mcp-Name": "top"}, body.encode())
        v = json.loads(data)
        if status != 400 or v.get("id") != rid or v["error"]["code"] != -32020:
            self.stats.bad("mismatch", f"{status} {data[:200]!r} for id {rid!r}")
        else:
            self.stats.ok("mismatch")

    def garbage(self) -> None:
        status, _, _ = self.post(MODERN, bytes(self.rng.randrange(256) for _ in range(self.rng.randrange(1, 300))))
        # Random bytes are never a request: 400 (or 202 for bytes that happen
        # to be one JSON notification-like value... not with random bytes).
        if status != 400:
            self.stats.bad("garbage", f"status {status}")
        else:
            self.stats.ok("garbage")

    def too_large(self) -> None:
        # A raw socket: the body is declared, never sent.
        with socket.create_connection((self.host, self.port), timeout=10) as s:
            s.sendall((f"POST /mcp HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                       "Content-Type: application/json\r\nContent-Length: 100000000\r\n\r\n").encode())
            head = s.recv(64)
        if not head.startswith(b"HTTP/1.1 413"):
            self.stats.bad("declared-413", repr(head))
        else:
            self.stats.ok("declared-413")

    def long_id(self) -> None:
        rid = "x" * (300 * 1024)  # longer than the 256 KiB output buffer
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                           "params": {"name": "get_author", "arguments": {"title": "Dune"}, "_meta": ENV}})
        status, _, data = self.post(MODERN, body.encode())
        if status == 413:  # over --max-body: refused before the core
            self.stats.ok("long-id-413")
            return
        v = json.loads(data)
        if "result" in v or v.get("id") is not None:
            self.stats.bad("long-id", f"{status} {data[:200]!r}")
        else:
            self.stats.ok("long-id")

    def run(self) -> None:
        cases = [(self.valid_modern, 40), (self.valid_session, 30), (self.malformed, 8), (self.mismatch, 8),
                 (self.garbage, 8), (self.too_large, 3), (self.long_id, 3)]
        fns, weights = zip(*cases)
        while time.monotonic() < self.until:
            fn = self.rng.choices(fns, weights)[0]
            try:
                fn()
            except Exception as exc:  # an unanswered request: counted, reported
                self.stats.error(fn.__name__, exc)


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main(argv: list[str]) -> int:
    url = urlsplit(argv[0])
    host, port = url.hostname or "127.0.0.1", url.port or 80
    pid = int(argv[argv.index("--pid") + 1])
    seconds = float(argv[argv.index("--seconds") + 1]) if "--seconds" in argv else 60.0
    workers = int(argv[argv.index("--workers") + 1]) if "--workers" in argv else 8
    stats = Stats()
    until = time.monotonic() + seconds
    threads = [Worker(n, host, port, stats, until) for n in range(workers)]
    stallers = []
    for t in threads:
        t.start()
    start = time.monotonic()
    samples = []
    while any(t.is_alive() for t in threads):
        samples.append((round(time.monotonic() - start), rss_kib(pid)))
        # A few stalled connections at any time (half a header).
        stallers = [s for s in stallers if s.fileno() != -1][-4:]
        try:
            s = socket.create_connection((host, port), timeout=5)
            s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127")
            stallers.append(s)
        except OSError:
            pass
        time.sleep(5)
    for t in threads:
        t.join()
    samples.append((round(time.monotonic() - start), rss_kib(pid)))
    total = sum(v for k, v in stats.counts.items() if k != "WRONG")
    print(f"soak: {seconds:.0f} s, {workers} workers: {total} answers checked, "
          f"{stats.counts.get('WRONG', 0)} wrong, {sum(stats.errors.values())} unanswered", flush=True)
    print("soak: by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(stats.counts.items())))
    if stats.errors:
        print("soak: unanswered: " + ", ".join(f"{k} {v}" for k, v in sorted(stats.errors.items())))
    for w in stats.wrong:
        print(f"soak: WRONG {w}")
    print("soak: RSS (s, KiB): " + " ".join(f"{t}:{r}" for t, r in samples))
    return 1 if stats.counts.get("WRONG") or stats.errors else 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
