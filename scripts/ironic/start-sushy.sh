#!/usr/bin/env bash
# Start sushy-tools' Redfish emulator on 127.0.0.1 with its fake systems
# driver: no VMs, each "system" is a record with a power state, boot
# settings, virtual media, CPUs, memory and a disk. Usable as BMCs by Ironic's
# redfish hardware type (real Redfish over HTTP). Prints the endpoint.
#
# usage: scripts/ironic/start-sushy.sh [PORT]         (default 8000)
#
# Idempotent like start-ironic.sh: installs if needed, returns at once when
# the same configuration already runs, restarts on a change.
#
# The systems: SUSHY_SYSTEMS of them (default 8). System i (from 0) is named
# by the i-th word of SUSHY_NAMES, or sushy-<i> past its end; its UUID is
# b3c70000-0000-4000-8000-<i+1 in 12 hex digits> and its one NIC has MAC
# 52:54:00:00:<i+1 in 4 hex digits>. Address a system by UUID or by name
# (a name answers with a 307 redirect to the UUID, which Ironic follows):
#   redfish-virtualmedia://127.0.0.1:PORT/redfish/v1/Systems/worker-0
# STATE/systems.txt lists "name uuid mac", one system a line.
#
# Environment (all optional):
#   SUSHY_SYSTEMS=8
#   SUSHY_NAMES="worker-0 spare-0 legacy-0"    (matches hosts.example.yaml)
#   SUSHY_USER=admin SUSHY_PASSWORD=password   Redfish basic auth; SUSHY_USER= (empty) for none
#   SUSHY_FAKE_POWER_DELAY=0   seconds until a power change shows; "random" = stock 1-11 s
#   SUSHY_FRESH=0              1 = forget the systems' power, boot and media state
#   BMHCTL_LAB_DIR             state dir (default <repo>/.state/ironic)
set -euo pipefail
LAB_TAG=start-sushy
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT=${1:-8000}
[[ $PORT =~ ^[0-9]+$ ]] || die "usage: $0 [PORT]"
COUNT=${SUSHY_SYSTEMS:-8}
[[ $COUNT =~ ^[0-9]+$ ]] && ((COUNT > 0 && COUNT <= 65535)) || die "SUSHY_SYSTEMS must be 1..65535"
read -r -a NAMES <<<"${SUSHY_NAMES-worker-0 spare-0 legacy-0}"
SUSHY_USER=${SUSHY_USER-admin}
SUSHY_PASSWORD=${SUSHY_PASSWORD-password}
POWER_DELAY=${SUSHY_FAKE_POWER_DELAY:-0}
[[ $POWER_DELAY =~ ^([0-9]+|random)$ ]] || die "SUSHY_FAKE_POWER_DELAY must be seconds or 'random'"
STATE=$LAB_DIR/sushy-$PORT
URL=http://127.0.0.1:$PORT

"$LAB_SCRIPTS/install.sh" sushy

auth=()
[[ -n $SUSHY_USER ]] && auth=(-u "$SUSHY_USER:$SUSHY_PASSWORD")
running() { owns "$STATE/sushy.pid" "$STATE/emulator.conf"; }

systems=""
py_systems=""
for ((i = 0; i < COUNT; i++)); do
  name=${NAMES[i]:-sushy-$i}
  uuid=$(printf 'b3c70000-0000-4000-8000-%012x' $((i + 1)))
  mac=$(printf '52:54:00:00:%02x:%02x' $(((i + 1) >> 8)) $(((i + 1) & 255)))
  systems+="$name $uuid $mac"$'\n'
  py_systems+="    {'uuid': '$uuid', 'name': '$name', 'power_state': 'Off', 'cpus': 2, 'memory_gib': 8, 'disk_gib': 40, 'nics': [{'mac': '$mac', 'ip': '127.0.0.1'}]},"$'\n'
done

