#!/usr/bin/env bash
# A private, throwaway PostgreSQL 15 server for the store's tests.
#
#   eval "$(bash .ci/postgres.sh)"     start one; stdout is only `export POSLAB_TEST_PG_URL=...`
#                                      and `export POSLAB_TEST_PG_DIR=...` (also written to DIR/env)
#   bash .ci/postgres.sh stop DIR      stop the server kept in DIR (POSLAB_TEST_PG_DIR)
#
# Installs nothing: .ci/run installs Debian's postgresql-15. Runs as root and starts the server as
# the postgres user, in a new folder and on a free loopback port, so it never touches the system
# cluster or another developer's server on this shared machine. Durability is switched off: the
# data is thrown away after the tests.
set -euo pipefail

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
say() { echo "postgres.sh: $*" >&2; }
as_postgres() { runuser -u postgres -- "$@"; }

if [[ "${1:-}" == stop ]]; then
  dir=${2:?usage: postgres.sh stop DIR}
  as_postgres "$PG_BIN/pg_ctl" -D "$dir/data" -m fast -w stop >&2
  exit 0
fi

[[ -x "$PG_BIN/initdb" ]] || { say "no $PG_BIN/initdb: install postgresql-15 first"; exit 1; }
[[ $(id -u) == 0 ]] || { say "run as root (it starts the server as the postgres user)"; exit 1; }
id postgres >/dev/null 2>&1 || { say "no postgres user: install postgresql-15 first"; exit 1; }

dir=$(mktemp -d /tmp/poslab-pg.XXXXXX)
chown postgres:postgres "$dir"
chmod 700 "$dir"
password=$(python3 -c 'import secrets; print(secrets.token_hex(16))')  # hex: nothing to quote

as_postgres "$PG_BIN/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
  --encoding=UTF8 --no-locale >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# A free port can be taken between looking and binding; try a few.
started=""
for _ in 1 2 3; do
  port=$(free_port)
  if as_postgres "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o \
    "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
    start >&2; then
    started=yes
    break
  fi
done
[[ -n "$started" ]] || { say "the server did not start; its log:"; cat "$dir/server.log" >&2; exit 1; }

psql_admin() { as_postgres "$PG_BIN/psql" -h "$dir" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -q "$@"; }
psql_admin -c "CREATE ROLE poslab LOGIN PASSWORD '$password'" >&2
psql_admin -c "CREATE DATABASE poslab_test OWNER poslab" >&2

url="postgresql+psycopg://poslab:$password@127.0.0.1:$port/poslab_test"
{
  echo "export POSLAB_TEST_PG_URL=$url"
  echo "export POSLAB_TEST_PG_DIR=$dir"
} | tee "$dir/env"
say "PostgreSQL 15 on 127.0.0.1:$port, data in $dir; stop it with: bash .ci/postgres.sh stop $dir"
