#!/usr/bin/env bash
# Stop the IPMI BMC emulator that start-ipmi.sh started from BASE_PORT. The machines' power and
# boot state is kept for the next start.
#
# usage: scripts/ironic/stop-ipmi.sh [BASE_PORT]      (default 6623)
set -euo pipefail
LAB_TAG=stop-ipmi
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT=${1:-6623}
STATE=$LAB_DIR/ipmi-$PORT
if stop_pid "$STATE/ipmi.pid" "$STATE/bmcs.json" 5; then
  rm -f "$STATE/ready"
  log "stopped the IPMI emulator on ports from $PORT"
else
  log "no IPMI emulator of ours running on ports from $PORT"
fi
