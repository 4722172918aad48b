#!/usr/bin/env bash
# Builds tests/consumer (a program that embeds memplan and checks the lesson's 7B table) the two
# ways another project can take memplan, and runs it each time:
#   1. `cmake --install` into a temporary prefix, then find_package(memplan) from there;
#   2. add_subdirectory(memplan) from the consumer's own build.
# Usage: scripts/check-consumer.sh [BUILD_DIR]   (an existing memplan build to install from;
#        without one, a Debug build of the library is made in the temporary directory)
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
jobs=$(nproc)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/memplan-consumer.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

build=${1:-}
if [[ -z $build ]]; then
  build=$tmp/memplan
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DMEMPLAN_TESTS=OFF >/dev/null
  cmake --build "$build" -j"$jobs" --target memplan memplan_core >/dev/null
fi

echo "== consumer: find_package(memplan) from an installed prefix"
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S tests/consumer -B "$tmp/installed" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/installed" -j"$jobs" >/dev/null
"$tmp/installed/memplan_consumer"

echo "== consumer: add_subdirectory(memplan)"
cmake -S tests/consumer -B "$tmp/subdir" -DCMAKE_BUILD_TYPE=Debug -DMEMPLAN_SOURCE="$src" >/dev/null
cmake --build "$tmp/subdir" -j"$jobs" --target memplan_consumer >/dev/null
"$tmp/subdir/memplan_consumer"
