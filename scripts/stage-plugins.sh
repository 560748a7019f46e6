#!/usr/bin/env bash
# Builds the workspace and stages every in-tree provisioner plugin where bmhctl looks for it by
# default: target/<profile>/plugins/<name>-provisioner.so, i.e. `plugins/` beside
# target/<profile>/bmhctl (PROVISIONER_PLUGIN_DIR overrides the directory at run time).
#
#   scripts/stage-plugins.sh [debug|release]     (default: debug)
#
# Idempotent: rebuilding is cargo's no-op when nothing changed, and a staged file is replaced
# only when it differs from the freshly built library. The test plugins
# (tests/plugins/*) are never staged.
set -euo pipefail
cd "$(dirname "$0")/.."

# The in-tree plugins: "<cargo package> <plugin name>". cargo builds package P as
# lib<P with - replaced by _>.so; it is staged as <plugin name>-provisioner.so.
PLUGINS=(
    "demo-provisioner demo"
    "ironic-provisioner ironic"
)

profile="${1:-debug}"
case "$profile" in
    debug) cargo_profile_args=() ;;
    release) cargo_profile_args=(--release) ;;
    *)
        echo "usage: $0 [debug|release]" >&2
        exit 2
        ;;
esac

cargo build --workspace "${cargo_profile_args[@]}" --locked

target_dir="${CARGO_TARGET_DIR:-target}"
out="$target_dir/$profile"
plugin_dir="$out/plugins"
mkdir -p "$plugin_dir"

for entry in "${PLUGINS[@]}"; do
    read -r package name <<<"$entry"
    lib="$out/lib${package//-/_}.so"
    dest="$plugin_dir/$name-provisioner.so"
    if [[ ! -f "$lib" ]]; then
        echo "error: $lib was not built (is $package a cdylib workspace member?)" >&2
        exit 1
    fi
    if [[ -f "$dest" ]] && cmp -s "$lib" "$dest"; then
        echo "up to date: $dest"
        continue
    fi
    # Copy, then rename: a running bmhctl that has the old file mapped keeps a valid mapping.
    cp "$lib" "$dest.tmp.$$"
    mv -f "$dest.tmp.$$" "$dest"
    echo "staged: $dest (from $lib)"
done
