"""The async firmware (examples/firmware, binary bookshop-firmware-async)
driven by the official MCP Python SDK client (mcp==2.3.0) under QEMU:
``get_author`` is an async tool that awaits a SysTick timer, while a second
task on the firmware's executor advances ``counter://ticks``.

Checks: the handshake; ``tools/list`` offers ``get_author``; the counter
advances while a ``get_author`` call waits (read before and after it); the
call's answer is the bookshop's; a sync tool (``count``) with progress
still works; the counter keeps advancing with no request in flight.

Usage: async_fw.py COMMAND [ARGS...]  (the QEMU command line). Exit status
0 when every check passed, 1 otherwise.
"""

from __future__ import annotations

import json
import sys
import time
import warnings

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPDeprecationWarning

warnings.simplefilter("ignore", MCPDeprecationWarning)

failures: list[str] = []


def check(cond: bool, what: str) -> None:
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


async def ticks(session: ClientSession) -> int:
    result = await session.read_resource("counter://ticks")
    return int(json.loads(result.contents[0].text))


async def main(argv: list[str]) -> None:
    with anyio.fail_after(90):
        await run(argv)


async def run(argv: list[str]) -> None:
    params = StdioServerParameters(command=argv[0], args=argv[1:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check(init.server_info.name == "Bookshop", "initialize: the bookshop answers")
            tools = await session.list_tools()
            names = [t.name for t in tools.tools]
            check("get_author" in names, f"tools/list offers get_author ({len(names)} tools)")
            before = await ticks(session)
            start = time.monotonic()
            result = await session.call_tool("get_author", {"title": "Dune"})
            waited = time.monotonic() - start
            text = result.content[0].text if result.content else ""
            check(
                text == "Frank Herbert" and not result.is_error,
                f"get_author (async, awaits a timer): {text!r} after {waited:.2f} s",
            )
            check(
                result.structured_content == {"result": "Frank Herbert"},
                "get_author: its structured content",
            )
            after = await ticks(session)
            check(after > before, f"counter://ticks advanced while the call waited ({before} -> {after})")
            missing = await session.call_tool("get_author", {"title": "Nothing"})
            check(missing.is_error is True, "get_author of an unknown title: a tool error")
            seen: list[float] = []

            async def progress(p: float, total: float | None, message: str | None) -> None:
                seen.append(p)

            counted = await session.call_tool("count", {"n": 3}, progress_callback=progress)
            check(
                counted.content[0].text == "counted 3" and seen == [1, 2, 3],
                f"count (sync) with progress: {seen}",
            )
            idle_from = await ticks(session)
            await anyio.sleep(1.0)
            idle_to = await ticks(session)
            check(idle_to > idle_from, f"the count task runs with no request in flight ({idle_from} -> {idle_to})")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    anyio.run(main, sys.argv[1:])
    print(f"{'FAILED' if failures else 'passed'}: {len(failures)} failure(s)")
    sys.exit(1 if failures else 0)
