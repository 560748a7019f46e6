#!/usr/bin/env bash
# Stop the private PostgreSQL of start-postgres.sh. PURGE=1 also deletes its data.
#
# usage: scripts/ironic/stop-postgres.sh [PORT]       (default 15432)
set -euo pipefail
LAB_TAG=stop-postgres
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT=${1:-15432}
STATE=$LAB_DIR/pg-$PORT
DATA=$(cat "$STATE/datadir" 2>/dev/null || echo "$STATE/data")
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [[ $(id -u) == 0 ]]; then as_pg() { runuser -u postgres -- "$@"; }; else as_pg() { "$@"; }; fi

if [[ -n $PGBIN && -s $DATA/PG_VERSION ]] &&
  as_pg "$PGBIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
  as_pg "$PGBIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null
  log "stopped PostgreSQL on port $PORT"
else
  log "no PostgreSQL of ours running on port $PORT"
fi
if [[ ${PURGE:-0} == 1 ]]; then
  [[ $DATA == "$STATE/data" ]] || rm -rf "$(dirname "$DATA")"
  rm -rf "$STATE"
  log "data removed"
fi
