#!/usr/bin/env bash
# Creates bench/frameworks/.venv with the pinned frameworks of requirements.txt (torch from the
# CPU wheel index). Never a dependency of the build or of CI; only the measurement harness uses it.
#   bench/frameworks/setup_venv.sh            # pinned versions (requirements.txt)
#   UNPINNED=1 bench/frameworks/setup_venv.sh # newest versions (to refresh the pins)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
py="${PYTHON:-python3}"
if [ ! -x "$here/.venv/bin/python" ]; then
  "$py" -m venv "$here/.venv"
fi
pip=("$here/.venv/bin/python" -m pip)
nice -n 10 "${pip[@]}" install --upgrade pip
# torch: the CPU wheel index where it can be reached, else PyPI's wheel (it brings the CUDA
# libraries as packages; the harness runs on the CPU either way).
cpu_index=https://download.pytorch.org/whl/cpu
if [ "${UNPINNED:-0}" = 1 ]; then
  nice -n 10 "${pip[@]}" install --retries 0 --timeout 15 --index-url "$cpu_index" torch ||
    nice -n 10 "${pip[@]}" install torch
  nice -n 10 "${pip[@]}" install transformers peft accelerate trl torchtune torchao litgpt
  nice -n 10 "${pip[@]}" install bitsandbytes || echo "bitsandbytes did not install (it is optional)"
else
  nice -n 10 "${pip[@]}" install --retries 0 --timeout 15 --extra-index-url "$cpu_index" -r "$here/requirements.txt" ||
    nice -n 10 "${pip[@]}" install -r "$here/requirements.txt"
fi
"$here/.venv/bin/python" -c "import torch, transformers, peft; print('torch', torch.__version__, 'transformers', transformers.__version__, 'peft', peft.__version__)"
