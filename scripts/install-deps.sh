#!/usr/bin/env bash
# Installs the Debian 12 packages memplan builds with, only those that are missing; arguments name
# more packages (scripts/test-web.sh: emscripten chromium nodejs npm).
set -euo pipefail
packages=(cmake g++ make libcli11-dev nlohmann-json3-dev libfmt-dev catch2 clang clang-format git libcurl4-openssl-dev libyaml-cpp-dev "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "memplan: installing ${missing[*]}" >&2
  sudo=""; [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
