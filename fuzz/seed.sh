#!/usr/bin/env bash
# Fill fuzz/corpus/<target>/ with seeds from the repository's test data
# (tests/data/, see its README):
#   tests/data/vectors/*.jsonl  client-to-server messages (re-serialized
#                               compactly; unparsable ones as captured)
#   tests/data/jsontestsuite/   the JSONTestSuite files
# json/schema get one file per message / suite file (plus tool arguments),
# server gets each scenario's messages as one newline-separated session,
# framer gets the sessions behind a few (chunk size, buffer size) headers,
# http gets each scenario as short sequences of HTTP requests (initialize
# first in the handshake era, one session; 2026-07-28 messages with their
# headers derived), plus a few sequences for GET, DELETE, 503, held calls
# and listen streams (format: fuzz_targets/http.rs).
# Idempotent: files are named by content hash. Generated corpora are not
# committed (fuzz/corpus is in .gitignore).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
python3 - ../tests/data <<'PY'
import hashlib, json, os, sys

root = sys.argv[1]
vectors = os.path.join(root, "vectors")
suite = os.path.join(root, "jsontestsuite")
for d in (vectors, suite):
    if not os.path.isdir(d):
        sys.exit(f"seed: no test data at {d}")
MAX = 4096  # the -max_len the targets run with

def put(target, data):
    if not data or len(data) > MAX:
        return
    d = os.path.join("corpus", target)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, hashlib.sha1(data).hexdigest())
    if not os.path.exists(path):
        with open(path, "wb") as f:
            f.write(data)

def compact(raw_line):
    """The message of one vector line: compact JSON, or the raw text when
    the capture could not parse it (then `msg` is a string)."""
    rec = json.loads(raw_line)
    if rec.get("dir") != "c2s":
        return None
    msg = rec["msg"]
    if isinstance(msg, str):
        return msg.encode()
    try:
        return json.dumps(msg, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
    except ValueError:
        return None

def scenarios():
    """Each vector file's client-to-server messages, in order."""
    for name in sorted(os.listdir(vectors)):
        if not name.endswith(".jsonl"):
            continue
        msgs = []
        with open(os.path.join(vectors, name), "rb") as f:
            for raw in f:
                if raw.strip():
                    m = compact(raw)
                    if m is not None:
                        msgs.append(m)
        yield msgs

sessions = []
for scenario in scenarios():
    # One message per line: none with a raw newline in it.
    msgs = [m for m in scenario if b"\n" not in m]
    for m in msgs:
        put("json", m)
        put("schema", m)
        try:
            args = json.loads(m).get("params", {}).get("arguments")
        except (ValueError, AttributeError):
            args = None
        if isinstance(args, dict):
            put("schema", json.dumps(args, separators=(",", ":"), ensure_ascii=False).encode())
    # Sessions, split to stay under MAX.
    chunk = b""
    for m in msgs:
        if chunk and len(chunk) + len(m) + 1 > MAX:
            sessions.append(chunk)
            chunk = b""
        chunk += m + b"\n"
    if chunk:
        sessions.append(chunk)

for s in sessions:
    put("server", s)
    put("server", s.replace(b"\n", b"\r\n")[:MAX])
    # (chunk, buffer) headers: 1-byte reads into 8 bytes, feed vs
    # spare/commit, 40/64/512/4096-byte buffers.
    for hdr in (b"\x00\x00", b"\x01\x20", b"\x0e\x38", b"\x51\x90", b"\xc7\xa0", b"\xff\xff"):
        put("framer", (hdr + s)[:MAX])

for name in sorted(os.listdir(suite)):
    if name.endswith(".json"):
        with open(os.path.join(suite, name), "rb") as f:
            data = f.read()
        put("json", data)
        put("schema", data)
        put("server", data + b"\n")

# http: a configuration byte (bits 0-1 entry point: 0 handle, 2
# handle_waiting, 3 handle_streams; bits 2-3 output buffer), then requests
# separated by \xfe\xfe, each a flags byte (bits 0-1 method: 0 POST, 1 GET,
# 2 DELETE; STD adds Host/Accept/Content-Type, SID the last session id,
# MODERN the 2026-07-28 headers for the body), a header-spec byte (count in
# the low nibble) with its specs, and the body.
SEP = b"\xfe\xfe"
POST, GET, DELETE, OTHER = 0, 1, 2, 3
STD, SID, MODERN = 0x04, 0x08, 0x10
INIT = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"fuzz","version":"1"}}}'
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
ENV = b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'

