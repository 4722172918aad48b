#!/usr/bin/env python3
"""Measure the peak memory of whole training steps on CPU with torch's profiler, so that memplan's
step timeline (--device cpu) can be compared with real bytes. Not part of the test suite: the
suite reads the checked-in tests/data/torch_cpu_step_peak.json.

Run with Debian's interpreter (apt-get install python3-torch, torch 1.13):

  /usr/bin/python3 bench/measure_step_peak.py --out tests/data/torch_cpu_step_peak.json

How (see torch 1.13's profiler): with profile_memory=True every CPU allocation and free is a
"[memory]" event in prof.profiler.kineto_results.events() (+nbytes on allocation, -nbytes on
free). Summing them in time order gives the bytes alive above what was alive when profiling
started; its maximum is the step's peak above that baseline. The baseline is read off live
tensors: the parameters (step 1) plus the optimizer state (step 2), plus the gradients where
zero_grad(set_to_none=False) kept them. The input batch is allocated
before profiling and not counted (memplan does not count input data). Each phase (forward, loss,
backward, optimizer, zero_grad) is wrapped in record_function, so the peak of each phase is known.

Step 1 allocates AdamW's state lazily inside optimizer.step(); step 2 starts with it alive.
zero_grad(set_to_none=True) frees the gradients after each step. torch 1.13's AdamW runs its
per-tensor loop (foreach defaults to False), whose `exp_avg_sq.sqrt() / c` makes two temporaries
the size of one parameter tensor.

The models are those of bench/measure_activations.py (the same ones the activation tests use),
with LoRA from bench/measure_lora.py and full checkpointing as torch.utils.checkpoint (reentrant,
torch 1.13's default) around each block.
"""
import argparse
import contextlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_activations as ma  # noqa: E402
import measure_lora as ml  # noqa: E402

import torch  # noqa: E402
import torch.utils.checkpoint  # noqa: E402
from torch.profiler import ProfilerActivity, profile, record_function  # noqa: E402

PHASES = ["forward", "loss", "backward", "optimizer", "zero_grad"]


class Checkpointed(torch.nn.Module):
    """Runs a block under torch.utils.checkpoint (reentrant): keeps only its input."""

    def __init__(self, block):
        super().__init__()
        self.block = block

    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(self.block, x)


def tensor_bytes(ts):
    seen, n = set(), 0
    for t in ts:
        s = t.storage()
        if s.data_ptr() not in seen:
            seen.add(s.data_ptr())
            n += s.nbytes()
    return n


def state_bytes(opt):
    return tensor_bytes([v for st in opt.state.values() for v in st.values() if torch.is_tensor(v)])


def step_loss(arch, out, y):
    """Cross-entropy for causal LMs and MLPs (as bench/measure_activations.py); a stack without an
    LM head (BERT-style) gets the mean of its fp32 output, which saves nothing."""
    if "mlp_widths" not in arch and not (arch.get("vocab", 0) and arch.get("causal", True)):
        return out.float().mean()
    return ma.loss_of(arch, out, y)


def one_step(arch, model, opt, x, y, precision, case):
    def amp():
        if precision == "autocast_bf16":
            return torch.autocast("cpu", dtype=torch.bfloat16)
        return contextlib.nullcontext()
    # loss_in_autocast: forward and loss in one autocast region, as Hugging Face's Trainer runs
    # compute_loss (its cache of half weight copies lives until the region exits, after the loss).
    one_region = case.get("loss_in_autocast", False)
    with amp() if one_region else contextlib.nullcontext():
        with record_function("phase:forward"), (contextlib.nullcontext() if one_region else amp()):
            out = model(x)
        with record_function("phase:loss"), (contextlib.nullcontext() if one_region else amp()):
            loss = step_loss(arch, out, y)
    del out
    with record_function("phase:backward"):
        loss.backward()
    del loss
    with record_function("phase:optimizer"):
        opt.step()
    with record_function("phase:zero_grad"):
        # zero_grad "zeros": set_to_none=False, torch < 2's default: the gradients stay allocated.
        opt.zero_grad(set_to_none=case.get("zero_grad", "none") != "zeros")


def profiled_step(arch, model, opt, x, y, precision, case):
    params = tensor_bytes(list(model.parameters()))
    state = state_bytes(opt)
    # Gradients zero_grad(set_to_none=False) kept from the step before are alive too.
    state += tensor_bytes([p.grad for p in model.parameters() if p.grad is not None])
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        one_step(arch, model, opt, x, y, precision, case)
    events = list(prof.profiler.kineto_results.events())
    mem = sorted((e for e in events if e.name() == "[memory]"), key=lambda e: e.start_us())
    windows = []
    for e in events:
        if e.name().startswith("phase:"):
            windows.append((e.name()[6:], e.start_us(), e.start_us() + e.duration_us()))
    cur, peak, peak_phase = 0, 0, ""
    by_phase = {p: 0 for p in PHASES}
    for e in mem:
        cur += e.nbytes()
        t = e.start_us()
        ph = next((w[0] for w in windows if w[1] <= t <= w[2]), "")
        if ph and cur > by_phase[ph]:
            by_phase[ph] = cur
        if cur > peak:
            peak, peak_phase = cur, ph
    base = params + state
    return {"baseline_bytes": base, "peak_bytes": base + peak, "peak_phase": peak_phase,
            "phase_peak_bytes": {p: base + v for p, v in by_phase.items()}, "end_bytes": base + cur,
            "memory_events": len(mem)}


