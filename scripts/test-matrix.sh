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
# The long files, S3 (4-8 minutes a run) and early-answer (3 minutes), run in the cells of
# each uWS build's oldest and newest Node, 20/20.30 and 24/20.57, and are left out, as
# the summary says, of the two between (UWS_BODY_TEST_SKIP); UWS_BODY_MATRIX_FULL=1 runs
# them everywhere. Under CI the 20/20.30 cell's S3 backpressure upload is 256 MiB (1 GiB
# in 24/20.57).
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
  case "$cell" in 20/20.57|22/20.57) [ -n "${UWS_BODY_MATRIX_FULL:-}" ] || skip=s3,early-answer ;; esac
  s3_mib=""
  [ "$cell" = 20/20.30 ] && [ -n "${CI:-}" ] && s3_mib=256
  log=$(mktemp)
  echo "== npm test: Node $node_major, uWS $uws"
  if [ "$uws" = 20.30 ]; then
    PATH="$(dirname "$node_bin"):$PATH" UWS_BODY_TEST_UWS=$uws UWS_BODY_TEST_SKIP=$skip S3_BACKPRESSURE_MIB=$s3_mib \
      npm test 2>&1 | tee "$log"
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
