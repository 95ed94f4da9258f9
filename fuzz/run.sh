#!/usr/bin/env bash
# Coverage-guided fuzzing of the core and every decoder with libFuzzer.
#   fuzz/run.sh [seconds per target]    (default 60)
# Builds the targets the way cargo-fuzz does (SanitizerCoverage + AddressSanitizer),
# without needing cargo-fuzz or a nightly toolchain: RUSTC_BOOTSTRAP lets the stable
# compiler take -Zsanitizer, whose runtime ships with the stable toolchain. A crash
# leaves its input in fuzz/artifacts/<target>/ and fails the run.
set -euo pipefail
cd "$(dirname "$0")"
per_target=${1:-60}
target=$(rustc -vV | sed -n 's/^host: //p')
export RUSTC_BOOTSTRAP=1
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Zsanitizer=address \
-Cdebug-assertions -Coverflow-checks"
cargo build --release --target "$target" --bins --quiet
node seeds.js
for t in body decode multipart digest; do
  mkdir -p "corpus/$t" "artifacts/$t"
  echo "== $t: ${per_target}s"
  "target/$target/release/$t" -max_total_time="$per_target" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="artifacts/$t/" "corpus/$t" "seeds/$t" 2>&1 |
    grep -E "^(#[0-9]+ *DONE|stat::number_of_executed_units|stat::peak_rss|==[0-9]+==ERROR|SUMMARY|Done)|panicked|Test unit written" || true
  test -z "$(ls -A "artifacts/$t")" || { echo "fuzz: $t found a crash, see fuzz/artifacts/$t/"; exit 1; }
done
