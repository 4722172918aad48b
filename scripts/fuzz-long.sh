#!/usr/bin/env bash
# Long libFuzzer runs of every target, several processes per target, and a summary table.
#   scripts/fuzz-long.sh FUZZ_BIN_DIR OUT_DIR RUNS_PER_PROCESS PROCESSES_PER_TARGET [MAX_SECONDS] [TARGETS...]
# FUZZ_BIN_DIR holds the fuzz_* binaries (build-fuzz/fuzz); each process starts from a copy of the
# committed seeds (fuzz/corpus/<target>) in its own folder and runs -runs=RUNS_PER_PROCESS
# (or until MAX_SECONDS). Prints per target: processes, executions, seconds, findings (crash-*,
# timeout-*, oom-*, leak-* files left in OUT_DIR). Exit 1 when any process found something.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=$(cd "$1" && pwd) out=$(mkdir -p "$2" && cd "$2" && pwd) runs=$3 procs=$4 max=${5:-0}
shift 5 2>/dev/null || shift $#
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(hf_config safetensors gguf presets gradient_values plan command_line)
mkdir -p "$out"
for t in "${targets[@]}"; do
  for p in $(seq 1 "$procs"); do
    dir=$out/corpus_${t}_$p
    mkdir -p "$dir" && cp -r "$root/fuzz/corpus/$t/." "$dir/"
    (cd "$out" && "$bin/fuzz_$t" -runs="$runs" -max_total_time="$max" -max_len=4096 -timeout=10 \
        -rss_limit_mb=2048 -seed=$((1000 * p + ${#t})) -print_final_stats=1 "$dir" \
        >"$out/log_${t}_$p.txt" 2>&1) &
  done
done
wait
status=0
printf '%-18s %5s %14s %9s %10s  %s\n' target procs executions seconds exec/s findings
for t in "${targets[@]}"; do
  execs=0 secs=0 found=""
  for p in $(seq 1 "$procs"); do
    log=$out/log_${t}_$p.txt
    n=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    s=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | awk '{print $5}' | tail -1)
    execs=$((execs + ${n:-0}))
    [ "${s:-0}" -gt "$secs" ] && secs=${s:-0}
    if grep -q -E '^==[0-9]+==ERROR|deadly signal|SUMMARY: |ERROR: libFuzzer' "$log"; then
      found="$found $(basename "$log")"
      status=1
    fi
  done
  rate=$((secs > 0 ? execs / secs / procs : 0))
  printf '%-18s %5d %14d %9d %10d  %s\n' "$t" "$procs" "$execs" "$secs" "$rate" "${found:-none}"
done
exit $status