conf() {
  cat <<EOF
# Written by scripts/ironic/start-sushy.sh on every start: do not edit.
SUSHY_EMULATOR_LISTEN_IP = '127.0.0.1'
SUSHY_EMULATOR_LISTEN_PORT = $PORT
SUSHY_EMULATOR_FAKE_DRIVER = True
SUSHY_EMULATOR_FEATURE_SET = 'full'
# the systems' persisted state (default: a folder in /tmp shared by all)
SUSHY_EMULATOR_STATE_DIR = '$STATE'
# never notify anything off this machine
EXTERNAL_NOTIFICATION_URL = 'http://127.0.0.1:9/'
_SYSTEMS = [
$py_systems]
SUSHY_EMULATOR_FAKE_SYSTEMS = _SYSTEMS
# Ironic's redfish inspection always reads Systems/<id>/Storage, which
# answers 500 unless every system has an entry here
SUSHY_EMULATOR_STORAGE = {
    s['uuid']: [{'Id': '1', 'Name': 'Local Storage Controller',
                 'StorageControllers': [{'MemberId': '0', 'Name': 'Fake RAID', 'SpeedGbps': 12}],
                 'Drives': ['disk0']}]
    for s in _SYSTEMS}
SUSHY_EMULATOR_DRIVES = {
    (s['uuid'], '1'): [{'Id': 'disk0', 'Name': 'disk0', 'Protocol': 'SATA',
                        'CapacityBytes': s['disk_gib'] * 1024 ** 3}]
    for s in _SYSTEMS}
SUSHY_EMULATOR_VOLUMES = {(s['uuid'], '1'): [] for s in _SYSTEMS}
EOF
  [[ -z $SUSHY_USER ]] || echo "SUSHY_EMULATOR_AUTH_FILE = '$STATE/htpasswd'"
}
NEW_CONF=$(conf)
SYSTEMS_FP=$(printf '%s' "$systems" | sha256sum | cut -d' ' -f1)
FINGERPRINT=$(printf "%s\n%s\n%s\n%s\n%s\n%s\n" "$(pinned sushy sushy-tools)" "$(sha256sum <"$LAB_SCRIPTS/sushy_fake.py")" "$NEW_CONF" \
  "$SUSHY_USER" "$SUSHY_PASSWORD" "$POWER_DELAY" | sha256sum | cut -d' ' -f1)

if [[ ${SUSHY_FRESH:-0} != 1 ]] && running &&
  curl -fsS -o /dev/null --max-time 5 "${auth[@]}" "$URL/redfish/v1/" &&
  [[ $(cat "$STATE/fingerprint" 2>/dev/null) == "$FINGERPRINT" ]]; then
  log "already running (pid $(<"$STATE/sushy.pid"))"
  echo "$URL"
  exit 0
fi
if running; then "$LAB_SCRIPTS/stop-sushy.sh" "$PORT" >&2; fi
if curl -s -o /dev/null --max-time 2 "$URL/"; then
  die "port $PORT is in use by another program"
fi

mkdir -p "$STATE/tmp"
# persisted system state is kept across restarts (a BMC restart does not power
# a machine off), unless asked or the set of systems changed
if [[ ${SUSHY_FRESH:-0} == 1 || $(cat "$STATE/systems.fp" 2>/dev/null) != "$SYSTEMS_FP" ]]; then
  rm -f "$STATE"/fakedriver*
fi
printf '%s' "$systems" >"$STATE/systems.txt"
echo "$SYSTEMS_FP" >"$STATE/systems.fp"
printf '%s\n' "$NEW_CONF" >"$STATE/emulator.conf"
if [[ -n $SUSHY_USER ]]; then
  "$SUSHY_VENV/bin/python" - "$SUSHY_USER" "$SUSHY_PASSWORD" >"$STATE/htpasswd" <<'EOF'
import sys, bcrypt
user, password = sys.argv[1:]
print(f"{user}:{bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=5)).decode()}")
EOF
fi

t0=$(now)
# TMPDIR: virtual media "insert" downloads the image into a temporary folder
TMPDIR=$STATE/tmp SUSHY_FAKE_POWER_DELAY=$POWER_DELAY \
  setsid "$SUSHY_VENV/bin/python" "$LAB_SCRIPTS/sushy_fake.py" --config "$STATE/emulator.conf" \
  >>"$STATE/sushy.log" 2>&1 </dev/null &
PID=$!
echo $PID >"$STATE/sushy.pid"
if ! wait_http "$URL/redfish/v1/" 60 "$PID" "${auth[@]}"; then
  log "the emulator did not come up; end of $STATE/sushy.log:"
  tail -n 20 "$STATE/sushy.log" >&2
  "$LAB_SCRIPTS/stop-sushy.sh" "$PORT" >&2 || true
  exit 1
fi
echo "$FINGERPRINT" >"$STATE/fingerprint"
log "ready in $(since "$t0")s: pid $PID, $COUNT systems (list: $STATE/systems.txt), auth $([[ -n $SUSHY_USER ]] && echo "$SUSHY_USER:$SUSHY_PASSWORD" || echo none)"
echo "$URL"
