#!/usr/bin/env bash
# Builds the release binary for one napi platform id into npm/<id>/, stripped, as it is
# published: `bash scripts/build-target.sh linux-x64-gnu`. Linux ids only (this machine
# builds those; .github/workflows/CI.yml builds macOS and Windows on their own runners).
# glibc targets carry zig's `.2.17` suffix: the binary then needs at most GLIBC_2.17
# (CentOS 7, Debian 8 era) instead of the build machine's glibc (2.34+ by default here).
set -euo pipefail
cd "$(dirname "$0")/.."
id="${1:?usage: build-target.sh <linux-x64-gnu|linux-arm64-gnu|linux-x64-musl|linux-arm64-musl>}"
case "$id" in
  linux-x64-gnu) target=x86_64-unknown-linux-gnu.2.17 ;;
  linux-arm64-gnu) target=aarch64-unknown-linux-gnu.2.17 ;;
  linux-x64-musl) target=x86_64-unknown-linux-musl ;;
  linux-arm64-musl) target=aarch64-unknown-linux-musl ;;
  *) echo "build-target.sh: $id is not built here (see CI.yml)" >&2; exit 2 ;;
esac
source scripts/zig-tools.sh
if command -v rustup >/dev/null; then rustup target add "${target%%.*}" >/dev/null 2>&1 || true; fi
# --dts: the generated declarations go to a throwaway file; index.d.ts is written by hand.
npx napi build --platform --release --strip --cross-compile --target "$target" \
  --output-dir "npm/$id" --no-js --dts ../../target/napi/index.d.ts
ls -l "npm/$id/uws-body.$id.node"
