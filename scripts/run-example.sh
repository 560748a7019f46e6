#!/usr/bin/env bash
# The main job: build bmhctl and its plugins (staged in target/release/plugins/), start a local
# Ironic, the sushy-tools Redfish emulator and the IPMI BMC emulator on loopback (installed from
# PyPI into .state/ironic/ the first time), provision a copy of hosts.example.yaml through them
# with progress and a final table, and stop what this script started.
#
# The copy (and its status) is left in ./example-run/ for `bmhctl get`, with the run's timeline
# page, example-run/timeline.html. hosts.example.yaml points at the Redfish emulator on
# 127.0.0.1:8000, at the IPMI emulator's first BMC on 127.0.0.1:6623 and at Ironic's image server
# on 127.0.0.1:6386, so the lab uses its default ports (Ironic 6385, emulators 8000 and 6623). A
# lab already running there is reused and left running.
#
# To use your own Ironic instead, skip this script: set IRONIC_ENDPOINT (and, as for BMO,
# METAL3_AUTH_ROOT_DIR, IRONIC_CACERT_FILE, DEPLOY_ISO_URL ...) and run
# `target/release/bmhctl provision your-hosts.yaml` (see README.md, "Using your own Ironic").
set -euo pipefail
cd "$(dirname "$0")/.."

ironic_port=6385
sushy_port=8000
ipmi_port=6623
# BMHCTL_BIN: an installed bmhctl (the offline kit's install.sh sets it) instead of this
# checkout's release build.
if [[ -n ${BMHCTL_BIN:-} ]]; then
    bmhctl=$BMHCTL_BIN
else
    bmhctl=./target/release/bmhctl
    ./scripts/stage-plugins.sh release
fi
"$bmhctl" plugin list

answers() { curl -s -o /dev/null --max-time 2 "$1"; }

started=()
cleanup() {
    for what in "${started[@]}"; do
        case "$what" in
            ironic) scripts/ironic/stop-ironic.sh "$ironic_port" >/dev/null 2>&1 || true ;;
            sushy) scripts/ironic/stop-sushy.sh "$sushy_port" >/dev/null 2>&1 || true ;;
            ipmi) scripts/ironic/stop-ipmi.sh "$ipmi_port" >/dev/null 2>&1 || true ;;
        esac
    done
}
trap cleanup EXIT

reused_ironic=false
if answers "http://127.0.0.1:$ironic_port/"; then
    echo "Reusing the Ironic already answering on 127.0.0.1:$ironic_port"
    reused_ironic=true
    # one started without ipmitool, or before the lab had it, cannot register ipmi-0
    if [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H 'X-OpenStack-Ironic-API-Version: 1.89' \
        "http://127.0.0.1:$ironic_port/v1/drivers/ipmi") == 404 ]]; then
        echo "Note: that Ironic has no ipmi hardware type, so ipmi-0 will fail; restart it" \
            "with scripts/ironic/start-ironic.sh $ironic_port"
    fi
else
    echo "Starting a local Ironic on 127.0.0.1:$ironic_port (the first run installs it: ~1 min)..."
    IRONIC_FRESH=1 scripts/ironic/start-ironic.sh "$ironic_port" >/dev/null
    started+=(ironic)
fi
if answers "http://127.0.0.1:$sushy_port/redfish/v1/"; then
    echo "Reusing the Redfish emulator already answering on 127.0.0.1:$sushy_port"
else
    echo "Starting the Redfish emulator on 127.0.0.1:$sushy_port..."
    scripts/ironic/start-sushy.sh "$sushy_port" >/dev/null
    started+=(sushy)
fi
# UDP: nothing to probe without an IPMI client; the emulator's pid file says whether it runs
ipmi_pid=.state/ironic/ipmi-$ipmi_port/ipmi.pid
if [[ -s $ipmi_pid ]] && kill -0 "$(<"$ipmi_pid")" 2>/dev/null; then
    echo "Reusing the IPMI emulator already running on 127.0.0.1:$ipmi_port"
else
    echo "Starting the IPMI emulator on 127.0.0.1:$ipmi_port (UDP)..."
    scripts/ironic/start-ipmi.sh "$ipmi_port" >/dev/null
    started+=(ipmi)
fi
set -a
# shellcheck disable=SC1090
. ".state/ironic/ironic-$ironic_port/bmhctl.env"
set +a

mkdir -p example-run
if $reused_ironic && [[ -f example-run/hosts.yaml ]]; then
    # The reused Ironic still has the previous run's nodes: remove them the way a user would, so
    # the fresh copy below registers new ones instead of finding stale ones.
    echo "Deleting the previous example run's hosts from Ironic..."
    "$bmhctl" delete -q --timeout 90s -f example-run/hosts.yaml || true
fi
cp hosts.example.yaml example-run/hosts.yaml
rm -rf example-run/.bmhctl
echo "Provisioning example-run/hosts.yaml through Ironic at $IRONIC_ENDPOINT..."
"$bmhctl" provision --timeline example-run/timeline.html example-run/hosts.yaml
echo
"$bmhctl" get -o wide -f example-run/hosts.yaml
echo
echo "The run's timeline: example-run/timeline.html (open it in a browser)"
