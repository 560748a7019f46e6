#!/usr/bin/env bash
# Install OpenStack Ironic, sushy-tools (the Redfish emulator) and pyghmi (the
# IPMI emulator) from PyPI into three venvs under the lab state dir, with the
# versions pinned in requirements-ironic.txt / -sushy.txt / -ipmi.txt; and
# ipmitool, which Ironic's ipmi hardware type runs, when none is on PATH.
#
# usage: scripts/ironic/install.sh [--ironic RELEASE] [ironic|sushy|ipmi|ipmitool|agent|all]...
#        (default all; `all` is what the lab and its tests run, without `agent`)
#
# agent: ironic-python-agent (requirements-agent.txt) into .venv-agent, and the tools its
# hardware collection runs that this machine lacks (udevadm, lshw, dmidecode), unpacked from
# Debian packages into STATE/agent-tools/root as ipmitool is; for collect-inventory.sh only.
#
# --ironic RELEASE (or IRONIC_RELEASE) installs another Ironic release than the pinned one, from
# its own pinned set (requirements-ironic-RELEASE.txt), into .venv-ironic-RELEASE; the start
# scripts run it when IRONIC_RELEASE names it.
#
# Idempotent: a venv whose stamp matches its requirements file is left alone
# (about 0.1 s). A first install takes about a minute for Ironic, 15 s for
# sushy-tools, 10 s for pyghmi. Safe to run concurrently (a lock serialises
# installs).
#
# ipmitool: without one on PATH, Debian's ipmitool package and those of its
# libraries that are not installed are fetched with `apt-get download` and
# unpacked into STATE/ipmitool/root (nothing is installed system-wide);
# STATE/ipmitool/bin/ipmitool runs it from there, and the Ironic start scripts
# put that directory on Ironic's PATH. When that cannot be done (no apt-get, no
# package index) it says so and Ironic runs without the ipmi hardware type. With
# IPMITOOL_DEBS set (a directory of those packages, as the offline kit carries them), they are
# unpacked instead of fetched.
#
# Environment:
#   BMHCTL_LAB_DIR   state dir (default <repo>/.state/ironic)
#   PYTHON           interpreter for the venvs (Ironic needs Python >= 3.11;
#                    default: the first of python3, python3.13, python3.12,
#                    python3.11 that is new enough)
set -euo pipefail
LAB_TAG=install
if [[ ${1:-} == --ironic ]]; then
  [[ -n ${2:-} ]] || { echo "usage: $0 --ironic RELEASE [ironic|sushy|ipmi|ipmitool|agent|all]..." >&2; exit 1; }
  IRONIC_RELEASE=$2 exec "$0" "${@:3}"
fi
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

what=" ${*:-all} "
for w in $what; do
  case $w in ironic | sushy | ipmi | ipmitool | agent | all) ;; *) die "usage: $0 [ironic|sushy|ipmi|ipmitool|agent|all]..." ;; esac
done
wants() { [[ $what == *" $1 "* || $what == *" all "* ]]; }

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
  local from=PyPI
  [[ -n ${PIP_NO_INDEX:-} ]] && from="the wheels in ${PIP_FIND_LINKS:-?}"
  log "installing $pkg==$version into $venv from $from"
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

