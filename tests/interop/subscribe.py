"""Subscriptions interop: the official MCP Python SDK client (mcp==2.3.0) is told
of changes by the bookshop on stdio, in both eras.

* Handshake era (ClientSession, 2025-11-25): the client subscribes to
  ``books://stock`` and receives ``notifications/resources/updated`` through its
  ``message_handler`` after a ``buy`` (a change inside a request) and after the
  server's own restock timer (``--restock-every 1``: a change outside any
  request, while the client sends nothing); after ``unsubscribe`` nothing more
  arrives.
* 2026-07-28 (mcp.Client default mode): ``Client.listen(resource_subscriptions=
  ["books://stock"])`` is acknowledged, a ``buy`` on the same connection is
  answered while the listen stays open, and the listen yields the buy's
  ``ResourceUpdated`` and then the restock's, with no request in flight; leaving
  the ``async with`` cancels the listen.

Over HTTP (``--url URL`` of a running ``http_bookshop``), two clients: one
subscribes (handshake era: ``resources/subscribe``, told on its session's ``GET``
SSE stream, which the SDK opens by itself; 2026-07-28: ``Client.listen``, told on
the listen stream), the other buys, and the first is told.

Usage: subscribe.py BOOKSHOP [ARGS...]  (the server command; ``--restock-every 1``
is appended), subscribe.py --as-is COMMAND [ARGS...] (a server that restocks by
itself: the firmware under QEMU, whose SysTick restocks every few seconds), or
subscribe.py --url URL. Exit status 0 when every check passed,
1 otherwise.
"""

from __future__ import annotations

import sys
import time
import warnings
from typing import Any

import anyio
import mcp.types as types
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.subscriptions import ResourceUpdated

from mcp.shared.exceptions import MCPDeprecationWarning

# resources/subscribe is the handshake era's: exercised on purpose.
warnings.simplefilter("ignore", MCPDeprecationWarning)

STOCK = "books://stock"
TIMEOUT = 10.0
failures: list[str] = []


def check(cond: bool, what: str) -> None:
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


AS_IS = False  # --as-is: the server restocks by itself (the firmware's SysTick)


def params(argv: list[str]) -> StdioServerParameters:
    extra = [] if AS_IS else ["--restock-every", "1"]
    return StdioServerParameters(command=argv[0], args=[*argv[1:], *extra])


async def handshake(argv: list[str]) -> None:
    updates: list[str] = []
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        root = getattr(message, "root", message)
        if isinstance(root, types.ResourceUpdatedNotification):
            updates.append(str(root.params.uri))
            changed.set()

    async with stdio_client(params(argv)) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            init = await session.initialize()
            caps = init.capabilities.resources
            check(caps is not None and caps.subscribe is True, "legacy: initialize advertises resources.subscribe")
            await session.subscribe_resource(STOCK)
            result = await session.call_tool("buy", {"title": "Neuromancer"})
            text = result.content[0].text if result.content else ""
            check(text == "Bought Neuromancer (0 left)", f"legacy: buy answered ({text!r})")
            with anyio.fail_after(TIMEOUT):
                await changed.wait()
            check(updates[:1] == [STOCK], f"legacy: told of the buy ({updates})")
            # The restock timer (one copy a second) changes the stock with no
            # request in flight: the notification arrives all the same.
            seen = len(updates)
            start = time.monotonic()
            with anyio.fail_after(TIMEOUT):
                while len(updates) == seen:
                    changed = anyio.Event()
                    await changed.wait()
            check(updates[seen] == STOCK, f"legacy: told of the restock, {time.monotonic() - start:.1f} s later, without asking")
            await session.unsubscribe_resource(STOCK)
            quiet = len(updates)
            await anyio.sleep(2.5)
            # One may have been written before the unsubscribe was read.
            check(len(updates) - quiet <= 1, f"legacy: nothing more after unsubscribe ({len(updates) - quiet} late)")


