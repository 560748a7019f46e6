#!/usr/bin/env bash
# The whole test suite, as CI runs it: formatting, lints, unit and integration tests, the
# integration tests against a real Ironic and Redfish emulator (started here when not given).
set -euo pipefail
cd "$(dirname "$0")/.."

cargo fmt --all -- --check

# The Ironic plugin is a library of the provisioner interface, not of the CLI: none of the CLI's
# crates may reach it.
if cargo tree -e normal -p ironic-provisioner --locked --prefix none |
    grep -E '^(clap|clap_complete|clap_mangen|indicatif|comfy-table|console|libloading|bmhctl) '; then
    echo "error: ironic-provisioner depends on a CLI crate (above)" >&2
    exit 1
fi
# Nor does the CLI reach Ironic but through the plugin: no HTTP client of its own.
if cargo tree -e normal -p bmhctl --locked --prefix none | grep -E '^reqwest '; then
    echo "error: bmhctl depends on reqwest (above): Ironic is the plugin's to reach" >&2
    exit 1
fi
cargo clippy --workspace --all-targets --locked -- -D warnings

# The real-Ironic tests (tests/integration/ironic_lab.rs, ipmi_lab.rs, ...) need the lab: an
# Ironic, the Redfish emulator and the IPMI emulator (scripts/ironic/). .ci/run starts them and
# exports IRONIC_ENDPOINT, SUSHY_URL and IPMI_BMC_BASE_PORT; without IRONIC_ENDPOINT, this script
# starts them for the run (the first time installs them from PyPI, about 45 s) on
# BMHCTL_LAB_IRONIC_PORT (6385), BMHCTL_LAB_SUSHY_PORT (8000) and BMHCTL_LAB_IPMI_PORT (6623), and
# on exit stops what it started itself (a lab already running there is used and left running).
if [[ -z ${IRONIC_ENDPOINT:-} ]]; then
    ironic_port=${BMHCTL_LAB_IRONIC_PORT:-6385}
    sushy_port=${BMHCTL_LAB_SUSHY_PORT:-8000}
    ipmi_port=${BMHCTL_LAB_IPMI_PORT:-6623}
    lab_started=()
    stop_lab() {
        for s in ${lab_started[@]+"${lab_started[@]}"}; do
            "scripts/ironic/stop-${s%:*}.sh" "${s#*:}" >/dev/null 2>&1 || true
        done
    }
    trap stop_lab EXIT
    curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$ironic_port/" ||
        lab_started+=("ironic:$ironic_port")
    curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$sushy_port/" ||
        lab_started+=("sushy:$sushy_port")
    # UDP: no answer to probe without a client; its pid file says whether it runs
    ipmi_pid=${BMHCTL_LAB_DIR:-.state/ironic}/ipmi-$ipmi_port/ipmi.pid
    [[ -s $ipmi_pid ]] && kill -0 "$(<"$ipmi_pid")" 2>/dev/null ||
        lab_started+=("ipmi:$ipmi_port")
    scripts/ironic/start-ironic.sh "$ironic_port" >/dev/null
    # The emulators' BMC password is one the tests look for in everything bmhctl writes
    # (tests/integration/canary.rs).
    export SUSHY_PASSWORD=${SUSHY_PASSWORD:-Pw-Lab-Canary-2718}
    export IPMI_PASSWORD=${IPMI_PASSWORD:-$SUSHY_PASSWORD}
    scripts/ironic/start-sushy.sh "$sushy_port" >/dev/null
    scripts/ironic/start-ipmi.sh "$ipmi_port" >/dev/null
    set -a
    # shellcheck source=/dev/null
    . "${BMHCTL_LAB_DIR:-.state/ironic}/ironic-$ironic_port/bmhctl.env"
    set +a
    export SUSHY_URL=http://127.0.0.1:$sushy_port IPMI_BMC_BASE_PORT=$ipmi_port
