#!/usr/bin/env bash
# Times memplan as whole cold processes (exec, dynamic linking, start-up, the command, exit) side
# by side with a C++ hello-world built by the same compiler and flags (bench/hello.cpp), and runs
# the in-process Google Benchmarks; prints both as markdown tables for docs/performance.md.
# Run by hand (not in CI): the figures depend on the machine and its load.
#   scripts/bench-cli.sh              build Release into build-bench, then measure
#   scripts/bench-cli.sh --no-build   measure what build-bench holds
# Environment: RUNS (processes per command, default 200), REPS (Google Benchmark repetitions,
# default 5; the table shows their median), BUILD_DIR (default build-bench), TIMER=loop (use the
# fallback timer even when hyperfine is installed).
# Uses hyperfine (apt-get install -y hyperfine) when installed, else a loop timed with bash's
# EPOCHREALTIME (or date +%s%N) whose median is computed here. CPU ms is hyperfine's mean user +
# system time; instructions are counted by valgrind --tool=callgrind when installed.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-200}
reps=${REPS:-5}
dir=${BUILD_DIR:-build-bench}

if [[ "${1:-}" != "--no-build" ]]; then
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DMEMPLAN_TESTS=OFF -DMEMPLAN_BENCH=ON >/dev/null
  cmake --build "$dir" -j"$(nproc)" --target memplan memplan_bench_estimate memplan_bench_advise \
    memplan_bench_hello >/dev/null
fi
bin="$dir/memplan"
hello="$dir/bench/memplan_bench_hello"
for b in "$bin" "$hello"; do
  [[ -x "$b" ]] || { echo "bench-cli: $b is not built (configure with -DMEMPLAN_BENCH=ON)" >&2; exit 2; }
done

# The commands timed, one per line; each must exit 0.
commands=(
  "--version"
  "estimate --params 7e9"
  "estimate --model llama-2-7b --precision amp-bf16 --optimizer adamw"
  "estimate --model llama-2-7b --seq 2048 --batch 4 --explain"
  "estimate --model llama-2-7b --seq 2048 --batch 4 --format json"
  "max-batch --model gpt2 --seq 1024 --gpu a100-80gb --effective-batch 512"
  "fit --model llama-2-7b --quantize nf4 --trainable 0.2% --precision bf16 --seq 2048 --gpu rtx-4090"
  "gpus"
  "dtype fp16"
  "advise --model llama-2-7b --precision fp32 --optimizer adamw --batch 16 --seq 2048 --gpu rtx-4090"
)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Prints "median min max cpu" in milliseconds for the command line $1 (cpu: mean user + system time).
time_hyperfine() {
  if ! hyperfine -N --warmup 3 --runs "$runs" --style none --export-csv "$tmp/h.csv" "$1" >/dev/null 2>"$tmp/err"; then
    cat "$tmp/err" >&2
    exit 1
  fi
  # command,mean,stddev,median,user,system,min,max (seconds); the command may hold commas.
  awk -F, 'NR == 2 { printf "%.2f %.2f %.2f %.2f\n", $(NF-4) * 1000, $(NF-1) * 1000, $NF * 1000, ($(NF-3) + $(NF-2)) * 1000 }' "$tmp/h.csv"
}

now_ns() {
  if [[ -n "${EPOCHREALTIME:-}" ]]; then
    local t=${EPOCHREALTIME/[.,]/}  # microseconds, no process started
    echo $((10#$t * 1000))
  else
    date +%s%N
  fi
}

time_loop() {
  local -a argv
  read -r -a argv <<<"$1"
  local i t0 t1
  for ((i = 0; i < 3; ++i)); do "${argv[@]}" >/dev/null; done
  : >"$tmp/loop"
  for ((i = 0; i < runs; ++i)); do
    t0=$(now_ns)
    "${argv[@]}" >/dev/null
    t1=$(now_ns)
    echo $((t1 - t0)) >>"$tmp/loop"
  done
  sort -n "$tmp/loop" | awk '{ v[NR] = $1 } END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.2f %.2f %.2f -\n", m / 1e6, v[1] / 1e6, v[NR] / 1e6 }'
}

# Instructions one process executes, counted by callgrind (start-up and dynamic linking included):
# the figure that does not move with the machine's load. "-" without valgrind.
instructions() {
  command -v valgrind >/dev/null || { echo -; return; }
  local -a argv
  read -r -a argv <<<"$1"
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "${argv[@]}" 2>&1 >/dev/null |
    awk '/Collected :/ { printf "%.2f M\n", $NF / 1e6 }'
}

if [[ "${TIMER:-}" != loop ]] && command -v hyperfine >/dev/null; then
  timer=time_hyperfine
  how="hyperfine $(hyperfine --version | awk '{ print $2 }') -N --warmup 3 --runs $runs"
else
  timer=time_loop
  how="shell loop, $runs runs after 3 warm-up runs (no hyperfine)"
fi

echo "Cold processes: $how"
echo
# "x hello": the median over the hello-world's median; "CPU x hello" the same for CPU time, the
# figure to trust on a loaded machine (waiting for a CPU adds to the median, not to CPU time).
echo "| command | median ms | x hello | min ms | max ms | CPU ms | CPU x hello | instructions |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
read -r hmed lo hi hcpu < <($timer "$hello")
echo "| hello-world (bench/hello.cpp) | $hmed | 1.00 | $lo | $hi | $hcpu | 1.00 | $(instructions "$hello") |"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%.2f", a / b }'; }
for c in "${commands[@]}"; do
  read -r med lo hi cpu < <($timer "$bin $c")
  echo "| \`memplan $c\` | $med | $(ratio "$med" "$hmed") | $lo | $hi | $cpu | $(ratio "$cpu" "$hcpu") | $(instructions "$bin $c") |"
done

echo
echo "In-process (Google Benchmark, median of $reps repetitions)"
echo
echo "| benchmark | time | CPU |"
echo "|---|---:|---:|"
for bench in "$dir/bench/memplan_bench_estimate" "$dir/bench/memplan_bench_advise"; do
  [[ -x "$bench" ]] || continue
  # Console format (the CSV reporter aborts when benchmarks set different counters).
  "$bench" --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true --benchmark_color=false 2>/dev/null |
    awk '$1 ~ /_median$/ { sub(/_median$/, "", $1); printf "| %s | %s %s | %s %s |\n", $1, $2, $3, $4, $5 }'
done
