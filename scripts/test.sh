#!/usr/bin/env bash
# The whole test suite, as CI runs it: formatting, lints, unit and integration tests.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked

# The out-of-tree plugin example is a crate of its own: check it as its authors would.
example=examples/out-of-tree-plugin/Cargo.toml
cargo fmt --manifest-path "$example" -- --check
cargo clippy --manifest-path "$example" --all-targets --locked --target-dir target/out-of-tree -- -D warnings
cargo test --manifest-path "$example" --locked --target-dir target/out-of-tree

# The Ironic client and provisioner are compiled only with the `ironic` feature (the plugin
# builds them; the binary never does): lint and unit-test them that way too.
cargo clippy -p bmhctl --features ironic --all-targets --locked -- -D warnings
cargo test -p bmhctl --features ironic --locked --lib ironic
