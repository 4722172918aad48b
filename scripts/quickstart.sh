#!/usr/bin/env bash
# Quick start, first command: install what is missing, build, and run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMEMPLAN_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
./build/memplan estimate --model llama-2-7b --precision amp-bf16 --optimizer adamw
