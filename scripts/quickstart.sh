#!/usr/bin/env bash
# Quick start, first command: install what is missing, build (the binary and the Python module),
# install the Python package into the python3 on PATH from that build (nothing downloaded), and
# run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
python=$(python3 -c 'import sys; print(sys.executable)')
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMEMPLAN_TESTS=OFF -DMEMPLAN_PYTHON=ON -DPython_EXECUTABLE="$python" >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
# pip runs python/build_backend.py, which finds the module built and packs it: no index is asked.
# A Python that Debian manages (PEP 668) takes no pip install; PYTHONPATH=build/python imports it.
if "$python" -c 'import os, sys, sysconfig
managed = os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))
sys.exit(1 if managed and sys.prefix == sys.base_prefix else 0)' && "$python" -m pip --version >/dev/null 2>&1; then
  PIP_ROOT_USER_ACTION=ignore "$python" -m pip install -q --no-index --disable-pip-version-check ./python
else
  echo "memplan: $python takes no pip install here; use the package with PYTHONPATH=$PWD/build/python" >&2
fi
./build/memplan estimate --model llama-2-7b --precision amp-bf16 --optimizer adamw