fi
# One test widens the instant of a save's swap with strace (installed with apt-get when missing
# and run as root, as start-postgres.sh installs PostgreSQL).
if ! command -v strace >/dev/null; then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
        apt-get install -y -q strace >/dev/null 2>&1 ||
            { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q strace >/dev/null 2>&1; } ||
            { echo "error: apt-get install strace failed" >&2; exit 1; }
    else
        echo "error: strace not found: apt-get install strace" >&2
        exit 1
    fi
fi
# The package tests (tests/integration/package.rs) build the .deb with scripts/package-deb.sh
# (cargo-deb: `cargo install cargo-deb --locked` takes about a minute; the package's release
# build about 5 more from cold, 15 s once built) and read it with dpkg-deb, systemd-analyze and
# strace. The offline kit's test (tests/integration/offline_kit.rs) packs the kit around it and
# installs it in a network namespace (ip, unshare; as root): about 4 minutes.
if ! cargo deb --version >/dev/null 2>&1; then
    echo "installing cargo-deb (cargo install cargo-deb --locked, about a minute)" >&2
    cargo install cargo-deb --locked >/dev/null 2>&1 ||
        { echo "error: cargo install cargo-deb --locked failed" >&2; exit 1; }
fi
# (`man` checks the unit's Documentation=man: pages.)
for tool in dpkg-deb:dpkg systemd-analyze:systemd man:man-db ip:iproute2 unshare:util-linux; do
    command -v "${tool%:*}" >/dev/null && continue
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
        apt-get install -y -q "${tool#*:}" >/dev/null 2>&1 ||
            { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q "${tool#*:}" >/dev/null 2>&1; } ||
            { echo "error: apt-get install ${tool#*:} failed" >&2; exit 1; }
    else
        echo "error: ${tool%:*} not found: apt-get install ${tool#*:}" >&2
        exit 1
    fi
done
# The timeline test lays its page out in headless Chromium (Debian's `chromium`, installed the
# same way when missing).
if ! command -v chromium >/dev/null; then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
        apt-get install -y -q chromium >/dev/null 2>&1 ||
            { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1; } ||
            { echo "error: apt-get install chromium failed" >&2; exit 1; }
    else
        echo "error: chromium not found: apt-get install chromium" >&2
        exit 1
    fi
fi
# The tests that need the lab, strace, the package tools or chromium are #[ignore]d in a plain `cargo test` (a
# machine with only Rust passes it); here they have what they need. A lab test spends most of
# its time waiting on Ironic, and each lab's tests take turns on its lock: four test threads keep
# two cores busy meanwhile (the suite's wall time about halves).
cargo test --workspace --locked -- --include-ignored --test-threads 4

# The out-of-tree plugin example is a crate of its own: check it as its authors would.
example=examples/out-of-tree-plugin/Cargo.toml
cargo fmt --manifest-path "$example" -- --check
cargo clippy --manifest-path "$example" --all-targets --locked --target-dir target/out-of-tree -- -D warnings
cargo test --manifest-path "$example" --locked --target-dir target/out-of-tree

# The fleet and at-rest benchmarks run by hand (docs/benchmarks.md: 1,000 hosts take most of an
# hour); a 20-host run of each, one minute at rest, keeps them working (figures not judged at this
# size), each on ports of its own and PostgreSQL (start-postgres.sh installs it when missing),
# all-in-one: a split Ironic's conductors take fixed JSON-RPC addresses one lab at a time.
scripts/stage-plugins.sh debug >/dev/null
scripts/bench-ironic.py --hosts 20 --topology all-in-one --contenders driver-bmo,bmhctl \
    --bin target/debug/bmhctl --port 6565 --pg-port 15565
scripts/bench-watch-rest.py --hosts 20 --topology all-in-one --minutes 1 --warmup 20 --samples 1 \
    --bin target/debug/bmhctl --port 6575 --pg-port 15575
