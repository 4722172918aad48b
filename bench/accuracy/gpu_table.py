#!/usr/bin/env python3
"""memplan against published GPU peak-memory measurements (tests/data/gpu_measurements.json).

Each row of the measurements file is a run someone published with its full configuration (Hugging
Face's BERT-large runs on a V100, read with nvidia-smi; Lit-GPT's resource tables on an A100, read
with torch.cuda.max_memory_allocated). This script replays each expressible row as the memplan
command a user would type, and compares like with like:

  allocated   torch.cuda.max_memory_allocated()   memplan's peak_bytes (the step timeline's peak)
  nvidia-smi  the device's used memory            memplan's required_bytes with --overhead set to
                                                  the CUDA context the source measured (1343 MiB):
                                                  context + the caching allocator's reserved peak
                                                  (the step replayed tensor by tensor, steps 1-3)

and writes the table (case, measured, memplan, error, phase of the peak) into docs/accuracy.md
between the "gpu-table" markers. Rows memplan cannot express are listed with the reason.

    python3 bench/accuracy/gpu_table.py --memplan build/memplan [--write docs/accuracy.md]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(ROOT, "tests", "data", "gpu_measurements.json")

# HF Trainer of early 2022 on torch 1.10 (the page's nvidia-smi output is dated Tue Jan 11 2022; torch 1.11
# was released on 10 March 2022): softmax keeps its input for backward, model.zero_grad() keeps the
# gradients (set_to_none=False; --torch 1.10 implies --zero-grad zeros); its default optimizer is
# transformers.AdamW (optim="adamw_hf": --optimizer adamw-hf, one tensor at a time, one temporary each).
BERT = ["--model", "bert-large-uncased", "--seq", "512", "--attention", "eager", "--overhead", "1343MiB",
        "--torch", "1.10"]
GA4 = ["--grad-accum", "4"]
# Lit-GPT at commit 8641822 on Lightning Fabric 2.1 and torch 2.1 (--framework litgpt, framework.hpp):
# LM head and cross-entropy by chunks of 128 positions, the logits converted to fp32 by Fabric's
# bf16-true; its own LoRAQKVLinear on the fused qkv in the model's format (bf16-true) with lora_dropout
# 0.05 on the adapter's input; its RMSNorm in bf16 (torch 2.1's mean keeps x*x).
LITGPT = ["--framework", "litgpt"]
LITGPT_ADAPTERS = LITGPT + ["--precision", "bf16", "--lora", "8", "--lora-targets", "q,v", "--attention", "sdpa",
                            "--loss", "chunked", "--lora-dtype", "base", "--lora-dropout", "0.05"]
LITGPT_LORA = LITGPT_ADAPTERS + ["--optimizer", "adamw"]
# finetune/lora.py at 8641822: `--quantize bnb.*` trains with bitsandbytes' PagedAdamW (float32 state;
# every LoRA tensor of r=8 is under its 1e5-number paging threshold, so the state stays on the GPU).
LITGPT_QLORA = LITGPT_ADAPTERS + ["--optimizer", "paged-adamw"]
HF_CONFIGS = "tests/data/hf_configs"  # relative: memplan runs in the repository root
# The real families: StableLM-alpha is GPT-NeoX (parallel residual, LayerNorm, rotary on 25%), Phi-1.5 a
# parallel block with one shared LayerNorm and rotary on half of each head.
STABLELM_3B = ["--config", HF_CONFIGS + "/stablelm-base-alpha-3b.json"]
PHI_15 = ["--config", HF_CONFIGS + "/phi-1_5.json"]
CODELLAMA_34B = ["--family", "llama", "--layers", "48", "--hidden", "8192", "--heads", "64", "--kv-heads", "8",
                 "--intermediate", "22016", "--vocab", "32000"]
INFER = LITGPT + ["--mode", "infer", "--precision", "bf16", "--seq", "57", "--batch", "1"]

# id -> the memplan flags a user would give for that run (None: not expressible, with the reason).
ARGS = {
    "hf-bert-large-fp32-b4": BERT + ["--batch", "4", "--precision", "fp32", "--optimizer", "adamw-hf"],
    "hf-bert-large-fp32-b1ga4": BERT + GA4 + ["--batch", "1", "--precision", "fp32", "--optimizer", "adamw-hf"],
    "hf-bert-large-fp32-b1ga4-gc": BERT + GA4 + ["--batch", "1", "--precision", "fp32", "--optimizer", "adamw-hf",
                                           "--checkpointing", "full"],
    "hf-bert-large-amp16-b4": BERT + ["--batch", "4", "--precision", "amp-fp16", "--optimizer", "adamw-hf"],
    "hf-bert-large-amp16-b1ga4-gc": BERT + GA4 + ["--batch", "1", "--precision", "amp-fp16", "--optimizer", "adamw-hf",
                                            "--checkpointing", "full"],
    "hf-bert-large-fp32-b4-adafactor": BERT + ["--batch", "4", "--precision", "fp32", "--optimizer", "adafactor"],
    "hf-bert-large-amp16-b1ga4-gc-adafactor": BERT + GA4 + ["--batch", "1", "--precision", "amp-fp16", "--optimizer",
                                                      "adafactor", "--checkpointing", "full"],
    "hf-bert-large-fp32-b4-adam8bit": BERT + ["--batch", "4", "--precision", "fp32", "--optimizer", "adamw-8bit"],
    "hf-bert-large-amp16-b1ga4-gc-adam8bit": BERT + GA4 + ["--batch", "1", "--precision", "amp-fp16", "--optimizer",
                                                     "adamw-8bit", "--checkpointing", "full"],
    "hf-bert-large-fp32-weights-loaded": ["--model", "bert-large-uncased", "--mode", "infer", "--seq", "1",
                                          "--precision", "fp32", "--overhead", "1343MiB"],
    "litgpt23-llama2-7b-lora-mb1": ["--model", "llama-2-7b", "--seq", "1304", "--batch", "1"] + LITGPT_LORA,
    "litgpt23-llama2-7b-lora-mb2": ["--model", "llama-2-7b", "--seq", "1304", "--batch", "2"] + LITGPT_LORA,
    "litgpt23-llama2-13b-lora-mb1": ["--model", "llama-2-13b", "--seq", "1304", "--batch", "1"] + LITGPT_LORA,
    "litgpt23-llama2-7b-qlora-nf4-mb1": ["--model", "llama-2-7b", "--seq", "1304", "--batch", "1",
                                         "--quantize", "nf4"] + LITGPT_QLORA,
    "litgpt23-llama2-7b-qlora-nf4dq-mb1": ["--model", "llama-2-7b", "--seq", "1304", "--batch", "1",
                                           "--quantize", "nf4-dq"] + LITGPT_QLORA,
    "litgpt23-llama2-13b-qlora-nf4-mb1": ["--model", "llama-2-13b", "--seq", "1304", "--batch", "1",
                                          "--quantize", "nf4"] + LITGPT_QLORA,
    "litgpt23-llama2-13b-qlora-nf4dq-mb1": ["--model", "llama-2-13b", "--seq", "1304", "--batch", "1",
                                            "--quantize", "nf4-dq"] + LITGPT_QLORA,
    "litgpt23-stablelm3b-lora-mb1": STABLELM_3B + ["--seq", "1034", "--batch", "1"] + LITGPT_LORA,
    "litgpt23-stablelm3b-lora-mb2": STABLELM_3B + ["--seq", "1034", "--batch", "2"] + LITGPT_LORA,
    "litgpt23-stablelm3b-lora-mb4": STABLELM_3B + ["--seq", "1034", "--batch", "4"] + LITGPT_LORA,
    "litgpt23-phi15-lora-mb1": PHI_15 + ["--seq", "1044", "--batch", "1"] + LITGPT_LORA,
    "litgpt23-llama2-7b-infer-bf16": ["--model", "llama-2-7b"] + INFER,
    "litgpt23-llama2-13b-infer-bf16": ["--model", "llama-2-13b"] + INFER,
    "litgpt23-llama2-7b-infer-nf4": ["--model", "llama-2-7b", "--quantize", "nf4"] + INFER,
    "litgpt23-llama2-7b-infer-nf4dq": ["--model", "llama-2-7b", "--quantize", "nf4-dq"] + INFER,
    "litgpt23-llama2-13b-infer-nf4": ["--model", "llama-2-13b", "--quantize", "nf4"] + INFER,
    "litgpt23-llama2-13b-infer-nf4dq": ["--model", "llama-2-13b", "--quantize", "nf4-dq"] + INFER,
    "litgpt23-codellama34b-infer-nf4": CODELLAMA_34B + ["--quantize", "nf4"] + INFER,
    "litgpt23-codellama34b-infer-nf4dq": CODELLAMA_34B + ["--quantize", "nf4-dq"] + INFER,
    "litgpt23-stablelm3b-infer-bf16": STABLELM_3B + INFER,
}


def run_memplan(binary, args):
    p = subprocess.run([os.path.abspath(binary), "estimate", *args, "--format", "json"], capture_output=True,
                       text=True, cwd=ROOT)
    if p.returncode != 0:
        return None, p.stderr.strip()
    return json.loads(p.stdout), ""


def compare(binary):
    doc = json.load(open(DATA))
    rows = []
    for m in doc["measurements"]:
        args = ARGS.get(m["id"])
        row = {"id": m["id"], "kind": m["reported_kind"], "measured": m["reported_bytes"], "args": args}
        if args is None:
            row["reason"] = "not expressible"
            rows.append(row)
            continue
        out, err = run_memplan(binary, args)
        if out is None:
            row["reason"] = err
            rows.append(row)
            continue
        predicted = out["required_bytes"] if m["reported_kind"] == "nvidia-smi" else out["peak_bytes"]
        row.update(predicted=predicted, phase=out.get("peak_phase") or ("inference" if "infer" in args else "-"),
                   error=(predicted - m["reported_bytes"]) / m["reported_bytes"])
        rows.append(row)
    return rows


def table(rows):
    lines = ["| case | counter | measured | memplan | error | peak phase |", "|---|---|---:|---:|---:|---|"]
    for r in rows:
        if "error" not in r:
            lines.append("| %s | %s | %s | - | - | %s |" % (r["id"], r["kind"], f"{r['measured']:,}", r["reason"]))
            continue
        lines.append("| %s | %s | %s | %s | %+.1f%% | %s |" % (r["id"], r["kind"], f"{r['measured']:,}",
                                                             f"{r['predicted']:,}", 100 * r["error"], r["phase"]))
    errs = [r["error"] for r in rows if "error" in r]
    if errs:
        inside = sum(1 for e in errs if -0.05 <= e <= 0.10)
        lines.append("")
        lines.append("%d rows compared: median |error| %.1f%%, worst %+.1f%% / %+.1f%%; %d of %d inside the band "
                     "(-5%% .. +10%%)." % (len(errs), 100 * statistics.median(abs(e) for e in errs),
                                           100 * min(errs), 100 * max(errs), inside, len(errs)))
    return "\n".join(lines) + "\n"


def write(path, text):
    begin, end = "<!-- gpu-table begin -->", "<!-- gpu-table end -->"
    doc = open(path).read()
    block = begin + "\n" + text + end
    if begin in doc:
        doc = doc[:doc.index(begin)] + block + doc[doc.index(end) + len(end):]
    else:
        doc += "\n" + block + "\n"
    open(path, "w").write(doc)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memplan", default=os.environ.get("MEMPLAN_BINARY", os.path.join(ROOT, "build", "memplan")))
    ap.add_argument("--write", default=None, help="insert the table into this markdown file")
    ap.add_argument("--json", default=None, help="also write the rows as JSON")
    ap.add_argument("--replay", default=None,
                    help="write the rows' commands, measured bytes and errors for tests/cli/test_cli_gpu_published.cpp "
                         "(tests/data/gpu_measurements_replay.json): every row must be inside -5%% .. +10%%")
    args = ap.parse_args()
    rows = compare(args.memplan)
    text = table(rows)
    print(text)
    if args.write:
        write(args.write, text)
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)
    if args.replay:
        out = []
        for r in rows:
            if "error" not in r:
                continue
            out.append({"id": r["id"], "counter": r["kind"], "measured": r["measured"], "args": r["args"],
                        "error": round(r["error"], 4), "in_band": -0.05 <= r["error"] <= 0.10})
        doc = {"schema": "gpu_measurements_replay/1",
               "description": "Written by bench/accuracy/gpu_table.py --replay: each expressible row of "
                              "tests/data/gpu_measurements.json as the memplan command that replays it (run in the "
                              "repository root), the measured bytes and memplan's error when written. "
                              "counter allocated = peak_bytes, nvidia-smi = required_bytes (overhead = the measured "
                              "CUDA context, + the caching allocator's reserved peak).",
               "rows": out}
        with open(args.replay, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    sys.exit(main())
