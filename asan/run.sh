#!/usr/bin/env bash
# The JS test suite (npm run test:all) against the addon built with AddressSanitizer,
# loaded into an ordinary Node: every test, its child processes and worker threads run
# the instrumented native code, and any report fails the run.
#
# Needs: the stable Rust toolchain (RUSTC_BOOTSTRAP unlocks -Zsanitizer on it, as for the
# Rust tests), x86_64 Linux, a C compiler. Usage: bash asan/run.sh [npm run test:all arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

target=x86_64-unknown-linux-gnu
out=target/asan
mkdir -p "$out"

echo "== build the addon with AddressSanitizer"
RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Zsanitizer=address" \
  cargo build --release --lib --target "$target" --target-dir "$out"
# Named as a build of this platform is (the loader's tests read the platform id from it).
addon="$out/uws-body.linux-x64-gnu.node"
cp "$out/$target/release/libuws_body.so" "$addon"
# The instrumentation must really be there: a build without it would pass vacuously.
# grep reads all of nm's output: with -q it would stop at the first match, and nm, killed by
# SIGPIPE, would fail the pipeline (pipefail) on an instrumented build.
nm -D "$addon" | grep __asan_report_load >/dev/null || { echo "asan: $addon is not instrumented" >&2; exit 1; }

echo "== the ASan runtime as a shared library (rustc links it only into executables)"
# Rust's own copy of the runtime, so it matches the compiler's instrumentation exactly;
# its preinit object cannot go into a shared library and is not needed under LD_PRELOAD.
runtime="$out/libasan-rt.so"
archive="$(rustc --print sysroot)/lib/rustlib/$target/lib/librustc-stable_rt.asan.a"
objects=$(mktemp -d)
(cd "$objects" && ar x "$archive" && rm -f asan_preinit*.o)
cc -shared -o "$runtime" "$objects"/*.o -lpthread -ldl -lm -lrt -lstdc++
rm -rf "$objects"

echo "== npm run test:all with the instrumented addon"
reports="$out/reports"
rm -rf "$reports" && mkdir -p "$reports"
# detect_leaks=0: Node itself does not free everything at exit (the suite checks the
# addon's own memory with stats() instead). allocator_may_return_null=1: a failed
# allocation returns null, as from the real allocator, which the tests of memory
# exhaustion rely on (ASan would otherwise abort there). Reports go to files, one per
# process, so a report in a child process or a test that expects a child to fail is not
# lost.
status=0
UWS_BODY_NATIVE_PATH="$PWD/$addon" \
LD_PRELOAD="$PWD/$runtime" \
ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:halt_on_error=1:abort_on_error=1:log_path=$PWD/$reports/asan" \
  npm run test:all -- "$@" || status=$?

# Warnings (an allocation the tests make fail on purpose) are shown; errors fail the run.
if compgen -G "$reports/asan*" > /dev/null; then
  if grep -l "ERROR: AddressSanitizer" "$reports"/asan* > /dev/null; then
    echo "asan: reports:" >&2
    cat "$reports"/asan* >&2
    exit 1
  fi
  echo "asan: warnings (no error):"
  cat "$reports"/asan*
fi
[ "$status" -eq 0 ] || { echo "asan: npm run test:all failed ($status)" >&2; exit "$status"; }
echo "asan: npm run test:all passed with the instrumented addon, no report"
