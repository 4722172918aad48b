#!/usr/bin/env python3
"""Measure what PyTorch keeps for backward in LoRA fine-tuning (frozen base weights, trainable
low-rank adapters), with the models and the meter of bench/measure_activations.py. Not part of
the test suite: the suite reads the checked-in tests/data/torch_cpu_lora.json.

Regenerate with Debian's interpreter (apt-get install python3-torch):

  /usr/bin/python3 bench/measure_lora.py --out tests/data/torch_cpu_lora.json

LoRA is written out by hand as peft does it with lora_dropout = 0: every base parameter is
frozen (requires_grad = False: embeddings, norms, projections, LM head); each adapted Linear
computes base(x) + B(A(x)) * scale with A (r x in) and B (out x r) trainable nn.Linear layers.
Targets: q,v for the LLaMA-style block (peft's default for Llama), the fused c_attn (qkv) for
the GPT-2-style decoder. Under autocast the bf16 copies of frozen weights have no grad_fn, so
the meter recognises them by value (a 2-D tensor without grad_fn equal to a weight) and reports
them apart from activations (frozen_weight_cast_bytes, batch independent).
"""
import argparse
import contextlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_activations as ma  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha=32):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.normal_(self.lora_B.weight, std=0.02)  # peft starts at 0; values do not matter here
        self.scale = alpha / r

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x)) * self.scale


def apply_lora(model, targets, r):
    for p in model.parameters():
        p.requires_grad_(False)
    for blk in model.blocks:
        for name in targets:
            owner = blk.attn if name in ("q", "k", "v", "o", "qkv") else blk.mlp
            setattr(owner, name, LoRALinear(getattr(owner, name), r))
    return model


class LoraMeter(ma.Meter):
    def __init__(self, model, inputs):
        super().__init__(model, inputs)
        self.matrices = [p for p in model.parameters() if p.dim() == 2]

    def is_frozen_weight_cast(self, t):
        """A half copy of a frozen weight (or its transpose): no grad_fn, equal to the weight."""
        if t.grad_fn is not None or t.requires_grad or t.dim() != 2 or t.dtype == torch.float32:
            return False
        for p in self.matrices:
            if p.numel() != t.numel():
                continue
            w = p.detach().to(t.dtype)
            if (t.shape == w.shape and torch.equal(t, w)) or (t.shape == w.t().shape and torch.equal(t, w.t())):
                return True
        return False

    def pack(self, t):
        ptr, nbytes = ma.storage_of(t)
        if ptr and ptr not in self.seen and ptr not in self.params and self.is_frozen_weight_cast(t):
            self.seen[ptr] = (self.phase, "frozen_weight_cast", nbytes, str(t.dtype).replace("torch.", ""))
            return t.detach()
        return super().pack(t)


def measure_one(arch, model, B, T, precision):
    gen = torch.Generator().manual_seed(B * 1000 + T)
    x, y = ma.batch_for(arch, B, T, gen)
    meter = LoraMeter(model, [x, y])
    ctx = torch.autocast("cpu", dtype=torch.bfloat16) if precision == "autocast_bf16" else contextlib.nullcontext()
    model.train()
    with torch.autograd.graph.saved_tensors_hooks(meter.pack, lambda t: t), ctx:
        out = model(x)
        meter.phase = "loss"
        loss = ma.loss_of(arch, out, y)
    loss.backward()  # the graph is valid: adapters get gradients
    return {
        "precision": precision, "batch_size": B, "seq_len": T,
        "activation_bytes": meter.total("model", "activation"),
        "param_cast_bytes": meter.total("model", "param_cast"),
        "frozen_weight_cast_bytes": meter.total("model", "frozen_weight_cast"),
        "activation_bytes_by_dtype": meter.by_dtype("model"),
        "loss_activation_bytes": meter.total("loss", "activation"),
    }


CASES = {
    "llama_gqa_rope_L2_lora_qv_r8": ("llama_gqa_rope_L2", ["q", "v"], 8),
    "llama_gqa_rope_L2_lora_all_r16": ("llama_gqa_rope_L2", ["q", "k", "v", "o", "gate", "up", "down"], 16),
    "gpt2_style_L2_lora_c_attn_r8": ("gpt2_style_L2", ["qkv"], 8),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", default="1,4,8")
    ap.add_argument("--seq", default="32,64")
    ap.add_argument("--precision", default="fp32,autocast_bf16")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    torch.set_num_threads(2)
    cases = []
    for cid, (base, targets, r) in CASES.items():
        arch = ma.BUILTIN[base]
        model = apply_lora(ma.build(arch), targets, r)
        trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
        acts = []
        for T in [int(s) for s in args.seq.split(",")]:
            for prec in args.precision.split(","):
                for B in [int(b) for b in args.batch.split(",")]:
                    acts.append(measure_one(arch, model, B, T, prec))
                    a = acts[-1]
                    print("  %-34s T=%-4d B=%-3d %-14s act=%d loss=%d wcast=%d pcast=%d" % (
                        cid, T, B, prec, a["activation_bytes"], a["loss_activation_bytes"],
                        a["frozen_weight_cast_bytes"], a["param_cast_bytes"]), file=sys.stderr, flush=True)
        cases.append({"id": cid, "base": base, "arch": arch, "lora_targets": targets, "lora_rank": r,
                      "trainable_params": trainable, "activations": acts})
    out = {"source": "bench/measure_lora.py", "environment": {"torch_version": torch.__version__,
                                                               "python": sys.version.split()[0]},
           "cases": cases}
    text = json.dumps(out, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
