#!/usr/bin/env bash
# Runs the suite (scripts/run-tests.js) on each Node major given (default 18 20 22 24),
# with Node binaries from the npm registry, against the addon built in the repository
# (N-API: one binary for every Node). Where the uWS build has no binary for a Node's ABI
# (22, 24), run-tests.js runs the files that do not need uWS and names the others.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
[ $# -gt 0 ] || set -- 18 20 22 24
summary=()
status=0
for v in "$@"; do
  node_bin=$(bash scripts/node-dist.sh "$v") || exit 1
  log=$(mktemp)
  "$node_bin" scripts/run-tests.js 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] || status=1
  summary+=("Node $("$node_bin" --version): exit $rc; $(grep -E '^(# |ℹ )(pass|fail) ' "$log" | tr '\n' ' ')")
  rm -f "$log"
done
printf 'test-node-versions: %s\n' "${summary[@]}"
exit $status
