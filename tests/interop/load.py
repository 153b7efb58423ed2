#!/usr/bin/env python3
"""Steady load for ``scripts/scaleout.sh``'s rolling restart: stateless
2026-07-28 ``tools/call get_author "Dune"`` requests through nginx from a few
threads, each on a fresh connection (``Connection: close``, so that no client
connection to nginx is idle when nginx reloads), until ``--stop-file``
exists. Every answer must be ``200`` with the author; the first failures are
kept. Prints one JSON line (``ok``, ``failed``, ``errors``, requests per
replica from nginx's ``X-Replica``) and exits 1 when any request failed or
none was made. Standard library only.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import threading
import time
from collections import Counter
from urllib.parse import urlsplit

BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "get_author",
            "arguments": {"title": "Dune"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
).encode()

HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "get_author",
    "Connection": "close",
}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--stop-file", required=True)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--max-s", type=float, default=120.0)
    args = parser.parse_args()
    url = urlsplit(args.url)
    lock = threading.Lock()
    ok = 0
    failed = 0
    errors: list[str] = []
    replicas: Counter[str] = Counter()
    deadline = time.monotonic() + args.max_s

    def worker() -> None:
        nonlocal ok, failed
        while not os.path.exists(args.stop_file) and time.monotonic() < deadline:
            error = None
            replica = "?"
            try:
                conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
                conn.request("POST", url.path, BODY, HEADERS)
                response = conn.getresponse()
                answer = response.read()
                replica = response.getheader("X-Replica", "?")
                conn.close()
                if response.status != 200 or b'"text":"Frank Herbert"' not in answer:
                    error = f"{response.status} from {replica}: {answer[:160]!r}"
            except (OSError, http.client.HTTPException) as e:
                error = f"{type(e).__name__}: {e}"
            with lock:
                if error is None:
                    ok += 1
                    replicas[replica] += 1
                else:
                    failed += 1
                    if len(errors) < 5:
                        errors.append(f"{time.strftime('%H:%M:%S')} {error}")

    threads = [threading.Thread(target=worker) for _ in range(args.workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"ok": ok, "failed": failed, "errors": errors, "replicas": replicas}))
    return 0 if failed == 0 and ok > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
