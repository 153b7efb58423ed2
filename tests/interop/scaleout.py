#!/usr/bin/env python3
"""Scale-out interop (run by ``scripts/scaleout.sh``): the official MCP Python SDK
client (``mcp==2.3.0``) against two ``http_bookshop --redis`` replicas behind
nginx (round-robin, no stickiness; nginx answers ``X-Replica: $upstream_addr``,
which every exchange here records).

Handshake era (``ClientSession`` + ``initialize``, its session in Redis):

* the session is served by both replicas (requests answered by each);
* ``logging/setLevel`` carries over: at ``warning`` the ``count`` tool's info log
  is not sent, whichever replica answers; at ``debug`` it is, from both;
* subscriptions survive the switch: ``resources/subscribe`` on one replica, the
  session's ``GET`` stream on whichever replica nginx picked, and a ``buy`` by
  another client (2026-07-28, ``mcp.Client`` default mode) answered by each
  replica in turn: every one is told on the stream (``notifications/resources/
  updated``), the ones bought on the replica without the stream included.

Then the replica holding the subscriber's ``GET`` stream is killed (SIGKILL; the
replicas are given as ``--replica ADDRESS=PID``) between two requests of both
clients, the stream open: their next requests succeed on the other (a handshake call, a
``count`` whose log still honours the session's level, a 2026-07-28 ``reserve``
through MRTR, a ``buy``), and nothing acknowledged is lost: ``books://stock`` read
after the kill is the stock read before the first ``buy`` less every ``buy``
answered.

Prints ``ok   WHAT`` / ``FAIL WHAT``, then ``N checks, M failed``; exit status 1
when one failed.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
import warnings
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import anyio
import httpx2
import mcp.types as types
from mcp import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT
from mcp.shared.exceptions import MCPDeprecationWarning

# logging/setLevel and resources/subscribe are the handshake era's: exercised on purpose.
warnings.simplefilter("ignore", MCPDeprecationWarning)

STOCK = "books://stock"
WAIT = 8.0
failures: list[str] = []
checks = 0


def check(cond: bool, what: str) -> bool:
    global checks
    checks += 1
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond


def text(result: types.CallToolResult) -> str:
    return result.content[0].text if result.content else ""


class Recorder:
    """Every HTTP exchange of one client: method, JSON-RPC method, status, replica."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.exchanges: list[dict[str, Any]] = []

    @asynccontextmanager
    async def transport(self, url: str) -> AsyncIterator[Any]:
        async def on_request(request: httpx2.Request) -> None:
            body: Any = None
            if request.method == "POST":
                try:
                    body = json.loads(request.content)
                except ValueError:
                    body = None
            self.exchanges.append({"method": request.method, "body": body, "request": request, "replica": None, "status": None})

        async def on_response(response: httpx2.Response) -> None:
            for ex in reversed(self.exchanges):
                if ex["request"] is response.request:
                    ex["status"] = response.status_code
                    ex["replica"] = response.headers.get("x-replica")
                    break

        client = httpx2.AsyncClient(
            timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
            trust_env=False,
            event_hooks={"request": [on_request], "response": [on_response]},
        )
        async with client:
            async with streamable_http_client(url, http_client=client) as streams:
                yield streams

    def last(self, rpc_method: str, name: str | None = None) -> dict[str, Any] | None:
        for ex in reversed(self.exchanges):
            body = ex["body"]
            if isinstance(body, dict) and body.get("method") == rpc_method:
                if name is None or (body.get("params") or {}).get("name") == name:
                    return ex
        return None

    def replicas(self, method: str = "POST") -> set[str]:
        return {ex["replica"] for ex in self.exchanges if ex["method"] == method and ex["replica"]}


