#!/usr/bin/env bash
# Quick start, second command (and what CI runs): install what is missing, check formatting, then
# build and run the whole test suite twice, warnings as errors both times:
#   g++, Debug (-g1), AddressSanitizer + UBSan (build-asan)
#   clang++, Release                           (build-clang)
# and build the consumer project (tests/consumer) against the installed library and through
# add_subdirectory, and last the web page's tests (scripts/test-web.sh: wasm vs native, a browser
# test in headless chromium). The clang build also builds the Python module (-DMEMPLAN_PYTHON=ON),
# whose pytest suite (tests/python) compares the package's answers with the binary's JSON. Every
# CTest run includes check.ctest_runs_every_catch2_test: CTest must run exactly the test cases
# Catch2 has.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)
# run_suite DIR EXCLUDE CMAKE_ARGS...: build DIR, then run every CTest test whose name does not
# match the regular expression EXCLUDE (empty: every test).
run_suite() {
  local dir=$1 exclude=$2; shift 2
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DMEMPLAN_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
  (cd "$dir" && ctest --output-on-failure -j"$jobs" ${exclude:+-E "$exclude"})
}
# The Catch2 test cases tagged [many-runs], as one anchored regular expression of their names: the
# cases that run one path over many plans or sample configs (the matrix, the --from samples, the
# goldens). Under ASan at -O0 they took 107 s of the suite's 228 s (2 cores) for code the other
# cases already run under ASan; they run in the Release build.
many_runs() {
  "$1/tests/memplan_tests" "[many-runs]" --list-test-names-only | sed -e '/^$/d' -e 's/[][\\.*+?^$()|]/\\&/g' |
    paste -sd'|' | sed -e 's/^/^(/' -e 's/$/)$/'
}

echo "== formatting (clang-format --dry-run --Werror) (at ${SECONDS} s)"
clang_format=$(command -v clang-format-14 || command -v clang-format)
git ls-files -z '*.cpp' '*.hpp' '*.h' '*.cc' | xargs -0 "$clang_format" --dry-run --Werror

echo "== g++: build and test (warnings as errors, AddressSanitizer + UBSan) (at ${SECONDS} s)"
# -g1: line tables only, all a sanitizer's report needs for file:line; a quarter less compile time
# than -g (31.5 -> 23.2 s CPU for a batch of 16 tests).
# The [many-runs] cases are left to the Release build (many_runs above). The suite is built first
# so that their names can be read from the test binary.
CC=gcc CXX=g++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DMEMPLAN_WERROR=ON -DMEMPLAN_SANITIZE=ON \
  -DCMAKE_CXX_FLAGS_DEBUG=-g1 >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  CC=gcc CXX=g++ run_suite build-asan "$(many_runs build-asan)" -DMEMPLAN_SANITIZE=ON -DCMAKE_CXX_FLAGS_DEBUG=-g1

echo "== clang++: build and test (warnings as errors, Release) (at ${SECONDS} s)"
# check.unity_names_unique compiles the whole source as one translation unit, whichever build runs
# it (40 s with clang, 27 s with g++): the g++ suite above runs it.
CC=clang CXX=clang++ run_suite build-clang '^check\.unity_names_unique$' -DCMAKE_BUILD_TYPE=Release \
  -DMEMPLAN_PYTHON=ON -DPython_EXECUTABLE="$(python3 -c 'import sys; print(sys.executable)')"

echo "== Python package: pytest, each function against the binary's --format json (tests/python) (at ${SECONDS} s)"
PYTHONPATH=build-clang/python MEMPLAN_BINARY=build-clang/memplan python3 -m pytest -q -p no:cacheprovider tests/python

echo "== consumer project (find_package from an install, add_subdirectory) (at ${SECONDS} s)"
scripts/check-consumer.sh build-clang

echo "== web page: wasm vs native, browser test (scripts/test-web.sh) (at ${SECONDS} s)"
scripts/test-web.sh build-clang/memplan
echo "== done (at ${SECONDS} s)"
