#!/usr/bin/env bash
# The offline kit's installer (packed as install.sh by scripts/offline-kit.sh): installs bmhctl
# and the lab from the kit alone, with no network, then runs the example: a local Ironic, the
# Redfish and IPMI emulators, and bmhctl provisioning hosts.example.yaml through them.
#
#   ./install.sh                 as root: installs the package (dpkg -i), then the lab and example
#   ./install.sh --prefix DIR    unpacks the package under DIR instead (no root, nothing system-wide)
#   ./install.sh --no-example    installs only
#
# The lab goes into .state/ beside this script (Python venvs from the kit's wheels, ipmitool
# unpacked from its packages). Needs Python 3.11 or newer with venv, and dpkg.
set -euo pipefail
kit=$(cd "$(dirname "$0")" && pwd)
cd "$kit"
prefix=
example=true
while (($#)); do
    case $1 in
        --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
        --no-example) example=false; shift ;;
        *) echo "usage: $0 [--prefix DIR] [--no-example]" >&2; exit 2 ;;
    esac
done

deb=$(ls "$kit"/bmhctl_*.deb)
if [[ -n $prefix ]]; then
    mkdir -p "$prefix"
    prefix=$(cd "$prefix" && pwd)
    dpkg-deb -x "$deb" "$prefix"
    bmhctl=$prefix/usr/bin/bmhctl
    # Unpacked, not installed: the plugins are where the system directory would be, under DIR.
    export PROVISIONER_PLUGIN_DIR=$prefix/usr/lib/bmhctl/plugins
else
    [[ $(id -u) == 0 ]] || { echo "install.sh: run as root to install the package, or give --prefix DIR" >&2; exit 1; }
    dpkg -i "$deb"
    bmhctl=/usr/bin/bmhctl
fi
echo "installed: $("$bmhctl" version | head -n 1)"

# The lab from the kit: pip takes the wheels and nothing else, ipmitool comes from its packages.
PIP_NO_INDEX=1 PIP_FIND_LINKS=$kit/wheels IPMITOOL_DEBS=$kit/debs scripts/ironic/install.sh all

if $example; then
    BMHCTL_BIN=$bmhctl scripts/run-example.sh
fi
