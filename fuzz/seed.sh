#!/usr/bin/env bash
# Fill fuzz/corpus/<target>/ with seeds from the repository's test data
# (tests/data/, see its README):
#   tests/data/vectors/*.jsonl  client-to-server messages (re-serialized
#                               compactly; unparsable ones as captured)
#   tests/data/jsontestsuite/   the JSONTestSuite files
# json/schema get one file per message / suite file (plus tool arguments),
# server gets each scenario's messages as one newline-separated session,
# framer gets the sessions behind a few (chunk size, buffer size) headers.
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

sessions = []
for name in sorted(os.listdir(vectors)):
    if not name.endswith(".jsonl"):
        continue
    msgs = []
    with open(os.path.join(vectors, name), "rb") as f:
        for raw in f:
            if raw.strip():
                m = compact(raw)
                if m is not None and b"\n" not in m:
                    msgs.append(m)
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

for t in ("framer", "json", "schema", "server"):
    d = os.path.join("corpus", t)
    n = len(os.listdir(d)) if os.path.isdir(d) else 0
    print(f"seed: corpus/{t}: {n} files")
PY
