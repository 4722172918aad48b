#!/bin/sh
# A stand-in training command for ladder/sweep tests. Usage:
#   fake_trainer.sh BATCH [--oom-above N] [--crash-at N] [--sleep SECONDS] [--ignore-signals]
#                         [--quiet-rate] [--interrupt-parent]
# Prints "<rate> rows/s" with rate = 1000*BATCH/(BATCH+64) (a saturating curve, one decimal),
# fails with a PyTorch-style CUDA OOM traceback when BATCH > N (--oom-above), fails with a
# different error at exactly BATCH == N (--crash-at), sleeps before finishing (--sleep), and
# ignores SIGINT/SIGTERM while doing so (--ignore-signals), prints no rate (--quiet-rate), and
# sends SIGINT to its parent as if the user pressed Ctrl-C (--interrupt-parent).
batch=$1
shift
oom_above=0
crash_at=0
sleep_for=0
rate=yes
while [ $# -gt 0 ]; do
  case "$1" in
    --oom-above) oom_above=$2; shift 2 ;;
    --crash-at) crash_at=$2; shift 2 ;;
    --sleep) sleep_for=$2; shift 2 ;;
    --ignore-signals) trap '' INT TERM; shift ;;
    --quiet-rate) rate=no; shift ;;
    --interrupt-parent) kill -INT "$PPID"; shift ;;
    *) echo "fake_trainer.sh: unknown option $1" >&2; exit 64 ;;
  esac
done
echo "step 1/3 batch=$batch"
if [ "$sleep_for" != 0 ]; then sleep "$sleep_for"; fi
if [ "$crash_at" != 0 ] && [ "$batch" -eq "$crash_at" ]; then
  echo "Traceback (most recent call last):" >&2
  echo "  File \"train.py\", line 12, in <module>" >&2
  echo "ValueError: expected input batch_size ($batch) to match target batch_size (3)" >&2
  exit 3
fi
if [ "$oom_above" != 0 ] && [ "$batch" -gt "$oom_above" ]; then
  echo "Traceback (most recent call last):" >&2
  echo "  File \"train.py\", line 42, in <module>" >&2
  echo "    loss.backward()" >&2
  echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.23 GiB is free. Of the allocated memory 75.02 GiB is allocated by PyTorch, and 1.45 GiB is reserved by PyTorch but unallocated." >&2
  exit 1
fi
if [ "$rate" = yes ]; then
  tenths=$((10000 * batch / (batch + 64)))
  echo "throughput: $((tenths / 10)).$((tenths % 10)) rows/s"
fi
echo "done"
