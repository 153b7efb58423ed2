"""Hostile HTTP clients against the hyper adapter (examples/http/serve.rs), over
raw loopback sockets: what issue 18 says must not hold the server open.

Checks (each against a running http_bookshop started by scripts/hostile_http.sh
with --header-timeout-s 1 --body-timeout-s 1 --idle-timeout-s 2
--session-idle-s 2 --keep-alive-s 1 --max-connections 8 --max-body 4096
--subject-header X-Test-Subject):

* declared-413: ``Content-Length: 100000000`` is answered 413 at once, before a
  byte of the body is sent;
* slow-headers: a request whose headers never finish is closed after the header
  timeout;
* silent-connect: a new connection that sends nothing is closed after the
  header timeout (its first request's headers are owed from the start);
* idle keep-alive: a connection that sends nothing after its answer is closed
  after the idle timeout, not the (shorter) header timeout;
* listening session (with --session-idle-s 2 --keep-alive-s 1): a session
  whose GET stream is open outlives the idle time and its stream carries
  SSE keep-alive comments, while a session without one expires;
* subject: 2026-07-28 request state sealed for the subject in
  ``X-Test-Subject`` is refused from another subject and from none, and taken
  from its own;
* slow-body: a body that stops arriving is answered 408 after the body timeout;
* connection-cap: with 8 idle connections open, a 9th is not served until one of
  them closes, and is served then;
* every answer still correct afterwards (a ping).

``--emfile URL`` (a server started under a low descriptor limit): open many
idle sockets so accept fails with EMFILE, check the server does not spin
(its CPU time over 2 s) and serves a request once the sockets are closed.

``--shutdown URL --pid PID`` (a server started with --shutdown-s 5
--delay-ms 800): SIGTERM while a session's GET stream is open, a
connection idles and a call is in flight; the stream ends, the idle
connection is closed, the call is answered in full and its keep-alive
connection closed, new clients are refused (scripts/hostile_http.sh then
checks that the process exited 0, within the deadline).

Usage: hostile_http.py URL [--pid PID] [--emfile | --shutdown]
"""

from __future__ import annotations

import json
import socket
import sys
import time
from urllib.parse import urlsplit

failures: list[str] = []


def check(cond: bool, what: str) -> None:
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


# A request every era answers 200: 2026-07-28's server/discover.
PING = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {
    "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()


def request(host: str, port: int, body: bytes, *, content_length: int | None = None) -> bytes:
    n = len(body) if content_length is None else content_length
    return (
        f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n"
        "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
        f"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\nContent-Length: {n}\r\n\r\n"
    ).encode() + body


def call_reserve(host: str, port: int, subject: str | None, retry: dict | None = None) -> dict:
    """A 2026-07-28 ``tools/call reserve`` as ``subject`` (X-Test-Subject), its JSON answer."""
    import http.client
    params = {"name": "reserve", "arguments": {"title": "Dune"}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}}
    params.update(retry or {})
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    headers = {"Host": f"{host}:{port}", "Accept": "application/json, text/event-stream",
               "Content-Type": "application/json", "MCP-Protocol-Version": "2026-07-28",
               "Mcp-Method": "tools/call", "Mcp-Name": "reserve"}
    if subject is not None:
        headers["X-Test-Subject"] = subject
    c = http.client.HTTPConnection(host, port, timeout=10)
    try:
        c.request("POST", "/mcp", body=body, headers=headers)
        return json.loads(c.getresponse().read())
    finally:
        c.close()


def subject_checks(host: str, port: int) -> None:
    first = call_reserve(host, port, "alice")
    state = first.get("result", {}).get("requestState")
    check(isinstance(state, str), f"subject: alice is asked to confirm ({str(first)[:120]})")
    if not isinstance(state, str):
        return
    retry = {"requestState": state, "inputResponses": {
        "confirm": {"action": "accept", "content": {"confirm": True}}}}
    for who in ("bob", None):
        v = call_reserve(host, port, who, retry)
        check(v.get("error", {}).get("code") == -32602,
              f"subject: alice's state from {who or 'no subject'} is refused ({str(v)[:120]})")
    v = call_reserve(host, port, "alice", retry)
    text = v.get("result", {}).get("content", [{}])[0].get("text")
    check(text == "Reserved Dune", f"subject: alice's state from alice is taken ({str(v)[:120]})")


