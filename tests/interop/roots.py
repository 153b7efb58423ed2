#!/usr/bin/env python3
"""Interop test for roots: the official MCP Python SDK client (PyPI
``mcp==2.3.0``) answers the conformance fixture's requests for its roots,
through its ``list_roots_callback``, on stdio (``conformance_fixture --stdio``)
and over Streamable HTTP (``conformance_fixture --port 0``), in both eras:

* ``legacy``: a plain ``ClientSession`` + ``initialize`` (2025-11-25). The
  server sends a JSON-RPC ``roots/list`` request (on stdio on the same
  stream; over HTTP on the SSE stream of the POST that made the call, the
  answer in a POST of its own), the SDK runs the callback and answers it, and
  the call's answer follows.
* ``modern``: ``mcp.Client`` in its default ``mode="auto"`` (``server/discover``,
  must adopt 2026-07-28). The call is answered ``input_required`` with an
  ``inputRequests`` entry ``client_roots`` (a ``ListRootsRequest``); the SDK's
  retry driver (``mcp/client/_input_required.py``) runs the same callback
  (``ClientSession.dispatch_input_request``) and retries with
  ``inputResponses.client_roots``; the server never sends ``roots/list``.

Checks, per transport and era (names ``TRANSPORT.ERA.NAME``):

* ``list_roots``: ``test_input_required_result_list_roots`` with a callback
  returning two roots (one with a ``name``): the callback ran once, the
  answer is ``Client has 2 root(s)`` and one ``root: URI`` per root, and the
  wire shows the era's way of asking (above).
* ``list_roots_empty``: the callback returns no roots: ``Client has 0 root(s)``.
* ``without_roots_capability``: a client with only an elicitation callback
  (so no ``roots`` capability) gets ``-32021`` ``Missing required client
  capability: roots``, and no request for roots.
* ``three_inputs``: ``test_input_required_result_multiple_inputs`` with
  elicitation, sampling and roots callbacks: each ran once, the answer is
  ``name=NAME, greeting=TEXT, roots=2``.

Every check opens a client of its own (stdio: a server process of its own;
HTTP: a session of its own on the one server). Prints ``ok  NAME`` /
``FAIL NAME: DETAIL`` (a failure is followed by its wire lines), a tally per
transport and era, and ``N passed, M failed``; exits 1 when a check failed,
2 on a usage error, 3 when the watchdog fired (each check 20 s, the whole
run 150 s; the watchdog kills the servers this process started).

    python tests/interop/roots.py --http http://127.0.0.1:PORT/mcp -- target/release/examples/conformance_fixture --stdio
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import test_bookshop as tb  # noqa: E402  (exits 2 when the SDK is missing)

try:
    import anyio
    import httpx2
    import mcp.types as types
    from mcp import Client, ClientSession, MCPError, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT
except ImportError as exc:  # pragma: no cover - environment problem, not a check
    print(f"cannot import the MCP SDK ({exc}); install tests/interop/requirements.txt", file=sys.stderr)
    sys.exit(2)

CHECK_TIMEOUT = 20.0
TOTAL_TIMEOUT = 150.0
READ_TIMEOUT = 15.0
LIST_ROOTS = "test_input_required_result_list_roots"
THREE_INPUTS = "test_input_required_result_multiple_inputs"
ROOTS = [
    types.Root(uri="file:///srv/picomcp/project", name="Project"),
    types.Root(uri="file:///tmp/scratch"),
]
ROOT_URIS = ["file:///srv/picomcp/project", "file:///tmp/scratch"]
NAME = "Ada"
GREETING = "Hello from the model"
MISSING_ROOTS = "Missing required client capability: roots"


class Recorder:
    """What the callbacks were handed (the context's request id), and what they answer."""

    def __init__(self, roots: list[types.Root] | None = None) -> None:
        self.roots = ROOTS if roots is None else roots
        self.roots_ids: list[Any] = []
        self.elicit_ids: list[Any] = []
        self.sample_ids: list[Any] = []

    async def on_roots(self, context: Any) -> types.ListRootsResult:
        self.roots_ids.append(context.request_id)
        return types.ListRootsResult(roots=self.roots)

    async def on_elicit(self, context: Any, params: Any) -> types.ElicitResult:
        self.elicit_ids.append(context.request_id)
        return types.ElicitResult(action="accept", content={"name": NAME})

    async def on_sample(self, context: Any, params: Any) -> types.CreateMessageResult:
        self.sample_ids.append(context.request_id)
        return tb.sampled(GREETING)


class Target:
    """One transport: how to open a connection to a server (stdio: a new process)."""

    def __init__(self, kind: str, where: Any) -> None:
        self.kind = kind
        self.where = where

    @asynccontextmanager
    async def streams(self) -> AsyncIterator[Any]:
        if self.kind == "stdio":
            argv = self.where
            params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
            with open(os.devnull, "w") as errlog:
                async with stdio_client(params, errlog=errlog) as streams:
                    yield streams
        else:
            client = httpx2.AsyncClient(
                timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
                trust_env=False,  # loopback only: no proxy from the environment
            )
            async with client:
                async with streamable_http_client(self.where, http_client=client) as streams:
                    yield streams


@asynccontextmanager
async def connect(target: Target, era: str, wire: list[Any], **callbacks: Any) -> AsyncIterator[Callable[..., Any]]:
    """A connected client in `era`; yields its ``call_tool``."""
    transport = tb.TeeTransport(target.streams(), wire, "main")
    if era == tb.LEGACY:
        async with transport as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=READ_TIMEOUT, **callbacks) as session:
                result = await session.initialize()
                if result.protocol_version != tb.HANDSHAKE_VERSION:
                    raise tb.CheckFailed(f"initialize negotiated {result.protocol_version!r}")
                yield session.call_tool
    else:
        async with Client(transport, read_timeout_seconds=READ_TIMEOUT, **callbacks) as client:
            session = client.session
            if session.protocol_version != tb.MODERN_VERSION or session.discover_result is None:
                raise tb.CheckFailed(f"mcp.Client did not adopt {tb.MODERN_VERSION} (got {session.protocol_version!r})")
            yield client.call_tool


