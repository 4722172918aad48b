#!/usr/bin/env python3
"""What is alive at a training step's peak on a GPU, by the code that allocated it.

Runs one case (a transformers model from tests/data/hf_configs, or one of accuracy.py's plain
decoders) for a few steps with torch.cuda.memory._record_memory_history, replays the allocation
trace, finds the moment torch's allocated bytes were highest and prints the blocks alive then,
grouped by the innermost frame of the model's or the loss's own code (torch's and transformers'
module plumbing skipped), largest first. Use it to find the bytes memplan does not predict.

    python3 bench/accuracy/gpu_peak_contents.py --case hf:gpt2:full-bf16:8
    python3 bench/accuracy/gpu_peak_contents.py --case plain:llama-600m:bf16:sdpa:8
"""
import argparse
import collections
import gc
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
MIB = 1024 * 1024
SKIP = ("torch/nn/modules/module.py", "torch/utils/_contextlib.py", "torch/_tensor.py",
        "torch/autograd/__init__.py", "torch/autograd/graph.py", "accelerate/", "transformers/utils/generic.py",
        "transformers/utils/output_capturing.py", "transformers/modeling_layers.py", "torch/_dynamo",
        "torch/optim/optimizer.py", "torch/cuda/memory.py", "transformers/integrations/sdpa_attention.py",
        "peft/tuners/tuners_utils.py", "peft/peft_model.py", "torch/utils/checkpoint.py",
        "torch/nn/modules/linear.py", "torch/nn/modules/sparse.py", "torch/nn/modules/normalization.py",
        "torch/nn/modules/activation.py", "torch/nn/functional.py")


def where(frames):
    """Who allocated: the innermost Python frame of the model's or the loss's own code (module
    plumbing skipped), and for C++ frames the autograd node (backward) and the ATen op."""
    py = node = op = None
    for f in frames:
        fn, name = f.get("filename", "") or "", f.get("name", "") or ""
        if fn.endswith(".py"):
            if py is None and not any(s in fn for s in SKIP):
                py = f"{'/'.join(fn.split('/')[-2:])}:{f.get('line')} {name}"
        else:
            m = re.search(r"(\w+Backward\w*)", name)
            if node is None and m:
                node = m.group(1)
            m = re.search(r"at::(?:native|_ops)::(\w+)", name)
            if op is None and m:
                op = m.group(1)
    return " ".join(x for x in (node, op, py) if x) or "?"


def phase_of(frames):
    names = " ".join((f.get("name", "") or "") + "@" + (f.get("filename", "") or "") for f in frames)
    if "Backward" in names or "autograd::Engine" in names or "evaluate_function" in names:
        return "backward"
    if "optim/" in names:
        return "optimizer"
    return "forward"


def analyse(torch, device, label, top):
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    trace = snap["device_traces"][device.index or 0]
    sizes = {}
    cur = peak = 0
    peak_at = -1
    for i, ev in enumerate(trace):  # pass 1: when was the peak
        if ev["action"] == "alloc":
            sizes[ev["addr"]] = ev["size"]
            cur += ev["size"]
            if cur > peak:
                peak, peak_at = cur, i
        elif ev["action"] == "free_requested" and ev["addr"] in sizes:
            cur -= sizes.pop(ev["addr"])
    live = {}
    for ev in trace[:peak_at + 1]:  # pass 2: what was alive then
        if ev["action"] == "alloc":
            live[ev["addr"]] = (ev["size"], ev.get("frames", []))
        elif ev["action"] == "free_requested":
            live.pop(ev["addr"], None)
    groups = collections.defaultdict(lambda: [0, 0])
    for size, frames in live.values():
        g = groups[(phase_of(frames), where(frames))]
        g[0] += size
        g[1] += 1
    last = trace[peak_at].get("frames", []) if peak_at >= 0 else []
    print(f"## {label}: traced peak {peak / MIB:.1f} MiB above the bytes allocated before recording; "
          f"reached at an allocation of {trace[peak_at]['size'] / MIB:.1f} MiB by [{phase_of(last)}] {where(last)}")
    rows = sorted(groups.items(), key=lambda kv: -kv[1][0])
    for (ph, w), (size, n) in rows[:top]:
        print(f"   {size / MIB:10.1f} MiB  {n:5d} blocks  [{ph}] {w[:150]}")
    rest = sum(s for _, (s, _) in rows[top:])
    if rest:
        print(f"   {rest / MIB:10.1f} MiB  (the other {len(rows) - top} places)")
    return peak


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", action="append", required=True,
                    help="hf:MODEL:RECIPE:BATCH[:ckpt] or plain:MODEL:PRECISION:ATTENTION:BATCH[:ckpt]")
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    import torch
    device = torch.device("cuda", 0)
    for case in args.case:
        parts = case.split(":")
        ckpt = parts[-1] == "ckpt"
        gc.collect()
        torch.cuda.empty_cache()
        if parts[0] == "hf":
            import hf_train
            import transformers
            import peft
            import shutil
            import tempfile
            name, recipe, batch = parts[1], parts[2], int(parts[3])
            d = tempfile.mkdtemp()
            shutil.copy(os.path.join(hf_train.CONFIGS, name + ".json"), os.path.join(d, "config.json"))
            r = hf_train.RECIPES[recipe]
            dtype = torch.bfloat16 if r["dtype"] == "bf16" else torch.float32
            model = hf_train.build(torch, transformers, d, dtype, device)
            if r.get("lora"):
                targets = hf_train.MODELS.get(name, {}).get("lora_targets", ["q_proj", "v_proj"])
                model = peft.get_peft_model(model, peft.LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0,
                                                                   target_modules=targets, task_type="CAUSAL_LM"))
            if ckpt:
                model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            model.train()
            seq = hf_train.MODELS.get(name, {}).get("seq", 1024)
            ids = torch.randint(0, model.config.vocab_size, (batch, seq), device=device)

            def step():
                return model(input_ids=ids, labels=ids).loss
            amp = r.get("amp", False)
        else:
            import accuracy
            import torch.nn as nn
            import torch.nn.functional as F
            from torch.utils.checkpoint import checkpoint
            name, prec, attn, batch = parts[1], parts[2], parts[3], int(parts[4])
            cfg = accuracy.MODELS[name]
            Decoder = accuracy.build_model(cfg, torch, nn, F, lambda fn, x: checkpoint(fn, x, use_reentrant=True))
            with device:
                model = Decoder(attn, ckpt).to(device)
            if prec == "bf16":
                model = model.to(torch.bfloat16)
            v, s = cfg["vocab"], cfg["seq"]
            ids = torch.randint(0, v, (batch, s), device=device)

            def step():
                logits = model(ids)
                return F.cross_entropy(logits.float().view(-1, v) if prec != "amp-bf16" else logits.view(-1, v),
                                       ids.view(-1))
            amp = prec == "amp-bf16"
        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
        base = torch.cuda.memory_allocated(device)
        try:
            torch.cuda.memory._record_memory_history(max_entries=400000, stacks=os.environ.get("STACKS", "all"))
        except TypeError:
            torch.cuda.memory._record_memory_history(max_entries=400000)
        for _ in range(args.steps):
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
                loss = step()
            loss.backward()
            opt.step()
            del loss
        torch.cuda.synchronize(device)
        print(f"# {case}: allocated before the steps {base / MIB:.1f} MiB (weights), "
              f"max_memory_allocated {torch.cuda.max_memory_allocated(device) / MIB:.1f} MiB")
        analyse(torch, device, case, args.top)
        del model, opt, ids
        gc.collect()
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
