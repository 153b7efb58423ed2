#!/usr/bin/env python3
"""Interop test over Streamable HTTP: the official MCP Python SDK client (PyPI
``mcp==2.3.0``) drives picomcp's ``http_bookshop`` through the SDK's
``streamable_http_client`` (2.x's name for 1.x's ``streamablehttp_client``),
in the handshake era (a plain ``ClientSession`` + ``initialize``, protocol
``2025-11-25``), with the checks of ``test_bookshop.py``'s legacy mode.

Run (normally through ``scripts/interop_http.sh``, which makes the venv and
starts the server)::

    target/release/examples/http_bookshop --port 3103 &
    python tests/interop/test_http.py --url http://127.0.0.1:3103/mcp
    python tests/interop/test_http.py --url http://127.0.0.1:3103/mcp --all

By default the checks are the stdio run's asking ones (``reserve``:
elicitation form, accept / accept unconfirmed / decline / cancel, unknown
title, callback error; ``blurb``: sampling; ``-32021`` for a second client,
on a session of its own, without the capability; ``get_author`` from inside
the elicitation callback; two ``reserve`` calls outstanding at once) and
``wire_era_consistent``, after ``initialize``, the tool listing and the
reserve/blurb schemas, ``get_author`` and a resource read. They are the very
functions of ``test_bookshop.py`` (its ``mode_checks`` in legacy mode), run
on a ``Connection`` whose transport is ``streamable_http_client`` recorded
message by message (the same ``TeeTransport``). ``--all`` runs every legacy
check that needs no second server process (progress, logging, prompts,
completion too).

Over HTTP, in the handshake era, the server sends its ``elicitation/create``
/ ``sampling/createMessage`` on the SSE stream of the POST that made the call,
and the client's answer comes in a POST of its own. An ``httpx2`` event hook
records every exchange (method, the JSON-RPC message POSTed, status,
``Content-Type``, session headers); ``http_exchanges`` then checks that every
POST of a request was answered ``200`` (a call that asked: with
``text/event-stream``), every POST of the client's answer to the server's
request (or of a notification) ``202``, and that every POST after
``initialize`` carried ``Mcp-Session-Id`` and ``MCP-Protocol-Version``.

Prints ``ok  NAME`` / ``FAIL NAME: DETAIL`` (names ``http.NAME``), a
``# http: ...`` tally and a closing ``N passed, M failed`` line; exits 1 when
a check failed, 2 on a usage error, 3 when the watchdog fired (each check
20 s, the whole run 180 s, as in ``test_bookshop.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import test_bookshop as tb  # noqa: E402  (exits 2 when the SDK is missing)

try:
    import anyio
    import httpx2
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT
    from mcp.shared.exceptions import MCPDeprecationWarning
except ImportError as exc:  # pragma: no cover - environment problem, not a check
    print(f"cannot import the MCP SDK's HTTP client ({exc}); install tests/interop/requirements.txt", file=sys.stderr)
    sys.exit(2)

HTTP = "http"

# The checks run by default: the stdio run's asking ones, with what they stand on.
ASKING_CHECKS = [
    "initialize",
    "tools_list_names_and_order",
    "call_get_author_dune",
    "read_books_dune",
    "tools_list_reserve_schema",
    "tools_list_blurb_schema",
    "call_reserve_accept",
    "call_reserve_accept_unconfirmed",
    "call_reserve_decline",
    "call_reserve_cancel",
    "call_reserve_unknown_title_is_tool_error",
    "call_reserve_callback_error",
    "call_reserve_without_elicitation_capability",
    "call_blurb_via_sampling",
    "call_blurb_unknown_title_is_tool_error",
    "call_blurb_without_sampling_capability",
    "call_get_author_while_reserve_waits",
    "call_two_reserves_at_once",
    "wire_era_consistent",
]
# Legacy checks that start a second server process (no meaning against one HTTP server).
NEEDS_ANOTHER_PROCESS = {"paginated_walk_matches_unpaginated_server"}
# 2026-07-28 checks whose expectation is a stream transport's: over HTTP every request
# stands alone, and an `initialize` under `MCP-Protocol-Version: 2026-07-28` is a removed
# method (-32601, 404; the official conformance suite's `server-stateless`), not -32022 on a
# modern connection. `http_checks` runs its own version in its place.
STREAM_ONLY = {"initialize_refused_on_modern_connection"}


def rpc_summary(message: Any) -> str:
    if not isinstance(message, dict):
        return "-" if message is None else "<not JSON-RPC>"
    if "method" in message:
        kind = "request" if "id" in message else "notification"
        return f"{kind} {message['method']}" + (f" {json.dumps(message['id'])}" if "id" in message else "")
    if "result" in message or "error" in message:
        return f"{'error' if 'error' in message else 'result'} {json.dumps(message.get('id'))}"
    return "<not JSON-RPC>"


class HttpConnection(tb.Connection):
    """``test_bookshop.Connection`` in legacy mode whose transports are
    ``streamable_http_client`` sessions on one running server (a new session per
    transport: the main one, and the "aux" clients of the capability checks)."""

    def __init__(self, url: str, mode: str = tb.LEGACY) -> None:
        super().__init__([url], dict(os.environ), mode)
        self.url = url
        # (label, method, JSON-RPC message POSTed or None, status, content type, session id sent,
        # protocol version sent, session id answered)
        self.exchanges: list[dict[str, Any]] = []

    def transport(self, label: str, argv: list[str] | None = None) -> tb.TeeTransport:
        return tb.TeeTransport(self._http(label), self.wire, label)

    @asynccontextmanager
    async def _http(self, label: str) -> AsyncIterator[Any]:
        async def on_request(request: httpx2.Request) -> None:
            body: Any = None
            if request.method == "POST":
                try:
                    body = json.loads(request.content)
                except ValueError:
                    body = "<not JSON>"
            self.exchanges.append(
                {
                    "label": label,
                    "method": request.method,
                    "body": body,
                    "session": request.headers.get("mcp-session-id"),
                    "version": request.headers.get("mcp-protocol-version"),
                    "status": None,
                    "content_type": None,
                    "request": request,
                }
            )

        async def on_response(response: httpx2.Response) -> None:
            for ex in reversed(self.exchanges):
                if ex["request"] is response.request:
                    ex["status"] = response.status_code
                    ex["content_type"] = (response.headers.get("content-type") or "").split(";")[0].strip()
                    ex["session_answered"] = response.headers.get("mcp-session-id")
                    # Which replica answered, behind a load balancer that says so
                    # (scripts/scaleout.sh's nginx: its $upstream_addr).
                    ex["replica"] = response.headers.get("x-replica")
                    break

        client = httpx2.AsyncClient(
            timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
            trust_env=False,  # loopback only: no proxy from the environment
            event_hooks={"request": [on_request], "response": [on_response]},
        )
        async with client:
            async with streamable_http_client(self.url, http_client=client) as streams:
                yield streams


def http_checks(
    conn: HttpConnection, run_all: bool, page_size: int | None = None, replicas: bool = False
) -> list[tuple[str, Any]]:
    checks = dict(tb.mode_checks(conn, page_size, conn.argv))
    asking = [("connect_default_mode" if n == "initialize" else n) for n in ASKING_CHECKS] if conn.mode == tb.MODERN else ASKING_CHECKS
    names = [n for n in checks if n not in NEEDS_ANOTHER_PROCESS | STREAM_ONLY] if run_all else asking
    missing = [n for n in names if n not in checks]
    if missing:  # test_bookshop.py renamed a check: say so rather than skip it silently
        raise SystemExit(f"test_http.py: no such check in test_bookshop.py: {missing}")
    out = [(n, checks[n]) for n in names]

    async def initialize_refused_over_http() -> str:
        """The handshake sent on the 2026-07-28 session: over HTTP, under
        ``MCP-Protocol-Version: 2026-07-28``, it is a method that revision removed."""
        assert conn.session is not None
        exc = await tb.expect_protocol_error(conn.session.initialize(), code=-32601, message="Method not found")
        statuses = [ex["status"] for ex in conn.exchanges if isinstance(ex["body"], dict) and ex["body"].get("method") == "initialize"]
        p = tb.Problems()
        p.eq(statuses[-1:], [404], "initialize POST status")
        p.eq(conn.session.protocol_version, tb.MODERN_VERSION, "session.protocol_version after the refused handshake")
        p.done()
        return f"code {exc.code}, status 404" if exc else ""

    if conn.mode == tb.MODERN and run_all:
        # Where the stream transport's check stood (wire_era_consistent counts its initialize).
        at = next((i for i, (n, _) in enumerate(out) if n == "wire_era_consistent"), len(out))
        out.insert(at, ("initialize_refused_on_modern_connection", initialize_refused_over_http))

    async def http_exchanges() -> str:
        """Every HTTP exchange of the main session so far (see the module docstring)."""
        p = tb.Problems()
        posts = [ex for ex in conn.exchanges if ex["method"] == "POST" and ex["label"].startswith("main")]
        # The calls that ask the client: reserve and blurb on a title in the catalog.
        asked_calls = {
            json.dumps(m.get("id"))
            for m in tb.requests_sent(conn.wire, "tools/call", label_prefix="main")
            if (m.get("params") or {}).get("name") in ("reserve", "blurb")
            and ((m.get("params") or {}).get("arguments") or {}).get("title") != "Nothing"
        }
        sse_calls = 0
        for ex in posts:
            body, what = ex["body"], f"POST ({rpc_summary(ex['body'])})"
            is_init = isinstance(body, dict) and body.get("method") == "initialize"
            if not is_init:
                p.expect(bool(ex["session"]), f"{what} carried no Mcp-Session-Id")
                p.eq(ex["version"], tb.HANDSHAKE_VERSION, f"{what} MCP-Protocol-Version")
            if isinstance(body, dict) and "method" in body and "id" in body:
                p.eq(ex["status"], 200, f"{what} status")
                if json.dumps(body.get("id")) in asked_calls:
                    sse_calls += 1
                    p.eq(ex["content_type"], "text/event-stream", f"{what} Content-Type (a call that asked)")
                if is_init:
                    p.expect(bool(ex.get("session_answered")), "initialize answered without Mcp-Session-Id")
            else:
                p.eq(ex["status"], 202, f"{what} status")
        sessions = {ex["session"] for ex in posts if ex["session"]}
        p.eq(len(sessions), len({ex["label"] for ex in posts}), "session ids (one per connection)")
        p.eq(sse_calls, len(asked_calls), "calls that asked the client, POSTed")
        p.expect(sse_calls > 0, "no call that asked the client was seen")
        p.done()
        answers = sum(1 for ex in posts if rpc_summary(ex["body"]).startswith(("result", "error")))
        return f"{len(posts)} POSTs; {sse_calls} calls answered on an SSE stream; {answers} answers POSTed, 202 each"

    async def crossed_replicas() -> str:
        """Behind scripts/scaleout.sh's nginx (two replicas, round-robin): the POSTs of one
        conversation were answered by both, and the ones that carry state from an earlier
        answer (a ``reserve`` retry with its ``requestState``, a list cursor, a
        handshake-era answer to the server's request) reached the other replica."""
        p = tb.Problems()
        posts = [ex for ex in conn.exchanges if ex["method"] == "POST" and ex["label"].startswith("main")]
        replicas = {ex.get("replica") for ex in posts}
        p.expect(None not in replicas, "a POST was answered without X-Replica (not through the load balancer?)")
        p.expect(len(replicas - {None}) >= 2, f"every POST answered by {sorted(replicas - {None})}")

        def params(ex: dict[str, Any]) -> dict[str, Any]:
            body = ex["body"]
            return (body.get("params") or {}) if isinstance(body, dict) else {}

        def method(ex: dict[str, Any]) -> Any:
            return ex["body"].get("method") if isinstance(ex["body"], dict) else None

        crossed: dict[str, list[int]] = {}  # what -> [crossed, same replica]

        def count(what: str, first: dict[str, Any], then: dict[str, Any]) -> None:
            # Only what was served: the checks send bad cursors and edited states on purpose.
            if then["status"] == 200 and first["status"] == 200:
                tally = crossed.setdefault(what, [0, 0])
                tally[0 if first.get("replica") != then.get("replica") else 1] += 1

        if conn.mode == tb.MODERN:
            # An MRTR retry follows the input_required answer of the same call (same
            # tool and arguments) closely; lists with a cursor follow the page before.
            for i, ex in enumerate(posts):
                pr = params(ex)
                if method(ex) == "tools/call" and "inputResponses" in pr:
                    before = [
                        b
                        for b in posts[:i]
                        if method(b) == "tools/call"
                        and params(b).get("name") == pr.get("name")
                        and params(b).get("arguments") == pr.get("arguments")
                        and "inputResponses" not in params(b)
                    ]
                    if before:
                        count(f"{pr.get('name')} retry with requestState", before[-1], ex)
                if str(method(ex)).endswith("/list") and pr.get("cursor"):
                    before = [b for b in posts[:i] if method(b) == method(ex)]
                    if before:
                        count("list page with a cursor", before[-1], ex)
            needed = ["reserve retry with requestState"] + (["list page with a cursor"] if page_size else [])
        else:
            # The client's answer to the server's request, POSTed while the call waits on the
            # replica that holds its SSE stream (taken as the latest reserve/blurb call before it).
            last_call: dict[str, Any] | None = None
            for ex in posts:
                body = ex["body"]
                if method(ex) == "tools/call" and params(ex).get("name") in ("reserve", "blurb"):
                    last_call = ex
                elif isinstance(body, dict) and "method" not in body and ("result" in body or "error" in body):
                    if last_call is not None:
                        tally = crossed.setdefault("answer to the server's request", [0, 0])
                        tally[0 if last_call.get("replica") != ex.get("replica") else 1] += 1
            needed = []
        for what in needed:
            p.expect(crossed.get(what, [0, 0])[0] > 0, f"no {what} reached the other replica: {crossed.get(what)}")
        p.done()
        return "; ".join(f"{what}: {c} on the other replica, {s} on the same" for what, (c, s) in crossed.items()) + (
            f"; replicas {sorted(replicas - {None})}"
        )

    if conn.mode == tb.LEGACY:
        out.append(("http_exchanges", http_exchanges))
    if replicas:
        out.append(("crossed_replicas", crossed_replicas))
    return out


async def run(url: str, run_all: bool, modern: bool, page_size: int | None, replicas: bool) -> tb.Runner:
    runner = tb.Runner()
    conn = HttpConnection(url, tb.MODERN if modern else tb.LEGACY)
    tb.start_watchdog(runner, tb.TOTAL_TIMEOUT + 30)
    with anyio.move_on_after(tb.TOTAL_TIMEOUT + 15) as overall:
        if modern:
            banner = f"mcp.Client in its default mode over streamable_http_client ({tb.MODERN_VERSION})"
        else:
            banner = f"plain ClientSession + initialize over streamable_http_client (handshake era, {tb.HANDSHAKE_VERSION})"
        print(f"# mode {HTTP}: {banner}", flush=True)
        try:
            for name, fn in http_checks(conn, run_all, page_size, replicas):
                await runner.run(f"{HTTP}.{name}", fn, conn)
        finally:
            await conn.close()
    if overall.cancelled_caught:
        runner.fail("overall", f"the run exceeded {tb.TOTAL_TIMEOUT + 15:.0f}s and was cancelled")
    return runner


def main() -> int:
    parser = argparse.ArgumentParser(
        description="Drive picomcp's http_bookshop with the official MCP Python SDK's streamable_http_client (handshake era)."
    )
    parser.add_argument("--url", required=True, help="the Streamable HTTP endpoint, e.g. http://127.0.0.1:3103/mcp")
    parser.add_argument("--all", action="store_true", help="every legacy check of test_bookshop.py, not only the asking ones")
    parser.add_argument(
        "--modern",
        action="store_true",
        help="the 2026-07-28 checks, through mcp.Client in its default mode (server/discover), instead of the handshake era",
    )
    parser.add_argument("--page-size", type=int, help="the server runs with --page-size N: walk the lists page by page")
    parser.add_argument(
        "--replicas",
        action="store_true",
        help="behind scripts/scaleout.sh's load balancer: check (X-Replica) that state crossed replicas",
    )
    args = parser.parse_args()
    host = urlsplit(args.url).hostname
    if host not in ("127.0.0.1", "localhost", "::1"):
        parser.error(f"--url {args.url}: loopback addresses only")
    print(f"# server: {args.url}", flush=True)
    warnings.filterwarnings("ignore", message="The logging capability is deprecated", category=MCPDeprecationWarning)
    runner = anyio.run(run, args.url, args.all, args.modern, args.page_size or None, args.replicas)
    for mode, (passed, failed, skipped) in runner.tally.items():
        print(f"# {mode}: {passed} passed, {failed} failed, {skipped} skipped", flush=True)
    print(f"{runner.passed} passed, {runner.failed} failed", flush=True)
    return 1 if runner.failed else 0


if __name__ == "__main__":
    sys.exit(main())