def build_case(c):
    arch = ma.BUILTIN[c["base"]] if "base" in c else c["arch"]
    model = ma.build(arch)
    if c.get("lora"):
        ml.apply_lora(model, c["lora"]["targets"], c["lora"]["rank"])
    if c.get("checkpointing") == "full":
        model.blocks = torch.nn.ModuleList([Checkpointed(b) for b in model.blocks])
        if c.get("lora"):
            # A frozen embedding's output needs no grad, and reentrant checkpointing would then give
            # the adapters none: Hugging Face's enable_input_require_grads() makes it require grad.
            model.wte.register_forward_hook(lambda module, inputs, output: output.requires_grad_(True))
    return arch, model


CASES = [
    {"id": "mlp_1024_4096_4096_1024", "arch": {"mlp_widths": [1024, 4096, 4096, 1024]}, "batch": 256,
     "seq": 0, "precision": "fp32"},
    {"id": "mlp_1024_4096_4096_1024", "arch": {"mlp_widths": [1024, 4096, 4096, 1024]}, "batch": 256,
     "seq": 0, "precision": "autocast_bf16"},
    {"id": "gpt2_style_L2", "base": "gpt2_style_L2", "batch": 8, "seq": 64, "precision": "fp32"},
    {"id": "gpt2_style_L2", "base": "gpt2_style_L2", "batch": 8, "seq": 64, "precision": "autocast_bf16"},
    {"id": "llama_gqa_rope_L2", "base": "llama_gqa_rope_L2", "batch": 8, "seq": 64, "precision": "fp32"},
    {"id": "llama_gqa_rope_L2", "base": "llama_gqa_rope_L2", "batch": 8, "seq": 64, "precision": "autocast_bf16"},
    {"id": "llama_gqa_rope_L2", "base": "llama_gqa_rope_L2", "batch": 32, "seq": 128, "precision": "fp32"},
    {"id": "bert_style_L2_dropout", "base": "bert_style_L2_dropout", "batch": 8, "seq": 64, "precision": "fp32"},
    {"id": "bert_style_L2_dropout", "base": "bert_style_L2_dropout", "batch": 8, "seq": 64,
     "precision": "autocast_bf16"},
    {"id": "llama_gqa_rope_L2_ckpt", "base": "llama_gqa_rope_L2", "batch": 8, "seq": 64, "precision": "fp32",
     "checkpointing": "full"},
    {"id": "gpt2_style_L2_ckpt", "base": "gpt2_style_L2", "batch": 8, "seq": 64, "precision": "autocast_bf16",
     "checkpointing": "full"},
    # Autocast's weight cache: 8 checkpointed layers, the gradients kept by zero_grad(set_to_none=False),
    # forward and loss in one autocast region (Hugging Face's Trainer): the forward's end holds every
    # layer's bf16 weight copies and sets the peak.
    {"id": "gpt2_style_L8_ckpt_zeros", "arch": dict(ma.BUILTIN["gpt2_style_L2"], layers=8), "batch": 2,
     "seq": 64, "precision": "autocast_bf16", "checkpointing": "full", "zero_grad": "zeros",
     "loss_in_autocast": True},
    {"id": "llama_gqa_rope_L2_lora_qv_r8", "base": "llama_gqa_rope_L2", "batch": 8, "seq": 64, "precision": "fp32",
     "lora": {"targets": ["q", "v"], "rank": 8}},
    # LoRA under autocast with 8 checkpointed layers: the frozen weights' casts are not cached (they do
    # not require grad) and the no-grad forward keeps none; only the adapters' casts stay cached.
    {"id": "llama_gqa_rope_L8_lora_qv_r8_ckpt", "arch": dict(ma.BUILTIN["llama_gqa_rope_L2"], layers=8),
     "batch": 2, "seq": 64, "precision": "autocast_bf16", "checkpointing": "full", "loss_in_autocast": True,
     "lora": {"targets": ["q", "v"], "rank": 8}},
    {"id": "llama_gqa_rope_L2_lora_qv_r8", "base": "llama_gqa_rope_L2", "batch": 8, "seq": 64,
     "precision": "autocast_bf16", "lora": {"targets": ["q", "v"], "rank": 8}},
]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default=None, help="measure the cases whose id contains this")
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows = []
    for c in CASES:
        if args.only and args.only not in c["id"]:
            continue
        arch, model = build_case(c)
        model.train()
        gen = torch.Generator().manual_seed(c["batch"] * 1000 + c["seq"])
        x, y = ma.batch_for(arch, c["batch"], c["seq"], gen)
        trainable = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(trainable, lr=1e-4)
        steps = [profiled_step(arch, model, opt, x, y, c["precision"], c) for _ in range(2)]
        row = dict(c)
        row["arch"] = arch
        row.pop("base", None)
        row["params"] = {"count": sum(p.numel() for p in model.parameters()),
                         "bytes": tensor_bytes(list(model.parameters())),
                         "trainable": sum(p.numel() for p in trainable), "tensors": len(list(model.parameters()))}
        row["state_bytes"] = state_bytes(opt)
        row["step1"], row["step2"] = steps
        rows.append(row)
        print("  %-30s %-14s B=%-4d peak1=%d (%s) peak2=%d (%s)" % (
            c["id"], c["precision"], c["batch"], steps[0]["peak_bytes"], steps[0]["peak_phase"],
            steps[1]["peak_bytes"], steps[1]["peak_phase"]), file=sys.stderr, flush=True)
    out = {"source": "bench/measure_step_peak.py (torch profiler, profile_memory=True, CPU)",
           "environment": {"torch_version": torch.__version__, "python": sys.version.split()[0]},
           "cases": rows}
    text = json.dumps(out, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
