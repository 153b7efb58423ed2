#!/usr/bin/env python3
"""Interop test: the official MCP Python SDK client (PyPI ``mcp==2.3.0``) drives
picomcp's bookshop example server over stdio and asserts on the SDK-side objects.

Run (normally through ``scripts/interop.sh``, which makes the venv)::

    python tests/interop/test_bookshop.py --server "target/release/bookshop"
    python tests/interop/test_bookshop.py -- target/release/bookshop --page-size 2
    python tests/interop/test_bookshop.py --page-size 1 --server target/release/bookshop
    PICOMCP_SERVER="target/release/bookshop" python tests/interop/test_bookshop.py

Two modes, one after the other, against the same server command, each on its
own server process:

* ``legacy.*``: a plain ``ClientSession`` that sends ``initialize`` (the
  handshake era, protocol ``2025-11-25``).
* ``modern.*``: the high-level ``mcp.Client`` in its DEFAULT mode (``"auto"``),
  which probes ``server/discover`` and must adopt ``2026-07-28``.

Every check the 2026-07-28 revision allows runs in both modes (tools, schema
and tool errors, protocol errors, resources, templates, prompts, completion,
progress, pagination, bad cursors, and the tools that ask the client for
input). In modern mode the removed methods' checks (``ping``,
``logging/setLevel``) print ``skip modern.NAME: not in 2026-07-28``; logging is
exercised per request instead.

Asking the client, in both modes, through the SDK's own callbacks (given to
``ClientSession`` / ``Client`` as ``elicitation_callback`` and
``sampling_callback``): ``reserve`` (an elicitation form ``Reserve TITLE?``,
one required boolean ``confirm``) and ``blurb`` (``sampling/createMessage``,
one user message ``Write a one-line blurb for TITLE by AUTHOR.``,
``maxTokens`` 100; the callback's text, with a quote, a backslash and a
non-ASCII character in it, must come back as the tool's one text block) are
listed and callable. Legacy mode: the server sends the client a JSON-RPC
request of its own on the same stdio stream, the session's callback answers
it, and only then is the ``tools/call`` answered, once, with its own id.
Modern mode: the first answer is ``input_required`` and ``Client.call_tool``
retries with the callback's answer (MRTR). Also checked: accept / accept
with ``confirm`` false / decline / cancel, unknown titles (tool errors, no
callback), a callback answering ``ErrorData`` (legacy: the server fails the
call ``-32603`` naming the input request; modern: the SDK raises it itself),
a second client that gives only the other callback (so the SDK does not
declare the capability) getting ``-32021`` ``Missing required client
capability: NAME`` with ``data.requiredCapabilities``, a ``get_author`` call
made from inside the elicitation callback (legacy: served while ``reserve``
waits on the server), and two ``reserve`` calls outstanding at once. Roots
are not tested here: no bookshop tool asks for them (the Rust transcripts
cover ``roots/list``). ``wire_era_consistent`` checks that the server sends
no request of its own on 2026-07-28 and, on the handshake era, only
``elicitation/create`` / ``sampling/createMessage``, each with a fresh id and
each answered exactly once. A server that cannot keep a handshake-era call
waiting (one served by plain ``transport::serve``, with no waiting store,
answers ``-32603`` ``cannot wait for the client's input: all 0 waiting-call
slots are in use``) fails the legacy asking checks.

Pagination mode: when the server command carries ``--page-size N`` (N > 0), or
this script is given ``--page-size N`` (which it appends to the server
command), every list is walked page by page and the pagination checks run
(pages of at most N items, the walk equals an unpaginated server's listing in
the same era, bad cursors are rejected). Without it every list must come back
whole, with no ``nextCursor``.

Prints ``ok  NAME`` or ``FAIL NAME: DETAIL`` per check (``skip NAME: REASON``
when a check cannot apply; a failure is followed by the wire lines that check
exchanged, as ``#`` comments), a ``# MODE: ...`` tally per mode, then a closing
``N passed, M failed`` line, and exits 1 when any check failed (2 on a usage
error). Each check has a 20 s budget and the whole run 180 s; a watchdog thread
kills the servers and exits 3 should anything still hang after that.

Facts about the SDK 2.3.0 client this test relies on (read from its source):

* Protocol errors. Every JSON-RPC error response is raised as
  ``mcp.MCPError`` (``mcp.shared.exceptions.MCPError``; there is no
  ``McpError`` in 2.x). It exposes ``.code``, ``.message`` and ``.data``
  (properties over ``.error: ErrorData``); ``data`` is ``None`` when the wire
  omitted it. The SDK also raises ``MCPError`` for its own local failures:
  code ``-32000`` (CONNECTION_CLOSED) when the server went away and ``-32001``
  (REQUEST_TIMEOUT) when ``read_timeout_seconds`` ran out; this test treats
  those two as "the connection is broken" and restarts the server.
* Tool results. ``ClientSession.call_tool`` returns ``CallToolResult`` with
  ``content`` (list of ``TextContent``/... models; text is ``block.text``),
  ``structured_content`` (``None`` when absent; whether the key was on the wire
  at all shows in ``result.model_fields_set``) and ``is_error`` (a ``bool``
  that defaults to ``False`` when the wire has no ``isError``).
* Client-side validation. The client does NOT validate ``arguments`` against
  the tool's input schema, so the schema-rejection calls below reach the
  server through the ordinary ``call_tool`` (no low-level ``send_request``
  needed). After a *non-error* result it validates ``structured_content``
  against the tool's cached ``outputSchema`` (listing tools first if it has
  not seen the tool; a tool still unseen after that only logs a warning) and
  raises ``RuntimeError`` when structured content is missing or does not
  conform; results with ``is_error`` true are never validated. Every result is
  also shape-checked against the negotiated version's schema (a pydantic
  ``ValidationError`` for a malformed result; at 2026-07-28 that includes
  ``resultType`` and, on lists/reads, ``ttlMs``/``cacheScope``).
* Era selection. ``ClientSession`` never chooses by itself: the caller sends
  either ``await session.initialize()`` (the handshake, always offering
  ``2025-11-25``) or ``await session.discover()`` (``server/discover``,
  2026-07-28). So the handshake era is forced simply by calling
  ``initialize()`` on a plain ``ClientSession``; that is the legacy mode here.
  The high-level ``mcp.Client`` has ``mode=`` ``"legacy"`` (initialize), a
  modern version pin (``"2026-07-28"``: adopt a synthesized or
  ``prior_discover`` result without probing), or ``"auto"``, the DEFAULT.
  ``Client.__aenter__`` in ``"auto"`` calls ``mcp.client._probe.negotiate_auto``:
  it sends ``server/discover`` (envelope stamped at 2026-07-28, 10 s probe
  timeout, never cancelled) on the same connection; any ``MCPError`` -- a
  timeout, ``-32601``, or ``-32600`` -- makes it fall back to ``initialize()``
  on that connection (only ``-32022`` naming modern versions only, none shared,
  is fatal; ``-32022`` naming a shared version re-probes at it). A discover
  result is adopted (``session.adopt(result)``) only when its
  ``supportedVersions`` names a modern version; otherwise it also falls back.
  After adoption ``session.discover_result`` is that result,
  ``session.initialize_result`` is ``None``, ``protocol_version`` is the
  highest shared modern version, ``server_capabilities`` /
  ``instructions`` come from the discover result and ``server_info`` from its
  ``_meta["io.modelcontextprotocol/serverInfo"]`` stamp. Every later request
  gets the envelope stamped in ``params._meta``: ``protocolVersion``,
  ``clientInfo``, ``clientCapabilities`` (built once at adopt time).
* Client capabilities. ``ClientSession._build_capabilities`` makes one ad for
  both eras (the ``initialize`` request's ``capabilities``, and the 2026-07-28
  envelope's ``clientCapabilities``): ``elicitation`` (``{"form": {}, "url":
  {}}``) is declared iff an ``elicitation_callback`` was given, ``sampling``
  (``{}``, or ``sampling_capabilities``) iff a ``sampling_callback`` was,
  ``roots`` (``{"listChanged": true}``) iff a ``list_roots_callback`` was;
  there is no separate switch, and leaving one out works in both modes. So
  the -32021 checks use a second client (its own server process) built with
  the other callback only.
* Input callbacks. ``elicitation_callback(context, params)`` gets
  ``ElicitRequestFormParams`` (``.message``, ``.requested_schema`` as a plain
  dict, ``.mode == "form"``) and returns ``ElicitResult(action=...,
  content=...)``; ``sampling_callback(context, params)`` gets
  ``CreateMessageRequestParams`` (``.messages``: ``SamplingMessage`` with
  ``.role`` and ``.content``, a ``TextContent`` here; ``.max_tokens``) and
  returns ``CreateMessageResult(role, content, model, stop_reason)``; either
  may return ``ErrorData`` instead. ``context`` is a ``ClientRequestContext``:
  ``.session`` (the ``ClientSession``, usable from inside the callback) and
  ``.request_id``: the server's JSON-RPC id on the handshake era, the
  ``inputRequests`` key under MRTR. Both eras go through the same table
  (``ClientSession.dispatch_input_request``).
* Handshake-era server requests. The dispatcher runs each request from the
  server in its own task (``elicitation/create`` and
  ``sampling/createMessage`` are not "inline" methods), so the read loop goes
  on while a callback awaits, and a callback may make requests of its own on
  the session. The callback's result is validated and sent as the JSON-RPC
  result; ``ErrorData`` is sent as the JSON-RPC error with its code and
  message. ``session.call_tool`` just waits for the call's final answer.
* MRTR (2026-07-28 ``input_required``). ``ClientSession.call_tool`` /
  ``get_prompt`` / ``read_resource`` raise ``RuntimeError`` on an
  ``InputRequiredResult`` unless given ``allow_input_required=True`` (then they
  return it: ``input_requests`` maps keys to ``ElicitRequest`` / ... models,
  ``request_state`` is the opaque string); the retry is the same method with
  ``input_responses={key: ElicitResult(...)}, request_state=...``.
  ``mcp.Client.call_tool`` (and ``get_prompt``, ``read_resource``) drives that
  loop itself (``mcp/client/_input_required.py``): each ``input_requests``
  entry goes through the same callback table as a legacy server-to-client
  request (``session.dispatch_input_request``: ``ElicitRequest`` -> the
  ``elicitation_callback(context, params)`` with ``params`` an
  ``ElicitRequestFormParams``: ``.message``, ``.requested_schema`` (a plain
  dict), ``.mode == "form"``), all keys concurrently; it then retries with a
  fresh id, the collected ``inputResponses`` and ``requestState`` echoed
  byte-exact, up to ``input_required_max_rounds`` (10). A callback returning
  ``ErrorData`` aborts as ``MCPError`` (nothing is sent back); a state-only
  answer (no ``inputRequests``) is retried after a 50..250 ms backoff. A
  ``requestState`` is optional: ``blurb`` sends none, and then the retry
  carries none either.
* Cursors. ``ClientSession.list_tools`` / ``list_resources`` /
  ``list_resource_templates`` / ``list_prompts`` take no ``cursor=`` keyword
  in 2.3.0: the cursor goes in ``params=types.PaginatedRequestParams(cursor=C)``
  (only the high-level ``mcp.Client.list_*`` have ``cursor=``, and they go
  through the client's response cache; this test lists through
  ``client.session`` in both modes, which bypasses that cache). The result's
  ``next_cursor`` is ``None`` when the wire had no ``nextCursor``. The SDK
  does not walk pages itself; ``list_tools`` caches output schemas from every
  page it sees (cursor pages only add), and ``call_tool``'s output validation
  lists tools once (first page only) when it has not seen the tool yet.
* Progress. ``call_tool(name, args, read_timeout_seconds=None,
  progress_callback=cb)`` (third positional or keyword): when ``cb`` is given
  the dispatcher puts ``_meta.progressToken`` = the request id on the wire
  (merged into any other ``_meta``, so also next to the 2026 envelope) and
  calls ``await cb(progress: float, total: float | None, message: str | None)``
  for each matching ``notifications/progress`` (ints arrive as floats). Each
  call is spawned as its own task in receive order (a callback that records
  before its first ``await`` sees them in order); the result may come back
  before the last callback ran, so this test waits briefly for them.
* Logging. ``ClientSession(..., logging_callback=cb)`` (also a ``Client``
  field): ``await cb(params: types.LoggingMessageNotificationParams)``
  (``.level``, ``.logger``, ``.data``) per ``notifications/message``, run in a
  spawned task, so it too may lag the tool result. Handshake era:
  ``set_logging_level(level)`` emits an ``MCPDeprecationWarning`` (logging is
  deprecated in 2026-07-28) and its ``level`` is a ``Literal`` of the 8 RFC
  5424 names validated client-side (pydantic ``ValidationError``); an invalid
  level is therefore sent with a ``SetLevelRequest.model_construct(...)``
  through ``send_request``. 2026-07-28: no ``logging/setLevel``; the opt-in is
  per request, ``_meta["io.modelcontextprotocol/logLevel"]``
  (``types.LOG_LEVEL_META_KEY``). The SDK sets it two ways: per client,
  ``Client(log_level="info")`` / ``ClientSession(log_level=...)`` stamps it
  (``setdefault``) on every modern request; per call, ``meta={LOG_LEVEL_META_KEY:
  "info"}`` on ``call_tool`` (and the other typed requests), which wins over
  the client default. Neither has any effect on a handshake-era connection.
  A ``logging_callback`` alone is not an opt-in.
* Removed methods. ``session.send_ping()`` and ``set_logging_level()`` still
  send on a 2026-07-28 connection (stamped with the envelope); the server
  answers ``-32601``. ``session.initialize()`` on it gets ``-32022``.
* Prompts and completion. ``get_prompt(name, arguments)`` returns
  ``GetPromptResult`` (``messages``: ``PromptMessage`` with ``role`` and one
  ``content`` block). ``complete(ref, {"name": ..., "value": ...})`` with ref
  ``types.PromptReference(name=...)`` or
  ``types.ResourceTemplateReference(uri=...)`` returns ``CompleteResult``
  whose ``completion.values`` is the list of strings.
* Transports. ``mcp.Client(server)`` takes any async context manager yielding
  ``(read_stream, write_stream)`` as a transport; this test wraps
  ``stdio_client`` in one that records every ``SessionMessage`` both ways
  (``message.model_dump_json(by_alias=True, exclude_unset=True)`` is exactly
  what ``stdio_client`` writes).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any, TextIO

try:
    import anyio
    import mcp.types as types
    from mcp import Client, ClientSession, MCPError, StdioServerParameters
    from mcp.shared.exceptions import MCPDeprecationWarning
    from mcp.shared.message import SessionMessage
    from mcp.client.stdio import stdio_client
    from mcp.types import (
        CLIENT_CAPABILITIES_META_KEY,
        CONNECTION_CLOSED,
        LOG_LEVEL_META_KEY,
        PROTOCOL_VERSION_META_KEY,
        REQUEST_TIMEOUT,
    )
except ImportError as exc:  # pragma: no cover - environment problem, not a check
    print(f"cannot import the MCP SDK ({exc}); install tests/interop/requirements.txt (mcp==2.3.0)", file=sys.stderr)
    sys.exit(2)

CHECK_TIMEOUT = 20.0  # seconds, per check
TOTAL_TIMEOUT = 180.0  # seconds, whole run (both modes)
REQUEST_READ_TIMEOUT = 15.0  # SDK-level per-request timeout, below the check budget
MAX_FAILED_RESTARTS = 2  # then every remaining check of that mode fails at once
HANDSHAKE_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
LEGACY, MODERN = "legacy", "modern"
NOT_FOUND = "No book titled 'Nothing' in the catalog."
GET_AUTHOR_OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {"result": {"type": "string"}},
    "required": ["result"],
}
INSTRUCTIONS = "A small bookshop: look up authors with get_author, list titles with top, read books://{title}."
REMOVED = "not in 2026-07-28"
WIRE_LINES_ON_FAILURE = 12  # wire lines printed after a failed check
WIRE_LINE_CHARS = 600

_ABSENT = object()  # "do not check this"
# Every item the bookshop lists, in listing order (tools by name, resources by uri,
# templates by uriTemplate, prompts by name), per mode (the same in both eras: reserve
# and blurb ask the client on every era).
_BOOKSHOP_LISTS = {
    "tools": ["get_author", "get_author_strict", "top", "reserve", "blurb", "buy", "count"],
    "resources": ["books://catalog", "books://stock"],
    "resource_templates": ["books://{title}"],
    "prompts": ["recommend"],
}
EXPECTED_LISTS = {LEGACY: _BOOKSHOP_LISTS, MODERN: _BOOKSHOP_LISTS}
# What the sampling callback answers blurb with: a quote, a backslash and a non-ASCII
# character, so the server has to re-escape the text it took from the client's answer.
BLURB = 'Case is "jacked in" to cyberspace \\ a café in Chiba.'
BLURB_PROMPT = "Write a one-line blurb for Neuromancer by William Gibson."
# The input requests a handshake-era server may send the client (the bookshop asks
# for no roots: roots/list is covered by the Rust transcripts).
ASKING_METHODS = {"elicitation/create", "sampling/createMessage"}
MAX_PAGES = 64  # a walk longer than this is a server looping on cursors
GENRES = ["science fiction", "cyberpunk", "fantasy"]
CALLBACK_WAIT = 2.0  # seconds to wait for spawned progress/logging callbacks


class CheckFailed(Exception):
    pass


class Skip(Exception):
    pass


class Problems:
    """Collects every mismatch of one check so a failure reports all of them."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, msg: str) -> None:
        self.items.append(msg)

    def expect(self, cond: bool, msg: str) -> bool:
        if not cond:
            self.add(msg)
        return cond

    def eq(self, actual: Any, expected: Any, what: str) -> bool:
        return self.expect(actual == expected, f"{what}: expected {expected!r}, got {actual!r}")

    def done(self) -> None:
        if self.items:
            raise CheckFailed("; ".join(self.items))


