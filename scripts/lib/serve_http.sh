# Sourced by the scripts that run a client against one of the HTTP examples
# (interop_http.sh, interop_roots.sh, interop_ts.sh, conformance.sh,
# http_load.sh): one way to start the server, learn its address and stop it.
#
#   start_http_server NAME LOG BIN [ARGS...]
#
# Starts BIN ARGS with stderr to LOG, stops it on EXIT, and waits (up to 10 s)
# for the line the examples print once they are bound,
# "...: MCP Streamable HTTP on http://127.0.0.1:PORT/mcp". With --port 0
# that line is the only way to learn the port. Sets URL and SERVER_PID; on
# failure prints LOG and exits 1, NAME prefixing the message.
start_http_server() {
    local name=$1 log=$2
    shift 2
    mkdir -p "$(dirname "$log")"
    "$@" 2>"$log" &
    SERVER_PID=$!
    trap stop_http_server EXIT
    URL=
    for _ in $(seq 1 100); do
        URL=$(sed -n 's|.*MCP Streamable HTTP on \(http://127\.0\.0\.1:[0-9]*/mcp\).*|\1|p' "$log" | head -n 1)
        [ -n "$URL" ] && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "$name: $1 did not start listening on 127.0.0.1" >&2
    cat "$log" >&2
    exit 1
}

stop_http_server() {
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
}
