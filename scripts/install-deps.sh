#!/usr/bin/env bash
# Installs the Debian 12 packages memplan builds with, only those that are missing; arguments name
# more packages (scripts/test-web.sh: emscripten chromium nodejs npm). The Python package (python/)
# builds with pybind11-dev against the python3 on PATH; without one, Debian's is installed, with
# its headers and pytest.
set -euo pipefail
packages=(cmake g++ make libcli11-dev nlohmann-json3-dev libfmt-dev catch2 clang clang-format git libcurl4-openssl-dev libyaml-cpp-dev pybind11-dev "$@")
python=$(command -v python3 || true)
if [[ -z $python || $python == /usr/bin/python3 ]]; then
  packages+=(python3 python3-dev python3-pytest)
fi
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
# A python3 of its own (pyenv's) may lack pytest, which the Python package's tests need.
if ! python3 -c "import pytest" 2>/dev/null; then
  echo "memplan: installing pytest for $(command -v python3)" >&2
  python3 -m pip install -q --disable-pip-version-check pytest
fi