# --------------------------------------------------------------------------- result helpers


def sampled(text: str) -> types.CreateMessageResult:
    """What a sampling callback answers: the model's text."""
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=text), model="interop-test", stop_reason="endTurn"
    )


def block_summary(block: Any) -> Any:
    return block.text if isinstance(block, types.TextContent) else f"<{getattr(block, 'type', type(block).__name__)}>"


def describe(result: Any) -> str:
    if isinstance(result, types.CallToolResult):
        return (
            f"is_error={result.is_error} content={[block_summary(b) for b in result.content]!r} "
            f"structured_content={result.structured_content!r}"
        )
    if isinstance(result, types.ReadResourceResult):
        return f"contents={[getattr(c, 'text', '<blob>') for c in result.contents]!r}"
    return repr(result)


def texts(result: types.CallToolResult, p: Problems) -> list[str]:
    out = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            out.append(block.text)
        else:
            p.add(f"content block of type {block.type!r}, expected text")
    return out


def has_structured(result: types.CallToolResult) -> bool:
    return result.structured_content is not None or "structured_content" in result.model_fields_set


def expect_success(result: types.CallToolResult, p: Problems, *, structured: Any, first_text: Any = _ABSENT) -> None:
    if not p.expect(not result.is_error, f"expected success, got a tool error: {describe(result)}"):
        return
    if first_text is not _ABSENT:
        t = texts(result, p)
        p.eq(t[0] if t else None, first_text, "first content text")
    p.eq(result.structured_content, structured, "structured_content")


def expect_tool_error(
    result: types.CallToolResult,
    p: Problems,
    *,
    exact: str | None = None,
    prefix: str | None = None,
    contains: str | None = None,
) -> None:
    if not p.expect(result.is_error, f"expected is_error True, got success: {describe(result)}"):
        return
    t = texts(result, p)
    if not p.eq(len(result.content), 1, "number of content blocks"):
        return
    text = t[0] if t else ""
    if exact is not None:
        p.eq(text, exact, "error text")
    if prefix is not None:
        p.expect(text.startswith(prefix), f"error text {text!r} does not start with {prefix!r}")
    if contains is not None:
        p.expect(contains in text, f"error text {text!r} does not contain {contains!r}")
    p.expect(
        not has_structured(result),
        f"tool error carries structured_content {result.structured_content!r}",
    )


async def expect_protocol_error(
    call: Awaitable[Any], *, code: int, message: str | None, data: Any = _ABSENT, p: Problems | None = None
) -> MCPError | None:
    """Await ``call``, which must raise MCPError ``code`` (and ``message`` unless None).

    Mismatches go to ``p`` when given (the caller reports them), else raise CheckFailed at once.
    """
    own = p is None
    p = Problems() if p is None else p
    try:
        result = await call
    except MCPError as exc:
        if exc.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT):
            raise  # the runner treats these as a broken connection
        p.eq(exc.code, code, "error code")
        if message is not None:
            p.eq(exc.message, message, "error message")
        if data is not _ABSENT:
            p.eq(exc.data, data, "error data")
        if own:
            p.done()
        return exc
    p.add(f"expected MCPError {code} {message!r}, got a result: {describe(result)}")
    if own:
        p.done()
    return None


# --------------------------------------------------------------------------- lists and pages


# kind -> (send one list request with these params, the result's item list, an item's key)
ListSender = Callable[[ClientSession, "types.PaginatedRequestParams | None"], Awaitable[Any]]
LIST_KINDS: dict[str, tuple[ListSender, Callable[[Any], list[Any]], Callable[[Any], str]]] = {
    "tools": (lambda s, params: s.list_tools(params=params), lambda r: r.tools, lambda i: i.name),
    "resources": (lambda s, params: s.list_resources(params=params), lambda r: r.resources, lambda i: i.uri),
    "resource_templates": (
        lambda s, params: s.list_resource_templates(params=params),
        lambda r: r.resource_templates,
        lambda i: i.uri_template,
    ),
    "prompts": (lambda s, params: s.list_prompts(params=params), lambda r: r.prompts, lambda i: i.name),
}


async def list_page(session: ClientSession, kind: str, cursor: str | None = None) -> Any:
    """One list request; ``cursor`` goes in ``params`` (the 2.3.0 ClientSession has no ``cursor=``)."""
    send, _, _ = LIST_KINDS[kind]
    return await send(session, None if cursor is None else types.PaginatedRequestParams(cursor=cursor))


async def walk_pages(session: ClientSession, kind: str) -> list[Any]:
    """Every page of one list, following ``next_cursor`` until it is absent."""
    pages: list[Any] = []
    cursor: str | None = None
    seen: set[str] = set()
    while True:
        result = await list_page(session, kind, cursor)
        pages.append(result)
        cursor = result.next_cursor
        if cursor is None:
            return pages
        if cursor in seen:
            raise CheckFailed(f"{kind}: nextCursor {cursor!r} repeated after {len(pages)} pages")
        seen.add(cursor)
        if len(pages) >= MAX_PAGES:
            raise CheckFailed(f"{kind}: still a nextCursor after {MAX_PAGES} pages")


async def list_all(session: ClientSession, kind: str) -> list[Any]:
    """The whole list, walked page by page (one request when the server does not paginate)."""
    _, items, _ = LIST_KINDS[kind]
    return [item for page in await walk_pages(session, kind) for item in items(page)]


def keys(kind: str, items: list[Any]) -> list[str]:
    return [LIST_KINDS[kind][2](i) for i in items]


def dump_items(items: list[Any]) -> list[Any]:
    return [i.model_dump(by_alias=True, mode="json", exclude_none=True) for i in items]


