#!/usr/bin/env bash
# Quick start, second command: install what is missing, then build and run the whole test suite
# twice: warnings as errors, then under AddressSanitizer + UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)
run_suite() {
  local dir=$1; shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DMEMPLAN_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
  (cd "$dir" && ctest --output-on-failure -j"$jobs")
}
echo "== build and test (warnings as errors)"
run_suite build-test
echo "== build and test (AddressSanitizer + UBSan)"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 run_suite build-asan -DMEMPLAN_SANITIZE=ON
