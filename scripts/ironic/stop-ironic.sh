#!/usr/bin/env bash
# Stop the Ironic (and its image web server) that start-ironic.sh or
# start-ironic-split.sh started on PORT. Leaves the database and logs in
# place; a later start is fast.
#
# usage: scripts/ironic/stop-ironic.sh [PORT]         (default 6385)
set -euo pipefail
LAB_TAG=stop-ironic
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT=${1:-6385}
STATE=$LAB_DIR/ironic-$PORT

stop_pid "$STATE/http.pid" "$STATE/httpboot" 5 || true
# graceful stop takes about 4-5 s; graceful_shutdown_timeout is 10 s
if stop_pid "$STATE/ironic.pid" "$STATE/ironic.conf" 20; then
  log "stopped Ironic on port $PORT"
else
  log "no Ironic of ours running on port $PORT"
fi
# start-ironic-split.sh's processes, all at once: each waits out its own
# graceful shutdown (a conductor deregisters, so its nodes move to the others)
pids=()
for pidfile in "$STATE"/split/*.pid; do
  [[ -e $pidfile ]] || continue
  conf=${pidfile%.pid}.conf
  stop_pid "$pidfile" "$conf" 20 && log "stopped $(basename "${pidfile%.pid}") on port $PORT" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || true; done
