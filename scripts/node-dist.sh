#!/usr/bin/env bash
# Prints the path of a Node binary of the given version range and architecture, fetched
# once from the npm registry's node-linux-<arch> package (what the `node` package installs)
# into target/tools/node/. Usage: node-dist.sh 22 [x64|arm64]
set -euo pipefail
range="${1:?usage: node-dist.sh <version range> [x64|arm64]}"
arch="${2:-x64}"
tools="${UWS_BODY_TOOLS:-$(cd "$(dirname "$0")/.." && pwd)/target/tools}"
dest="$tools/node/linux-$arch-$range"
if [ ! -x "$dest/bin/node" ]; then
  tmp=$(mktemp -d)
  tgz=$(cd "$tmp" && npm pack --silent "node-linux-$arch@$range")
  mkdir -p "$dest"
  tar -xzf "$tmp/$tgz" -C "$dest" --strip-components=1
  rm -rf "$tmp"
fi
echo "$dest/bin/node"