async def run(url: str, replicas: dict[str, int]) -> None:
    h_rec, m_rec = Recorder("handshake"), Recorder("modern")
    logs: list[Any] = []
    updates: list[str] = []
    updated = anyio.Event()

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async def on_message(message: Any) -> None:
        nonlocal updated
        root = getattr(message, "root", message)
        if isinstance(root, types.ResourceUpdatedNotification):
            updates.append(str(root.params.uri))
            updated.set()

    async def on_elicit(context: Any, params: Any) -> Any:
        return types.ElicitResult(action="accept", content={"confirm": True})

    async def stock(session: Any) -> dict[str, int]:
        result = await session.read_resource(STOCK)
        return json.loads(result.contents[0].text)

    bought: list[str] = []  # buys answered "Bought ..."

    async def buy(client: Client, title: str) -> str:
        result = await client.call_tool("buy", {"title": title})
        if not result.is_error and text(result).startswith(f"Bought {title}"):
            bought.append(title)
        return text(result)

    async def wait_update(before: int) -> bool:
        with anyio.move_on_after(WAIT):
            while len(updates) <= before:
                await anyio.sleep(0.05)
        return len(updates) > before

    async with h_rec.transport(url) as (read, write):
        async with ClientSession(read, write, logging_callback=on_log, message_handler=on_message) as h:
            init = await h.initialize()
            check(init.protocol_version == "2025-11-25", f"handshake: initialize through nginx ({init.protocol_version})")
            for _ in range(4):
                r = await h.call_tool("get_author", {"title": "Dune"})
                check(text(r) == "Frank Herbert", "handshake: get_author on the session")
            served = h_rec.replicas()
            check(len(served) == 2, f"handshake: one session served by both replicas ({sorted(served)})")

            # logging/setLevel, on one replica, holds on both.
            await h.set_logging_level("warning")
            level_at = (h_rec.last("logging/setLevel") or {}).get("replica")
            logs.clear()
            quiet_at = set()
            # Round-robin over every client's requests: call until both replicas answered.
            for _ in range(6):
                r = await h.call_tool("count", {"n": 1})
                check(text(r) == "counted 1", "handshake: count at level warning")
                quiet_at.add((h_rec.last("tools/call", "count") or {}).get("replica"))
                if len(quiet_at) == 2:
                    break
            check(
                not logs and len(quiet_at) == 2,
                f"handshake: setLevel warning (on {level_at}) holds on both replicas: no info log from {sorted(quiet_at)} ({len(logs)} logs)",
            )
            await h.set_logging_level("debug")
            level_at = (h_rec.last("logging/setLevel") or {}).get("replica")
            logs.clear()
            loud_at = set()
            calls = 0
            for _ in range(6):
                await h.call_tool("count", {"n": 1})
                calls += 1
                loud_at.add((h_rec.last("tools/call", "count") or {}).get("replica"))
                if len(loud_at) == 2:
                    break
            check(
                len(logs) == calls and len(loud_at) == 2,
                f"handshake: setLevel debug (on {level_at}) holds on both replicas: {len(logs)} info logs from {sorted(loud_at)}",
            )

            # Subscriptions: made on one replica, the GET stream on either, buys on each.
            await h.subscribe_resource(STOCK)
            sub_at = (h_rec.last("resources/subscribe") or {}).get("replica")
            gets = [ex for ex in h_rec.exchanges if ex["method"] == "GET" and ex["status"] == 200]
            stream_at = gets[-1]["replica"] if gets else None
            check(stream_at is not None, f"handshake: the session's GET stream is open (on {stream_at}); subscribed on {sub_at}")
            if True:
                async with Client(m_rec.transport(url), elicitation_callback=on_elicit) as m:
                    check(m.session.protocol_version == "2026-07-28", "modern: mcp.Client default mode adopted 2026-07-28")
                    start = await stock(m.session)
                    told_from: list[str] = []
                    tries = 0
                    while len(set(told_from)) < 2 and tries < 3:
                        tries += 1
                        before = len(updates)
                        answer = await buy(m, "Dune")
                        at = (m_rec.last("tools/call", "buy") or {}).get("replica")
                        if await wait_update(before):
                            told_from.append(at or "?")
                        check(answer.startswith("Bought Dune"), f"modern: buy answered by {at}: {answer!r}")
                    check(
                        len(told_from) == tries and len(set(told_from)) == 2,
                        f"handshake: subscriber (stream on {stream_at}) told of buys on both replicas: {told_from}",
                    )
                    check(
                        stream_at in told_from and any(t != stream_at for t in told_from),
                        "handshake: a change on the replica without the stream reached it",
                    )

                    # ---------------------------------------------------------------- kill
                    # The replica holding the subscriber's GET stream: the client must find
                    # the other for its stream as well as for its requests.
                    victim = stream_at if stream_at in replicas else sorted(replicas)[-1]
                    os.kill(replicas[victim], signal.SIGKILL)
                    print(f"# killed replica {victim} (pid {replicas[victim]}), the one with the GET stream, between two requests", flush=True)
                    t0 = time.monotonic()
                    after_h: set[str] = set()
                    ok_h = 0
                    for _ in range(4):
                        r = await h.call_tool("get_author", {"title": "Neuromancer"})
                        ok_h += text(r) == "William Gibson"
                        after_h.add((h_rec.last("tools/call", "get_author") or {}).get("replica"))
                    # nginx passes a request the dead replica refused on to the other:
                    # X-Replica then names both ("DEAD, ALIVE").
                    check(
                        ok_h == 4 and all(r and r.split(", ")[-1] != victim for r in after_h),
                        f"after the kill: the handshake session's next 4 calls succeed, on {sorted(after_h)} ({time.monotonic() - t0:.2f}s)",
                    )
                    logs.clear()
                    await h.call_tool("count", {"n": 1})
                    check(len(logs) == 1, f"after the kill: the session's log level (debug) still holds ({len(logs)} info log)")
                    r = await m.call_tool("get_author", {"title": "Dune"})
                    check(text(r) == "Frank Herbert", "after the kill: 2026-07-28 get_author succeeds")
                    r = await m.call_tool("reserve", {"title": "Dune"})
                    check(text(r) == "Reserved Dune", f"after the kill: 2026-07-28 reserve through MRTR succeeds ({text(r)!r})")
                    before = len(updates)
                    answer = await buy(m, "Neuromancer")
                    check(answer.startswith("Bought Neuromancer"), f"after the kill: buy succeeds ({answer!r})")
                    told = await wait_update(before)
                    gets = [(g["replica"], g["status"]) for g in h_rec.exchanges if g["method"] == "GET"]
                    check(
                        told,
                        f"after the kill: the subscriber, its GET stream reopened on the survivor, is told of a buy (GET streams: {gets})",
                    )
                    end = await stock(m.session)
                    want = {t: n - bought.count(t) for t, n in start.items()}
                    check(
                        end == want,
                        f"nothing acknowledged is lost: stock {start} before, {len(bought)} buys answered, {end} after the kill (want {want})",
                    )
                    posts = [ex for ex in h_rec.exchanges + m_rec.exchanges if ex["method"] == "POST"]
                    bad = [ex["status"] for ex in posts if ex["status"] is None or ex["status"] >= 500]
                    check(not bad, f"no POST answered 5xx or unanswered, before or after the kill ({len(posts)} POSTs)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="nginx's endpoint, e.g. http://127.0.0.1:8080/mcp")
    parser.add_argument(
        "--replica",
        action="append",
        required=True,
        help="ADDRESS=PID: a replica as nginx's X-Replica names it (127.0.0.1:PORT) and its process (twice)",
    )
    args = parser.parse_args()
    replicas = {addr: int(pid) for addr, _, pid in (r.partition("=") for r in args.replica)}

    async def bounded() -> None:
        with anyio.fail_after(90):
            await run(args.url, replicas)

    anyio.run(bounded)
    print(f"{checks} checks, {len(failures)} failed", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
