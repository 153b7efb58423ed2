#!/usr/bin/env bash
# Interop test: the official MCP Python SDK client (mcp==2.3.0) drives a bookshop
# server over stdio (tests/interop/test_bookshop.py), twice: once forced to the
# handshake era (ClientSession + initialize, 2025-11-25; checks named legacy.*)
# and once in the SDK's default mode (mcp.Client mode="auto": server/discover,
# must adopt 2026-07-28; checks named modern.*). In both, reserve and blurb ask
# the client through the SDK's elicitation and sampling callbacks.
#
# Usage, from the repo root:
#   scripts/interop.sh                                   # target/release/bookshop
#   scripts/interop.sh target/release/bookshop --page-size 2
#   scripts/interop.sh target/interop-venv/bin/python tests/data/vectors/bookshop.py
#
# The server command is given as this script's arguments (one argv word each).
# The venv lives at ${PICOMCP_VENV:-target/interop-venv} and is created on first use.
# Exit status: that of the test (0 all passed, 1 some failed, 2 usage, 3 watchdog).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

venv="${PICOMCP_VENV:-target/interop-venv}"
requirements="tests/interop/requirements.txt"

if [ ! -x "$venv/bin/python" ]; then
    echo "interop: creating venv $venv"
    python3 -m venv "$venv"
fi
echo "interop: installing $requirements into $venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
# PICOMCP_INTEROP_SETUP_ONLY=1: only make the venv (scripts/interop_roots.sh).
[ "${PICOMCP_INTEROP_SETUP_ONLY:-0}" = 1 ] && exit 0

if [ "$#" -eq 0 ]; then
    set -- "${CARGO_TARGET_DIR:-target}/release/bookshop"
    if [ ! -x "$1" ]; then
        echo "interop: warning: $1 not found (build it first: cargo build --release -p bookshop)" >&2
    fi
fi

echo "interop: running tests/interop/test_bookshop.py against: $*"
exec "$venv/bin/python" tests/interop/test_bookshop.py -- "$@"
