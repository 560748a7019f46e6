# shellcheck shell=bash
# Sourced by the scripts in scripts/ironic/: paths and small helpers.
# Not meant to be run on its own.
#
# Everything the lab creates lives under one state directory:
#   $BMHCTL_LAB_DIR (default <repo>/.state/ironic)
#     .venv-ironic/ .venv-sushy/ .venv-ipmi/   the Python venvs (install.sh)
#     .venv-ironic-RELEASE/           another Ironic release (install.sh --ironic RELEASE)
#     ipmitool/                       ipmitool unpacked from Debian packages, when none is on PATH
#     ironic-PORT/                    config, SQLite DB, logs, pid files of one Ironic
#     sushy-PORT/                     config, state, logs of one Redfish emulator
#     ipmi-PORT/                      config, BMC state, log of the IPMI emulator (BMCs from PORT)
#     pg-PORT/                        a private PostgreSQL cluster (start-postgres.sh)

LAB_SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_REPO=$(cd "$LAB_SCRIPTS/../.." && pwd)
LAB_DIR=${BMHCTL_LAB_DIR:-$LAB_REPO/.state/ironic}
case $LAB_DIR in /*) ;; *) LAB_DIR=$PWD/$LAB_DIR ;; esac
# IRONIC_RELEASE (install.sh --ironic) picks an Ironic other than the pinned one: a venv and a
# pinned set of its own (requirements-ironic-RELEASE.txt).
IRONIC_REQ=ironic${IRONIC_RELEASE:+-$IRONIC_RELEASE}
if [[ ! -f $LAB_SCRIPTS/requirements-$IRONIC_REQ.txt ]]; then
  echo "[${LAB_TAG:-lab}] no pinned set for Ironic $IRONIC_RELEASE; releases: $(
    cd "$LAB_SCRIPTS" && ls requirements-ironic-*.txt | sed 's/requirements-ironic-//; s/\.txt$//' | tr '\n' ' '
  )" >&2
  exit 1
fi
# shellcheck disable=SC2034 # used by the scripts that source this file
IRONIC_VENV=$LAB_DIR/.venv-$IRONIC_REQ
# shellcheck disable=SC2034
SUSHY_VENV=$LAB_DIR/.venv-sushy
# shellcheck disable=SC2034
IPMI_VENV=$LAB_DIR/.venv-ipmi
IPMITOOL_DIR=$LAB_DIR/ipmitool
AGENT_VENV=$LAB_DIR/.venv-agent
# udevadm, lshw, dmidecode for the agent's collection when the machine has none (install.sh agent)
AGENT_TOOLS_DIR=$LAB_DIR/agent-tools

log() { echo "[${LAB_TAG:-lab}] $*" >&2; }
die() { log "$*"; exit 1; }

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# owns PIDFILE MARKER: true when the pid in PIDFILE is alive and its command
# line contains MARKER (a path inside our state dir). Guards every kill
# against a stale pid file whose number was reused by someone else.
owns() {
  local pid
  [[ -f $1 ]] || return 1
  pid=$(<"$1")
  [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$2"
}

# stop_pid PIDFILE MARKER SECONDS: SIGTERM, wait, then SIGKILL the process
# group (each service is started with setsid, so its pid is its pgid).
stop_pid() {
  local pidfile=$1 marker=$2 secs=$3 pid i
  if ! owns "$pidfile" "$marker"; then rm -f "$pidfile"; return 1; fi
  pid=$(<"$pidfile")
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < secs * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "pid $pid still alive after ${secs}s: SIGKILL to its process group"
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  # children (Ironic's worker) left in the group once the leader is gone
  sleep 0.1
  pkill -KILL -g "$pid" 2>/dev/null || true
  rm -f "$pidfile"
  return 0
}

# pinned VENV-NAME PACKAGE: the version of PACKAGE in requirements-NAME.txt
pinned() {
  sed -n "s/^$2==\(.*\)$/\1/p" "$LAB_SCRIPTS/requirements-$1.txt"
}

# wait_http URL SECONDS PID [curl args...]: poll until URL answers 2xx.
# Fails early when PID dies.
wait_http() {
  local url=$1 secs=$2 pid=$3 deadline
  shift 3
  deadline=$(($(date +%s) + secs))
  until curl -fsS -o /dev/null --max-time 2 "$@" "$url" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || return 1
    (($(date +%s) < deadline)) || return 2
    sleep 0.1
  done
}

# --- Ironic's configuration, shared by start-ironic.sh and start-ironic-split.sh --------------
# lab_hardware_types: the hardware types and interfaces the lab enables, in HW, POWER, MGMT and
# VENDOR (NO_IPMI says why ipmi is left out). The ipmitool that install.sh unpacked, if any, goes
# on PATH (exported: Ironic runs it). Call after install.sh.
lab_hardware_types() {
  HW=fake-hardware,redfish
  POWER=fake,redfish
  MGMT=fake,redfish
  VENDOR=fake,redfish,no-vendor
  NO_IPMI=
  if ! command -v ipmitool >/dev/null 2>&1 && [[ -x $IPMITOOL_DIR/bin/ipmitool ]]; then
    export PATH=$IPMITOOL_DIR/bin:$PATH
  fi
  if command -v ipmitool >/dev/null 2>&1; then
    HW+=,ipmi POWER+=,ipmitool MGMT+=,ipmitool VENDOR+=,ipmitool
  else
    # with ipmi enabled and no ipmitool binary the conductor crash-loops
    # shellcheck disable=SC2034 # the start scripts print it
    NO_IPMI="no ipmitool on PATH: the ipmi hardware type is left out (apt-get install ipmitool)"
  fi
}

# The [DEFAULT] lines that enable them. Another release than the lab's (IRONIC_RELEASE) gets only
# the interfaces it has: an older Ironic refuses to start on one it does not know.
ironic_conf_interfaces() {
  if [[ -n ${IRONIC_RELEASE:-} ]]; then
    ironic_conf_interfaces_all | "$IRONIC_VENV/bin/python" -c '
import sys
from importlib.metadata import entry_points
for line in sys.stdin:
    key, eq, value = line.partition(" = ")
    kind = key.removeprefix("enabled_").removesuffix("_interfaces")
    if not eq or not key.endswith("_interfaces") or kind == "hardware":
        print(line, end="")
        continue
    known = {e.name for e in entry_points(group="ironic.hardware.interfaces." + kind)}
    print(key, "=", ",".join(n for n in value.strip().split(",") if n in known))
' || die "cannot read the interfaces of Ironic $IRONIC_RELEASE"
  else
    ironic_conf_interfaces_all
  fi
}

ironic_conf_interfaces_all() {
  cat <<CONF
enabled_hardware_types = $HW
enabled_power_interfaces = $POWER
enabled_management_interfaces = $MGMT
enabled_vendor_interfaces = $VENDOR
enabled_boot_interfaces = fake,redfish-virtual-media,redfish-https,ipxe
enabled_deploy_interfaces = fake,ramdisk,direct,custom-agent
enabled_inspect_interfaces = fake,redfish,agent,no-inspect
enabled_bios_interfaces = fake,redfish,no-bios
enabled_raid_interfaces = fake,redfish,agent,no-raid
enabled_firmware_interfaces = fake,redfish,no-firmware
enabled_console_interfaces = fake,no-console
enabled_rescue_interfaces = fake,no-rescue
enabled_storage_interfaces = fake,noop
enabled_network_interfaces = noop
default_network_interface = noop
CONF
}

# The sections from [dhcp] to [redfish] (they use IMG_URL, STATE and URL); $1, when given, ends
# [conductor].
ironic_conf_common() {
  local extra=${1:+$'\n'$1}
  cat <<CONF
[dhcp]
dhcp_provider = none

[conductor]
automated_clean = ${IRONIC_AUTOMATED_CLEAN:-true}
check_provision_state_interval = 10
sync_power_state_interval = 60
# trust the BMC after an emulator restart instead of re-applying the DB's state
force_power_state_during_sync = false
power_state_change_timeout = 30
deploy_callback_timeout = 300
graceful_shutdown_timeout = 10${extra}

[deploy]
http_url = $IMG_URL
http_root = $STATE/httpboot

[pxe]
tftp_root = $STATE/tftpboot
tftp_master_path = $STATE/tftpboot/master_images
images_path = $STATE/images
instance_master_path = $STATE/master_images

[service_catalog]
# no Keystone catalog: where a ramdisk would call back
endpoint_override = $URL

[redfish]
# an emulator on loopback either answers or is down: fail fast
connection_attempts = 2
connection_retry_interval = 1
# virtual media images come from the lab's web server (no Swift); the default until Ironic 25
use_swift = false

[ipmi]
# a power change is several ipmitool calls, 5 s apart by default; the emulated BMCs answer at once
min_command_interval = 1
command_retry_timeout = 10

[inspector]
# in-band ("agent") inspection: also turn the agent's raw LLDP into the parsed_lldp that BMO reads
# the switch from, as metal3's Ironic does
hooks = \$default_hooks,parse-lldp
CONF
}

# image_server STATE HTTP_PORT: serve STATE/httpboot on 127.0.0.1:HTTP_PORT (Ironic's images and
# a stand-in boot ISO, made once), pid in STATE/http.pid.
image_server() {
  local STATE=$1 HTTP_PORT=$2 PY=$IRONIC_VENV/bin/python
  if [[ ! -s $STATE/httpboot/images/fake-boot.iso ]]; then
    "$PY" - "$STATE/httpboot/images/fake-boot.iso" <<'EOF'
import io, sys, pycdlib
iso = pycdlib.PyCdlib()
iso.new(interchange_level=3, joliet=3, vol_ident="BMHCTL_LAB")
data = b"stand-in boot image of the bmhctl Ironic lab\n"
iso.add_fp(io.BytesIO(data), len(data), "/README.;1", joliet_path="/README")
iso.write(sys.argv[1])
iso.close()
EOF
  fi
  # stand-ins for an agent's kernel and ramdisk (DEPLOY_KERNEL_URL, DEPLOY_RAMDISK_URL): iPXE
  # boot caches them, and no machine boots them (scripts/ironic/agent_inventory.py answers instead)
  [[ -s $STATE/httpboot/images/agent.kernel ]] ||
    echo "stand-in agent kernel of the bmhctl Ironic lab" >"$STATE/httpboot/images/agent.kernel"
  [[ -s $STATE/httpboot/images/agent.initramfs ]] ||
    echo "stand-in agent ramdisk of the bmhctl Ironic lab" >"$STATE/httpboot/images/agent.initramfs"
  setsid "$PY" -m http.server --bind 127.0.0.1 --directory "$STATE/httpboot" "$HTTP_PORT" \
    >>"$STATE/http.log" 2>&1 </dev/null &
  echo $! >"$STATE/http.pid"
}
