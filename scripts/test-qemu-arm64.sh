#!/usr/bin/env bash
# Runs the tests of the linux-arm64-gnu binary on this x64 machine: an arm64 Node from the
# npm registry under qemu-user, with uWS's own arm64 binary (uws_linux_arm64_115.node,
# shipped in the uWS build the tests use) and the addon from npm/linux-arm64-gnu.
#   bash scripts/test-qemu-arm64.sh [--no-build] [test files...]   (default: all of __test__)
# Needs Debian's qemu-user-static, libc6-arm64-cross and libstdc++6-arm64-cross (installed
# here if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
id=linux-arm64-gnu
if [ "${1:-}" = --no-build ]; then shift; else bash scripts/build-target.sh "$id"; fi
bash scripts/check-glibc.sh "npm/$id/uws-body.$id.node"

if ! command -v qemu-aarch64-static >/dev/null || [ ! -e /usr/aarch64-linux-gnu/lib/libstdc++.so.6 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user-static libc6-arm64-cross libstdc++6-arm64-cross >/dev/null
fi
node_arm64=$(bash scripts/node-dist.sh 20 arm64)

# A script that starts the arm64 node under qemu; it stands in for process.execPath.
wrapper="$repo/target/tools/node-arm64-qemu"
printf '#!/bin/sh\nexec qemu-aarch64-static -L /usr/aarch64-linux-gnu %s "$@"\n' "$node_arm64" > "$wrapper"
chmod +x "$wrapper"
export UWS_BODY_EXEC_PATH="$wrapper"
export NODE_OPTIONS="--require $repo/scripts/test-env/exec-path.js"
export UWS_BODY_NATIVE_PATH="$repo/npm/$id/uws-body.$id.node"

# shellcheck disable=SC2016 # a JS template literal
"$wrapper" -p '`arm64 check: process.arch=${process.arch}, Node ${process.version}`'
dir="$repo/__test__"
if [ $# -gt 0 ]; then
  # A subset: a folder of symlinks to the named files, so run-tests.js runs just those.
  dir=$(mktemp -d "$repo/target/tools/qemu-subset.XXXXXX")
  trap 'rm -rf "$dir"' EXIT
  ln -s "$repo/__test__/helpers" "$dir/helpers"
  for f in "$@"; do ln -s "$repo/__test__/$f" "$dir/$f"; done
fi
start=$(date +%s)
"$wrapper" scripts/run-tests.js --all "$dir"
echo "test-qemu-arm64: $(( $(date +%s) - start )) s under qemu"
