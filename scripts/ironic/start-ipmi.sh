#!/usr/bin/env bash
# Start the lab's IPMI BMC emulator (ipmi_bmc.py, on pyghmi) on 127.0.0.1: IPMI_BMCS BMCs, one
# per host, on consecutive UDP ports from BASE_PORT, each emulating one machine's chassis power
# and boot device over IPMI 2.0 (RMCP+, what `ipmitool -I lanplus` and Ironic's ipmi hardware
# type speak). Prints one line per BMC, "name ipmi://127.0.0.1:PORT".
#
# usage: scripts/ironic/start-ipmi.sh [BASE_PORT]     (default 6623)
#
# Idempotent like start-sushy.sh: installs if needed, returns at once when the same
# configuration already runs, restarts on a change.
#
# BMC i (from 0) listens on BASE_PORT+i and is named by the i-th word of IPMI_NAMES, or ipmi-<i>
# past its end. A BMC address for bmhctl: ipmi://127.0.0.1:PORT (BMO's ipmi scheme).
#
# Written in STATE=$BMHCTL_LAB_DIR/ipmi-BASE_PORT:
#   bmcs.txt        "name port" per BMC
#   bmc-PORT.json   each BMC's state: {"name", "port", "power": "on"|"off", "boot_device"},
#                   kept across restarts (a BMC restart does not power a machine off)
#   ipmi.log        one line per power or boot device command, e.g.
#                   "2026-12-07T10:00:00.123Z ipmi-0 port 6623: power on (was off)"
#
# Environment (all optional):
#   IPMI_BMCS=6
#   IPMI_NAMES=""               BMC names, as in hosts.example.yaml's ipmi-0
#   IPMI_USER=admin IPMI_PASSWORD=password     the credentials every BMC takes
#   IPMI_FRESH=0                1 = forget the machines' power and boot state
#   BMHCTL_LAB_DIR              state dir (default <repo>/.state/ironic)
set -euo pipefail
LAB_TAG=start-ipmi
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT=${1:-6623}
[[ $PORT =~ ^[0-9]+$ ]] || die "usage: $0 [BASE_PORT]"
COUNT=${IPMI_BMCS:-6}
if ! [[ $COUNT =~ ^[0-9]+$ ]] || ((COUNT == 0 || PORT + COUNT > 65536)); then
  die "IPMI_BMCS must be 1..$((65536 - PORT)) from port $PORT"
fi
read -r -a NAMES <<<"${IPMI_NAMES:-}"
IPMI_USER=${IPMI_USER:-admin}
IPMI_PASSWORD=${IPMI_PASSWORD-password}
STATE=$LAB_DIR/ipmi-$PORT
CONF=$STATE/bmcs.json

"$LAB_SCRIPTS/install.sh" ipmi

running() { owns "$STATE/ipmi.pid" "$CONF"; }

bmcs=""
for ((i = 0; i < COUNT; i++)); do
  bmcs+="${NAMES[i]:-ipmi-$i} $((PORT + i))"$'\n'
done
BMCS_FP=$(printf '%s' "$bmcs" | sha256sum | cut -d' ' -f1)
FINGERPRINT=$(printf "%s\n%s\n%s\n%s\n%s\n" "$(pinned ipmi pyghmi)" "$(sha256sum <"$LAB_SCRIPTS/ipmi_bmc.py")" \
  "$bmcs" "$IPMI_USER" "$IPMI_PASSWORD" | sha256sum | cut -d' ' -f1)

if [[ ${IPMI_FRESH:-0} != 1 ]] && running && [[ $(cat "$STATE/ready" 2>/dev/null) == "$(<"$STATE/ipmi.pid")" ]] &&
  [[ $(cat "$STATE/fingerprint" 2>/dev/null) == "$FINGERPRINT" ]]; then
  log "already running (pid $(<"$STATE/ipmi.pid"))"
  awk '{ print $1, "ipmi://127.0.0.1:" $2 }' "$STATE/bmcs.txt"
  exit 0
fi
if running; then "$LAB_SCRIPTS/stop-ipmi.sh" "$PORT" >&2; fi

mkdir -p "$STATE"
# the machines' state is kept across restarts, unless asked or the set of BMCs changed
if [[ ${IPMI_FRESH:-0} == 1 || $(cat "$STATE/bmcs.fp" 2>/dev/null) != "$BMCS_FP" ]]; then
  rm -f "$STATE"/bmc-*.json
fi
printf '%s' "$bmcs" >"$STATE/bmcs.txt"
echo "$BMCS_FP" >"$STATE/bmcs.fp"
rm -f "$STATE/ready" "$STATE/fingerprint"
# the password goes through the environment and a file of mode 0600, never a command line
(
  umask 077
  IPMI_USER=$IPMI_USER IPMI_PASSWORD=$IPMI_PASSWORD "$IPMI_VENV/bin/python" - "$STATE" <<'EOF' >"$CONF"
import json, os, sys
state = sys.argv[1]
bmcs = []
with open(os.path.join(state, "bmcs.txt")) as f:
    for line in f:
        name, port = line.split()
        bmcs.append({"name": name, "port": int(port)})
json.dump({"address": "127.0.0.1", "user": os.environ["IPMI_USER"],
           "password": os.environ["IPMI_PASSWORD"], "state_dir": state, "bmcs": bmcs},
          sys.stdout, indent=1)
EOF
)

t0=$(now)
setsid "$IPMI_VENV/bin/python" "$LAB_SCRIPTS/ipmi_bmc.py" --config "$CONF" \
  >>"$STATE/ipmi.log" 2>&1 </dev/null &
PID=$!
echo $PID >"$STATE/ipmi.pid"
# ready: every BMC's socket is bound (a port taken by another program ends the emulator)
deadline=$(($(date +%s) + 30))
until [[ $(cat "$STATE/ready" 2>/dev/null) == "$PID" ]]; do
  if ! kill -0 "$PID" 2>/dev/null || (($(date +%s) >= deadline)); then
    log "the emulator did not come up; end of $STATE/ipmi.log:"
    tail -n 20 "$STATE/ipmi.log" >&2
    "$LAB_SCRIPTS/stop-ipmi.sh" "$PORT" >&2 || true
    exit 1
  fi
  sleep 0.1
done
echo "$FINGERPRINT" >"$STATE/fingerprint"
log "ready in $(since "$t0")s: pid $PID, $COUNT BMCs on UDP ports $PORT-$((PORT + COUNT - 1)) (list: $STATE/bmcs.txt), user $IPMI_USER"
awk '{ print $1, "ipmi://127.0.0.1:" $2 }' "$STATE/bmcs.txt"
