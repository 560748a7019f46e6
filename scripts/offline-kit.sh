#!/usr/bin/env bash
# Packs the offline kit, on a machine with network: the Debian package (bmhctl, its plugins, man
# pages, completions, the service), the lab's Ironic, Redfish emulator and IPMI emulator as wheels
# (their pinned sets, every dependency, built here), ipmitool's Debian packages, the lab scripts
# and the example, in one tarball. Prints the tarball's path on the last line of stdout.
#
#   scripts/offline-kit.sh [OUT_DIR]          (default target/offline-kit)
#
# On the machine with no network:
#
#   tar xzf bmhctl-offline-kit-VERSION.tar.gz && bmhctl-offline-kit/install.sh
#
# The wheels are for this machine's Python and architecture (Python 3.11 or newer on the other
# machine too; Debian 12 here).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/offline-kit}
python=${PYTHON:-python3}

# BMHCTL_DEB: a package built already (by scripts/package-deb.sh).
deb=${BMHCTL_DEB:-$(scripts/package-deb.sh | tail -n 1)}
version=$(dpkg-deb -f "$deb" Version)
kit=$out/bmhctl-offline-kit
rm -rf "$kit"
mkdir -p "$kit/wheels" "$kit/debs" "$kit/scripts"
cp "$deb" "$kit/"

# Wheels for each pinned set: built here (a package published as source only too), so that the
# other machine only unpacks them.
for set in ironic sushy ipmi; do
    echo "wheels for requirements-$set.txt..." >&2
    "$python" -m pip wheel -q --disable-pip-version-check -w "$kit/wheels" \
        -r "scripts/ironic/requirements-$set.txt" >&2
done

# ipmitool (Ironic's ipmi hardware type runs it) and the libraries it depends on.
# shellcheck disable=SC2046 # one word per package
(cd "$kit/debs" && apt-get download -q ipmitool \
    $(apt-cache depends ipmitool | sed -n 's/^ *Depends: \([^ <>]*\)$/\1/p')) >&2

cp -R scripts/ironic "$kit/scripts/"
rm -rf "$kit/scripts/ironic/__pycache__"
cp scripts/run-example.sh "$kit/scripts/"
cp hosts.example.yaml "$kit/"
cp scripts/offline-kit-install.sh "$kit/install.sh"
chmod 755 "$kit/install.sh"

tarball=$out/bmhctl-offline-kit-$version.tar.gz
tar -C "$out" -czf "$tarball" bmhctl-offline-kit
echo "$(du -h "$tarball" | cut -f1) in $(find "$kit" -type f | wc -l) files" >&2
echo "$tarball"
