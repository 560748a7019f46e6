#!/usr/bin/env bash
# The real-Ironic lifecycle tests against each supported Ironic release, one at a time: for each
# release a fresh Ironic (its own venv, installed on first use), the Redfish and IPMI emulators,
# then the lab tests of tests/integration/ironic_lab.rs, data_image_lab.rs and ipmi_lab.rs
# (fake-hardware, Redfish and IPMI: enroll, inspect out of band and in band from agent data,
# clean, deploy, deprovision, delete, power, reboot, virtual media), then a summary line per
# release. Exits 1 when a release failed.
#
# usage: scripts/ironic-matrix.sh [RELEASE...]
#   RELEASE: one of the pinned sets, scripts/ironic/requirements-ironic-RELEASE.txt, or the
#   default lab's (scripts/ironic/requirements-ironic.txt). Default: all of them, oldest first,
#   but those marked "bmhctl: below the minimum" (kept to test the refusal).
#
# Environment: BMHCTL_MATRIX_PORT (Ironic, default 6805; its image server takes the next port),
# BMHCTL_MATRIX_SUSHY_PORT (default 6810), BMHCTL_MATRIX_IPMI_PORT (the first IPMI BMC, default
# 6823), BMHCTL_LAB_DIR as for scripts/ironic/.
set -euo pipefail
cd "$(dirname "$0")/.."
port=${BMHCTL_MATRIX_PORT:-6805}
sushy_port=${BMHCTL_MATRIX_SUSHY_PORT:-6810}
ipmi_port=${BMHCTL_MATRIX_IPMI_PORT:-6823}
pinned=$(sed -n 's/^ironic==\(.*\)$/\1/p' scripts/ironic/requirements-ironic.txt)

if [[ $# -gt 0 ]]; then
  releases=("$@")
else
  mapfile -t releases < <(
    # (a release below BMO's minimum API is only there to be refused: ironic_lab.rs does that)
    { grep -L "bmhctl: below the minimum" scripts/ironic/requirements-ironic-*.txt |
      sed 's/.*requirements-ironic-//; s/\.txt$//'; echo "$pinned"; } |
      sort -u -V
  )
fi

trap 'scripts/ironic/stop-ironic.sh "$port" >/dev/null 2>&1 || true
  scripts/ironic/stop-sushy.sh "$sushy_port" >/dev/null 2>&1 || true
  scripts/ironic/stop-ipmi.sh "$ipmi_port" >/dev/null 2>&1 || true' EXIT
export SUSHY_PASSWORD=${SUSHY_PASSWORD:-Pw-Lab-Canary-2718}
export IPMI_PASSWORD=${IPMI_PASSWORD:-$SUSHY_PASSWORD}
scripts/ironic/start-sushy.sh "$sushy_port" >/dev/null
IPMI_FRESH=1 scripts/ironic/start-ipmi.sh "$ipmi_port" >/dev/null
export SUSHY_URL=http://127.0.0.1:$sushy_port IPMI_BMC_BASE_PORT=$ipmi_port

cargo build --workspace --quiet
summary=()
failed=0
for r in "${releases[@]}"; do
  # The pinned release runs from the default venv.
  if [[ $r == "$pinned" ]]; then rel=; else rel=$r; fi
  echo "== Ironic $r"
  t0=$(date +%s)
  if ! IRONIC_RELEASE=$rel IRONIC_FRESH=1 scripts/ironic/start-ironic.sh "$port" >/dev/null; then
    summary+=("$r: Ironic did not start")
    failed=1
    continue
  fi
  api=$(curl -sS "http://127.0.0.1:$port/v1/" | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"]["version"])')
  set -a
  # shellcheck source=/dev/null
  . "${BMHCTL_LAB_DIR:-.state/ironic}/ironic-$port/bmhctl.env"
  set +a
  # The tests that start an Ironic of their own start this release too.
  if IRONIC_RELEASE=$rel cargo test --quiet --test integration -- --include-ignored \
    --test-threads 2 ironic_lab data_image_lab ipmi_lab; then
    result=passed
  else
    result=FAILED
    failed=1
  fi
  summary+=("$r (API $api): $result in $(($(date +%s) - t0)) s")
  scripts/ironic/stop-ironic.sh "$port" >/dev/null
done

echo "== summary"
printf '%s\n' "${summary[@]}"
exit "$failed"
