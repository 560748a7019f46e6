#!/usr/bin/env bash
# Start a private, throw-away PostgreSQL cluster on 127.0.0.1 for Ironic
# (the benchmark runs Ironic on it as well as on SQLite). Uses Debian's
# postgresql package, installed with apt-get when missing and run as root.
# Durability is off (fsync=off): test data only.
#
# usage: scripts/ironic/start-postgres.sh [PORT]      (default 15432)
# Prints the database URL for start-ironic.sh:
#   IRONIC_DB=$(scripts/ironic/start-postgres.sh) scripts/ironic/start-ironic.sh
#
# Idempotent: creates the cluster, the role and the database once.
# As root the server runs as the postgres user (initdb refuses root).
# env: BMHCTL_LAB_DIR (state dir, default <repo>/.state/ironic)
set -euo pipefail
LAB_TAG=start-postgres
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT=${1:-15432}
[[ $PORT =~ ^[0-9]+$ ]] || die "usage: $0 [PORT]"
STATE=$LAB_DIR/pg-$PORT
URL=postgresql+psycopg2://ironic:ironic@127.0.0.1:$PORT/ironic

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
PGBIN=$(pg_bin)
if [[ -z $PGBIN ]]; then
  [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null ||
    die "PostgreSQL server not found: apt-get install postgresql"
  log "installing Debian's postgresql package"
  apt-get install -y -q postgresql >"$LAB_DIR/apt-postgresql.log" 2>&1 || {
    apt-get update -q >>"$LAB_DIR/apt-postgresql.log" 2>&1
    apt-get install -y -q postgresql >>"$LAB_DIR/apt-postgresql.log" 2>&1
  } || die "apt-get install postgresql failed (see $LAB_DIR/apt-postgresql.log)"
  PGBIN=$(pg_bin)
  [[ -n $PGBIN ]] || die "postgresql installed but no /usr/lib/postgresql/*/bin"
fi

mkdir -p "$STATE"
if [[ $(id -u) == 0 ]]; then
  as_pg() { runuser -u postgres -- "$@"; }
  # the postgres user must reach the data dir; a state dir under a private
  # home is not reachable, so fall back to /var/tmp
  DATA=$STATE/data
  if ! as_pg test -x "$STATE" 2>/dev/null; then
    DATA=/var/tmp/bmhctl-lab-pg-$PORT/data
    log "postgres cannot enter $STATE: data in $DATA"
  fi
  mkdir -p "$DATA"
  chown postgres: "$DATA" "$(dirname "$DATA")"
else
  as_pg() { "$@"; }
  DATA=$STATE/data
  mkdir -p "$DATA"
fi
chmod 700 "$DATA"
echo "$DATA" >"$STATE/datadir"

if [[ ! -s $DATA/PG_VERSION ]]; then
  as_pg "$PGBIN/initdb" -D "$DATA" -A trust -U postgres >"$STATE/initdb.log" 2>&1 ||
    die "initdb failed: $(tail -n 5 "$STATE/initdb.log")"
fi
if as_pg "$PGBIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
  log "already running"
else
  t0=$(now)
  as_pg "$PGBIN/pg_ctl" -D "$DATA" -l "$DATA/../postgres.log" -w -t 60 start \
    -o "-c listen_addresses=127.0.0.1 -p $PORT -k $DATA -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
    >/dev/null || die "PostgreSQL did not start: $(tail -n 10 "$DATA/../postgres.log")"
  log "started in $(since "$t0")s on 127.0.0.1:$PORT (data $DATA)"
fi
psql_() { "$PGBIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -v ON_ERROR_STOP=1 -qAt "$@"; }
[[ -n $(psql_ -c "select 1 from pg_roles where rolname = 'ironic'") ]] ||
  psql_ -c "create role ironic login password 'ironic'"
[[ -n $(psql_ -c "select 1 from pg_database where datname = 'ironic'") ]] ||
  psql_ -c "create database ironic owner ironic"
echo "$URL"
