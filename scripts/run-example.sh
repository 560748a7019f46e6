#!/usr/bin/env bash
# The main job: build bmhctl and its plugins (staged in target/release/plugins/), start a local
# Ironic and the sushy-tools Redfish emulator on loopback (installed from PyPI into
# .state/ironic/ the first time), provision a copy of hosts.example.yaml through them with
# progress and a final table, and stop what this script started.
#
# The copy (and its status) is left in ./example-run/ for `bmhctl get`. hosts.example.yaml points
# at the emulator on 127.0.0.1:8000 and at Ironic's image server on 127.0.0.1:6386, so the lab
# uses its default ports (Ironic 6385, emulator 8000). A lab already running there is reused and
# left running.
#
# To use your own Ironic instead, skip this script: set IRONIC_ENDPOINT (and, as for BMO,
# METAL3_AUTH_ROOT_DIR, IRONIC_CACERT_FILE, DEPLOY_ISO_URL ...) and run
# `target/release/bmhctl provision your-hosts.yaml` (see README.md, "Using your own Ironic").
set -euo pipefail
cd "$(dirname "$0")/.."

ironic_port=6385
sushy_port=8000
bmhctl=./target/release/bmhctl

./scripts/stage-plugins.sh release
"$bmhctl" plugin list

answers() { curl -s -o /dev/null --max-time 2 "$1"; }

started=()
cleanup() {
    for what in "${started[@]}"; do
        case "$what" in
            ironic) scripts/ironic/stop-ironic.sh "$ironic_port" >/dev/null 2>&1 || true ;;
            sushy) scripts/ironic/stop-sushy.sh "$sushy_port" >/dev/null 2>&1 || true ;;
        esac
    done
}
trap cleanup EXIT

reused_ironic=false
if answers "http://127.0.0.1:$ironic_port/"; then
    echo "Reusing the Ironic already answering on 127.0.0.1:$ironic_port"
    reused_ironic=true
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
"$bmhctl" provision example-run/hosts.yaml
echo
"$bmhctl" get -o wide -f example-run/hosts.yaml
