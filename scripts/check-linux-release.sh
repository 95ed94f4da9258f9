#!/usr/bin/env bash
# Everything this machine can prove about the linux release, longer than CI runs (about
# 10 minutes with warm caches): builds linux-x64-gnu, linux-arm64-gnu and linux-x64-musl,
# checks their glibc baseline, installs the x64 package as a user and runs its tests,
# runs the whole suite of the arm64 binary under qemu, and the test matrix (Node 20-24, both uWS builds).
set -euo pipefail
cd "$(dirname "$0")/.."
for id in linux-x64-gnu linux-arm64-gnu linux-x64-musl; do bash scripts/build-target.sh "$id"; done
bash scripts/check-glibc.sh
bash scripts/test-package.sh --no-build
bash scripts/test-qemu-arm64.sh --no-build
bash scripts/test-matrix.sh