def wire_messages(wire: list[Any], direction: str) -> list[dict[str, Any]]:
    return [m for _, m in tb.parsed(wire, direction)]


def expect_asked_for_roots(wire: list[Any], era: str, p: tb.Problems, asks: int = 1) -> None:
    """The era's way of asking for roots, on the wire (``asks``: how many calls asked)."""
    from_server = wire_messages(wire, "<-")
    to_server = wire_messages(wire, "->")
    root_requests = [m for m in from_server if m.get("method") == "roots/list"]
    if era == tb.LEGACY:
        p.eq(len(root_requests), asks, "roots/list requests from the server")
        for req in root_requests:
            answers = [m for m in to_server if "method" not in m and m.get("id") == req.get("id")]
            p.eq(len(answers), 1, f"answers to roots/list id {req.get('id')!r}")
            if answers:
                p.eq(answers[0].get("result", {}).get("roots"), dump_roots(), "roots answered")
    else:
        p.eq(len(root_requests), 0, "roots/list requests from the server (2026-07-28 asks in the result)")
        asked = [
            m
            for m in from_server
            if "client_roots" in ((m.get("result") or {}).get("inputRequests") or {})
            and m["result"].get("resultType") == "input_required"
        ]
        p.eq(len(asked), asks, "input_required results asking client_roots")
        for m in asked:
            p.eq(m["result"]["inputRequests"]["client_roots"].get("method"), "roots/list", "inputRequests.client_roots.method")
        retries = [
            m
            for m in to_server
            if m.get("method") == "tools/call" and "client_roots" in ((m.get("params") or {}).get("inputResponses") or {})
        ]
        p.eq(len(retries), asks, "retries carrying inputResponses.client_roots")
        for m in retries:
            p.eq(m["params"]["inputResponses"]["client_roots"].get("roots"), dump_roots(), "inputResponses.client_roots.roots")


def dump_roots(roots: list[types.Root] | None = None) -> list[Any]:
    return [r.model_dump(by_alias=True, mode="json", exclude_none=True) for r in (ROOTS if roots is None else roots)]


