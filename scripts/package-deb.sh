#!/usr/bin/env bash
# Builds the Debian package: bmhctl, its plugins (ironic, demo), man pages, completions and the
# systemd service (packaging/debian/, [package.metadata.deb] in Cargo.toml). Prints the .deb's
# path on the last line of stdout.
#
#   scripts/package-deb.sh
#
# Installs cargo-deb (`cargo install cargo-deb --locked`, about a minute) when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo deb --version >/dev/null 2>&1; then
    echo "cargo-deb not found: installing it (cargo install cargo-deb --locked)" >&2
    cargo install cargo-deb --locked >&2
fi

# The release binary and the plugins staged beside it (target/release/plugins/), which the
# package's assets name. Progress goes to stderr: stdout is the package's path.
scripts/stage-plugins.sh release >&2

target_dir="${CARGO_TARGET_DIR:-target}"
out="$target_dir/debian"
# One package in the output directory: the one just built.
rm -f "$out"/bmhctl_*.deb
# --no-build: what stage-plugins.sh built is what is packaged.
cargo deb --no-build --locked --output "$out/" >&2
ls "$out"/bmhctl_*.deb
