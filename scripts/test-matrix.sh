#!/usr/bin/env bash
# The whole suite (`npm run test:all`: `npm test`'s files and the heavy ones) on every Node
# and uWS build this project supports, one after the other, then a table of the results:
#   Node 20           uWS 20.30 fork   this machine (any glibc)
#   Node 20, 22, 24   uWS 20.57        a Debian 13 root (scripts/trixie.sh: 20.57's
#                                      binaries need glibc 2.38)
# Node binaries come from the npm registry (scripts/node-dist.sh); the addon is the one
# built in the repository (N-API: one binary for every Node). Every cell must load its uWS
# build (UWS_BODY_TEST_UWS), so none can pass by skipping the files that need it.
#   bash scripts/test-matrix.sh [cell ...]   cells: 20/20.30 20/20.57 22/20.57 24/20.57 (default: all)
# Every cell runs every file. Under CI the cells other than 24/20.57 (the stack users run)
# run the heaviest tests on fewer tries and files (UWS_BODY_TEST_LOAD=light,
# __test__/helpers/load.js: 5 refused uploads per client instead of 20, a form of 20
# files instead of 50, a single upload of 256 MiB instead of 1 GiB), and two cells leave
# out what another run of CI already ran on the same stack, each saying so:
#   20/20.30  only the S3, early-answer and native-edge* files: .ci/run's package test
#             ran the others on this Node and uWS, against the installed release binary
#             (and native-edge-faults without its build, which needs cargo);
#   20/20.57  all but the S3 and early-answer files, which run on Node 20 in 20/20.30
#             and on uWS 20.57 in 22/20.57 and 24/20.57.
# About 20 minutes here under CI.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
[ $# -gt 0 ] || set -- 20/20.30 20/20.57 22/20.57 24/20.57
rows=()
failed=()
status=0
for cell in "$@"; do
  node_major=${cell%/*}
  uws=${cell#*/}
  node_bin=$(bash scripts/node-dist.sh "$node_major") || exit 1
  load="" skip="" only=""
  if [ -n "${CI:-}" ]; then
    [ "$cell" != 24/20.57 ] && load=light
    case "$cell" in
      20/20.30) only=s3,early-answer,native-edge ;;
      20/20.57) skip=s3,early-answer ;;
    esac
  fi
  log=$(mktemp)
  echo "== npm test -- --all (npm run test:all): Node $node_major, uWS $uws${load:+ (UWS_BODY_TEST_LOAD=$load)}${skip:+ (UWS_BODY_TEST_SKIP=$skip)}${only:+ (UWS_BODY_TEST_ONLY=$only)}"
  if [ "$uws" = 20.30 ]; then
    PATH="$(dirname "$node_bin"):$PATH" UWS_BODY_TEST_UWS=$uws UWS_BODY_TEST_SKIP=$skip UWS_BODY_TEST_ONLY=$only UWS_BODY_TEST_LOAD=$load \
      npm test -- --all 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
  else
    TRIXIE_PATH="$(dirname "$node_bin"):/usr/local/bin:/usr/bin:/bin" UWS_BODY_TEST_UWS=$uws UWS_BODY_TEST_SKIP=$skip UWS_BODY_TEST_ONLY=$only UWS_BODY_TEST_LOAD=$load \
      bash scripts/trixie.sh npm test -- --all 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
  fi
  [ "$rc" = 0 ] || status=1
  summary=$(grep '^run-tests: summary:' "$log" | tail -1 | sed 's/^run-tests: summary: //')
  rows+=("$(printf '%-9s %-6s exit %-3s %s' "Node $node_major" "$uws" "$rc" "${summary:-no summary (the run did not start)}")")
  while IFS= read -r line; do failed+=("$cell: ${line#run-tests: failed: }"); done < <(grep '^run-tests: failed: ' "$log")
  rm -f "$log"
done
echo
echo "test-matrix:"
printf '  %s\n' "${rows[@]}"
# The failures with their errors last: a long log is often read from its end only.
if [ ${#failed[@]} -gt 0 ]; then
  echo "failed:"
  printf '  %s\n' "${failed[@]}"
fi
exit $status
