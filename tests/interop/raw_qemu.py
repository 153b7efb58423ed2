#!/usr/bin/env python3
"""Raw-line test of the bookshop firmware under QEMU (standard library only).

Starts QEMU with the firmware, writes JSON-RPC lines to its UART (QEMU's
stdin) and checks the exact lines that come back (QEMU's stdout)::

    python3 tests/interop/raw_qemu.py --elf target/firmware/thumbv7m-none-eabi/release/bookshop-firmware
    python3 tests/interop/raw_qemu.py --elf ELF --host target/release/bookshop --stack-out stack.txt
    python3 tests/interop/raw_qemu.py -- qemu-system-arm -machine lm3s6965evb ... -kernel ELF

Checks (lockstep: one line, then its answers):

* a line over the 2 KiB input buffer is answered ``-32600 message too large``
  and the next ping is served; a message of exactly 2048 bytes is served, one
  of 2049 bytes is not, whether it ends in ``\\n`` or ``\\r\\n`` (the
  terminator is not counted);
* malformed JSON is ``-32700`` and the next ping is served;
* after ``initialize`` at 2025-11-25, a batch is ``-32600`` and the next
  request is served;
* the whole request mix of ``tests/no_alloc.rs`` (``SESSION``), written in one
  go (pipelined), is answered byte for byte like the host build of the
  bookshop run with the same 2 KiB buffers (``--host``; skipped without it);
* QEMU's stderr never carries protocol bytes, and stdout carries nothing but
  the expected lines (no defmt frames, no semihosting text, no panic).

The firmware reports its stack high-water mark on semihosting stderr
(``picomcp-fw: stack high-water N bytes``, each time it grows, measured when
the UART runs dry); the largest value is printed at the end and written to
``--stack-out``. ``--expect-defmt`` additionally requires binary defmt frames
on stderr (the ``defmt`` build logs the oversized and malformed lines there).

Prints ``ok NAME`` / ``FAIL NAME: DETAIL`` / ``skip NAME: REASON`` per check,
then ``N passed, M failed``; exits 1 when a check failed.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

QEMU = [
    "qemu-system-arm", "-cpu", "cortex-m3", "-machine", "lm3s6965evb",
    "-display", "none", "-monitor", "none", "-serial", "stdio",
    "-semihosting-config", "enable=on,target=native",
]
LIMIT = 2048  # the firmware's input buffer: the largest message, terminator not counted
OUTPUT = 2048  # the firmware's output buffer
TIMEOUT = 10.0  # seconds to wait for one answer line
REPO = Path(__file__).resolve().parents[2]

TOO_LARGE = '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"message too large: limit 2048 bytes"}}'
PARSE_ERROR = '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"unexpected byte at offset 1"}}'
PARSE_ERROR_EOF = '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"unexpected end of input"}}'
NO_BATCHES = (
    '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,'
    '"message":"batches are not supported by protocol version 2025-11-25"}}'
)
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": "init",
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    },
    separators=(",", ":"),
)
INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}'
GET_AUTHOR = '{"jsonrpc":"2.0","id":"dune","method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}'
GET_AUTHOR_ANSWER = (
    '{"jsonrpc":"2.0","id":"dune","result":{"content":[{"type":"text","text":"Frank Herbert"}],'
    '"structuredContent":{"result":"Frank Herbert"},"isError":false}}'
)
STACK_LINE = re.compile(rb"picomcp-fw: stack high-water (\d+) bytes")


def ping(i: int | str) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": i, "method": "ping"}, separators=(",", ":"))


def pong(i: int | str) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": i, "result": {}}, separators=(",", ":"))


def padded_ping(i: int, length: int) -> str:
    """A ping of exactly ``length`` bytes (without the newline)."""
    head = f'{{"jsonrpc":"2.0","id":{i},"method":"ping","params":{{"pad":"'
    tail = '"}}'
    return head + "x" * (length - len(head) - len(tail)) + tail


def no_alloc_session() -> list[str]:
    """The ``SESSION`` request lines of tests/no_alloc.rs (as tests/async_transport.rs reads them)."""
    source = (REPO / "tests" / "no_alloc.rs").read_text(encoding="utf-8")
    head = "const SESSION: &[&str] = &[\n"
    body = source[source.index(head) + len(head) :]
    body = body[: body.index("\n];")]
    lines = []
    for raw in body.splitlines():
        raw = raw.strip()
        if raw.startswith('r#"') and raw.endswith('"#,'):
            lines.append(raw[3:-3])
        elif raw.startswith('"') and raw.endswith('",') and "\\" not in raw:
            lines.append(raw[1:-2])
        else:
            raise ValueError(f"cannot read request line {raw!r} of tests/no_alloc.rs")
    return lines


class Firmware:
    """QEMU running the firmware; stdout lines arrive on a queue, stderr is collected."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr = bytearray()
        self.extra: list[bytes] = []  # stdout lines nobody expected
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        while chunk := self.proc.stderr.read1(4096):
            self.stderr += chunk

    def send(self, *lines: str | bytes) -> None:
        assert self.proc.stdin is not None
        data = b"".join((line.encode() if isinstance(line, str) else line) + b"\n" for line in lines)
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def recv(self, timeout: float = TIMEOUT) -> str:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no answer within {timeout:.0f}s") from None
        if line is None:
            raise AssertionError(f"QEMU closed its stdout (exit status {self.proc.poll()})")
        return line.decode("utf-8", errors="replace").rstrip("\n")

    def quiet(self, seconds: float = 0.3) -> None:
        """Collect any unexpected stdout line that arrives within ``seconds``."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                return
            if line is None:
                return
            self.extra.append(line)

    def stop(self) -> int | None:
        """Let the firmware go idle (it reports its stack then), then end QEMU."""
        self.quiet(0.5)
        status = self.proc.poll()
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        if status is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        time.sleep(0.1)  # the stderr thread drains the pipe
        return status


class Runner:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, name: str, fn) -> None:
        try:
            note = fn()
        except AssertionError as exc:
            self.failed += 1
            print(f"FAIL {name}: {exc}", flush=True)
        except Skip as exc:
            print(f"skip {name}: {exc}", flush=True)
        else:
            self.passed += 1
            print(f"ok  {name}" + (f" ({note})" if note else ""), flush=True)


class Skip(Exception):
    pass


def expect(fw: Firmware, *want: str) -> None:
    for i, w in enumerate(want):
        got = fw.recv()
        if got != w:
            raise AssertionError(f"answer {i + 1}: expected {w[:200]!r}, got {got[:200]!r}")


def host_answers(host: list[str], data: bytes) -> list[str]:
    proc = subprocess.run(
        host + ["--max-message", str(LIMIT), "--max-response", str(OUTPUT)],
        input=data,
        capture_output=True,
        timeout=60,
        check=True,
    )
    return proc.stdout.decode("utf-8").splitlines()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elf", help="the firmware ELF (QEMU lm3s6965evb command line is built around it)")
    parser.add_argument("--host", help="host bookshop binary to compare the request mix against (run with 2 KiB buffers)")
    parser.add_argument("--stack-out", help="write the peak stack use in bytes to this file")
    parser.add_argument("--expect-defmt", action="store_true", help="require defmt frames on QEMU's stderr")
    parser.add_argument("command", nargs="*", help="alternatively, the whole QEMU command after --")
    args = parser.parse_args()
    if args.command:
        argv = list(args.command)
    elif args.elf:
        argv = QEMU + ["-kernel", args.elf]
    else:
        parser.error("give --elf ELF or the QEMU command after --")
    print(f"# firmware: {' '.join(argv)}", flush=True)

    runner = Runner()
    # Two boots: the raw lines, then the request mix on a fresh connection
    # (it starts uninitialized, as the host run does).
    boots: list[tuple[Firmware, int | None]] = []
    for phase in (raw_checks, mix_check):
        fw = Firmware(argv)
        try:
            phase(runner, fw, args)
        finally:
            boots.append((fw, fw.stop()))

    def clean_stdout() -> str:
        for n, (fw, status) in enumerate(boots, 1):
            if fw.extra:
                raise AssertionError(f"boot {n}: {len(fw.extra)} unexpected stdout line(s), first {fw.extra[0][:200]!r}")
            if status is not None:
                raise AssertionError(f"boot {n}: QEMU exited by itself with status {status} (panic?); stderr {bytes(fw.stderr[-300:])!r}")
        return f"{len(boots)} boots"

    def clean_stderr() -> str:
        for n, (fw, _) in enumerate(boots, 1):
            err = bytes(fw.stderr)
            if b'"jsonrpc"' in err:
                raise AssertionError(f"boot {n}: protocol bytes on QEMU's stderr")
            if b"panicked" in err:
                raise AssertionError(f"boot {n}: the firmware panicked: {err[-300:]!r}")
        return f"{sum(len(fw.stderr) for fw, _ in boots)} bytes"

    def defmt_frames() -> str:
        total = 0
        for n, (fw, _) in enumerate(boots, 1):
            # What is neither QEMU's own text nor the stack report: defmt frames.
            rest = STACK_LINE.sub(b"", bytes(fw.stderr))
            rest = re.sub(rb"Timer with period zero, disabling\n|qemu-system-arm: [^\n]*\n|\n", b"", rest)
            binary = sum(1 for b in rest if b < 32 or b > 126)
            if args.expect_defmt and binary == 0:
                raise AssertionError(f"boot {n}: no defmt frames on stderr (rest: {rest[:200]!r})")
            if not args.expect_defmt and rest:
                raise AssertionError(f"boot {n}: unexpected stderr output {rest[:200]!r}")
            total += len(rest)
        return f"{total} bytes of defmt frames" if args.expect_defmt else "only QEMU's notice and the stack report"

    runner.check("stdout_carries_only_answers", clean_stdout)
    runner.check("stderr_carries_no_protocol_bytes", clean_stderr)
    runner.check("defmt_frames_on_stderr_only" if args.expect_defmt else "no_defmt_or_other_output", defmt_frames)

    peaks = [int(m) for fw, _ in boots for m in STACK_LINE.findall(bytes(fw.stderr))]

    def stack_reported() -> str:
        if not peaks:
            raise AssertionError("no 'picomcp-fw: stack high-water N bytes' line on stderr")
        return f"peak {max(peaks)} bytes"

    runner.check("stack_high_water_reported", stack_reported)
    if peaks and args.stack_out:
        Path(args.stack_out).write_text(f"{max(peaks)}\n", encoding="utf-8")
    print(f"{runner.passed} passed, {runner.failed} failed", flush=True)
    return 1 if runner.failed else 0


def raw_checks(runner: Runner, fw: Firmware, args: argparse.Namespace) -> None:
    def oversized_then_ping() -> None:
        fw.send(padded_ping(1, 3000), ping(2))
        expect(fw, TOO_LARGE, pong(2))

    def limit_boundary() -> str:
        fw.send(padded_ping(3, LIMIT), padded_ping(4, LIMIT + 1), ping(5))
        expect(fw, pong(3), TOO_LARGE, pong(5))
        # The same with \r\n endings (`send` adds the \n).
        fw.send(padded_ping(9, LIMIT) + "\r", padded_ping(10, LIMIT + 1) + "\r", ping(11) + "\r")
        expect(fw, pong(9), TOO_LARGE, pong(11))
        return f"{LIMIT}-byte message served, {LIMIT + 1}-byte message too large (\\n and \\r\\n)"

    def malformed_then_ping() -> None:
        fw.send("{not json", ping(6), '{"jsonrpc":"2.0","id":7,"method":"ping"', ping(8))
        expect(fw, PARSE_ERROR, pong(6), PARSE_ERROR_EOF, pong(8))

    def batch_after_initialize() -> None:
        fw.send(INITIALIZE)
        init = json.loads(fw.recv())
        if init.get("id") != "init" or init.get("result", {}).get("protocolVersion") != "2025-11-25":
            raise AssertionError(f"initialize: unexpected answer {init!r}")
        fw.send(INITIALIZED, '[{"jsonrpc":"2.0","id":1,"method":"ping"}]', GET_AUTHOR)
        expect(fw, NO_BATCHES, GET_AUTHOR_ANSWER)

    runner.check("oversized_line_then_ping", oversized_then_ping)
    runner.check("line_limit_boundary", limit_boundary)
    runner.check("malformed_json_then_ping", malformed_then_ping)
    runner.check("batch_after_initialize_2025_11_25", batch_after_initialize)
    fw.quiet()


def mix_check(runner: Runner, fw: Firmware, args: argparse.Namespace) -> None:
    def request_mix_like_host() -> str:
        if not args.host:
            raise Skip("no --host binary given")
        data = b"".join(line.encode() + b"\n" for line in no_alloc_session())
        want = host_answers([args.host], data)
        fw.send(data.rstrip(b"\n"))  # pipelined: the whole mix in one write
        got = [fw.recv() for _ in want]
        for i, (g, w) in enumerate(zip(got, want)):
            if g != w:
                raise AssertionError(f"answer {i + 1}: firmware {g[:200]!r} != host {w[:200]!r}")
        return f"{len(want)} answer lines, {sum(len(w) + 1 for w in want)} bytes"

    runner.check("request_mix_byte_for_byte_like_host", request_mix_like_host)
    fw.quiet()


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