def checks(target: Target, era: str) -> list[tuple[str, Callable[[list[Any]], Awaitable[str | None]]]]:
    """Each check takes the wire list its connection records into."""

    def server_id_expected(ids: list[Any], key: str, p: tb.Problems, what: str) -> None:
        """Legacy: the context id is the server's JSON-RPC id; modern: the inputRequests key."""
        if era == tb.LEGACY:
            p.expect(all(i != key for i in ids), f"{what} context ids {ids!r}: expected the server's JSON-RPC ids")
        else:
            p.eq(ids, [key], f"{what} context ids (the inputRequests key)")

    async def list_roots(wire: list[Any]) -> str:
        rec = Recorder()
        async with connect(target, era, wire, list_roots_callback=rec.on_roots) as call_tool:
            result = await call_tool(LIST_ROOTS, {})
        p = tb.Problems()
        p.expect(not result.is_error, f"expected success, got {tb.describe(result)}")
        p.eq(tb.texts(result, p), ["Client has 2 root(s)"] + [f"root: {u}" for u in ROOT_URIS], "content texts")
        p.eq(len(rec.roots_ids), 1, "list_roots_callback calls")
        server_id_expected(rec.roots_ids, "client_roots", p, "list_roots_callback")
        expect_asked_for_roots(wire, era, p)
        p.done()
        return f"callback context id {rec.roots_ids[0]!r}"

    async def list_roots_empty(wire: list[Any]) -> None:
        rec = Recorder(roots=[])
        async with connect(target, era, wire, list_roots_callback=rec.on_roots) as call_tool:
            result = await call_tool(LIST_ROOTS, {})
        p = tb.Problems()
        p.expect(not result.is_error, f"expected success, got {tb.describe(result)}")
        p.eq(tb.texts(result, p), ["Client has 0 root(s)"], "content texts")
        p.eq(len(rec.roots_ids), 1, "list_roots_callback calls")
        p.done()

    async def without_roots_capability(wire: list[Any]) -> str:
        rec = Recorder()
        p = tb.Problems()
        async with connect(target, era, wire, elicitation_callback=rec.on_elicit) as call_tool:
            try:
                result = await call_tool(LIST_ROOTS, {})
            except MCPError as exc:
                p.eq(exc.code, -32021, "error code")
                p.eq(exc.message, MISSING_ROOTS, "error message")
                data = exc.data
            else:
                p.add(f"expected MCPError -32021, got a result: {tb.describe(result)}")
                data = None
        sent_caps = [
            m["params"].get("capabilities") if m.get("method") == "initialize" else None
            for m in wire_messages(wire, "->")
            if m.get("method") == "initialize"
        ]
        if era == tb.LEGACY:
            p.expect(all("roots" not in (c or {}) for c in sent_caps), f"initialize capabilities {sent_caps!r} declare roots")
        p.eq([m.get("method") for m in wire_messages(wire, "<-") if "method" in m and "id" in m], [], "requests from the server")
        p.eq(rec.elicit_ids, [], "elicitation_callback calls")
        p.done()
        return f"data={data!r}"

    async def three_inputs(wire: list[Any]) -> None:
        rec = Recorder()
        async with connect(
            target,
            era,
            wire,
            list_roots_callback=rec.on_roots,
            elicitation_callback=rec.on_elicit,
            sampling_callback=rec.on_sample,
        ) as call_tool:
            result = await call_tool(THREE_INPUTS, {})
        p = tb.Problems()
        p.expect(not result.is_error, f"expected success, got {tb.describe(result)}")
        p.eq(tb.texts(result, p), [f"name={NAME}, greeting={GREETING}, roots=2"], "content texts")
        p.eq([len(rec.elicit_ids), len(rec.sample_ids), len(rec.roots_ids)], [1, 1, 1], "callback calls (elicitation, sampling, roots)")
        server_id_expected(rec.roots_ids, "client_roots", p, "list_roots_callback")
        expect_asked_for_roots(wire, era, p)
        if era == tb.LEGACY:
            methods = sorted(m.get("method") for m in wire_messages(wire, "<-") if "method" in m and "id" in m)
            p.eq(methods, ["elicitation/create", "roots/list", "sampling/createMessage"], "requests from the server")
        p.done()

    return [
        ("list_roots", list_roots),
        ("list_roots_empty", list_roots_empty),
        ("without_roots_capability", without_roots_capability),
        ("three_inputs", three_inputs),
    ]