def http(configs, reqs):
    """reqs: (flags, header specs, body) per request."""
    seq = SEP.join(bytes([f, len(specs) // 2]) + specs + b for f, specs, b in reqs)
    for c in configs:
        put("http", bytes([c]) + seq)

def is_initialize(m):
    try:
        return json.loads(m).get("method") == "initialize"
    except (ValueError, AttributeError):
        return False

for msgs in scenarios():
    modern = [m for m in msgs if b"io.modelcontextprotocol/protocolVersion" in m]
    legacy = [m for m in msgs if m not in modern]
    for i in range(0, len(modern), 4):
        http((0x00, 0x03, 0x0c), [(POST | STD | MODERN, b"", m) for m in modern[i:i + 4]])
    if legacy:
        init = legacy[0] if is_initialize(legacy[0]) else INIT
        rest = legacy[1:] if is_initialize(legacy[0]) else legacy
        for i in range(0, max(len(rest), 1), 3):
            reqs = [(POST | STD, b"", init)]
            reqs += [(POST | STD | SID, b"", m) for m in rest[i:i + 3]]
            http((0x00, 0x02, 0x03, 0x0c), reqs)

call = lambda i, tool, args: b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s}}' % (i, tool, args)
ping = b'{"jsonrpc":"2.0","id":7,"method":"ping"}'
# A session's GET stream after a subscription and a sale.
http((0x03,), [
    (POST | STD, b"", INIT),
    (POST | STD | SID, b"", b'{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"books://stock"}}'),
    (GET | STD | SID, b"", b""),
    (POST | STD | SID, b"", call(3, b"buy", b'{"title":"Dune"}')),
])
# DELETE, then the session is gone; other methods.
http((0x00, 0x03), [
    (POST | STD, b"", INIT),
    (DELETE | STD | SID, b"", b""),
    (POST | STD | SID, b"", ping),
    (OTHER | STD, b"", b""),
])
# A full session table: 503.
http((0x00, 0x10), [(POST | STD, b"", INIT)] * 3 + [(POST | STD | SID, b"", ping)])
# A held call (elicitation), answered through @RQ@; or left to expire.
reserve = call(5, b"reserve", b'{"title":"Dune"}')
answer = b'{"jsonrpc":"2.0","id":@RQ@,"result":{"action":"accept","content":{"confirm":true}}}'
http((0x02, 0x03), [
    (POST | STD, b"", INIT),
    (POST | STD | SID, b"", INITIALIZED),
    (POST | STD | SID, b"", reserve),
    (POST | STD | SID, b"", answer),
])
http((0x02,), [
    (POST | STD, b"", INIT),
    (POST | STD | SID, b"", reserve),
    (POST | STD | SID | 0xc0, b"", ping),  # clock +10
    (POST | STD | SID, b"", ping),
])
# Expire waiting calls before the last request (spec byte 0x40).
put("http", bytes([0x02]) + SEP.join([
    bytes([POST | STD, 0]) + INIT,
    bytes([POST | STD | SID, 0]) + reserve,
    bytes([POST | STD | SID | 0xc0, 0x40]) + ping,
]))
# A 2026-07-28 listen stream, a sale it hears of, and its cancellation.
http((0x03,), [
    (POST | STD | MODERN, b"", b'{"jsonrpc":"2.0","id":"l1","method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["books://stock"],"toolsListChanged":true},%s}}' % ENV),
    (POST | STD | MODERN, b"", b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"buy","arguments":{"title":"Dune"},%s}}' % ENV),
    (POST | STD | MODERN, b"", b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"l1",%s}}' % ENV),
])
# Listens until the stream table is full; a second GET stream (409).
listen = lambda i: (POST | STD | MODERN, b"", b'{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},%s}}' % (i, ENV))
http((0x03,), [listen(1), listen(2), listen(3), listen(4)])
http((0x03,), [
    (POST | STD, b"", INIT),
    (GET | STD | SID, b"", b""),
    (GET | STD | SID, b"", b""),
    (DELETE | STD | SID, b"", b""),
])
# Header specs: an evil Origin, a second Host, a 2026-07-28 header on a
# handshake initialize, a mismatched Mcp-Name, a padded session id.
modern_call = b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"},%s}}' % ENV
http((0x00,), [
    (POST | STD, b"\x01\x03", INIT),
    (POST | STD, b"\x00\x06", INIT),
    (POST | STD, b"\x04\x01", INIT),
    (POST | STD, b"\x06\x01", modern_call),
])
http((0x00,), [
    (POST | STD, b"", INIT),
    (POST | STD, b"\x07\x40", ping),
    (POST | STD, b"\x07\x80", ping),
    (POST | STD | 0x20, b"\x07\xa0", ping),
])
# A batch on a 2025-03-26 session.
http((0x00,), [
    (POST | STD, b"", INIT.replace(b"2025-11-25", b"2025-03-26")),
    (POST | STD | SID, b"", b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"b","method":"tools/list"}]'),
])

for t in ("framer", "json", "schema", "server", "http"):
    d = os.path.join("corpus", t)
    n = len(os.listdir(d)) if os.path.isdir(d) else 0
    print(f"seed: corpus/{t}: {n} files")
PY
