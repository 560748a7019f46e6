#!/usr/bin/env bash
# The main job: build bmhctl and its plugins (staged in target/release/plugins/), then provision
# a copy of hosts.example.yaml with progress and a final table. The copy (and its status) is left
# in ./example-run/ for `bmhctl get`.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/stage-plugins.sh release
./target/release/bmhctl plugin list
mkdir -p example-run
cp hosts.example.yaml example-run/hosts.yaml
rm -rf example-run/.bmhctl
echo "Provisioning example-run/hosts.yaml with the built-in fixture provisioner..."
./target/release/bmhctl provision --provisioner fixture example-run/hosts.yaml
echo
./target/release/bmhctl get -o wide -f example-run/hosts.yaml
