#!/usr/bin/env python3
"""Markdown tables of a GPU run's results (scripts/gpu-accuracy.sh): accuracy.json and hf_train.json.

    python3 bench/accuracy/results_table.py bench/accuracy/results/h200-2026-12-01 [--memplan build/memplan]
With --memplan the predictions are recomputed by that binary (the run's own are those of the
memplan it ran with).
Prints, per case, torch's measured peak (max_memory_allocated), memplan's step peak
(`peak_bytes`), the error, memplan's peak phase where known, and the reserved bytes next to
memplan's `required_bytes` (peak + --overhead; the context measured apart)."""
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
MEMPLAN = None  # --memplan: recompute the predictions

MIB = 1024 * 1024


def pct(p, m):
    return None if not p or not m else 100.0 * (p - m) / m


def summary(errs):
    errs = [e for e in errs if e is not None]
    if not errs:
        return ""
    inside = sum(1 for e in errs if -5.0 <= e <= 10.0)
    return (f"{len(errs)} cases: median |error| {statistics.median(abs(e) for e in errs):.1f}%, "
            f"worst {min(errs):+.1f}% / {max(errs):+.1f}%; {inside} of {len(errs)} inside -5% .. +10%.")


def accuracy_table(path):
    d = json.load(open(path))
    print(f"Plain-module decoders (`bench/accuracy/accuracy.py`), {d['environment'].get('gpu')}, torch "
          f"{d['environment'].get('torch')}; measured CUDA context + cuBLAS "
          f"{(d['environment'].get('context_bytes') or 0) / MIB:.0f} MiB.\n")
    print("| model | precision | attention | ckpt | batch | measured peak MiB | memplan peak MiB | error | reserved MiB |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|")
    errs = []
    for r in d["results"]:
        c, m, p = r["case"], r["measured"], r["predicted"]
        if MEMPLAN:
            import accuracy
            p = accuracy.run_memplan(MEMPLAN, accuracy.MODELS[c["model"]], c)
        e = pct(p.get("peak_bytes"), m.get("peak"))
        errs.append(e)
        print(f"| {c['model']} | {c['precision']} | {c['attention']} | {c['checkpointing']} | {c['batch']} | "
              f"{m.get('peak', 0) / MIB:,.0f} | {p.get('peak_bytes', 0) / MIB:,.0f} | "
              f"{'-' if e is None else f'{e:+.1f}%'} | {m.get('peak_reserved', 0) / MIB:,.0f} |")
    print("\n" + summary(errs) + "\n")


def hf_table(path):
    d = json.load(open(path))
    env = d["environment"]
    print(f"Hugging Face models (`bench/accuracy/hf_train.py`), {env.get('gpu')}, torch {env.get('torch')}, "
          f"transformers {env.get('transformers')}, peft {env.get('peft')}; random weights from each "
          f"config.json, SDPA attention, labels passed to the model (its loss), torch AdamW (foreach).\n")
    print("| model | recipe | batch x seq | ckpt | measured peak MiB | memplan peak MiB | error | memplan phase | reserved MiB |")
    print("|---|---|---|---|---:|---:|---:|---|---:|")
    errs = {"train": [], "infer": []}
    for r in d["results"]:
        m, p = r.get("measured", {}), r["predicted"]
        if "error" in r:
            continue
        if MEMPLAN:
            import hf_train
            spec = hf_train.MODELS[r["model"]]
            p = hf_train.run_memplan(MEMPLAN, os.path.join(hf_train.CONFIGS, r["model"] + ".json"), r["recipe"],
                                     r["seq"], r["batch"], r["checkpointing"], spec.get("memplan_targets", "q,v"))
            if r.get("lora_dropout"):
                cmd = [MEMPLAN] + p["command"].split() + ["--lora-dropout", str(r["lora_dropout"])]
                p = json.loads(subprocess.run(cmd, capture_output=True, text=True).stdout)
        e = pct(p.get("peak_bytes"), m.get("peak"))
        errs["infer" if r["recipe"].startswith("infer") else "train"].append(e)
        drop = f" (dropout {r['lora_dropout']})" if r.get("lora_dropout") else ""
        print(f"| {r['model']} | {r['recipe']}{drop} | {r['batch']} x {r['seq']} | {'full' if r['checkpointing'] else '-'} | "
              f"{m['peak'] / MIB:,.0f} | {p.get('peak_bytes', 0) / MIB:,.0f} | "
              f"{'-' if e is None else f'{e:+.1f}%'} | {p.get('peak_phase') or 'inference'} | {m['peak_reserved'] / MIB:,.0f} |")
    print("\nTraining: " + summary(errs["train"]) + " Inference: " + summary(errs["infer"]) + "\n")


def main():
    global MEMPLAN
    args = sys.argv[1:]
    if "--memplan" in args:
        i = args.index("--memplan")
        MEMPLAN = os.path.abspath(args[i + 1])
        del args[i:i + 2]
    d = args[0] if args else "."
    if os.path.exists(os.path.join(d, "accuracy.json")):
        accuracy_table(os.path.join(d, "accuracy.json"))
    if os.path.exists(os.path.join(d, "hf_train.json")):
        hf_table(os.path.join(d, "hf_train.json"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
