#!/usr/bin/env bash
# Issue 32: are the why-oom and diff readers linear? Times `memplan why-oom` on logs of 20k, 40k and
# 80k distinct PyTorch messages, and `memplan diff` of an estimate JSON with itself with 5k, 10k and
# 20k breakdown keys (and as many fit rows); each time should roughly double with the input.
# Best of REPS wall times. Usage: scripts/bench-readers.sh [path/to/memplan]   (default build/memplan)
set -euo pipefail
memplan=${1:-build/memplan}
reps=${REPS:-3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

best_ms() {  # best wall time of "$@" over $reps runs, in milliseconds
  local best=
  for _ in $(seq "$reps"); do
    local t0=$EPOCHREALTIME
    "$@" >/dev/null 2>&1 || true
    local t1=$EPOCHREALTIME
    local ms
    ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) * 1000 }')
    if [[ -z $best ]] || awk -v x="$ms" -v y="$best" 'BEGIN { exit !(x < y) }'; then best=$ms; fi
  done
  echo "$best"
}

echo "| input | size | best of $reps |"
echo "|---|---:|---:|"
for n in 20000 40000 80000; do
  python3 -c "
for i in range($n):
    print(f'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {i+1}.00 MiB. GPU 0 has a total '
          f'capacity of 79.15 GiB of which 20.00 MiB is free.')" >"$dir/oom$n.log"
  echo "| why-oom, $n distinct messages | $(stat -c %s "$dir/oom$n.log") B | $(best_ms "$memplan" why-oom "$dir/oom$n.log") ms |"
done
for n in 5000 10000 20000; do
  python3 -c "
import json
rows = [{'gpu': f'g{i}', 'memory_bytes': 100, 'required_bytes': 40, 'spare_bytes': 60, 'verdict': 'fits'}
        for i in range($n)]
print(json.dumps({'schema': 'memplan.estimate/1', 'breakdown': {f'k{i}': i for i in range($n)},
                  'total_bytes': 40, 'required_bytes': 40, 'fit': rows}))" >"$dir/diff$n.json"
  echo "| diff, $n breakdown keys + $n fit rows | $(stat -c %s "$dir/diff$n.json") B | $(best_ms "$memplan" diff "$dir/diff$n.json" "$dir/diff$n.json") ms |"
done
