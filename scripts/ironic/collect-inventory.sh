#!/usr/bin/env bash
# Print this machine's inspection data as ironic-python-agent gathers it: the real agent from
# PyPI (install.sh agent, once), its default collector and GenericHardwareManager reading this
# machine, written in the JSON the agent sends to Ironic. scripts/ironic/agent_inventory.py answer
# sends such a file to Ironic's inspection endpoint; tests/data/agent-inventory/ keeps one.
#
# usage: scripts/ironic/collect-inventory.sh [--pxe-mac MAC] >FILE
#
# --pxe-mac MAC: the interface the machine booted from, as a ramdisk learns it from the kernel's
# BOOTIF argument (without it, Ironic's validate-interfaces hook marks no interface as PXE).
# Run as root: the agent reads disks and firmware tables as a ramdisk does.
set -euo pipefail
LAB_TAG=collect-inventory
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

"$LAB_SCRIPTS/install.sh" agent >&2
for d in bin sbin usr/bin usr/sbin; do
  [[ -d $AGENT_TOOLS_DIR/root/$d ]] && PATH=$AGENT_TOOLS_DIR/root/$d:$PATH
done
export PATH
exec "$AGENT_VENV/bin/python" "$LAB_SCRIPTS/agent_inventory.py" collect "$@"
