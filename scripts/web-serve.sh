#!/usr/bin/env bash
# Serves memplan's web page on http://127.0.0.1:PORT/ (default 8000), building it first when
# build-web/site/ is missing or older than the sources: scripts/web-serve.sh [PORT]
set -euo pipefail
cd "$(dirname "$0")/.."
port=${1:-8000}
if [[ ! -f build-web/site/memplan.wasm ]] || [[ -n $(find web src include data -newer build-web/site/memplan.wasm -type f -print -quit) ]]; then
  scripts/web-build.sh
fi
echo "memplan: serving http://127.0.0.1:$port/" >&2
exec python3 -m http.server "$port" --bind 127.0.0.1 --directory build-web/site
