#!/usr/bin/env bash
# The web page's tests (scripts/test.sh runs this last): builds the WebAssembly memplan
# (scripts/web-build.sh), then
#   1. wasm vs native: each command of tests/web/commands.txt run by the native binary and by the
#      wasm module under node must print byte-identical stdout and stderr with the same exit code;
#   2. the browser test: Debian's chromium, headless, through playwright-core (tests/web, npm ci),
#      fills the page's form and checks the result against the native --format json.
# usage: scripts/test-web.sh [NATIVE_MEMPLAN]   (default build-clang/memplan, built if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
native=${1:-build-clang/memplan}
# nodejs and npm only where missing: NodeSource's nodejs carries its own npm (Debian's npm conflicts).
packages=(emscripten chromium libxml2-utils)
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
scripts/install-deps.sh "${packages[@]}"
if [[ ! -x $native ]]; then
  cmake -S . -B "$(dirname "$native")" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$(dirname "$native")" -j"$(nproc)" --target memplan
fi
start=$(date +%s)
scripts/web-build.sh

echo "== wasm vs native: tests/web/commands.txt"
# The same environment for both: a UTF-8 locale (the wasm module's), no COLUMNS, no NO_COLOR.
node_run=(node --no-experimental-fetch tests/web/run_cli.mjs build-web/memplan.js)
out=build-web/compare
mkdir -p "$out"
failed=0 count=0
while IFS= read -r line; do
  [[ -z $line || $line == \#* ]] && continue
  read -r -a args <<<"$line"
  count=$((count + 1))
  set +e
  env -i PATH="$PATH" LANG=C.UTF-8 "$native" "${args[@]}" >"$out/native.out" 2>"$out/native.err"
  native_code=$?
  env -i PATH="$PATH" LANG=C.UTF-8 "${node_run[@]}" "${args[@]}" >"$out/wasm.out" 2>"$out/wasm.err"
  wasm_code=$?
  set -e
  if [[ $native_code != "$wasm_code" ]] || ! cmp -s "$out/native.out" "$out/wasm.out" ||
    ! cmp -s "$out/native.err" "$out/wasm.err"; then
    echo "FAILED: memplan $line (exit native $native_code, wasm $wasm_code)"
    diff "$out/native.out" "$out/wasm.out" | head -20 || true
    diff "$out/native.err" "$out/wasm.err" | head -5 || true
    failed=1
  fi
done <tests/web/commands.txt
((failed)) && exit 1
echo "ok: $count commands byte-identical (stdout, stderr, exit code)"

echo "== browser test: chromium headless through playwright-core"
(cd tests/web && npm ci --no-audit --no-fund --silent)
expected=$("$native" estimate --model llama-2-7b --mode train --precision amp-bf16 --optimizer adamw \
  --batch 4 --seq 2048 --lora 16 --gpu rtx-4090,a100-80gb --format json |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["required_bytes"])')
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory build-web/site >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/')" 2>/dev/null && break
  sleep 0.2
done
config=tests/data/hf_configs/Mistral-7B-v0.1.json
expected_config=$("$native" estimate --config "$config" --mode train --precision amp-bf16 --optimizer adamw \
  --batch 4 --seq 2048 --lora 16 --gpu rtx-4090,a100-80gb --format json |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["required_bytes"])')
# Switched to inference, the page drops the training recipe: the checkpoint's dtype (issue 27).
expected_infer=$("$native" estimate --model llama-2-7b --mode infer --batch 4 --seq 2048 --gpu rtx-4090,a100-80gb \
  --format json | python3 -c 'import json, sys; print(json.load(sys.stdin)["required_bytes"])')
node tests/web/browser_test.mjs "http://127.0.0.1:$port/" "$expected" build-web/screenshot.png "$config" "$expected_config" \
  "$expected_infer"
echo "memplan: web build and tests took $(($(date +%s) - start)) s (screenshot: build-web/screenshot.png)"
