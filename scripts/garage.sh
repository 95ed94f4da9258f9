#!/usr/bin/env bash
# Installs garage (the S3-compatible object store the S3 tests and bench start on
# 127.0.0.1) where they look for it: target/tools/garage/bin/garage, inside the repository
# so the Debian 13 root of scripts/trixie.sh sees it too. Built once from crates.io with
# `cargo install --locked` into a cache outside the repository (UWS_BODY_CACHE, default
# ~/.cache/uws-body: 6 min on a quiet 2-core machine, 15 on a busy one) and linked from
# there; a cached binary of the wanted version is used as it is.
#   bash scripts/garage.sh        prints the binary's path
set -euo pipefail
version="${GARAGE_VERSION:-2.5.0}"
repo=$(cd "$(dirname "$0")/.." && pwd)
cache="${UWS_BODY_CACHE:-$HOME/.cache/uws-body}/garage"
dest="$repo/target/tools/garage/bin"

has_version () { [ -x "$1" ] && "$1" --version 2>/dev/null | grep "cargo:$version " >/dev/null; }

if ! has_version "$cache/bin/garage"; then
  command -v cargo >/dev/null || { echo "garage.sh: cargo is needed to build garage $version" >&2; exit 1; }
  start=$SECONDS
  echo "garage.sh: building garage $version (cargo install --locked, several minutes)" >&2
  cargo install garage --version "$version" --locked --root "$cache" >&2
  echo "garage.sh: built in $((SECONDS - start)) s" >&2
fi
if ! has_version "$dest/garage"; then
  mkdir -p "$dest"
  rm -f "$dest/garage"
  # A hard link where the cache is on the same filesystem, else a copy (55 MB).
  ln "$cache/bin/garage" "$dest/garage" 2>/dev/null || cp "$cache/bin/garage" "$dest/garage"
fi
echo "$dest/garage"
