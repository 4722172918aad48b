#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and PyTorch: every GPU check memplan has, in one run.
#   scripts/gpu-accuracy.sh [OUT_DIR]     (default: gpu-accuracy-out)
# Runs scripts/gpu-check.sh (probe vs nvidia-smi), bench/accuracy/accuracy.py (plain-module
# decoders, per term and peak) and bench/accuracy/hf_train.py (transformers models: full fine-tune,
# LoRA, inference), each under its own time limit, and leaves their logs and JSON in OUT_DIR.
# MEMPLAN_BINARY names a memplan already built (else gpu-check.sh builds one).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-gpu-accuracy-out}
mkdir -p "$out"
export PYTHONUNBUFFERED=1

nvidia-smi >"$out/nvidia-smi.txt" 2>&1
python3 -c 'import torch, sys; print(torch.__version__, torch.version.cuda, sys.version)' >>"$out/nvidia-smi.txt" 2>&1
timeout 300 "$root/scripts/gpu-check.sh" 2>&1 | tee "$out/gpu-check.log"
bin=${MEMPLAN_BINARY:-$root/build-gpu-check/memplan}
timeout "${ACCURACY_TIMEOUT:-200}" python3 "$root/bench/accuracy/accuracy.py" --memplan "$bin" --device cuda \
  --out "$out/accuracy.json" 2>&1 | tee "$out/accuracy.log"
timeout "${HF_TIMEOUT:-200}" python3 "$root/bench/accuracy/hf_train.py" --memplan "$bin" \
  --out "$out/hf_train.json" 2>&1 | tee "$out/hf_train.log"
echo "gpu-accuracy: logs in $out"
