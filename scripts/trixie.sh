#!/usr/bin/env bash
# Runs a command inside a Debian 13 (trixie, glibc 2.41) root filesystem, for the uWS
# builds whose binaries need GLIBC_2.38 (uWebSockets.js 20.57) on a machine with an older
# glibc. The root is built once with debootstrap from the Debian mirror this machine's apt
# uses, and kept outside the repository (UWS_BODY_CACHE, default ~/.cache/uws-body).
# The repository is bind-mounted at its own path, with /proc, /sys and /dev, and the host's
# npm read-only, so the command sees the same files at the same paths; everything is
# unmounted again when it ends. Needs root (chroot, mount).
#   bash scripts/trixie.sh [--] command [args...]   (run from anywhere; cwd: the repository)
#   bash scripts/trixie.sh --build                  (only build the root)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cache="${UWS_BODY_CACHE:-$HOME/.cache/uws-body}"
root="$cache/trixie"

mirror () {
  # The first http(s) Debian mirror apt is configured with (deb822 or one-line sources).
  local m
  m=$(grep -rhoE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
    grep -oE 'https?://[^ ]+' | head -1 || true)
  echo "${m:-http://deb.debian.org/debian}"
}

# curl: __test__/early-answer.test.js sends bodies with it. A root built before it was in
# the list below gets it here, from the same Debian archive, once.
add_curl () {
  [ -x "$root/usr/bin/curl" ] && return 0
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
    sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends curl' >"$cache/curl.log" 2>&1 ||
    echo "trixie.sh: could not install curl in $root (log: $cache/curl.log)" >&2
}

build () {
  if [ -x "$root/usr/bin/env" ] && [ -e "$root/.uws-body-ready" ]; then add_curl; return 0; fi
  command -v debootstrap >/dev/null || {
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  }
  rm -rf "$root.tmp"
  mkdir -p "$cache"
  local start=$SECONDS
  # gcc: a test builds a second, foreign addon to check that its externals are refused;
  # curl: see add_curl.
  debootstrap --variant=minbase --include=gcc,libc6-dev,curl trixie "$root.tmp" "$(mirror)" >"$cache/debootstrap.log" 2>&1 || {
    tail -20 "$cache/debootstrap.log" >&2
    echo "trixie.sh: debootstrap failed (log: $cache/debootstrap.log)" >&2
    exit 1
  }
  touch "$root.tmp/.uws-body-ready"
  rm -rf "$root"
  mv "$root.tmp" "$root"
  echo "trixie.sh: built $root (glibc $(chroot "$root" ldd --version | head -1 | grep -oE '[0-9.]+$')) in $((SECONDS - start)) s" >&2
}

if [ "${1:-}" = --build ]; then build; exit 0; fi
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || { echo "usage: trixie.sh [--] command [args...]" >&2; exit 2; }
build

npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
mounted=()
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup () {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
bind () { # bind SRC [ro]
  local dest="$root$1"
  mkdir -p "$dest"
  mount --bind "$1" "$dest"
  mounted+=("$dest")
  if [ "${2:-}" = ro ]; then mount -o remount,bind,ro "$dest"; fi
}
mkdir -p "$root/proc" "$root/sys" "$root/dev"
mount -t proc proc "$root/proc"; mounted+=("$root/proc")
bind /sys
bind /dev
[ -d /dev/pts ] && { mount --bind /dev/pts "$root/dev/pts"; mounted+=("$root/dev/pts"); }
bind "$repo"
bind "$npm_dir" ro
# The npm CLI inside: `npm` runs the host's npm with whatever node is first on PATH.
mkdir -p "$root/usr/local/bin"
printf '#!/bin/sh\nexec node %s/bin/npm-cli.js "$@"\n' "$npm_dir" > "$root/usr/local/bin/npm"
chmod +x "$root/usr/local/bin/npm"

set +e
# A clean environment, but for what the suite reads. The inner shell expands its "$1".
# shellcheck disable=SC2016
chroot "$root" /usr/bin/env -i \
  HOME=/root PATH="${TRIXIE_PATH:-/usr/local/bin:/usr/bin:/bin}" LANG=C.UTF-8 \
  CI="${CI:-}" UWS_BODY_TEST_UWS="${UWS_BODY_TEST_UWS:-}" UWS_BODY_TEST_SKIP="${UWS_BODY_TEST_SKIP:-}" UWS_BODY_TEST_ONLY="${UWS_BODY_TEST_ONLY:-}" \
  S3_BACKPRESSURE_MIB="${S3_BACKPRESSURE_MIB:-}" UWS_BODY_TEST_LOAD="${UWS_BODY_TEST_LOAD:-}" \
  /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$repo" "$@"
status=$?
set -e
exit $status
