#!/usr/bin/env bash
# Fails unless every linux-gnu binary given (default: npm/linux-*-gnu/*.node) needs at most
# GLIBC_2.17, the highest symbol version it imports being what the dynamic loader checks.
set -euo pipefail
cd "$(dirname "$0")/.."
LIMIT="${GLIBC_LIMIT:-2.17}"
shopt -s nullglob
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(npm/linux-*-gnu/*.node)
[ ${#files[@]} -gt 0 ] || { echo "check-glibc: no linux-gnu binary to check" >&2; exit 1; }
status=0
for f in "${files[@]}"; do
  max=$(objdump -T "$f" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
  if [ -z "$max" ]; then
    echo "check-glibc: $f: no GLIBC symbol versions (not a glibc binary?)" >&2; status=1
  elif [ "$(printf '%s\n%s\n' "$max" "$LIMIT" | sort -V | tail -1)" != "$LIMIT" ]; then
    echo "check-glibc: $f needs GLIBC_$max, over the $LIMIT baseline" >&2; status=1
  else
    echo "check-glibc: $f needs GLIBC_$max (baseline $LIMIT): ok"
  fi
done
exit $status
