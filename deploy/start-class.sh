#!/usr/bin/env bash
# Position Lab for a class on one machine: several app processes behind HAProxy (sticky sessions,
# websockets), one store (PostgreSQL) and one grading cluster (a Dask scheduler and its judges).
# Only HAProxy's address faces the network; every other process listens on 127.0.0.1.
# HAProxy serves HTTPS (link tokens and sign-in cookies never travel in the clear): with the
# certificate of POSLAB_TLS_CERT, else a self-signed one made here at each start (browsers warn
# about it until it is trusted). The grading cluster speaks Dask's mutual TLS with a certificate
# made here (0600 in the run folder, 0700): another user of the machine cannot run code on a judge.
#
#   . .venv/bin/activate
#   POSLAB_DB_URL=postgresql+psycopg://user:password@127.0.0.1/poslab deploy/start-class.sh [--http] [--check]
#
#   --http     plain HTTP (only behind another TLS terminator, or on a network you trust entirely)
#   --check    make the certificates and haproxy.cfg, check the configuration (haproxy -c), and stop
#
# Settings (environment):
#   POSLAB_DB_URL            the store, required: every app process must see every other's writes
#   POSLAB_PUBLIC_ADDRESS    where students connect (HAProxy's bind), default 0.0.0.0:8500
#   POSLAB_APP_PORTS         one loopback port per app process, default "8501 8502"
#   POSLAB_SCHEDULER_PORT    the grading scheduler's loopback port, default 8786
#   POSLAB_GRADER_WORKERS    judges (each about 1 GiB resident), default one per core
#   POSLAB_RUN_DIR           logs, certificates and the generated haproxy.cfg (made 0700), default a new temporary folder
#   POSLAB_TLS_CERT          the HTTPS certificate: a PEM file holding the certificate chain and its key
#                            (or the key in POSLAB_TLS_KEY); default: a self-signed one, made at each start
#   POSLAB_TRUSTED_PROXIES   the proxies whose X-Forwarded-For the apps believe, default 127.0.0.1 (HAProxy)
#   POSLAB_ROSTER            a roster file each app process loads at its start (students sign in with links;
#                            the sign-ins are in the store, so any process serves any signed-in browser)
#   STREAMLIT_SERVER_COOKIE_SECRET  shared by the app processes (default: a new random one), so a
#                            browser's cookies are valid whichever process serves it
#   POSLAB_STOP_GRACE        seconds the parts get to stop on Ctrl-C or SIGTERM before they are killed, default 10
# Everything it starts stops with it (Ctrl-C, SIGTERM), and it stops when any part exits.
set -euo pipefail

SCHEME=https
CHECK_ONLY=""
for argument in "$@"; do
    case "$argument" in
        --http) SCHEME=http ;;
        --check) CHECK_ONLY=1 ;;
        *) echo "usage: $0 [--http] [--check]" >&2; exit 2 ;;
    esac
done

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
: "${POSLAB_DB_URL:?set POSLAB_DB_URL to the PostgreSQL store every app process shares}"
PUBLIC="${POSLAB_PUBLIC_ADDRESS:-0.0.0.0:8500}"
read -r -a APP_PORTS <<< "${POSLAB_APP_PORTS:-8501 8502}"
SCHEDULER_PORT="${POSLAB_SCHEDULER_PORT:-8786}"
JUDGES="${POSLAB_GRADER_WORKERS:-$(nproc)}"
RUN_DIR="${POSLAB_RUN_DIR:-$(mktemp -d -t poslab-class-XXXXXX)}"
PYTHON="${PYTHON:-python}"
umask 077  # everything written here (logs, keys, the config) is this user's only
mkdir -p "$RUN_DIR"
chmod 700 "$RUN_DIR"
TLS_DIR="$RUN_DIR/tls"
mkdir -p "$TLS_DIR"

# One self-signed certificate for the grading cluster: its scheduler, judges and the apps (Dask's TLS
# is mutual, so only a process holding this key is let in).
openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=poslab grading" \
    -keyout "$TLS_DIR/dask.key" -out "$TLS_DIR/dask.pem" 2> /dev/null
export DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION=True
export DASK_DISTRIBUTED__COMM__TLS__CA_FILE="$TLS_DIR/dask.pem"
for role in SCHEDULER WORKER CLIENT; do
    export "DASK_DISTRIBUTED__COMM__TLS__${role}__CERT=$TLS_DIR/dask.pem"
    export "DASK_DISTRIBUTED__COMM__TLS__${role}__KEY=$TLS_DIR/dask.key"
done

# HTTPS: the given certificate (HAProxy wants the chain and the key in one file), else a self-signed one.
BIND="$PUBLIC"
if [[ "$SCHEME" == https ]]; then
    if [[ -n "${POSLAB_TLS_CERT:-}" ]]; then
        cat "$POSLAB_TLS_CERT" ${POSLAB_TLS_KEY:+"$POSLAB_TLS_KEY"} > "$TLS_DIR/public.pem"
    else
        host="${PUBLIC%:*}"
        [[ "$host" == 0.0.0.0 || "$host" == "" ]] && host="$(hostname -f 2> /dev/null || hostname)"
        san="DNS:localhost,IP:127.0.0.1"
        if [[ "$host" =~ ^[0-9.]+$ ]]; then san="IP:$host,$san"; else san="DNS:$host,$san"; fi
        openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=$host" -addext "subjectAltName=$san" \
            -keyout "$TLS_DIR/public.key" -out "$TLS_DIR/public.crt" 2> /dev/null
        cat "$TLS_DIR/public.crt" "$TLS_DIR/public.key" > "$TLS_DIR/public.pem"
    fi
    BIND="$PUBLIC ssl crt $TLS_DIR/public.pem"