def post_session(host: str, port: int, body: dict, session: str | None) -> tuple[int, dict, str | None]:
    """A handshake-era POST; its status, JSON answer (if any) and Mcp-Session-Id."""
    import http.client
    headers = {"Host": f"{host}:{port}", "Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
    if session:
        headers["Mcp-Session-Id"] = session
    c = http.client.HTTPConnection(host, port, timeout=10)
    try:
        c.request("POST", "/mcp", body=json.dumps(body), headers=headers)
        r = c.getresponse()
        raw = r.read()
        text = raw.decode(errors="replace")
        if text.startswith("data: ") or "\ndata: " in text:
            text = next(line[6:] for line in text.splitlines() if line.startswith("data: "))
        return r.status, (json.loads(text) if text.strip() else {}), r.getheader("Mcp-Session-Id")
    finally:
        c.close()


def open_session(host: str, port: int) -> str:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}}}
    status, _, sid = post_session(host, port, init, None)
    assert status == 200 and sid, f"initialize: {status}"
    post_session(host, port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    return sid


def listening_session_checks(host: str, port: int) -> None:
    """With --session-idle-s 2 --keep-alive-s 1: a session whose GET stream is
    open stays alive past the idle time, and its stream carries keep-alive
    comments; one without a stream expires."""
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    quiet = open_session(host, port)
    listening = open_session(host, port)
    stream = connect(host, port)
    stream.sendall(
        f"GET /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n"
        f"Mcp-Session-Id: {listening}\r\n\r\n".encode())
    stream.settimeout(0.5)
    seen = b""
    deadline = time.monotonic() + 3.5
    while time.monotonic() < deadline:
        try:
            chunk = stream.recv(65536)
        except socket.timeout:
            continue
        if not chunk:
            break
        seen += chunk
    check(seen.startswith(b"HTTP/1.1 200") and seen.count(b": keep-alive") >= 2,
          f"listening session: its GET stream carries keep-alive comments ({seen.count(b': keep-alive')} in 3.5 s)")
    status, v, _ = post_session(host, port, ping, listening)
    check(status == 200 and v.get("result") == {}, f"listening session: alive after 3.5 s with its stream open (status {status})")
    status, _, _ = post_session(host, port, ping, quiet)
    check(status == 404, f"quiet session: expired after 3.5 s idle (status {status})")
    stream.close()


def connect(host: str, port: int) -> socket.socket:
    s = socket.create_connection((host, port), timeout=10)
    return s


def read_status(s: socket.socket, timeout: float) -> tuple[int | None, float]:
    """The status of the first response on `s` (None: closed without one), and how long it took."""
    s.settimeout(timeout)
    start = time.monotonic()
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    took = time.monotonic() - start
    if not data.startswith(b"HTTP/1.1 "):
        return None, took
    return int(data.split(b" ")[1]), took


def ping_ok(host: str, port: int) -> bool:
    with connect(host, port) as s:
        s.sendall(request(host, port, PING))
        status, _ = read_status(s, 10)
        return status == 200


def read_to_end(s: socket.socket, timeout: float) -> tuple[bytes, bool]:
    """What `s` carries until the peer closes it (or `timeout` passes), and
    whether it closed (an EOF or a reset)."""
    s.settimeout(0.2)
    data = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            continue
        except ConnectionResetError:
            return data, True
        if not chunk:
            return data, True
        data += chunk
    return data, False


def shutdown_checks(host: str, port: int, pid: int) -> None:
    """SIGTERM to a server started with --shutdown-s 5 --delay-ms 800."""
    import os
    import signal
    sid = open_session(host, port)
    stream = connect(host, port)
    stream.sendall(
        f"GET /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n"
        f"Mcp-Session-Id: {sid}\r\n\r\n".encode())
    status, _ = read_status(stream, 5)
    check(status == 200, f"shutdown: a session's GET stream is open (status {status})")
    idle = connect(host, port)
    call = connect(host, port)
    body = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "get_author", "arguments": {"title": "Dune"}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
    # Keep-alive: only the shutdown closes this connection after its answer.
    call.sendall((
        f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n"
        "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: get_author\r\n"
        f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
    time.sleep(0.3)  # the call awaits its 800 ms
    os.kill(pid, signal.SIGTERM)
    signalled = time.monotonic()
    rest, ended = read_to_end(stream, 2)
    check(ended, f"shutdown: the GET stream ends ({time.monotonic() - signalled:.2f} s after the signal)")
    _, closed = read_to_end(idle, 2)
    check(closed, "shutdown: an idle keep-alive connection is closed")
    answer, closed = read_to_end(call, 5)
    check(answer.startswith(b"HTTP/1.1 200") and b"Frank Herbert" in answer and closed,
          f"shutdown: the call in flight is answered in full, then its connection closed "
          f"({time.monotonic() - signalled:.2f} s after the signal: {answer[-80:]!r})")
    try:
        socket.create_connection((host, port), timeout=2).close()
        refused = False
    except OSError:
        refused = True
    check(refused, "shutdown: a new client is refused")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0


def main(argv: list[str]) -> None:
    url = urlsplit(argv[0])
    host, port = url.hostname or "127.0.0.1", url.port or 80
    pid = int(argv[argv.index("--pid") + 1]) if "--pid" in argv else None

    if "--shutdown" in argv:
        assert pid is not None, "--shutdown needs --pid"
        shutdown_checks(host, port, pid)
        return
    if "--emfile" in argv:
        held: list[socket.socket] = []
        for _ in range(200):
            try:
                held.append(connect(host, port))
            except OSError:
                break
        time.sleep(0.5)
        if pid is not None:
            before = cpu_seconds(pid)
            time.sleep(2.0)
            spent = cpu_seconds(pid) - before
            check(spent < 0.5, f"emfile: the server does not spin while out of descriptors ({spent:.2f} s CPU in 2 s)")
        for s in held:
            s.close()
        time.sleep(0.5)
        deadline = time.monotonic() + 5
        served = False
        while not served and time.monotonic() < deadline:
            try:
                served = ping_ok(host, port)
            except OSError:
                time.sleep(0.2)
        check(served, f"emfile: served again once the {len(held)} idle sockets are closed")
        return

    # A declared body over the cap: 413 before any body byte is sent.
    with connect(host, port) as s:
        s.sendall(request(host, port, b"", content_length=100_000_000))
        status, took = read_status(s, 5)
        check(status == 413 and took < 1.0, f"declared-413: Content-Length 100 MB answered {status} in {took:.2f} s")

    # Headers that never finish: closed after the header timeout (1 s).
    with connect(host, port) as s:
        s.sendall(f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: applica".encode())
        status, took = read_status(s, 10)
        check(status in (None, 408) and 0.5 < took < 5, f"slow-headers: closed after {took:.2f} s (status {status})")

    # A new connection that sends nothing: closed after the header timeout.
    with connect(host, port) as s:
        status, took = read_status(s, 10)
        check(status in (None, 408) and 0.5 < took < 1.9, f"silent-connect: closed after {took:.2f} s (status {status})")

    subject_checks(host, port)
    listening_session_checks(host, port)

    # An idle keep-alive connection: closed after the idle timeout (2 s),
    # not the header timeout (1 s).
    with connect(host, port) as s:
        s.sendall(request(host, port, PING))
        read_status(s, 5)
        s.settimeout(0.3)
        try:
            s.recv(65536)
        except socket.timeout:
            pass
        start = time.monotonic()
        s.settimeout(10)
        try:
            closed = s.recv(1) == b""
        except (socket.timeout, ConnectionResetError):
            closed = False
        took = time.monotonic() - start
        check(closed and 1.4 < took < 5, f"idle keep-alive: closed after {took:.2f} s idle")

    # A body that stops: 408 after the body timeout (1 s).
    with connect(host, port) as s:
        s.sendall(request(host, port, PING[:10], content_length=len(PING)))
        status, took = read_status(s, 10)
        check(status == 408 and 0.5 < took < 5, f"slow-body: answered {status} after {took:.2f} s")

    # The connection cap (8): 8 idle connections, a 9th waits until one closes.
    idle = [connect(host, port) for _ in range(8)]
    for s in idle:  # each served once, then idle on keep-alive
        s.sendall(request(host, port, PING))
        read_status(s, 5)
    ninth = connect(host, port)
    ninth.sendall(request(host, port, PING))
    status, took = read_status(ninth, 0.7)
    check(status is None, f"connection-cap: a 9th connection is not served while 8 are open (status {status})")
    idle[0].close()
    status, took = read_status(ninth, 5)
    check(status == 200, f"connection-cap: the 9th is served once one closes (status {status}, {took:.2f} s)")
    ninth.close()
    for s in idle[1:]:
        s.close()
    time.sleep(0.2)
    check(ping_ok(host, port), "afterwards: a request is answered")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1:])
    print(f"hostile http: {len(failures)} failed", flush=True)
    sys.exit(1 if failures else 0)
