#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: build memplan, then compare `memplan probe` with nvidia-smi.
# Fails (exit 1) when total, used or free memory of any GPU differ by more than 1 MiB.
#   scripts/gpu-check.sh [BUILD_DIR]      (default: build-gpu-check; reuses an existing build)
#   MEMPLAN_BINARY=path scripts/gpu-check.sh   (checks that binary; builds nothing)
# Exit codes: 0 agree, 1 disagree, 2 build failed, 125 no nvidia-smi (not an NVIDIA machine).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build-gpu-check}

if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "gpu-check: nvidia-smi not found; this check needs an NVIDIA machine" >&2
  exit 125
fi

if [ -n "${MEMPLAN_BINARY:-}" ]; then
  memplan=$MEMPLAN_BINARY
  echo "== using $memplan"
else
  echo "== building memplan in $build"
  configure=(-DCMAKE_BUILD_TYPE=Release -DMEMPLAN_TESTS=OFF)
  [ -f "$build/CMakeCache.txt" ] && configure=()  # an existing build keeps its settings
  if ! { cmake -S "$root" -B "$build" "${configure[@]}" >/dev/null &&
         cmake --build "$build" -j"$(nproc)" --target memplan >/dev/null; }; then
    echo "gpu-check: build failed" >&2
    exit 2
  fi
  memplan=$build/memplan
fi

# nvidia-smi ignores CUDA_VISIBLE_DEVICES; make memplan list every GPU in NVML order too.
unset CUDA_VISIBLE_DEVICES
export CUDA_DEVICE_ORDER=PCI_BUS_ID

echo "== memplan probe"
"$memplan" probe || true
echo "== nvidia-smi --query-gpu=name,memory.total,memory.used,memory.free (MiB)"
smi=$(nvidia-smi --query-gpu=index,name,memory.total,memory.used,memory.free,mig.mode.current \
        --format=csv,noheader,nounits)
echo "$smi"

probe_json=$("$memplan" probe --format json) || {
  echo "gpu-check: memplan probe found no GPU but nvidia-smi does:" >&2
  echo "$probe_json" >&2
  exit 1
}

status=0
PROBE_JSON=$probe_json SMI_CSV=$smi python3 - <<'PY' || status=$?
import json, os, sys

MIB = 1024 * 1024
probe = json.loads(os.environ["PROBE_JSON"])
rows = [[c.strip() for c in line.split(",")] for line in os.environ["SMI_CSV"].splitlines() if line.strip()]
by_nvml = {}
for d in probe["devices"]:
    by_nvml.setdefault(d["nvml_index"], []).append(d)

failures = 0
print("== comparison (MiB; tolerance 1 MiB)")
print(f"{'gpu':>3}  {'field':<6} {'nvidia-smi':>11} {'memplan':>11} {'diff':>8}")
for idx, name, total, used, free, mig in rows:
    i = int(idx)
    devices = by_nvml.get(i, [])
    if mig.lower() == "enabled":
        print(f"{i:>3}  MIG mode: nvidia-smi shows the board, memplan its {len(devices)} instance(s); not compared")
        continue
    if len(devices) != 1:
        print(f"{i:>3}  {name}: memplan has no device for NVML index {i}")
        failures += 1
        continue
    d = devices[0]
    if d["name"] != name:
        print(f"{i:>3}  name differs: nvidia-smi {name!r}, memplan {d['name']!r}")
        failures += 1
    for field, smi_value in (("total", total), ("used", used), ("free", free)):
        ours = d.get(f"memory_{field}_bytes")
        if ours is None or not smi_value.replace(".", "").isdigit():
            print(f"{i:>3}  {field:<6} {smi_value:>11} {str(ours):>11}  (not comparable)")
            failures += 1
            continue
        ours_mib = ours / MIB
        diff = ours_mib - float(smi_value)
        bad = abs(diff) > 1.0
        failures += bad
        print(f"{i:>3}  {field:<6} {smi_value:>11} {ours_mib:>11.1f} {diff:>+8.2f}{'  <-- FAIL' if bad else ''}")
    if d.get("memory_reserved_bytes") is None:
        print(f"{i:>3}  note: reserved unknown (v1 memory call); memplan's used includes it")
sys.exit(1 if failures else 0)
PY
if [ "$status" -eq 0 ]; then
  echo "gpu-check: memplan probe agrees with nvidia-smi"
else
  echo "gpu-check: memplan probe and nvidia-smi DISAGREE" >&2
fi
exit "$status"