fi

export STREAMLIT_SERVER_COOKIE_SECRET="${STREAMLIT_SERVER_COOKIE_SECRET:-$("$PYTHON" -c 'import secrets; print(secrets.token_hex(32))')}"
export DASK_CONFIG="$ROOT/deploy/dask"       # allowed-failures 1, worker-saturation 1.0, no HTTP routes
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"  # the judges import grader and poslab
export POSLAB_GRADER_SCHEDULER="tls://127.0.0.1:$SCHEDULER_PORT"  # every app process grades on this cluster
# HAProxy connects from loopback and appends the client's address to X-Forwarded-For: the apps
# believe that header from it only (the Instructor password's per-address limit).
export POSLAB_TRUSTED_PROXIES="${POSLAB_TRUSTED_PROXIES:-127.0.0.1}"

# A judge still starting (its preload warms the sandbox) can miss the SIGTERM its nanny received:
# what has not stopped after POSLAB_STOP_GRACE seconds is killed.
STOP_GRACE="${POSLAB_STOP_GRACE:-10}"
stop_all() {
    trap - EXIT INT TERM
    kill $(jobs -p) 2>/dev/null || true
    for _ in $(seq $((STOP_GRACE * 10))); do [[ -z "$(jobs -pr)" ]] && break; sleep 0.1; done
    kill -KILL $(jobs -pr) 2>/dev/null || true
    wait || true
}
trap stop_all EXIT INT TERM
cd "$ROOT"

# The grading cluster: one scheduler, JUDGES warm judges (their nanny starts a judge that dies again).
start_cluster() {
"$PYTHON" -m distributed.cli.dask_scheduler --protocol tls --host 127.0.0.1 --port "$SCHEDULER_PORT" \
    --no-dashboard --dashboard-address 127.0.0.1:0 > "$RUN_DIR/scheduler.log" 2>&1 &
"$PYTHON" -m distributed.cli.dask_worker "$POSLAB_GRADER_SCHEDULER" --nworkers "$JUDGES" --nthreads 1 \
    --memory-limit 0 --host 127.0.0.1 --no-dashboard --dashboard-address 127.0.0.1:0 \
    --preload grader.cluster > "$RUN_DIR/judges.log" 2>&1 &
}

# The app processes, each on its own loopback port.
SERVERS=""
for index in "${!APP_PORTS[@]}"; do
    SERVERS+="    server app$((index + 1)) 127.0.0.1:${APP_PORTS[$index]} check cookie app$((index + 1))"$'\n'
done
start_apps() {
for port in "${APP_PORTS[@]}"; do
    "$PYTHON" -m streamlit run app.py --server.address 127.0.0.1 --server.port "$port" \
        --server.headless true > "$RUN_DIR/app-$port.log" 2>&1 &
done
}
SECURE_COOKIE=""
[[ "$SCHEME" == https ]] && SECURE_COOKIE=" secure"

# HAProxy in front: websockets pass through (HTTP mode upgrades them); a cookie keeps each browser
# on the process that holds its session; a new browser goes to the process with fewest sessions.
cat > "$RUN_DIR/haproxy.cfg" <<EOF
global
    maxconn 4096
    # Which app processes are up (echo "show stat" | socat - UNIX:$RUN_DIR/haproxy.sock).
    stats socket $RUN_DIR/haproxy.sock mode 600 level user

defaults
    mode http
    option forwardfor
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout http-request 10s
    # A student's websocket stays open through the whole lesson.
    timeout tunnel 8h

frontend poslab
    bind $BIND
    # The apps believe these from HAProxy only (POSLAB_TRUSTED_PROXIES): whatever a client sent is replaced.
    http-request set-header X-Forwarded-Proto $SCHEME
    http-request set-header X-Forwarded-Host %[req.hdr(host)]
    default_backend apps

backend apps
    balance leastconn
    cookie POSLAB_APP insert indirect nocache httponly$SECURE_COOKIE
    option httpchk GET /_stcore/health
    http-check expect status 200
$SERVERS
EOF
haproxy -c -q -f "$RUN_DIR/haproxy.cfg"
if [[ -n "$CHECK_ONLY" ]]; then
    echo "checked: $RUN_DIR/haproxy.cfg ($SCHEME)"
    exit 0
fi
start_cluster
start_apps
haproxy -f "$RUN_DIR/haproxy.cfg" -db > "$RUN_DIR/haproxy.log" 2>&1 &

echo "Position Lab: $SCHEME://$PUBLIC (apps on ${APP_PORTS[*]}, judges: $JUDGES, logs in $RUN_DIR)"
wait -n  # any part that exits stops the class server (the trap stops the rest)
echo "a part of the class server exited; stopping (logs in $RUN_DIR)" >&2
exit 1
