#!/usr/bin/env bash
# Builds the WebAssembly memplan (web/CMakeLists.txt) into build-web/ and stages the page in
# build-web/site/ (web/'s files + memplan.js + memplan.wasm). Not part of the native build.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(emscripten)
command -v node >/dev/null || packages+=(nodejs)
scripts/install-deps.sh "${packages[@]}"
# Debian's emscripten runs its JavaScript tools with the system node modules.
export NODE_PATH=/usr/share/nodejs
emcmake cmake -S web -B build-web -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-web -j"$(nproc)"
mkdir -p build-web/site
cp web/index.html web/page.js web/style.css build-web/memplan.js build-web/memplan.wasm build-web/site/
echo "memplan: the page is in build-web/site ($(stat -c %s build-web/memplan.wasm) bytes of wasm)"
