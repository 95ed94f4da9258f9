#!/usr/bin/env bash
# The suite (`npm test`) on every Node and uWS build this project supports, one after the
# other, then a table of the results:
#   Node 20           uWS 20.30 fork   this machine (any glibc)
#   Node 20, 22, 24   uWS 20.57        a Debian 13 root (scripts/trixie.sh: 20.57's
#                                      binaries need glibc 2.38)
# Node binaries come from the npm registry (scripts/node-dist.sh); the addon is the one
# built in the repository (N-API: one binary for every Node). Every cell must load its uWS
# build (UWS_BODY_TEST_UWS), so none can pass by skipping the files that need it.
#   bash scripts/test-matrix.sh [cell ...]   cells: 20/20.30 20/20.57 22/20.57 24/20.57 (default: all)
# The S3 files (3-4 minutes a run) run in the cells of each uWS build's oldest and newest
# Node, 20/20.30 and 24/20.57, and are left out, as the summary says, of the two between
# (UWS_BODY_TEST_SKIP); UWS_BODY_MATRIX_S3=all runs them everywhere.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
[ $# -gt 0 ] || set -- 20/20.30 20/20.57 22/20.57 24/20.57
rows=()
status=0
for cell in "$@"; do
  node_major=${cell%/*}
  uws=${cell#*/}
  node_bin=$(bash scripts/node-dist.sh "$node_major") || exit 1
  skip=""
  case "$cell" in 20/20.57|22/20.57) [ "${UWS_BODY_MATRIX_S3:-}" = all ] || skip=s3 ;; esac
  log=$(mktemp)
  echo "== npm test: Node $node_major, uWS $uws"
  if [ "$uws" = 20.30 ]; then
    PATH="$(dirname "$node_bin"):$PATH" UWS_BODY_TEST_UWS=$uws UWS_BODY_TEST_SKIP=$skip npm test 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
  else
    TRIXIE_PATH="$(dirname "$node_bin"):/usr/local/bin:/usr/bin:/bin" UWS_BODY_TEST_UWS=$uws UWS_BODY_TEST_SKIP=$skip \
      bash scripts/trixie.sh npm test 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
  fi
  [ "$rc" = 0 ] || status=1
  summary=$(grep '^run-tests: summary:' "$log" | tail -1 | sed 's/^run-tests: summary: //')
  rows+=("$(printf '%-9s %-6s exit %-3s %s' "Node $node_major" "$uws" "$rc" "${summary:-no summary (the run did not start)}")")
  rm -f "$log"
done
echo
echo "test-matrix:"
printf '  %s\n' "${rows[@]}"
exit $status
