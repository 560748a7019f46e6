#!/usr/bin/env bash
# Stop the Redfish emulator that start-sushy.sh started on PORT. The systems'
# power, boot and media state is kept for the next start.
#
# usage: scripts/ironic/stop-sushy.sh [PORT]          (default 8000)
set -euo pipefail
LAB_TAG=stop-sushy
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT=${1:-8000}
STATE=$LAB_DIR/sushy-$PORT
if stop_pid "$STATE/sushy.pid" "$STATE/emulator.conf" 5; then
  log "stopped the emulator on port $PORT"
else
  log "no emulator of ours running on port $PORT"
fi
