#!/usr/bin/env bash
# Install OpenStack Ironic and sushy-tools (the Redfish emulator) from PyPI
# into two venvs under the lab state dir, with the versions pinned in
# requirements-ironic.txt / requirements-sushy.txt.
#
# usage: scripts/ironic/install.sh [--ironic RELEASE] [ironic|sushy|all]     (default all)
#
# --ironic RELEASE (or IRONIC_RELEASE) installs another Ironic release than the pinned one, from
# its own pinned set (requirements-ironic-RELEASE.txt), into .venv-ironic-RELEASE; the start
# scripts run it when IRONIC_RELEASE names it.
#
# Idempotent: a venv whose stamp matches its requirements file is left alone
# (about 0.1 s). A first install takes about a minute for Ironic and 15 s for
# sushy-tools. Safe to run concurrently (a lock serialises installs).
#
# Environment:
#   BMHCTL_LAB_DIR   state dir (default <repo>/.state/ironic)
#   PYTHON           interpreter for the venvs (Ironic needs Python >= 3.11;
#                    default: the first of python3, python3.13, python3.12,
#                    python3.11 that is new enough)
set -euo pipefail
LAB_TAG=install
if [[ ${1:-} == --ironic ]]; then
  [[ -n ${2:-} ]] || { echo "usage: $0 --ironic RELEASE [ironic|sushy|all]" >&2; exit 1; }
  IRONIC_RELEASE=$2 exec "$0" "${@:3}"
fi
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

what=${1:-all}
case $what in ironic | sushy | all) ;; *) die "usage: $0 [ironic|sushy|all]" ;; esac

find_python() {
  local c
  for c in ${PYTHON:-} python3 python3.13 python3.12 python3.11; do
    command -v "$c" >/dev/null 2>&1 || continue
    if "$c" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$c"
      return
    fi
  done
  die "no Python >= 3.11 found (Ironic $(pinned ironic ironic) requires it); set PYTHON"
}

# stamp: what the venv was built from; a change of requirements rebuilds it
stamp_of() { sha256sum "$LAB_SCRIPTS/requirements-$1.txt" | cut -d' ' -f1; }

ready() { # NAME VENV BINARY
  [[ -x $2/bin/$3 && -f $2/.bmhctl-stamp && $(<"$2/.bmhctl-stamp") == "$(stamp_of "$1")" ]]
}

install_one() { # NAME VENV BINARY TOP-LEVEL-PACKAGE
  local name=$1 venv=$2 bin=$3 pkg=$4 py t0 version
  ready "$name" "$venv" "$bin" && return 0
  version=$(pinned "$name" "$pkg")
  py=$(find_python)
  t0=$(now)
  log "installing $pkg==$version into $venv from PyPI"
  rm -rf "$venv"
  "$py" -m venv "$venv" ||
    die "'$py -m venv' failed (Debian: apt-get install python3-venv)"
  if ! "$venv/bin/pip" install -q --disable-pip-version-check \
    -r "$LAB_SCRIPTS/requirements-$name.txt"; then
    # a pin that disappeared from the index should not block a lab: fall
    # back to the top-level package and let pip resolve the rest
    log "WARNING: the pinned set did not install; trying plain $pkg==$version"
    "$venv/bin/pip" install -q --disable-pip-version-check "$pkg==$version" ||
      die "pip install $pkg==$version failed"
  fi
  stamp_of "$name" >"$venv/.bmhctl-stamp"
  log "$pkg $version ready in $(since "$t0")s ($(du -sh "$venv" | cut -f1))"
}

mkdir -p "$LAB_DIR"
exec 9>"$LAB_DIR/.install.lock"
flock 9
if [[ $what == ironic || $what == all ]]; then
  install_one "$IRONIC_REQ" "$IRONIC_VENV" ironic ironic
fi
if [[ $what == sushy || $what == all ]]; then
  install_one sushy "$SUSHY_VENV" sushy-emulator sushy-tools
fi