async def wait_until(cond: Callable[[], bool], timeout: float = CALLBACK_WAIT) -> None:
    """Give the SDK's spawned callback tasks time to run (they may lag the result)."""
    with anyio.move_on_after(timeout):
        while not cond():
            await anyio.sleep(0.01)



# --------------------------------------------------------------------------- wire recording


# One recorded message: (process label, "->" client to server or "<-" server to client, JSON text).
WireLine = tuple[str, str, str]


def wire_text(item: Any) -> str:
    if isinstance(item, SessionMessage):
        return item.message.model_dump_json(by_alias=True, exclude_unset=True)
    return f"<{type(item).__name__}: {item}>"  # a transport-level exception item


class _TeeRead:
    """Read-stream wrapper: records every item, then hands it on (``last_context`` etc. pass through)."""

    def __init__(self, inner: Any, record: Callable[[str, Any], None]) -> None:
        self._inner = inner
        self._record = record

    async def receive(self) -> Any:
        item = await self._inner.receive()
        self._record("<-", item)
        return item

    def __aiter__(self) -> _TeeRead:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _TeeRead:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self._inner.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _TeeWrite:
    def __init__(self, inner: Any, record: Callable[[str, Any], None]) -> None:
        self._inner = inner
        self._record = record

    async def send(self, item: Any, /) -> None:
        self._record("->", item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _TeeWrite:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self._inner.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class TeeTransport:
    """A client transport (``stdio_client(...)``) whose traffic is appended to ``wire``."""

    def __init__(self, inner: Any, wire: list[WireLine], label: str) -> None:
        self._inner = inner
        self._wire = wire
        self._label = label

    def _record(self, direction: str, item: Any) -> None:
        self._wire.append((self._label, direction, wire_text(item)))

    async def __aenter__(self) -> tuple[Any, Any]:
        read, write = await self._inner.__aenter__()
        return _TeeRead(read, self._record), _TeeWrite(write, self._record)

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self._inner.__aexit__(*exc)


def parsed(lines: list[WireLine], direction: str, label_prefix: str = "") -> list[tuple[str, dict[str, Any]]]:
    """The JSON objects sent one way, with their process label."""
    out = []
    for label, d, text in lines:
        if d != direction or not label.startswith(label_prefix):
            continue
        try:
            value = json.loads(text)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append((label, value))
    return out


def requests_sent(lines: list[WireLine], method: str | None = None, label_prefix: str = "") -> list[dict[str, Any]]:
    return [
        m
        for _, m in parsed(lines, "->", label_prefix)
        if "id" in m and "method" in m and (method is None or m["method"] == method)
    ]


def answer_to(lines: list[WireLine], request: dict[str, Any]) -> dict[str, Any] | None:
    for _, m in parsed(lines, "<-"):
        if "method" not in m and m.get("id") == request.get("id") and ("result" in m or "error" in m):
            return m
    return None


def meta_of(message: dict[str, Any]) -> dict[str, Any]:
    meta = (message.get("params") or {}).get("_meta")
    return meta if isinstance(meta, dict) else {}


def numbered(lines: list[WireLine]) -> list[tuple[int, str, dict[str, Any]]]:
    """Every JSON object on the wire, with its position and direction."""
    out = []
    for i, (_, d, text) in enumerate(lines):
        try:
            value = json.loads(text)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append((i, d, value))
    return out


def server_requests(lines: list[WireLine]) -> list[tuple[int, dict[str, Any]]]:
    """The requests the server sent the client (handshake era: elicitation/create, ...), with positions."""
    return [(i, m) for i, d, m in numbered(lines) if d == "<-" and "id" in m and "method" in m]


def response_at(lines: list[WireLine], direction: str, request_id: Any) -> tuple[int, dict[str, Any]] | None:
    """The first response (result or error) to ``request_id`` sent in ``direction``, with its position."""
    for i, d, m in numbered(lines):
        if d == direction and "method" not in m and m.get("id") == request_id and ("result" in m or "error" in m):
            return i, m
    return None


def position_of(lines: list[WireLine], message: dict[str, Any]) -> int:
    for i, _, m in numbered(lines):
        if m == message:
            return i
    return -1


# --------------------------------------------------------------------------- connection


class Connection:
    """One server process driven in one mode; restarted when it breaks.

    ``legacy``: a plain ``ClientSession``; the ``initialize`` check performs the
    handshake on the first process, ``start`` does it after a restart.
    ``modern``: ``mcp.Client`` with its default ``mode="auto"``, whose entry
    probes ``server/discover`` (``start`` refuses a connection that did not
    adopt 2026-07-28); ``session`` is ``client.session``. Both are built with
    this object's ``on_elicit`` / ``on_sample`` as their elicitation and
    sampling callbacks (so both declare those capabilities); the checks set
    what they answer and read back what they were handed.

    ``broken`` holds the reason the session cannot be used (not started yet,
    server gone, request timed out); the runner restarts the server before
    the next check. All entering and leaving of the transport happens in the
    main task outside any per-check cancel scope (anyio needs that nesting).
    """

    def __init__(self, argv: list[str], env: dict[str, str], mode: str) -> None:
        self.argv = argv
        self.env = env
        self.mode = mode
        self.stack: AsyncExitStack | None = None
        self.session: ClientSession | None = None
        self.client: Client | None = None
        self.broken: str | None = "not started"
        self.fatal: str | None = None  # the server cannot be spawned at all: fail every check at once
        self.failed_restarts = 0  # consecutive restarts whose initialize failed
        self.starts = 0
        self.stderr_logs: list[TextIO] = []
        self.log_messages: list[types.LoggingMessageNotificationParams] = []  # from logging_callback
        self.wire: list[WireLine] = []
        # What the elicitation / sampling callbacks were handed, and what they answer.
        self.elicitations: list[Any] = []  # params
        self.elicit_contexts: list[Any] = []  # ClientRequestContext, one per call
        # A reply, or a function of the params returning one (ElicitResult or ErrorData).
        self.elicit_reply: Any = types.ElicitResult(action="cancel")
        # Awaited inside the elicitation callback, before it answers (None: answer at once).
        self.during_elicit: Callable[[Any, Any], Awaitable[None]] | None = None
        self.samplings: list[Any] = []
        self.sample_contexts: list[Any] = []
        self.sample_reply: Any = sampled(BLURB)

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.log_messages.append(params)

    async def on_elicit(self, context: Any, params: Any) -> Any:
        self.elicitations.append(params)
        self.elicit_contexts.append(context)
        if self.during_elicit is not None:
            await self.during_elicit(context, params)
        reply = self.elicit_reply
        return reply(params) if callable(reply) else reply

    async def on_sample(self, context: Any, params: Any) -> Any:
        self.samplings.append(params)
        self.sample_contexts.append(context)
        return self.sample_reply

    def reset_callbacks(self, elicit_reply: Any = None) -> None:
        self.elicitations.clear()
        self.elicit_contexts.clear()
        self.samplings.clear()
        self.sample_contexts.clear()
        self.elicit_reply = elicit_reply if elicit_reply is not None else types.ElicitResult(action="cancel")
        self.during_elicit = None
        self.sample_reply = sampled(BLURB)

    def new_errlog(self) -> TextIO:
        log = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        self.stderr_logs.append(log)
        return log

    def params(self, argv: list[str] | None = None) -> StdioServerParameters:
        argv = argv or self.argv
        # The whole environment is passed (the SDK would otherwise keep only HOME, PATH, ...).
        return StdioServerParameters(command=argv[0], args=argv[1:], env=self.env)

    def transport(self, label: str, argv: list[str] | None = None) -> TeeTransport:
        """A recorded stdio transport to a new server process (``argv``: another command line)."""
        return TeeTransport(stdio_client(self.params(argv), errlog=self.new_errlog()), self.wire, label)

    async def close(self) -> None:
        stack, self.stack, self.session, self.client = self.stack, None, None, None
        if stack is not None:
            try:
                await stack.aclose()
            except Exception as exc:  # noqa: BLE001 - teardown noise must not kill the run
                print(f"# closing the {self.mode} server connection raised {type(exc).__name__}: {exc}", flush=True)

    async def start(self, *, initialize: bool, budget: float) -> None:
        await self.close()
        self.starts += 1
        label = f"main{self.starts}"
        stack = AsyncExitStack()
        await stack.__aenter__()
        client = None
        try:
            if self.mode == LEGACY:
                read, write = await stack.enter_async_context(self.transport(label))
                session = await stack.enter_async_context(
                    ClientSession(
                        read,
                        write,
                        read_timeout_seconds=REQUEST_READ_TIMEOUT,
                        logging_callback=self.on_log,
                        elicitation_callback=self.on_elicit,
                        sampling_callback=self.on_sample,
                    )
                )
            else:
                client = Client(  # no mode=: the default, "auto"
                    self.transport(label),
                    read_timeout_seconds=REQUEST_READ_TIMEOUT,
                    logging_callback=self.on_log,
                    elicitation_callback=self.on_elicit,
                    sampling_callback=self.on_sample,
                )
                await stack.enter_async_context(client)
                session = client.session
                if session.protocol_version != MODERN_VERSION or session.discover_result is None:
                    how = "fell back to initialize" if session.initialize_result is not None else "adopted"
                    raise RuntimeError(
                        f"mcp.Client default mode {how} {session.protocol_version!r}, not {MODERN_VERSION} via server/discover"
                    )
        except BaseException:
            await stack.aclose()
            raise
        self.stack, self.session, self.client, self.broken = stack, session, client, None
        if initialize and self.mode == LEGACY:
            try:
                with anyio.fail_after(budget):
                    await session.initialize()
            except TimeoutError:
                self.broken = "initialize timed out after restart"
                raise
            except Exception as exc:
                self.broken = f"initialize failed after restart: {exc}"
                raise


# --------------------------------------------------------------------------- runner


def exc_text(exc: BaseException) -> str:
    """``Type: message``, looking through (nested) exception groups of one exception (anyio task groups)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        return f"MCPError code={exc.code} message={exc.message!r} data={exc.data!r}"
    return f"{type(exc).__name__}: {exc}"



class Runner:
    def __init__(self) -> None:
        self.start = time.monotonic()
        self.deadline = self.start + TOTAL_TIMEOUT
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.tally: dict[str, list[int]] = {}  # mode -> [passed, failed, skipped]

    def budget(self) -> float:
        return min(CHECK_TIMEOUT, self.deadline - time.monotonic())

    def _count(self, name: str, i: int) -> None:
        self.tally.setdefault(name.split(".", 1)[0], [0, 0, 0])[i] += 1

    def ok(self, name: str, note: str | None = None) -> None:
        self.passed += 1
        self._count(name, 0)
        print(f"ok  {name}" + (f" ({note})" if note else ""), flush=True)

    def fail(self, name: str, detail: str) -> None:
        self.failed += 1
        self._count(name, 1)
        detail = " ".join(detail.split()) if "\n" in detail else detail
        print(f"FAIL {name}: {detail}", flush=True)

    def skip(self, name: str, reason: str) -> None:
        self.skipped += 1
        self._count(name, 2)
        print(f"skip {name}: {reason}", flush=True)

    async def run(self, name: str, fn: Callable[[], Awaitable[str | None]], conn: Connection) -> None:
        mark = len(conn.wire)
        before = self.failed
        try:
            await self._run(name, fn, conn)
        finally:
            if self.failed > before:
                lines = conn.wire[mark:]
                if lines:
                    shown = lines[-WIRE_LINES_ON_FAILURE:]
                    print(f"#   wire of {name} (last {len(shown)} of {len(lines)} messages):", flush=True)
                    for label, direction, text in shown:
                        cut = text if len(text) <= WIRE_LINE_CHARS else text[:WIRE_LINE_CHARS] + "..."
                        print(f"#     {label} {direction} {cut}", flush=True)

    async def _run(self, name: str, fn: Callable[[], Awaitable[str | None]], conn: Connection) -> None:
        budget = self.budget()
        if budget <= 0:
            self.fail(name, f"not run: the whole-run budget of {TOTAL_TIMEOUT:.0f}s is used up")
            return
        if conn.fatal is not None:
            self.fail(name, conn.fatal)
            return
        if conn.broken is not None:
            reason = conn.broken
            first = conn.starts == 0
            if conn.failed_restarts >= MAX_FAILED_RESTARTS:
                conn.fatal = f"gave up after {conn.failed_restarts} failed server starts (last: {reason})"
                self.fail(name, conn.fatal)
                return
            if not first:
                print(f"# {conn.mode} server connection unusable ({reason}); restarting the server", flush=True)
            try:
                await conn.start(initialize=not first, budget=budget)
            except TimeoutError:
                conn.failed_restarts += 1
                self.fail(name, f"connection lost ({reason}); initialize after restart timed out")
                return
            except OSError as exc:
                conn.fatal = f"could not start the server {shlex.join(conn.argv)!r}: {type(exc).__name__}: {exc}"
                self.fail(name, conn.fatal)
                return
            except Exception as exc:  # noqa: BLE001
                conn.failed_restarts += 1
                conn.broken = f"start failed: {exc_text(exc)}"
                what = "could not start the server" if first else f"connection lost ({reason}); restart failed"
                self.fail(name, f"{what}: {exc_text(exc)}")
                return
            conn.failed_restarts = 0
            budget = self.budget()
            if budget <= 0:
                self.fail(name, f"not run: the whole-run budget of {TOTAL_TIMEOUT:.0f}s is used up")
                return
        try:
            with anyio.fail_after(budget):
                note = await fn()
        except Skip as exc:
            self.skip(name, str(exc))
        except CheckFailed as exc:
            self.fail(name, str(exc))
        except TimeoutError:
            conn.broken = f"check {name} timed out"
            self.fail(name, f"timed out after {budget:.0f}s")
        except MCPError as exc:
            if exc.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT):
                conn.broken = f"{exc.message} (code {exc.code})"
            if exc.code == CONNECTION_CLOSED:
                self.fail(name, "the server closed the connection (crashed or exited?); its stderr tail follows at the end")
            else:
                self.fail(name, f"unexpected MCPError code={exc.code} message={exc.message!r} data={exc.data!r}")
        except Exception as exc:  # noqa: BLE001 - any other exception is this check's failure
            self.fail(name, exc_text(exc))
        else:
            self.ok(name, note)


# --------------------------------------------------------------------------- checks (both eras)


def mode_checks(
    conn: Connection, page_size: int | None, unpaginated_argv: list[str]
) -> list[tuple[str, Callable[[], Awaitable[str | None]]]]:
    """The checks of one mode (names without the mode prefix); ``page_size`` (None: the server
    does not paginate) adds the pagination checks, which compare against a server run as
    ``unpaginated_argv`` in the same era."""
    modern = conn.mode == MODERN
    expected_lists = EXPECTED_LISTS[conn.mode]

    def s() -> ClientSession:
        assert conn.session is not None
        return conn.session

    def c() -> Client:
        assert conn.client is not None
        return conn.client

    def removed() -> Callable[[], Awaitable[None]]:
        async def check() -> None:
            raise Skip(REMOVED)

        return check

    # ----------------------------------------------------------------- connecting

    async def initialize() -> None:
        result = await s().initialize()
        p = Problems()
        p.eq(result.server_info.name, "Bookshop", "serverInfo.name")
        p.eq(result.protocol_version, HANDSHAKE_VERSION, "negotiated protocolVersion")
        p.eq(s().protocol_version, HANDSHAKE_VERSION, "session.protocol_version")
        p.expect(result.capabilities.tools is not None, "capabilities.tools missing")
        p.expect(result.capabilities.resources is not None, "capabilities.resources missing")
        p.done()

    async def connect_default_mode() -> str:
        """``Client.__aenter__`` (mode "auto") already ran in ``Connection.start``; inspect what it did."""
        client, session = c(), s()
        p = Problems()
        p.eq(client.mode, "auto", "Client.mode (the default)")
        p.eq(session.protocol_version, MODERN_VERSION, "session.protocol_version")
        p.eq(client.protocol_version, MODERN_VERSION, "Client.protocol_version")
        p.expect(session.initialize_result is None, f"an initialize result is set: {session.initialize_result!r}")
        d = session.discover_result
        if not p.expect(d is not None, "no discover result: server/discover's answer was not adopted"):
            p.done()
        assert d is not None
        p.eq(d.supported_versions, [MODERN_VERSION], "discover supportedVersions")
        p.eq(d.result_type, "complete", "discover resultType")
        p.eq((d.ttl_ms, d.cache_scope), (0, "private"), "discover (ttlMs, cacheScope)")
        p.expect(session.server_capabilities is d.capabilities, "server_capabilities is not the discover result's")
        p.expect(d.capabilities.tools is not None, "capabilities.tools missing")
        p.expect(d.capabilities.resources is not None, "capabilities.resources missing")
        p.eq(session.instructions, INSTRUCTIONS, "instructions (from discover)")
        p.eq(session.server_info.name if session.server_info else None, "Bookshop", "serverInfo stamp name")
        # On the wire: the first request on this process was the probe, and no handshake followed.
        sent = requests_sent(conn.wire, label_prefix=f"main{conn.starts}")
        p.expect(bool(sent), "no request recorded on the wire")
        if sent:
            first = sent[0]
            p.eq(first.get("method"), "server/discover", "first request's method")
            p.eq(meta_of(first).get(PROTOCOL_VERSION_META_KEY), MODERN_VERSION, "probe _meta protocolVersion")
            answer = answer_to(conn.wire, first)
            p.expect(answer is not None and "result" in answer, f"server/discover answer: {answer!r}")
        p.eq([m["method"] for m in sent if m["method"] == "initialize"], [], "initialize requests sent")
        p.done()
        return f"adopted {session.protocol_version} from server/discover"

    async def initialize_refused() -> str:
        """The handshake on a connection already serving 2026-07-28 (``session.initialize()`` still sends it)."""
        exc = await expect_protocol_error(
            s().initialize(),
            code=-32022,
            message="connection is serving the 2026-07-28 protocol; the initialize handshake is not accepted",
            data={"supported": [MODERN_VERSION], "requested": HANDSHAKE_VERSION},
        )
        p = Problems()
        p.eq(s().protocol_version, MODERN_VERSION, "session.protocol_version after the refused handshake")
        p.done()
        return f"code {exc.code}" if exc else ""

    # ----------------------------------------------------------------- tools

    async def tools_list_names() -> None:
        names = [t.name for t in await list_all(s(), "tools")]
        want = ["get_author", "get_author_strict", "top"]
        missing = [n for n in want if n not in names]
        if missing:
            raise CheckFailed(f"missing tools {missing}; listed {names}")
        if [n for n in names if n in want] != want:
            raise CheckFailed(f"tools not in order {want}; listed {names}")

    async def tool(name: str) -> types.Tool:
        for t in await list_all(s(), "tools"):
            if t.name == name:
                return t
        raise CheckFailed(f"tool {name} not listed")

    async def tools_list_get_author_schemas() -> None:
        t = await tool("get_author")
        p = Problems()
        props = t.input_schema.get("properties") or {}
        p.eq((props.get("title") or {}).get("type"), "string", "inputSchema.properties.title.type")
        p.expect("title" in (t.input_schema.get("required") or []), f"inputSchema.required lacks title: {t.input_schema!r}")
        out = t.output_schema or {}
        got = {k: out[k] for k in ("type", "properties", "required") if k in out}
        p.eq(got, GET_AUTHOR_OUTPUT_SCHEMA, "outputSchema (type/properties/required)")
        p.done()

    async def tools_list_top_schema() -> None:
        t = await tool("top")
        n = (t.input_schema.get("properties") or {}).get("n") or {}
        p = Problems()
        p.eq(n.get("type"), "integer", "n.type")
        p.eq(n.get("minimum", "<absent>"), 0, "n.minimum")
        p.eq(n.get("maximum", "<absent>"), 50, "n.maximum")
        p.done()

    def get_author_ok(title: str, author: str) -> Callable[[], Awaitable[None]]:
        async def check() -> None:
            p = Problems()
            result = await s().call_tool("get_author", {"title": title})
            expect_success(result, p, first_text=author, structured={"result": author})
            p.done()

        return check

    async def get_author_unknown_title() -> None:
        p = Problems()
        result = await s().call_tool("get_author", {"title": "Nothing"})
        expect_tool_error(result, p, exact=f"Error executing tool get_author: {NOT_FOUND}")
        p.done()

    async def get_author_strict_dune() -> None:
        p = Problems()
        result = await s().call_tool("get_author_strict", {"title": "Dune"})
        expect_success(result, p, first_text="Frank Herbert", structured={"result": "Frank Herbert"})
        p.done()

    async def get_author_strict_unknown_title() -> None:
        await expect_protocol_error(
            s().call_tool("get_author_strict", {"title": "Nothing"}), code=-32602, message=NOT_FOUND, data=None
        )

    async def top_1() -> None:
        p = Problems()
        result = await s().call_tool("top", {"n": 1})
        expect_success(result, p, structured={"result": ["Dune"]})
        if not result.is_error:
            p.eq(texts(result, p), ["Dune"], "content texts")
        p.done()

    def top_n(n: int, titles: list[str]) -> Callable[[], Awaitable[None]]:
        async def check() -> None:
            p = Problems()
            expect_success(await s().call_tool("top", {"n": n}), p, structured={"result": titles})
            p.done()

        return check

    def rejected(name: str, arguments: dict[str, Any], **want: str) -> Callable[[], Awaitable[None]]:
        async def check() -> None:
            p = Problems()
            expect_tool_error(await s().call_tool(name, arguments), p, **want)
            p.done()

        return check

    async def unknown_tool() -> None:
        await expect_protocol_error(s().call_tool("nope", {}), code=-32602, message="Unknown tool: nope")

    # ----------------------------------------------------------------- resources

    async def resources_list_catalog() -> None:
        resources = await list_all(s(), "resources")
        found = [r for r in resources if r.uri == "books://catalog"]
        if not found:
            raise CheckFailed(f"books://catalog not listed; listed {[r.uri for r in resources]}")
        if found[0].mime_type != "application/json":
            raise CheckFailed(f"books://catalog mimeType: expected 'application/json', got {found[0].mime_type!r}")

    async def resource_templates_list() -> None:
        templates = await list_all(s(), "resource_templates")
        found = [t for t in templates if t.uri_template == "books://{title}"]
        if not found:
            raise CheckFailed(f"books://{{title}} not listed; listed {[t.uri_template for t in templates]}")
        p = Problems()
        p.eq(found[0].name, "book", "name")
        p.eq(found[0].description, "The catalog entry for one book.", "description")
        p.eq(found[0].mime_type, "text/plain", "mimeType")
        p.done()

    async def read_one_text(uri: str) -> str:
        result = await s().read_resource(uri)
        if len(result.contents) != 1 or not isinstance(result.contents[0], types.TextResourceContents):
            raise CheckFailed(f"expected one text content, got {describe(result)}")
        return result.contents[0].text

    def read_book(title: str, text: str) -> Callable[[], Awaitable[None]]:
        async def check() -> None:
            uri = f"books://{title}"
            result = await s().read_resource(uri)
            p = Problems()
            if p.eq(len(result.contents), 1, "number of contents"):
                c = result.contents[0]
                p.eq(getattr(c, "text", "<not text>"), text, "text")
                p.eq(c.uri, uri, "uri")
            p.done()

        return check

    async def read_catalog_json() -> None:
        text = await read_one_text("books://catalog")
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise CheckFailed(f"text is not JSON ({exc}): {text!r}") from None
        if value != ["Dune", "Neuromancer"]:
            raise CheckFailed(f"expected ['Dune', 'Neuromancer'], got {value!r}")

    def read_error(uri: str, message: str) -> Callable[[], Awaitable[None]]:
        async def check() -> None:
            await expect_protocol_error(s().read_resource(uri), code=-32602, message=message, data={"uri": uri})

        return check

    async def ping() -> None:
        result = await s().send_ping()
        if not isinstance(result, types.EmptyResult):
            raise CheckFailed(f"unexpected ping result {result!r}")

    def method_not_found(method: str, send: Callable[[], Awaitable[Any]]) -> Callable[[], Awaitable[None]]:
        """A method 2026-07-28 removed, sent anyway on the modern connection (enveloped)."""

        async def check() -> None:
            await expect_protocol_error(send(), code=-32601, message="Method not found", data=method)

        return check

    # ----------------------------------------------------------------- capabilities and lists

    async def capabilities_prompts_completions_logging() -> None:
        caps = s().server_capabilities
        if caps is None:
            raise CheckFailed("session has no server capabilities after connecting")
        p = Problems()
        p.expect(caps.prompts is not None, "capabilities.prompts missing")
        p.expect(caps.completions is not None, "capabilities.completions missing")
        p.expect(caps.logging is not None, "capabilities.logging missing")
        p.done()

    async def lists_items_in_order() -> str:
        p = Problems()
        for kind, want in expected_lists.items():
            p.eq(keys(kind, await list_all(s(), kind)), want, kind)
        p.done()
        return "walked page by page" if page_size else "one page each"

    async def lists_have_no_next_cursor() -> None:
        p = Problems()
        for kind in LIST_KINDS:
            result = await list_page(s(), kind)
            p.expect(
                result.next_cursor is None and "next_cursor" not in result.model_fields_set,
                f"{kind}: nextCursor {result.next_cursor!r} on the wire of an unpaginated server",
            )
        p.done()

    # ----------------------------------------------------------------- pagination (--page-size)

    def paginate(kind: str) -> Callable[[], Awaitable[str]]:
        async def check() -> str:
            assert page_size is not None
            pages = await walk_pages(s(), kind)
            _, items, _ = LIST_KINDS[kind]
            p = Problems()
            for i, page in enumerate(pages, 1):
                n = len(items(page))
                p.expect(n <= page_size, f"page {i} has {n} items, more than the page size {page_size}")
            p.eq(keys(kind, [it for page in pages for it in items(page)]), expected_lists[kind], f"{kind} walked to the end")
            p.done()
            return f"{len(pages)} pages: {[keys(kind, items(page)) for page in pages]}"

        return check

    async def paginated_walk_matches_unpaginated_server() -> str:
        """The same server without --page-size, in the same era, listed in one request each, item for item."""
        p = Problems()

        async def compare(ref: ClientSession) -> None:
            for kind in LIST_KINDS:
                whole = await list_page(ref, kind)
                p.expect(whole.next_cursor is None, f"{kind}: unpaginated server sent nextCursor {whole.next_cursor!r}")
                p.eq(dump_items(await list_all(s(), kind)), dump_items(LIST_KINDS[kind][1](whole)), f"{kind} items")

        transport = conn.transport("ref", unpaginated_argv)
        if modern:
            async with Client(transport, read_timeout_seconds=REQUEST_READ_TIMEOUT) as ref_client:
                p.eq(ref_client.protocol_version, MODERN_VERSION, "reference connection's protocol version")
                await compare(ref_client.session)
        else:
            async with transport as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=REQUEST_READ_TIMEOUT) as ref:
                    await ref.initialize()
                    await compare(ref)
        p.done()
        return f"reference: {shlex.join(unpaginated_argv)}"

    async def garbage_cursor_rejected() -> None:
        p = Problems()
        for kind in LIST_KINDS:
            sub = Problems()
            await expect_protocol_error(list_page(s(), kind, "garbage"), code=-32602, message="Invalid cursor", p=sub)
            p.items += [f"{kind}: {m}" for m in sub.items]
        p.done()

    async def tools_cursor_rejected_by_other_lists() -> str:
        cursor = (await list_page(s(), "tools")).next_cursor
        if cursor is None:
            n = len(expected_lists["tools"])
            raise CheckFailed(f"tools/list page 1 has no nextCursor with page size {page_size} and {n} tools")
        p = Problems()
        for kind in ("prompts", "resources", "resource_templates"):
            sub = Problems()
            await expect_protocol_error(list_page(s(), kind, cursor), code=-32602, message="Invalid cursor", p=sub)
            p.items += [f"{kind} with the tools cursor {cursor!r}: {m}" for m in sub.items]
        p.done()
        return f"cursor {cursor!r}"

    # ----------------------------------------------------------------- prompts

    async def prompts_list_recommend() -> None:
        prompts = await list_all(s(), "prompts")
        found = [pr for pr in prompts if pr.name == "recommend"]
        if not found:
            raise CheckFailed(f"prompt recommend not listed; listed {keys('prompts', prompts)}")
        p = Problems()
        args = found[0].arguments or []
        p.eq([a.name for a in args], ["genre"], "argument names")
        if args:
            p.eq(args[0].required, True, "genre.required")
        p.done()

    async def get_prompt_recommend_cyberpunk() -> None:
        result = await s().get_prompt("recommend", {"genre": "cyberpunk"})
        p = Problems()
        if p.eq(len(result.messages), 1, "number of messages"):
            m = result.messages[0]
            p.eq(m.role, "user", "role")
            if p.expect(isinstance(m.content, types.TextContent), f"content is {m.content!r}, expected text"):
                p.eq(m.content.text, "Recommend a cyberpunk book from the catalog.", "text")
        p.done()

    async def get_prompt_recommend_missing_genre() -> None:
        p = Problems()
        for label, arguments in (("no arguments", None), ("empty arguments", {})):
            sub = Problems()
            await expect_protocol_error(
                s().get_prompt("recommend", arguments), code=-32602, message="Missing required argument: genre", p=sub
            )
            p.items += [f"{label}: {m}" for m in sub.items]
        p.done()

    async def get_prompt_unknown() -> None:
        await expect_protocol_error(s().get_prompt("nope", {}), code=-32602, message="Unknown prompt: nope")

    # ----------------------------------------------------------------- completion

    def complete(ref: Any, argument: str, value: str, want: list[str]) -> Callable[[], Awaitable[None]]:
        async def check() -> None:
            result = await s().complete(ref, {"name": argument, "value": value})
            if not isinstance(result, types.CompleteResult):
                raise CheckFailed(f"expected CompleteResult, got {result!r}")
            p = Problems()
            p.eq(result.completion.values, want, f"completion values for {value!r}")
            p.done()

        return check

    genre_ref = types.PromptReference(name="recommend")
    title_ref = types.ResourceTemplateReference(uri="books://{title}")

    # ----------------------------------------------------------------- logging and progress

    async def set_level(level: str) -> Any:
        return await s().set_logging_level(level)  # type: ignore[arg-type]

    async def set_logging_level_debug() -> None:
        result = await set_level("debug")
        if not isinstance(result, types.EmptyResult):
            raise CheckFailed(f"unexpected setLevel result {result!r}")

    async def set_logging_level_invalid() -> str:
        # The SDK validates the Literal client-side, so build the request unvalidated.
        request = types.SetLevelRequest.model_construct(
            method="logging/setLevel", params=types.SetLevelRequestParams.model_construct(level="bogus")
        )
        exc = await expect_protocol_error(s().send_request(request, types.EmptyResult), code=-32602, message=None)
        return f"message {exc.message!r}" if exc is not None else ""

    async def settle() -> None:
        """Every notification sent before a round trip's answer has been dispatched; let its task run.
        (The handshake era uses ping; 2026-07-28 has none, so prompts/list.)"""
        if modern:
            await s().list_prompts()
        else:
            await s().send_ping()
        await anyio.sleep(0.2)

    def logs() -> list[tuple[Any, Any, Any]]:
        return [(m.level, m.logger, m.data) for m in conn.log_messages]

    async def call_count(n: int, level: str | None = None) -> tuple[types.CallToolResult, dict[str, Any] | None]:
        """``count`` once; in modern mode ``level`` is the per-request ``_meta`` log level (None: no
        opt-in). Returns the result and the ``tools/call`` request as it went on the wire."""
        mark = len(conn.wire)
        meta = {LOG_LEVEL_META_KEY: level} if (modern and level is not None) else None
        result = await s().call_tool("count", {"n": n}, meta=meta)  # type: ignore[arg-type]
        sent = requests_sent(conn.wire[mark:], "tools/call")
        return result, (sent[0] if sent else None)

    def count_logs(level: str | None, want: list[tuple[str, str, str]]) -> Callable[[], Awaitable[str | None]]:
        async def check() -> str | None:
            conn.log_messages.clear()
            result, request = await call_count(2, level)
            if want:
                await wait_until(lambda: bool(conn.log_messages))
            await settle()
            p = Problems()
            expect_success(result, p, first_text="counted 2", structured=None)
            p.eq(logs(), want, "log messages (level, logger, data)")
            note = None
            if modern:
                on_wire = meta_of(request or {}).get(LOG_LEVEL_META_KEY, "<absent>")
                p.eq(on_wire, level if level is not None else "<absent>", "tools/call _meta logLevel on the wire")
                note = f"_meta logLevel {on_wire}"
            p.done()
            return note

        return check

    async def count_progress_1_2_3() -> None:
        seen: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, total, message))

        result = await s().call_tool("count", {"n": 3}, progress_callback=on_progress)
        await wait_until(lambda: len(seen) >= 3)
        await settle()
        p = Problems()
        expect_success(result, p, first_text="counted 3", structured=None)
        p.eq(seen, [(1, 3, None), (2, 3, None), (3, 3, None)], "progress callbacks (progress, total, message)")
        p.done()

    async def count_silent_after_set_level_error() -> None:
        await set_level("error")
        conn.log_messages.clear()
        result = await s().call_tool("count", {"n": 1})
        await settle()
        p = Problems()
        expect_success(result, p, first_text="counted 1", structured=None)
        p.eq(logs(), [], "log messages at level error")
        await set_level("info")  # back to the default
        p.done()

    async def client_log_level_option() -> str:
        """``Client(log_level="info")``: the per-client default stamped on every modern request."""
        seen: list[types.LoggingMessageNotificationParams] = []

        async def on_log(params: types.LoggingMessageNotificationParams) -> None:
            seen.append(params)

        mark = len(conn.wire)
        p = Problems()
        async with Client(
            conn.transport("aux"), read_timeout_seconds=REQUEST_READ_TIMEOUT, log_level="info", logging_callback=on_log
        ) as client:
            p.eq(client.protocol_version, MODERN_VERSION, "protocol version")
            await list_all(client.session, "tools")  # so call_tool's output validation knows count on any page size
            result = await client.call_tool("count", {"n": 1})
            await wait_until(lambda: bool(seen))
            await client.session.list_prompts()
            await anyio.sleep(0.2)
        expect_success(result, p, first_text="counted 1", structured=None)
        p.eq([(m.level, m.logger, m.data) for m in seen], [("info", "bookshop", "counting done")], "log messages")
        calls = requests_sent(conn.wire[mark:], "tools/call")
        p.eq([meta_of(m).get(LOG_LEVEL_META_KEY, "<absent>") for m in calls], ["info"], "tools/call _meta logLevel")
        p.done()
        return "log_level stamped on the request's _meta"

    # ----------------------------------------------------------------- asking the client: reserve, blurb (every era)

    async def call(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """``tools/call`` the way an application makes it in this mode: 2026-07-28 through
        ``Client.call_tool`` (which drives MRTR through the callbacks), the handshake era
        through the session (whose callbacks answer the server's own requests)."""
        if modern:
            return await c().call_tool(name, arguments)
        return await s().call_tool(name, arguments)

    def title_tool_schema(name: str) -> Callable[[], Awaitable[None]]:
        async def check() -> None:
            t = await tool(name)
            p = Problems()
            props = t.input_schema.get("properties") or {}
            p.eq((props.get("title") or {}).get("type"), "string", "inputSchema.properties.title.type")
            p.expect("title" in (t.input_schema.get("required") or []), f"inputSchema.required lacks title: {t.input_schema!r}")
            p.eq(t.output_schema, None, "outputSchema")
            p.done()

        return check

    def asked_on_wire(
        p: Problems, lines: list[WireLine], key: str, method: str, *, state: bool
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """The wire of one ``tools/call`` that asked the client once.

        2026-07-28: an ``input_required`` answer (``inputRequests`` = {key: ...}, and a
        ``requestState`` when ``state``: reserve seals one, blurb needs none), then a retry
        with a fresh id echoing the state (if any) and carrying ``inputResponses[key]``,
        answered ``complete``; no request from the server.
        Handshake era: one ``tools/call``; after it, one request from the server
        (``method``, an id of its own); the client's answer to it; only then the call's
        one answer, with the call's id and no ``inputRequests``.

        Returns (the input request as the server sent it, with ``method`` and ``params``
        (and, handshake era, ``id``); the client's answer to it), each None when missing."""
        calls = requests_sent(lines, "tools/call")
        asks = server_requests(lines)
        if modern:
            p.eq([m["method"] for _, m in asks], [], "requests from the server (none on 2026-07-28)")
            if not p.eq(len(calls), 2, "tools/call requests on the wire"):
                return None, None
            first, retry = calls
            first_result = (answer_to(lines, first) or {}).get("result") or {}
            p.eq(first_result.get("resultType"), "input_required", "first answer's resultType")
            requests = first_result.get("inputRequests") or {}
            p.eq(list(requests), [key], "inputRequests keys")
            got_state = first_result.get("requestState")
            if state:
                p.expect(isinstance(got_state, str) and got_state != "", f"requestState {got_state!r}")
            else:
                p.eq(got_state, None, "requestState")
            p.expect(
                "requestState" not in first["params"] and "inputResponses" not in first["params"],
                f"first call already carried MRTR fields: {first['params']!r}",
            )
            p.eq(retry["params"].get("requestState"), got_state, "retry requestState (echoed)")
            p.expect(retry.get("id") != first.get("id"), "retry reused the first call's id")
            final = (answer_to(lines, retry) or {}).get("result") or {}
            p.eq(final.get("resultType"), "complete", "retry answer's resultType")
            asked = requests.get(key)
            p.eq((asked or {}).get("method"), method, f"inputRequests.{key}.method")
            return asked, (retry["params"].get("inputResponses") or {}).get(key)
        if not p.eq(len(calls), 1, "tools/call requests on the wire"):
            return None, None
        sent = calls[0]
        if not p.eq([m["method"] for _, m in asks], [method], "requests from the server"):
            return None, None
        at, ask = asks[0]
        p.expect(at > position_of(lines, sent), "the server's request came before the call was sent")
        p.expect(ask.get("id") != sent.get("id"), f"the server's request reuses the call's id {ask.get('id')!r}")
        reply = response_at(lines, "->", ask["id"])
        if not p.expect(reply is not None, f"the client never answered the server's {method} (id {ask['id']!r})"):
            return ask, None
        final = response_at(lines, "<-", sent["id"])
        if p.expect(final is not None, "the call was never answered"):
            assert final is not None
            p.expect(final[0] > reply[0], "the call was answered before the client answered the server's request")
            p.expect(
                "inputRequests" not in (final[1].get("result") or {}), f"input_required on the handshake era: {final[1]!r}"
            )
        answered = reply[1].get("result")
        return ask, answered if isinstance(answered, dict) else reply[1].get("error")

    def check_context(p: Problems, contexts: list[Any], key: str, asked: dict[str, Any] | None) -> None:
        """The callback's ``ClientRequestContext``: MRTR names the input request's key, the
        handshake era the id of the server's request."""
        if not contexts:
            return
        want = key if modern else (asked or {}).get("id", "<no request on the wire>")
        p.eq(contexts[0].request_id, want, "callback context.request_id")
        p.expect(contexts[0].session is s(), "callback context.session is not the connection's session")

    def check_elicitation(p: Problems, title: str) -> None:
        if not p.eq(len(conn.elicitations), 1, "elicitation callback calls"):
            return
        params = conn.elicitations[0]
        p.expect(isinstance(params, types.ElicitRequestFormParams), f"callback params {params!r}, expected a form")
        p.eq(getattr(params, "message", None), f"Reserve {title}?", "elicitation message")
        schema = getattr(params, "requested_schema", None) or {}
        p.eq(schema.get("type"), "object", "requested_schema.type")
        p.eq(list(schema.get("properties") or {}), ["confirm"], "requested_schema properties")
        p.eq(((schema.get("properties") or {}).get("confirm") or {}).get("type"), "boolean", "requested_schema confirm.type")
        p.eq(schema.get("required"), ["confirm"], "requested_schema.required")

    def reserve_via_callback(title: str, reply: Any, want_text: str) -> Callable[[], Awaitable[str]]:
        """The elicitation callback answers ``reply``: 2026-07-28, ``Client.call_tool`` drives
        the round trip (first call, callback, retry with the answer); handshake era, the
        server's ``elicitation/create`` goes to the callback and the call is answered after."""

        async def check() -> str:
            conn.reset_callbacks(reply)
            mark = len(conn.wire)
            result = await call("reserve", {"title": title})
            lines = conn.wire[mark:]
            p = Problems()
            expect_success(result, p, first_text=want_text, structured=None)
            if not result.is_error:
                p.eq(texts(result, p), [want_text], "content texts")
            check_elicitation(p, title)
            p.eq(len(conn.samplings), 0, "sampling callback calls")
            asked, answered = asked_on_wire(p, lines, "confirm", "elicitation/create", state=True)
            if asked is not None:
                params = asked.get("params") or {}
                p.eq(params.get("message"), f"Reserve {title}?", "message on the wire")
                p.eq(params.get("mode"), "form", "mode on the wire")
            if answered is not None:
                p.eq(answered.get("action"), reply.action, "the client's answer's action on the wire")
            check_context(p, conn.elicit_contexts, "confirm", asked)
            p.done()
            how = "2 tools/call" if modern else "elicitation/create answered, then the call"
            return f"callback answered {reply.action}; {how}"

        return check

    async def reserve_unknown_title() -> None:
        conn.reset_callbacks(types.ElicitResult(action="accept", content={"confirm": True}))
        mark = len(conn.wire)
        result = await call("reserve", {"title": "Nothing"})
        p = Problems()
        expect_tool_error(result, p, exact=f"Error executing tool reserve: {NOT_FOUND}")
        p.eq(len(conn.elicitations), 0, "elicitation callback calls")
        p.eq([m["method"] for _, m in server_requests(conn.wire[mark:])], [], "requests from the server")
        p.done()

    async def reserve_callback_error() -> str:
        """The elicitation callback answers ``ErrorData``. Handshake era: the SDK sends it as
        the JSON-RPC error answer to ``elicitation/create`` and the server fails the call with
        -32603 naming the input request. 2026-07-28: the SDK aborts the call itself."""
        conn.reset_callbacks(types.ErrorData(code=-1, message="User rejected"))
        mark = len(conn.wire)
        p = Problems()
        if modern:
            await expect_protocol_error(call("reserve", {"title": "Dune"}), code=-1, message="User rejected", p=p)
            lines = conn.wire[mark:]
            p.eq(len(requests_sent(lines, "tools/call")), 1, "tools/call requests (the SDK does not retry)")
            note = "MCPError -1 raised by the SDK; no retry"
        else:
            await expect_protocol_error(
                call("reserve", {"title": "Dune"}),
                code=-32603,
                message="the client refused input request confirm (elicitation/create): User rejected",
                p=p,
            )
            lines = conn.wire[mark:]
            asks = server_requests(lines)
            if p.eq([m["method"] for _, m in asks], ["elicitation/create"], "requests from the server"):
                reply = response_at(lines, "->", asks[0][1]["id"])
                error = (reply[1] if reply else {}).get("error")
                p.eq(error, {"code": -1, "message": "User rejected"}, "the client's error answer")
            note = "the server answered -32603"
        p.eq(len(conn.elicitations), 1, "elicitation callback calls")
        p.done()
        return note

    async def blurb_via_callback() -> str:
        conn.reset_callbacks()
        mark = len(conn.wire)
        result = await call("blurb", {"title": "Neuromancer"})
        lines = conn.wire[mark:]
        p = Problems()
        expect_success(result, p, first_text=BLURB, structured=None)
        if not result.is_error:
            p.eq(texts(result, p), [BLURB], "content texts")
        if p.eq(len(conn.samplings), 1, "sampling callback calls"):
            params = conn.samplings[0]
            p.expect(isinstance(params, types.CreateMessageRequestParams), f"callback params {params!r}")
            p.eq(getattr(params, "max_tokens", None), 100, "maxTokens")
            messages = getattr(params, "messages", None) or []
            if p.eq(len(messages), 1, "number of messages"):
                m = messages[0]
                p.eq(m.role, "user", "message role")
                if p.expect(isinstance(m.content, types.TextContent), f"message content {m.content!r}, expected one text block"):
                    p.eq(m.content.text, BLURB_PROMPT, "message text")
        p.eq(len(conn.elicitations), 0, "elicitation callback calls")
        asked, answered = asked_on_wire(p, lines, "blurb", "sampling/createMessage", state=False)
        if asked is not None:
            want = {"messages": [{"role": "user", "content": {"type": "text", "text": BLURB_PROMPT}}], "maxTokens": 100}
            p.eq(asked.get("params"), want, "sampling/createMessage params on the wire")
        if answered is not None:
            p.eq((answered.get("content") or {}).get("text"), BLURB, "the client's sampled text on the wire")
        check_context(p, conn.sample_contexts, "blurb", asked)
        p.done()
        return f"sampled {BLURB!r} came back as the tool's text"

    async def blurb_unknown_title() -> None:
        conn.reset_callbacks()
        mark = len(conn.wire)
        result = await call("blurb", {"title": "Nothing"})
        p = Problems()
        expect_tool_error(result, p, exact=f"Error executing tool blurb: {NOT_FOUND}")
        p.eq(len(conn.samplings), 0, "sampling callback calls")
        p.eq([m["method"] for _, m in server_requests(conn.wire[mark:])], [], "requests from the server")
        p.done()

    def without_capability(name: str, missing: str, declared: str) -> Callable[[], Awaitable[str]]:
        """A second client, on a server process of its own, that gives the callback for
        ``declared`` but not the one for ``missing`` (the SDK declares a capability iff its
        callback is given): calling ``name`` is -32021 naming ``missing``."""

        async def check() -> str:
            callbacks: dict[str, Any] = {
                "elicitation": {"elicitation_callback": conn.on_elicit},
                "sampling": {"sampling_callback": conn.on_sample},
            }[declared]
            conn.reset_callbacks()
            mark = len(conn.wire)
            p = Problems()

            async def refused(session_call: Awaitable[Any]) -> None:
                await expect_protocol_error(
                    session_call,
                    code=-32021,
                    message=f"Missing required client capability: {missing}",
                    data={"requiredCapabilities": {missing: {}}},
                    p=p,
                )

            if modern:
                async with Client(conn.transport("aux"), read_timeout_seconds=REQUEST_READ_TIMEOUT, **callbacks) as bare:
                    p.eq(bare.protocol_version, MODERN_VERSION, "protocol version")
                    await refused(bare.call_tool(name, {"title": "Dune"}))
            else:
                async with conn.transport("aux") as (read, write):
                    async with ClientSession(read, write, read_timeout_seconds=REQUEST_READ_TIMEOUT, **callbacks) as bare:
                        await bare.initialize()
                        await refused(bare.call_tool(name, {"title": "Dune"}))
            lines = conn.wire[mark:]
            if modern:
                caps = [meta_of(m).get(CLIENT_CAPABILITIES_META_KEY) for m in requests_sent(lines, "tools/call")]
                where = "tools/call clientCapabilities"
            else:
                caps = [(m.get("params") or {}).get("capabilities") for m in requests_sent(lines, "initialize")]
                where = "initialize capabilities"
            p.expect(len(caps) == 1 and isinstance(caps[0], dict), f"{where} {caps!r}")
            p.expect(all(missing not in (cap or {}) for cap in caps), f"{missing} declared anyway: {caps!r}")
            p.expect(all(declared in (cap or {}) for cap in caps), f"{declared} not declared: {caps!r}")
            p.eq([m["method"] for _, m in server_requests(lines)], [], "requests from the server")
            p.eq((len(conn.elicitations), len(conn.samplings)), (0, 0), "callback calls (elicitation, sampling)")
            p.done()
            return f"{where} {caps[0] if caps else None!r}"

        return check

    async def get_author_while_reserve_waits() -> str:
        """From inside the elicitation callback, before it answers, ``get_author`` on the same
        session. Handshake era: the server holds ``reserve`` waiting for the answer to its
        ``elicitation/create`` and must serve the other call meanwhile. 2026-07-28: nothing
        waits on the server between MRTR rounds; the call is simply made between them."""
        got: list[types.CallToolResult] = []

        async def meanwhile(context: Any, params: Any) -> None:
            got.append(await context.session.call_tool("get_author", {"title": "Neuromancer"}))

        conn.reset_callbacks(types.ElicitResult(action="accept", content={"confirm": True}))
        conn.during_elicit = meanwhile
        mark = len(conn.wire)
        try:
            result = await call("reserve", {"title": "Dune"})
        finally:
            conn.during_elicit = None
        lines = conn.wire[mark:]
        p = Problems()
        expect_success(result, p, first_text="Reserved Dune", structured=None)
        if p.eq(len(got), 1, "get_author results from inside the callback"):
            expect_success(got[0], p, first_text="William Gibson", structured={"result": "William Gibson"})
        calls = requests_sent(lines, "tools/call")
        outer = [m for m in calls if (m.get("params") or {}).get("name") == "reserve"]
        inner = [m for m in calls if (m.get("params") or {}).get("name") == "get_author"]
        p.eq((len(outer), len(inner)), (2 if modern else 1, 1), "tools/call requests (reserve, get_author)")
        asks = server_requests(lines)
        if not modern and len(outer) == 1 and len(inner) == 1 and len(asks) == 1:
            ask_id = asks[0][1]["id"]
            steps = [
                ("reserve sent", position_of(lines, outer[0])),
                ("elicitation/create received", asks[0][0]),
                ("get_author sent", position_of(lines, inner[0])),
                ("get_author answered", (response_at(lines, "<-", inner[0]["id"]) or (-1,))[0]),
                ("elicitation/create answered", (response_at(lines, "->", ask_id) or (-1,))[0]),
                ("reserve answered", (response_at(lines, "<-", outer[0]["id"]) or (-1,))[0]),
            ]
            positions = [at for _, at in steps]
            p.expect(
                -1 not in positions and positions == sorted(positions),
                f"wire order: expected {[what for what, _ in steps]}, got positions {steps}",
            )
        p.done()
        if modern:
            return "get_author answered between the MRTR rounds (nothing waits on the server)"
        return "get_author answered while reserve waited on the server"

    async def two_reserves_at_once() -> str:
        """Two ``reserve`` calls outstanding together: the callback holds the first answer
        until both elicitations have arrived (handshake era: both calls wait on the server at
        once), then accepts Dune and declines Neuromancer; each call gets its own answer."""
        both = anyio.Event()

        async def hold(context: Any, params: Any) -> None:
            if len(conn.elicitations) >= 2:
                both.set()
            with anyio.move_on_after(5):
                await both.wait()

        def reply(params: Any) -> types.ElicitResult:
            if getattr(params, "message", None) == "Reserve Dune?":
                return types.ElicitResult(action="accept", content={"confirm": True})
            return types.ElicitResult(action="decline")

        conn.reset_callbacks(reply)
        conn.during_elicit = hold
        mark = len(conn.wire)
        results: dict[str, types.CallToolResult] = {}

        async def one(title: str) -> None:
            results[title] = await call("reserve", {"title": title})

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(one, "Dune")
                tg.start_soon(one, "Neuromancer")
        finally:
            conn.during_elicit = None
        lines = conn.wire[mark:]
        p = Problems()
        p.expect(both.is_set(), "the two elicitations were never outstanding at once")
        p.eq(
            sorted(getattr(e, "message", "") for e in conn.elicitations),
            ["Reserve Dune?", "Reserve Neuromancer?"],
            "elicitation messages",
        )
        for title, want in (("Dune", "Reserved Dune"), ("Neuromancer", "Not reserved: Neuromancer")):
            if p.expect(title in results, f"no result for {title}"):
                sub = Problems()
                expect_success(results[title], sub, first_text=want, structured=None)
                p.items += [f"{title}: {m}" for m in sub.items]
        calls = requests_sent(lines, "tools/call")
        asks = server_requests(lines)
        if modern:
            p.eq(len(calls), 4, "tools/call requests (2 first calls, 2 retries)")
            p.eq([m["method"] for _, m in asks], [], "requests from the server")
        elif p.eq(len(calls), 2, "tools/call requests") and p.eq(
            [m["method"] for _, m in asks], ["elicitation/create"] * 2, "requests from the server"
        ):
            p.expect(asks[0][1]["id"] != asks[1][1]["id"], f"both requests from the server have id {asks[0][1]['id']!r}")
            replies = [response_at(lines, "->", m["id"]) for _, m in asks]
            p.expect(
                all(r is not None and r[0] > asks[1][0] for r in replies),
                "the client answered the first elicitation/create before the second arrived",
            )
        p.done()
        return "both calls waited on the server at once" if not modern else "two MRTR round trips interleaved"

    # ----------------------------------------------------------------- reserve by hand (MRTR, 2026-07-28 only)

    async def reserve_manual_round_trip() -> str:
        """``ClientSession.call_tool(..., allow_input_required=True)``: the caller drives MRTR itself."""
        p = Problems()
        try:
            await s().call_tool("reserve", {"title": "Dune"})
            p.add("session.call_tool without allow_input_required did not raise")
        except RuntimeError as exc:
            p.expect("InputRequiredResult" in str(exc), f"unexpected RuntimeError {exc}")
        first = await s().call_tool("reserve", {"title": "Dune"}, allow_input_required=True)
        if not isinstance(first, types.InputRequiredResult):
            raise CheckFailed(f"expected InputRequiredResult, got {describe(first)}")
        requests = first.input_requests or {}
        p.eq(list(requests), ["confirm"], "input_requests keys")
        req = requests.get("confirm")
        if p.expect(isinstance(req, types.ElicitRequest), f"input_requests['confirm'] is {req!r}"):
            p.eq(req.params.message, "Reserve Dune?", "message")
        p.expect(isinstance(first.request_state, str) and bool(first.request_state), f"request_state {first.request_state!r}")
        accept = types.ElicitResult(action="accept", content={"confirm": True})
        result = await s().call_tool(
            "reserve", {"title": "Dune"}, input_responses={"confirm": accept}, request_state=first.request_state
        )
        expect_success(result, p, first_text="Reserved Dune", structured=None)
        # A state the server did not issue for this request is refused.
        state = first.request_state or ""
        tampered = state[:-1] + ("A" if state[-1:] != "A" else "B")
        sub = Problems()
        await expect_protocol_error(
            s().call_tool("reserve", {"title": "Dune"}, input_responses={"confirm": accept}, request_state=tampered),
            code=-32602,
            message="Invalid requestState: it was altered, or issued for another request",
            p=sub,
        )
        p.items += [f"tampered requestState: {m}" for m in sub.items]
        p.done()
        return f"requestState of {len(state)} chars"

    # ----------------------------------------------------------------- the wire, era by era

    async def wire_era_consistent() -> str:
        sent = requests_sent(conn.wire, label_prefix="main")
        p = Problems()
        enveloped = [m for m in sent if PROTOCOL_VERSION_META_KEY in meta_of(m)]
        if modern:
            # Every request but the deliberate cross-era initialize carries the full envelope.
            others = [m for m in sent if m["method"] != "initialize"]
            bad = [
                m["method"]
                for m in others
                if meta_of(m).get(PROTOCOL_VERSION_META_KEY) != MODERN_VERSION
                or not isinstance(meta_of(m).get(CLIENT_CAPABILITIES_META_KEY), dict)
            ]
            p.eq(bad, [], "requests without the 2026-07-28 envelope")
            p.eq(
                sum(1 for m in sent if m["method"] == "initialize"),
                1,
                "initialize requests (only initialize_refused_on_modern_connection sends one)",
            )
            firsts = {}
            for label, m in parsed(conn.wire, "->", "main"):
                if "id" in m and "method" in m:
                    firsts.setdefault(label, m["method"])
            p.eq(sorted(set(firsts.values())), ["server/discover"], "first request of each server process")
            note = f"{len(others)} enveloped requests"
        else:
            p.eq([m["method"] for m in enveloped], [], "requests carrying the 2026-07-28 envelope")
            p.eq([m["method"] for m in sent if m["method"] == "server/discover"], [], "server/discover requests")
            p.eq(sent[0]["method"] if sent else None, "initialize", "first request")
            if sent and sent[0]["method"] == "initialize":
                p.eq(sent[0]["params"].get("protocolVersion"), HANDSHAKE_VERSION, "initialize protocolVersion")
            note = f"{len(sent)} requests, none enveloped"
        # Requests from the server, per server process: none on 2026-07-28 (it asks through
        # input_required); on the handshake era only the input requests, each answered once.
        asked = 0
        for label in sorted({label for label, _, _ in conn.wire if label.startswith("main")}):
            lines = [line for line in conn.wire if line[0] == label]
            asks = [m for _, m in server_requests(lines)]
            asked += len(asks)
            if modern:
                p.eq([m["method"] for m in asks], [], f"{label}: requests from the server")
                continue
            p.eq(sorted({m["method"] for m in asks} - ASKING_METHODS), [], f"{label}: requests from the server")
            ids = [m["id"] for m in asks]
            p.eq(sorted({json.dumps(i) for i in ids if ids.count(i) > 1}), [], f"{label}: request ids the server reused")
            answers = {json.dumps(i): 0 for i in ids}
            for _, d, m in numbered(lines):
                if d == "->" and "method" not in m and json.dumps(m.get("id")) in answers:
                    answers[json.dumps(m.get("id"))] += 1
            p.eq({i: n for i, n in answers.items() if n != 1}, {}, f"{label}: server requests not answered exactly once")
        p.done()
        return note + ("" if modern else f"; {asked} requests from the server, each answered once")

    # ----------------------------------------------------------------- the list

    count_err = "Invalid arguments for tool count: /n"
    top_err = "Invalid arguments for tool top:"
    no_log: list[tuple[str, str, str]] = []
    info_log = [("info", "bookshop", "counting done")]
    checks: list[tuple[str, Callable[[], Awaitable[str | None]]]] = [
        ("connect_default_mode", connect_default_mode) if modern else ("initialize", initialize),
        ("tools_list_names_and_order", tools_list_names),
        ("tools_list_get_author_schemas", tools_list_get_author_schemas),
        ("tools_list_top_schema", tools_list_top_schema),
        ("call_get_author_dune", get_author_ok("Dune", "Frank Herbert")),
        ("call_get_author_neuromancer", get_author_ok("Neuromancer", "William Gibson")),
        ("call_get_author_unknown_title_is_tool_error", get_author_unknown_title),
        ("call_get_author_strict_dune", get_author_strict_dune),
        ("call_get_author_strict_unknown_title_is_protocol_error", get_author_strict_unknown_title),
        ("call_top_1", top_1),
        ("call_top_2", top_n(2, ["Dune", "Neuromancer"])),
        ("call_top_0", top_n(0, [])),
        ("call_top_99_above_maximum", rejected("top", {"n": 99}, exact=f"{top_err} /n must be <= 50")),
        ("call_top_negative_below_minimum", rejected("top", {"n": -1}, exact=f"{top_err} /n must be >= 0")),
        ("call_top_string_not_coerced", rejected("top", {"n": "3"}, prefix=f"{top_err} /n")),
        ("call_top_missing_n", rejected("top", {}, prefix=top_err, contains="n")),
        (
            "call_get_author_title_not_string",
            rejected("get_author", {"title": 5}, prefix="Invalid arguments for tool get_author: /title"),
        ),
        ("call_unknown_tool_is_protocol_error", unknown_tool),
        ("resources_list_catalog", resources_list_catalog),
        ("resource_templates_list", resource_templates_list),
        ("read_books_dune", read_book("Dune", "Dune by Frank Herbert")),
        ("read_books_neuromancer", read_book("Neuromancer", "Neuromancer by William Gibson")),
        ("read_books_catalog_json", read_catalog_json),
        ("read_books_nothing_not_found", read_error("books://Nothing", NOT_FOUND)),
        ("read_unknown_scheme", read_error("nobooks://x", "Unknown resource: nobooks://x")),
        (
            "read_percent_encoded_title",
            read_error("books://Dune%20Messiah", "No book titled 'Dune Messiah' in the catalog."),
        ),
        ("ping", removed() if modern else ping),
        # prompts, completion, logging, progress (the bookshop's later additions)
        ("capabilities_prompts_completions_logging", capabilities_prompts_completions_logging),
        ("lists_items_in_order", lists_items_in_order),
        ("prompts_list_recommend", prompts_list_recommend),
        ("get_prompt_recommend_cyberpunk", get_prompt_recommend_cyberpunk),
        ("get_prompt_recommend_missing_genre", get_prompt_recommend_missing_genre),
        ("get_prompt_unknown_is_protocol_error", get_prompt_unknown),
        ("complete_genre_f", complete(genre_ref, "genre", "f", ["fantasy"])),
        ("complete_genre_empty_all_in_order", complete(genre_ref, "genre", "", GENRES)),
        ("complete_genre_CY_case_insensitive", complete(genre_ref, "genre", "CY", ["cyberpunk"])),
        ("complete_template_title_N", complete(title_ref, "title", "N", ["Neuromancer"])),
        ("set_logging_level_debug", removed() if modern else set_logging_level_debug),
        ("set_logging_level_invalid_is_protocol_error", removed() if modern else set_logging_level_invalid),
        # Handshake era: after setLevel debug. 2026-07-28: the request's own _meta logLevel.
        ("call_count_logs_info", count_logs("info", info_log)),
        ("call_count_progress_1_2_3", count_progress_1_2_3),
        ("call_count_no_log_after_set_level_error", removed() if modern else count_silent_after_set_level_error),
    ]
    if modern:
        checks += [
            ("call_count_no_log_without_log_level", count_logs(None, no_log)),
            ("call_count_logs_at_log_level_debug", count_logs("debug", info_log)),
            ("call_count_no_log_at_log_level_error", count_logs("error", no_log)),
            ("client_log_level_option_info", client_log_level_option),
        ]
    checks += [
        ("call_count_0_below_minimum", rejected("count", {"n": 0}, prefix=count_err)),
        ("call_count_11_above_maximum", rejected("count", {"n": 11}, prefix=count_err)),
        ("list_garbage_cursor_is_protocol_error", garbage_cursor_rejected),
    ]
    if page_size:
        checks += [(f"paginate_{kind}", paginate(kind)) for kind in LIST_KINDS]
        checks += [
            ("paginated_walk_matches_unpaginated_server", paginated_walk_matches_unpaginated_server),
            ("tools_cursor_rejected_by_other_lists", tools_cursor_rejected_by_other_lists),
        ]
    else:
        checks.append(("lists_have_no_next_cursor", lists_have_no_next_cursor))
    # Asking the client (reserve: elicitation, blurb: sampling), in both eras.
    accept = types.ElicitResult(action="accept", content={"confirm": True})
    accept_unconfirmed = types.ElicitResult(action="accept", content={"confirm": False})
    decline = types.ElicitResult(action="decline")
    cancel = types.ElicitResult(action="cancel")
    checks += [
        ("tools_list_reserve_schema", title_tool_schema("reserve")),
        ("tools_list_blurb_schema", title_tool_schema("blurb")),
        ("call_reserve_accept", reserve_via_callback("Dune", accept, "Reserved Dune")),
        ("call_reserve_accept_unconfirmed", reserve_via_callback("Dune", accept_unconfirmed, "Not reserved: Dune")),
        ("call_reserve_decline", reserve_via_callback("Dune", decline, "Not reserved: Dune")),
        ("call_reserve_cancel", reserve_via_callback("Neuromancer", cancel, "Not reserved: Neuromancer")),
        ("call_reserve_unknown_title_is_tool_error", reserve_unknown_title),
        ("call_reserve_callback_error", reserve_callback_error),
        ("call_reserve_without_elicitation_capability", without_capability("reserve", "elicitation", "sampling")),
        ("call_blurb_via_sampling", blurb_via_callback),
        ("call_blurb_unknown_title_is_tool_error", blurb_unknown_title),
        ("call_blurb_without_sampling_capability", without_capability("blurb", "sampling", "elicitation")),
        ("call_get_author_while_reserve_waits", get_author_while_reserve_waits),
        ("call_two_reserves_at_once", two_reserves_at_once),
    ]
    if modern:
        checks += [
            ("call_reserve_manual_round_trip", reserve_manual_round_trip),
            ("removed_ping_is_method_not_found", method_not_found("ping", lambda: s().send_ping())),
            (
                "removed_logging_set_level_is_method_not_found",
                method_not_found("logging/setLevel", lambda: set_level("info")),
            ),
            ("initialize_refused_on_modern_connection", initialize_refused),
        ]
    checks.append(("wire_era_consistent", wire_era_consistent))
    return checks


# --------------------------------------------------------------------------- main


def own_children() -> list[int]:
    """PIDs whose parent is this process (the servers the SDK spawned)."""
    me, pids = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == me:
            pids.append(int(entry))
    return pids


def start_watchdog(runner: Runner, seconds: float) -> None:
    def fire() -> None:
        print(f"FAIL watchdog: the run still had not finished after {seconds:.0f}s; killing the server", flush=True)
        for pid in own_children():
            try:
                # stdio_client starts the server in its own session, so its process group id is its pid.
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        print(f"{runner.passed} passed, {runner.failed + 1} failed", flush=True)
        os._exit(3)

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()


def print_stderr_tails(conn: Connection, lines: int = 15) -> None:
    for i, log in enumerate(conn.stderr_logs, 1):
        try:
            log.flush()
            log.seek(0)
            tail = log.read().splitlines()[-lines:]
        except (OSError, ValueError):
            continue
        if tail:
            print(f"# {conn.mode} server stderr, process {i} of {len(conn.stderr_logs)} (last {len(tail)} lines):", flush=True)
            for line in tail:
                print(f"#   {line}", flush=True)


MODE_BANNERS = {
    LEGACY: f"plain ClientSession + initialize (handshake era, {HANDSHAKE_VERSION})",
    MODERN: f'mcp.Client, default mode="auto" (server/discover; must adopt {MODERN_VERSION})',
}


async def run_all(argv: list[str], page_size: int | None) -> Runner:
    runner = Runner()
    conns = [Connection(argv, dict(os.environ), mode) for mode in (LEGACY, MODERN)]
    start_watchdog(runner, TOTAL_TIMEOUT + 30)
    with anyio.move_on_after(TOTAL_TIMEOUT + 15) as overall:
        for conn in conns:
            print(f"# mode {conn.mode}: {MODE_BANNERS[conn.mode]}", flush=True)
            try:
                for name, fn in mode_checks(conn, page_size, without_page_size(argv)):
                    await runner.run(f"{conn.mode}.{name}", fn, conn)
            finally:
                # No shielding CancelScope here: the session's task groups must be exited as the
                # innermost scope (anyio nesting rule); stdio_client shields its own bounded shutdown.
                await conn.close()
    if overall.cancelled_caught:
        runner.fail("overall", f"the run exceeded {TOTAL_TIMEOUT + 15:.0f}s and was cancelled")
    if runner.failed:
        for conn in conns:
            print_stderr_tails(conn)
    return runner


def page_size_in(argv: list[str]) -> int | None:
    """The value of the server command's ``--page-size N`` / ``--page-size=N`` (last wins), or None."""
    found: int | None = None
    for i, word in enumerate(argv[1:], 1):
        value = None
        if word == "--page-size" and i + 1 < len(argv):
            value = argv[i + 1]
        elif word.startswith("--page-size="):
            value = word.split("=", 1)[1]
        if value is not None:
            try:
                found = int(value)
            except ValueError:
                pass
    return found


def without_page_size(argv: list[str]) -> list[str]:
    """The server command with its ``--page-size`` option removed."""
    out, skip = [argv[0]], False
    for i, word in enumerate(argv[1:], 1):
        if skip:
            skip = False
        elif word == "--page-size" and i + 1 < len(argv):
            skip = True
        elif not word.startswith("--page-size="):
            out.append(word)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description="Drive the picomcp bookshop server with the official MCP Python SDK client (mcp==2.3.0), "
        "once in the handshake era and once in the SDK's default (2026-07-28) mode.",
        epilog='Server command: --server "CMD ARGS" (shell-style), or after "--", or env PICOMCP_SERVER.',
    )
    parser.add_argument("--server", help='server command line, split like a shell would (e.g. "target/release/bookshop")')
    parser.add_argument("server_argv", nargs="*", help="alternatively, the server command and its arguments after --")
    parser.add_argument(
        "--page-size",
        type=int,
        metavar="N",
        help="append --page-size N to the server command and run the pagination checks "
        "(also detected when the server command already has --page-size N)",
    )
    args = parser.parse_args()
    if args.server:
        argv = shlex.split(args.server)
    elif args.server_argv:
        argv = list(args.server_argv)
    else:
        argv = shlex.split(os.environ.get("PICOMCP_SERVER", ""))
    if not argv:
        parser.error("no server command: give --server, a command after --, or set PICOMCP_SERVER")
    if args.page_size is not None:
        if args.page_size < 0:
            parser.error("--page-size must be >= 0")
        given = page_size_in(argv)
        if given is not None and given != args.page_size:
            parser.error(f"--page-size {args.page_size} conflicts with the server command's --page-size {given}")
        if given is None:
            argv += ["--page-size", str(args.page_size)]
    page_size = page_size_in(argv) or None  # 0 means no limit: the unpaginated checks apply
    print(f"# server: {shlex.join(argv)}", flush=True)
    if page_size:
        print(f"# pagination: page size {page_size}; lists are walked page by page", flush=True)
    else:
        print("# pagination: none; every list must come back whole, without nextCursor", flush=True)
    # set_logging_level is deprecated for 2026-07-28 but is the handshake era's API (and the
    # modern checks send it on purpose to see it refused).
    warnings.filterwarnings("ignore", message="The logging capability is deprecated", category=MCPDeprecationWarning)
    runner = anyio.run(run_all, argv, page_size)
    for mode, (passed, failed, skipped) in runner.tally.items():
        print(f"# {mode}: {passed} passed, {failed} failed, {skipped} skipped", flush=True)
    if runner.skipped:
        print(f"# {runner.skipped} skipped", flush=True)
    print(f"{runner.passed} passed, {runner.failed} failed", flush=True)
    return 1 if runner.failed else 0


if __name__ == "__main__":
    sys.exit(main())