async def modern(argv: list[str]) -> None:
    async with Client(params(argv)) as client:
        check(client.session.protocol_version == "2026-07-28", "modern: default mode adopted 2026-07-28")
        async with client.listen(resource_subscriptions=[STOCK]) as sub:
            check(list(sub.honored.resource_subscriptions or []) == [STOCK], f"modern: listen acknowledged ({sub.honored})")
            result = await client.call_tool("buy", {"title": "Dune"})
            text = result.content[0].text if result.content else ""
            check(text == "Bought Dune (2 left)", f"modern: buy answered while the listen is open ({text!r})")
            events: list[Any] = []
            with anyio.fail_after(TIMEOUT):
                async for event in sub:
                    events.append(event)
                    if len(events) == 2:
                        break
            check(
                all(isinstance(e, ResourceUpdated) and str(e.uri) == STOCK for e in events),
                f"modern: the buy's update and the restock's, the second with no request in flight ({events})",
            )
        # After the cancel the connection still serves requests.
        result = await client.call_tool("get_author", {"title": "Dune"})
        check(not result.is_error, "modern: the connection goes on after the listen ends")


def first_text(result: types.CallToolResult) -> str:
    return result.content[0].text if result.content else ""


async def http_handshake(url: str) -> None:
    updates: list[str] = []
    told = anyio.Event()

    async def on_message(message: Any) -> None:
        root = getattr(message, "root", message)
        if isinstance(root, types.ResourceUpdatedNotification):
            updates.append(str(root.params.uri))
            told.set()

    async with streamable_http_client(url) as (read_a, write_a):
        async with ClientSession(read_a, write_a, message_handler=on_message) as a:
            init = await a.initialize()
            caps = init.capabilities.resources
            check(caps is not None and caps.subscribe is True, "http legacy: initialize advertises resources.subscribe")
            await a.subscribe_resource(STOCK)
            async with streamable_http_client(url) as (read_b, write_b):
                async with ClientSession(read_b, write_b) as b:
                    await b.initialize()
                    stock = await b.read_resource(STOCK)
                    check(bool(stock.contents), f"http legacy: the other client reads {STOCK}")
                    result = await b.call_tool("buy", {"title": "Dune"})
                    check(first_text(result).startswith("Bought Dune"), f"http legacy: the other client buys ({first_text(result)!r})")
            with anyio.fail_after(TIMEOUT):
                await told.wait()
            check(updates == [STOCK], f"http legacy: the subscriber is told on its GET stream ({updates})")


async def http_modern(url: str) -> None:
    async with Client(url) as a:
        check(a.session.protocol_version == "2026-07-28", "http modern: default mode adopted 2026-07-28")
        async with a.listen(resource_subscriptions=[STOCK]) as sub:
            check(list(sub.honored.resource_subscriptions or []) == [STOCK], "http modern: listen acknowledged")
            async with Client(url) as b:
                result = await b.call_tool("buy", {"title": "Dune"})
                check(first_text(result).startswith("Bought Dune"), f"http modern: the other client buys ({first_text(result)!r})")
            with anyio.fail_after(TIMEOUT):
                async for event in sub:
                    check(
                        isinstance(event, ResourceUpdated) and str(event.uri) == STOCK,
                        f"http modern: the listener is told on its listen stream ({event})",
                    )
                    break
        result = await a.call_tool("get_author", {"title": "Dune"})
        check(not result.is_error, "http modern: the client goes on after the listen ends")


async def main(argv: list[str]) -> None:
    with anyio.fail_after(90):
        if argv[0] == "--url":
            await http_handshake(argv[1])
            await http_modern(argv[1])
        else:
            await handshake(argv)
            await modern(argv)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--as-is"]:
        AS_IS = True
        args = args[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    anyio.run(main, args)
    print(f"subscriptions interop: {len(failures)} failed", flush=True)
    sys.exit(1 if failures else 0)
