#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for omen's tests, on a unix socket in a temporary directory (no TCP port).
#
#   scripts/pg-test-cluster.sh start [DIR]   # initdb + start; prints the export lines for the tests
#   scripts/pg-test-cluster.sh stop DIR      # stop it and remove DIR
#   scripts/pg-test-cluster.sh pause DIR     # stop the server only (DIR kept): what a PostgreSQL outage looks like
#   scripts/pg-test-cluster.sh resume DIR    # start it again after a pause
#
# Typical use:  eval "$(scripts/pg-test-cluster.sh start)"; python3 dev.py test; scripts/pg-test-cluster.sh stop "$OMEN_TEST_POSTGRES_DIR"
# As root (CI), the cluster belongs to the 'postgres' user (initdb refuses root). PostgreSQL's binaries are looked for
# in $PG_BIN, then /usr/lib/postgresql/*/bin, then $PATH.
set -euo pipefail

bindir() {
    if [ -n "${PG_BIN:-}" ]; then echo "$PG_BIN"; return; fi
    local d
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        [ -x "$d/pg_ctl" ] && { echo "$d"; return; }
    done
    dirname "$(command -v pg_ctl || { echo "pg-test-cluster: no pg_ctl found (install PostgreSQL or set PG_BIN)" >&2; exit 2; })"
}

as_owner() {  # run a command as the cluster's owner: 'postgres' when we are root, ourselves otherwise
    if [ "$(id -u)" = 0 ]; then  # (from /: the postgres user may not be allowed into the working directory)
        if command -v runuser >/dev/null 2>&1; then (cd / && runuser -u postgres -- "$@")
        else (cd / && su postgres -s /bin/sh -c "$(printf '%q ' "$@")"); fi
    else
        "$@"
    fi
}

server_start() {
    local dir=$1 bin
    bin=$(bindir)
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "-k $dir -c listen_addresses=''" start >/dev/null
}

server_stop() {
    local dir=$1 bin
    bin=$(bindir)
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null
}

case "${1:-}" in
start)
    dir=${2:-$(mktemp -d "${TMPDIR:-/tmp}/omen-pg.XXXXXX")}
    mkdir -p "$dir"
    chmod 755 "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    bin=$(bindir)
    as_owner "$bin/initdb" -D "$dir/data" -U omen -A trust -E UTF8 --locale=C.UTF-8 -N >"$dir/initdb.log" 2>&1 \
        || as_owner "$bin/initdb" -D "$dir/data" -U omen -A trust -E UTF8 --locale=C -N >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    cat >>"$dir/data/postgresql.conf" <<CONF
max_connections = 200
CONF
    server_start "$dir"
    echo "export OMEN_TEST_POSTGRES_URL='postgresql://omen@/postgres?host=$dir'"
    echo "export OMEN_TEST_POSTGRES_DIR='$dir'"
    ;;
stop)
    dir=${2:?usage: pg-test-cluster.sh stop DIR}
    [ -f "$dir/data/postmaster.pid" ] && server_stop "$dir" || true
    rm -rf "$dir"
    ;;
pause)
    server_stop "${2:?usage: pg-test-cluster.sh pause DIR}"
    ;;
resume)
    server_start "${2:?usage: pg-test-cluster.sh resume DIR}"
    ;;
*)
    echo "usage: pg-test-cluster.sh start [DIR] | stop DIR | pause DIR | resume DIR" >&2
    exit 2
    ;;
esac