class Runner:
    def __init__(self) -> None:
        self.start = time.monotonic()
        self.passed = 0
        self.failed = 0
        self.tally: dict[str, list[int]] = {}

    def count(self, name: str, i: int) -> None:
        self.tally.setdefault(name.rsplit(".", 1)[0], [0, 0])[i] += 1

    async def run(self, name: str, fn: Callable[[], Awaitable[str | None]], wire: list[Any]) -> None:
        budget = min(CHECK_TIMEOUT, self.start + TOTAL_TIMEOUT - time.monotonic())
        ok, detail = False, ""
        if budget <= 0:
            detail = f"not run: the whole-run budget of {TOTAL_TIMEOUT:.0f}s is used up"
        else:
            try:
                with anyio.fail_after(budget):
                    note = await fn()
                ok = True
            except tb.CheckFailed as exc:
                detail = str(exc)
            except TimeoutError:
                detail = f"timed out after {budget:.0f}s"
            except BaseException as exc:  # noqa: BLE001 - any other exception is this check's failure
                if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise
                detail = tb.exc_text(exc)
        if ok:
            self.passed += 1
            self.count(name, 0)
            print(f"ok  {name}" + (f" ({note})" if note else ""), flush=True)
            return
        self.failed += 1
        self.count(name, 1)
        print(f"FAIL {name}: {' '.join(detail.split())}", flush=True)
        shown = wire[-tb.WIRE_LINES_ON_FAILURE :]
        if shown:
            print(f"#   wire of {name} (last {len(shown)} of {len(wire)} messages):", flush=True)
            for label, direction, text in shown:
                cut = text if len(text) <= tb.WIRE_LINE_CHARS else text[: tb.WIRE_LINE_CHARS] + "..."
                print(f"#     {label} {direction} {cut}", flush=True)


async def run(targets: list[Target]) -> Runner:
    runner = Runner()
    tb.start_watchdog(runner, TOTAL_TIMEOUT + 20)  # type: ignore[arg-type]  (reads passed/failed only)
    for target in targets:
        for era in (tb.LEGACY, tb.MODERN):
            what = "ClientSession + initialize, 2025-11-25" if era == tb.LEGACY else 'mcp.Client mode="auto", 2026-07-28'
            print(f"# {target.kind}.{era}: {what}", flush=True)
            for name, fn in checks(target, era):
                wire: list[Any] = []
                await runner.run(f"{target.kind}.{era}.{name}", lambda fn=fn, wire=wire: fn(wire), wire)
    return runner


def main() -> int:
    parser = argparse.ArgumentParser(description="The Python SDK's list_roots_callback against conformance_fixture.")
    parser.add_argument("--http", metavar="URL", help="the fixture's Streamable HTTP endpoint (loopback only)")
    parser.add_argument("server", nargs="*", help="the stdio server command, after --")
    args = parser.parse_args()
    targets = []
    if args.server:
        targets.append(Target("stdio", args.server))
    if args.http:
        if urlsplit(args.http).hostname not in ("127.0.0.1", "localhost", "::1"):
            parser.error(f"--http {args.http}: loopback addresses only")
        targets.append(Target("http", args.http))
    if not targets:
        parser.error("nothing to run: give --http URL and/or the stdio server command after --")
    for t in targets:
        print(f"# {t.kind}: {json.dumps(t.where)}", flush=True)
    # Roots, logging and the handshake are deprecated in 2026-07-28; the SDK warns, the test goes on.
    warnings.filterwarnings("ignore", category=tb.MCPDeprecationWarning)
    runner = anyio.run(run, targets)
    for name, (passed, failed) in runner.tally.items():
        print(f"# {name}: {passed} passed, {failed} failed", flush=True)
    print(f"# {time.monotonic() - runner.start:.1f} s", flush=True)
    print(f"{runner.passed} passed, {runner.failed} failed", flush=True)
    return 1 if runner.failed else 0


if __name__ == "__main__":
    sys.exit(main())