# ipmitool from Debian packages, unpacked in the state dir (see the top). Never fails: without
# it Ironic runs without the ipmi hardware type, and start-ironic.sh says so.
install_ipmitool() {
  local dir=${IPMITOOL_DIR:?} t0 p status libs pkgs
  # one on PATH (the system's, or ours from an earlier run) is used as it is
  if command -v ipmitool >/dev/null 2>&1 || [[ -x $dir/bin/ipmitool ]]; then return 0; fi
  if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-deb >/dev/null 2>&1; then
    log "no ipmitool on PATH and no apt-get to fetch one: the ipmi hardware type needs ipmitool"
    return 0
  fi
  t0=$(now)
  rm -rf "$dir"
  mkdir -p "$dir/debs"
  if [[ -n ${IPMITOOL_DEBS:-} ]]; then
    cp "$IPMITOOL_DEBS"/*.deb "$dir/debs/" || die "no packages in IPMITOOL_DEBS=$IPMITOOL_DEBS"
    pkgs=("$IPMITOOL_DEBS"/*.deb)
  fi
  # ipmitool and those of its libraries that are not installed, as the package index says
  fetch() {
    pkgs=(ipmitool)
    for p in $(apt-cache depends ipmitool 2>/dev/null | sed -n 's/^ *Depends: \([^ <>]*\)$/\1/p'); do
      status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
      [[ $status == "install ok installed" ]] || pkgs+=("$p")
    done
    (cd "$dir/debs" && apt-get download -q "${pkgs[@]}") >>"$dir/install.log" 2>&1
  }
  # a machine whose package index was never fetched (a fresh container): as root, fetch it
  if [[ -z ${IPMITOOL_DEBS:-} ]] &&
    ! fetch && ! { [[ $(id -u) == 0 ]] && apt-get update -q >>"$dir/install.log" 2>&1 && fetch; }; then
    log "WARNING: apt-get download ${pkgs[*]} failed (see $dir/install.log): no ipmi hardware type"
    return 0
  fi
  for p in "$dir"/debs/*.deb; do dpkg-deb -x "$p" "$dir/root"; done
  libs=$(find "$dir/root" -name 'lib*.so*' -printf '%h\n' | sort -u | paste -sd:)
  # without the IANA enterprise numbers at /usr/share/misc or under $HOME/.local, every
  # ipmitool call warns on stderr: give it a HOME of its own that has them
  mkdir -p "$dir/root/home/.local/usr/share/misc" "$dir/bin"
  ln -sf "$dir/root/usr/share/misc/enterprise-numbers.txt" "$dir/root/home/.local/usr/share/misc/"
  {
    echo '#!/usr/bin/env bash'
    echo '# ipmitool unpacked from Debian packages by scripts/ironic/install.sh (not installed).'
    # shellcheck disable=SC2016 # the wrapper expands LD_LIBRARY_PATH when it runs
    printf 'HOME=%q LD_LIBRARY_PATH=%q${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec %q "$@"\n' \
      "$dir/root/home" "$libs" "$dir/root/usr/bin/ipmitool"
  } >"$dir/bin/ipmitool"
  chmod 755 "$dir/bin/ipmitool"
  if ! "$dir/bin/ipmitool" -V >>"$dir/install.log" 2>&1; then
    log "WARNING: the unpacked ipmitool does not run (see $dir/install.log): no ipmi hardware type"
    rm -f "$dir/bin/ipmitool"
    return 0
  fi
  log "$("$dir/bin/ipmitool" -V) ready in $(since "$t0")s: $dir/bin/ipmitool (from ${pkgs[*]})"
}

# The commands the agent's collection runs, from Debian packages, when the machine lacks them.
install_agent_tools() {
  local dir=${AGENT_TOOLS_DIR:?} pkgs=() t0
  command -v udevadm >/dev/null 2>&1 || pkgs+=(udev)
  command -v lshw >/dev/null 2>&1 || pkgs+=(lshw)
  command -v dmidecode >/dev/null 2>&1 || pkgs+=(dmidecode)
  ((${#pkgs[@]})) || return 0
  [[ -f $dir/.packages && $(<"$dir/.packages") == "${pkgs[*]}" ]] && return 0
  command -v apt-get >/dev/null 2>&1 || die "no ${pkgs[*]} on PATH and no apt-get to fetch them"
  t0=$(now)
  rm -rf "$dir"
  mkdir -p "$dir/debs"
  (cd "$dir/debs" && apt-get download -q "${pkgs[@]}") >>"$dir/install.log" 2>&1 ||
    die "apt-get download ${pkgs[*]} failed (see $dir/install.log)"
  for p in "$dir"/debs/*.deb; do dpkg-deb -x "$p" "$dir/root"; done
  echo "${pkgs[*]}" >"$dir/.packages"
  log "${pkgs[*]} unpacked in $(since "$t0")s into $dir/root"
}

mkdir -p "$LAB_DIR"
exec 9>"$LAB_DIR/.install.lock"
flock 9
if wants ironic; then
  install_one "$IRONIC_REQ" "$IRONIC_VENV" ironic ironic
fi
if wants sushy; then
  install_one sushy "$SUSHY_VENV" sushy-emulator sushy-tools
fi
if wants ipmi; then
  install_one ipmi "$IPMI_VENV" python pyghmi
fi
if wants ipmitool; then
  install_ipmitool
fi
if [[ $what == *" agent "* ]]; then
  install_one agent "$AGENT_VENV" python ironic-python-agent
  install_agent_tools
fi
