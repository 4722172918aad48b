#!/usr/bin/env python3
"""memplan's step timeline against measure_frameworks.py's CPU peaks, framework by framework.

Each row of results/peak-cpu-*.jsonl is one framework's own training step (transformers' Trainer,
TRL's SFTTrainer, torchtune's recipe step, litgpt's finetune loop) on a small real config, with the
live bytes tracked per storage (peak_tracker.py). For each row and batch, memplan is asked the same
question with only what a user of that framework would say:

    memplan estimate --config C --seq S --batch B --precision P --framework F [--lora 8 --lora-targets q,v]
                     [--checkpointing full|none] --format json

and its allocated peak of a steady step (the timeline's highest phase, without the cuBLAS
workspaces, which the CPU has not) is compared with the measured peak of step 2. The CPU rows differ
from a GPU run where a kernel's temporaries do: TRL's fused LM head folds its tiles with torch ops
on the CPU (fp32 copies of each tile) where CUDA runs a Triton kernel, so its backward is reported
apart. Plain Python 3, no packages:

    python3 bench/frameworks/compare_peak.py bench/frameworks/results/peak-cpu-2026-12-06.jsonl --memplan build/memplan
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

FRAMEWORK = {"transformers": "trainer", "trl": "trl", "torchtune": "torchtune", "litgpt": "litgpt"}


def precision(row):
    if row["framework"] == "trl" and row["precision"] == "fp32":
        return "amp-bf16"  # SFTConfig's bf16=True on an fp32 model: autocast
    return row["precision"]


def flags(row, batch, config_path):
    f = ["estimate", "--config", config_path, "--seq", str(row["seq"]), "--batch", str(batch),
         "--precision", precision(row), "--framework", FRAMEWORK[row["framework"]], "--format", "json",
         "--checkpointing", "full" if row["checkpointing"] else "none"]
    lora = row.get("lora")
    if lora:
        targets = "q,v" if row["framework"] != "litgpt" else "q,v"
        f += ["--lora", str(lora["rank"]), "--lora-targets", targets]
    if row["framework"] == "litgpt":
        # torch.optim.AdamW(foreach=None) loops per tensor on the CPU (foreach is CUDA's default).
        f += ["--optimizer-loop", "per-tensor"]
    return f


def predicted(memplan, row, batch, folder):
    path = os.path.join(folder, "config.json")
    with open(path, "w") as fh:
        json.dump(row["config"], fh)
    out = subprocess.run([memplan] + flags(row, batch, path), capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip())
    j = json.loads(out.stdout)
    peak = max(p["bytes"] - p.get("workspace", 0) for p in j["timeline"])
    return peak, j


def measured(row, batch):
    m = row["measured"][str(batch)]
    return max(v["peak"] for v in m["steps"][-1].values())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rows")
    ap.add_argument("--memplan", default="build/memplan")
    a = ap.parse_args()
    errors = []
    with tempfile.TemporaryDirectory() as folder:
        for line in open(a.rows):
            row = json.loads(line)
            for batch in row["batches"]:
                name = "{} {} lora={} ckpt={} b={}".format(row["framework"], row["precision"],
                                                          (row.get("lora") or {}).get("rank", 0),
                                                          row["checkpointing"], batch)
                try:
                    p, _ = predicted(a.memplan, row, batch, folder)
                except (RuntimeError, KeyError, ValueError) as e:
                    print(f"{name}: memplan failed: {e}")
                    continue
                m = measured(row, batch)
                err = (p - m) / m * 100
                cpu_kernel = row["framework"] == "trl"
                if not cpu_kernel:
                    errors.append(err)
                print(f"{name:40s} measured {m:>11,d}  memplan {p:>11,d}  {err:+7.2f}%"
                      + ("  (CPU fold of the fused head: not CUDA's)" if cpu_kernel else ""))
    if errors:
        print(f"\n{len(errors)} rows (trl apart): median |error| {statistics.median(abs(e) for e in errors):.2f}%, "
              f"worst {min(errors):+.2f}% / {max(errors):+.2f}%")


if __name__ == "__main__":
    sys.exit(main())
