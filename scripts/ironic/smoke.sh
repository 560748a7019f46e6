#!/usr/bin/env bash
# Check a running lab end to end with plain curl, and print each step's time:
#  1. a fake-hardware node: enroll -> manageable -> (inspect) -> available
#     -> active -> deleted (back to available) -> removed;
#  2. a redfish node on the emulator (redfish-virtual-media boot, ramdisk
#     deploy, out-of-band inspection): manage, inspect, power on and off over
#     Redfish, checked on the emulator's side too; provide, deploy a live ISO
#     (ramdisk deploy over virtual media), undeploy; then removed.
# Exits non-zero on the first failure.
#
# usage: scripts/ironic/smoke.sh [IRONIC_URL] [SUSHY_URL]
#        (default http://127.0.0.1:6385 and http://127.0.0.1:8000)
# env:   IRONIC_USER / IRONIC_PASSWORD for an http_basic Ironic;
#        SUSHY_USER=admin SUSHY_PASSWORD=password; SMOKE_SYSTEM=worker-0
#        (a system name of the emulator); SMOKE_SKIP_REDFISH=1;
#        SMOKE_SKIP_DEPLOY=1 (no redfish deploy: saves about 15 s)
set -euo pipefail
LAB_TAG=smoke
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

IRONIC=${1:-http://127.0.0.1:6385}
SUSHY=${2:-http://127.0.0.1:8000}
SYSTEM=${SMOKE_SYSTEM:-worker-0}
IMAGES=http://127.0.0.1:$((${IRONIC##*:} + 1))
RF_AUTH=(-u "${SUSHY_USER-admin}:${SUSHY_PASSWORD-password}")
C=(curl -sS --max-time 30 -H 'Content-Type: application/json')
[[ -z ${IRONIC_USER:-} ]] || C+=(-u "$IRONIC_USER:${IRONIC_PASSWORD:-}")

# field JSON KEY...: print one value per key (null -> "None")
field() { python3 -c 'import json, sys
d = json.loads(sys.argv[1])
for k in sys.argv[2:]:
    v = d
    for p in k.split("."): v = v.get(p) if isinstance(v, dict) else None
    print(v)' "$@"; }

# The newest API the server offers: an older release refuses a version above its own.
API=$(field "$("${C[@]}" "$IRONIC/v1/")" version.version)
[[ $API == 1.* ]] || die "no API version in $IRONIC/v1/"
C+=(-H "X-OpenStack-Ironic-API-Version: $API")

call() { # METHOD PATH [BODY] -> body on stdout; fails unless 2xx
  local out code
  out=$("${C[@]}" -X "$1" "$IRONIC$2" ${3:+-d "$3"} -w $'\n%{http_code}')
  code=${out##*$'\n'}
  out=${out%$'\n'*}
  [[ $code == 2* ]] || die "$1 $2 -> HTTP $code: $out"
  printf '%s' "$out"
}

# wait_for UUID PROVISION_STATE [POWER_STATE]: poll until the node is there
# with no target left; fail on a *failed state or after 120 s
wait_for() {
  local node ps pw tps tpw err deadline=$(($(date +%s) + 120))
  while :; do
    node=$(call GET "/v1/nodes/$1?fields=provision_state,power_state,target_provision_state,target_power_state,last_error")
    { read -r ps; read -r pw; read -r tps; read -r tpw; read -r err; } < <(field "$node" \
      provision_state power_state target_provision_state target_power_state last_error)
    if [[ $ps == "$2" && $tps == None && $tpw == None && (-z ${3:-} || $pw == "$3") ]]; then return 0; fi
    # failure states keep a target: stop on them too
    [[ $ps != *failed && $ps != error ]] || die "node $1 in '$ps': $err"
    (($(date +%s) < deadline)) || die "node $1 not in '$2' after 120 s (now '$ps', power '$pw')"
    sleep 0.1
  done
}

step() { # LABEL UUID VERB STATE [POWER]: a provision verb and its wait
  local t0
  t0=$(now)
  call PUT "/v1/nodes/$2/states/provision" "{\"target\":\"$3\"}" >/dev/null
  wait_for "$2" "$4" "${5:-}"
  log "$1: $4 in $(since "$t0")s"
}

power() { # UUID "power on"|"power off"
  local t0
  t0=$(now)
  call PUT "/v1/nodes/$1/states/power" "{\"target\":\"$2\"}" >/dev/null
  wait_for "$1" "$3" "$2"
  log "$2: in $(since "$t0")s"
}

total=$(now)
suffix=$$-$RANDOM
# --- fake-hardware ---------------------------------------------------------
t0=$(now)
node=$(call POST /v1/nodes "{\"name\":\"smoke-fake-$suffix\",\"driver\":\"fake-hardware\"}")
uuid=$(field "$node" uuid)
log "fake-hardware node $uuid created (enroll) in $(since "$t0")s"
step manage "$uuid" manage manageable
step inspect "$uuid" inspect manageable
step provide "$uuid" provide available
call PATCH "/v1/nodes/$uuid" '[{"op":"add","path":"/instance_info/image_source","value":"'"$IMAGES"'/images/fake-boot.iso"},{"op":"add","path":"/instance_info/image_checksum","value":"d41d8cd98f00b204e9800998ecf8427e"}]' >/dev/null
step deploy "$uuid" active active
step undeploy "$uuid" deleted available
call DELETE "/v1/nodes/$uuid" >/dev/null
log "fake-hardware cycle done in $(since "$total")s"

[[ ${SMOKE_SKIP_REDFISH:-0} != 1 ]] || exit 0
# --- redfish on the emulator -----------------------------------------------
sys_url=$(curl -fsS --max-time 10 "${RF_AUTH[@]}" -o /dev/null -w '%{redirect_url}' "$SUSHY/redfish/v1/Systems/$SYSTEM")
[[ -n $sys_url ]] || sys_url=$SUSHY/redfish/v1/Systems/$SYSTEM
rf_power() { curl -fsS --max-time 10 "${RF_AUTH[@]}" "$sys_url" | python3 -c 'import json, sys; print(json.load(sys.stdin)["PowerState"])'; }
t0=$(now)
body=$(
  cat <<EOF
{"name":"smoke-redfish-$suffix","driver":"redfish",
 "driver_info":{"redfish_address":"$SUSHY","redfish_system_id":"/redfish/v1/Systems/$SYSTEM",
   "redfish_username":"${SUSHY_USER-admin}","redfish_password":"${SUSHY_PASSWORD-password}",
   "deploy_iso":"$IMAGES/images/fake-boot.iso"},
 "boot_interface":"redfish-virtual-media","deploy_interface":"ramdisk",
 "inspect_interface":"redfish","automated_clean":false}
EOF
)
node=$(call POST /v1/nodes "$body")
uuid=$(field "$node" uuid)
log "redfish node $uuid on $SYSTEM created in $(since "$t0")s"
step manage "$uuid" manage manageable
step "inspect (out-of-band)" "$uuid" inspect manageable
props=$(call GET "/v1/nodes/$uuid?fields=properties")
log "inspected: memory_mb=$(field "$props" properties.memory_mb) cpu_arch=$(field "$props" properties.cpu_arch) local_gb=$(field "$props" properties.local_gb)"
power "$uuid" "power on" manageable
[[ $(rf_power) == On ]] || die "emulator says $SYSTEM is $(rf_power) after power on"
power "$uuid" "power off" manageable
[[ $(rf_power) == Off ]] || die "emulator says $SYSTEM is $(rf_power) after power off"
if [[ ${SMOKE_SKIP_DEPLOY:-0} != 1 ]]; then
  # ramdisk deploy of a live ISO over virtual media: Ironic publishes the ISO
  # on its image server, the emulator downloads it, boots from Cd, powers on
  step provide "$uuid" provide available
  call PATCH "/v1/nodes/$uuid" '[{"op":"add","path":"/instance_info/boot_iso","value":"'"$IMAGES"'/images/fake-boot.iso"}]' >/dev/null
  step "deploy (live ISO over virtual media)" "$uuid" active active "power on"
  [[ $(rf_power) == On ]] || die "emulator says $SYSTEM is $(rf_power) after deploy"
  step undeploy "$uuid" deleted available
fi
call DELETE "/v1/nodes/$uuid" >/dev/null
log "all done in $(since "$total")s"
