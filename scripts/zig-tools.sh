# shellcheck shell=bash
# Sourced by the build scripts: puts cargo-zigbuild and zig (both from PyPI) on PATH.
# zig links linux binaries against an old glibc's symbol versions (the `.2.17` suffix of a
# target) and against musl, with one toolchain and no container.
ZIG_VENV="${UWS_BODY_TOOLS:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/target/tools}/zig-venv"
if [ ! -x "$ZIG_VENV/bin/cargo-zigbuild" ]; then
  python3 -m venv "$ZIG_VENV"
  "$ZIG_VENV/bin/pip" install --quiet --disable-pip-version-check ziglang==0.17.1 cargo-zigbuild==0.24.1
fi
export PATH="$ZIG_VENV/bin:$PATH"
