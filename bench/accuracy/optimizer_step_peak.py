#!/usr/bin/env python3
"""The memory of one optimizer step of transformers' Adafactor and AdamW, measured on CPU with torch's profiler.

memplan's step timeline gives transformers' Adafactor (the Trainer's optim="adafactor") the
temporaries of its per-tensor loop (TransientCode::adafactor_update). This script measures them: it
trains small models whole steps (forward, loss, backward, Adafactor.step(), zero_grad) under torch
1.13's profiler with profile_memory=True (bench/measure_step_peak.py's method: every CPU allocation
and free in time order, the peak of each phase above the live parameters and state), and writes
tests/data/torch_cpu_optimizer_step.json for tests/unit/test_optimizer_loop.cpp.

Adafactor is not imported (transformers is not installed here): `HfAdafactor` below is a
re-implementation of the tensor operations of `Adafactor.step` in src/transformers/optimization.py
(read at huggingface/transformers 005edacb; the 4.16 code of early 2022 differs only in reading
`p.data` / `p.grad.data` instead of `p` / `p.grad`, which allocates nothing), with the Trainer's
settings for optim="adafactor" (trainer.py `get_optimizer_cls_and_kwargs`: scale_parameter=False,
relative_step=False, lr=args.learning_rate; beta1=None, weight_decay 0.0 by default). What each
statement allocates, per parameter tensor of n numbers (fp32 parameters):

    update = (grad ** 2) + eps[0]         grad**2 (n), then the sum (n); the square is freed.
                                          The previous tensor's `update` is still bound to the
                                          name until this assignment: alive with both.
    row/col means, _approx_sq_grad        rows + cols numbers (small)
    update = _approx_sq_grad(...)         the outer product r x c (n) while the old update (n) lives
    update.mul_(grad), div_, mul_(lr)     in place
    p.add_(-update)                       -update (n) while update (n) lives
So the loop's high point is 2 n + n_previous numbers in fp32. Half-precision parameters add the
fp32 copies of the gradient and of the weight (`grad.float()`, `p.float()`): 4 n + n_previous.
The factored state (rows + cols per matrix, the full size for vectors) is made lazily on step 1,
in fp32 for half parameters too (`torch.zeros(shape).to(grad)` after the upcast); state["RMS"] is
a 0-dim tensor of 4 bytes per parameter tensor.

transformers.AdamW (optim="adamw_hf", the Trainer's default in early 2022) is measured the same way
(`HfAdamW`, the cases with "optimizer": "adamw-hf"): per tensor, denom = exp_avg_sq.sqrt() (n), beside
the previous tensor's denom until the name is bound again.

    /usr/bin/python3 bench/accuracy/optimizer_step_peak.py --out tests/data/torch_cpu_optimizer_step.json
"""
import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import measure_activations as ma  # noqa: E402
import measure_step_peak as msp  # noqa: E402

import torch  # noqa: E402


class HfAdafactor(torch.optim.Optimizer):
    """The tensor operations of transformers' Adafactor.step, in the order the source makes them."""

    def __init__(self, params, lr):
        defaults = {"lr": lr, "eps": (1e-30, 1e-3), "clip_threshold": 1.0, "decay_rate": -0.8, "beta1": None,
                    "weight_decay": 0.0, "scale_parameter": False, "relative_step": False, "warmup_init": False}
        super().__init__(params, defaults)

    @staticmethod
    def _rms(t):
        return t.norm(2) / (t.numel() ** 0.5)

    @staticmethod
    def _approx_sq_grad(row, col):
        r = (row / row.mean(dim=-1, keepdim=True)).rsqrt_().unsqueeze(-1)
        c = col.unsqueeze(-2).rsqrt()
        return torch.mul(r, c)

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                if grad.dtype in {torch.float16, torch.bfloat16}:
                    grad = grad.float()
                state = self.state[p]
                shape = grad.shape
                factored = len(shape) >= 2
                if len(state) == 0:
                    state["step"] = 0
                    if factored:
                        state["exp_avg_sq_row"] = torch.zeros(shape[:-1]).to(grad)
                        state["exp_avg_sq_col"] = torch.zeros(shape[:-2] + shape[-1:]).to(grad)
                    else:
                        state["exp_avg_sq"] = torch.zeros_like(grad)
                    state["RMS"] = 0
                p32 = p
                if p.dtype in {torch.float16, torch.bfloat16}:
                    p32 = p32.float()
                state["step"] += 1
                state["RMS"] = self._rms(p32)
                lr = group["lr"]  # relative_step=False, scale_parameter=False
                beta2t = 1.0 - math.pow(state["step"], group["decay_rate"])
                update = (grad ** 2) + group["eps"][0]
                if factored:
                    row, col = state["exp_avg_sq_row"], state["exp_avg_sq_col"]
                    row.mul_(beta2t).add_(update.mean(dim=-1), alpha=1.0 - beta2t)
                    col.mul_(beta2t).add_(update.mean(dim=-2), alpha=1.0 - beta2t)
                    update = self._approx_sq_grad(row, col)
                    update.mul_(grad)
                else:
                    sq = state["exp_avg_sq"]
                    sq.mul_(beta2t).add_(update, alpha=1.0 - beta2t)
                    update = sq.rsqrt().mul_(grad)
                update.div_((self._rms(update) / group["clip_threshold"]).clamp_(min=1.0))
                update.mul_(lr)
                if group["weight_decay"] != 0:
                    p32.add_(p32, alpha=-group["weight_decay"] * lr)
                p32.add_(-update)
                if p.dtype in {torch.float16, torch.bfloat16}:
                    p.copy_(p32)


class HfAdamW(torch.optim.Optimizer):
    """The tensor operations of transformers.AdamW.step (optimization.py of 4.16, the Trainer's
    optim="adamw_hf"; correct_bias=True, weight_decay 0.0): the moments updated in place, then
    denom = exp_avg_sq.sqrt().add_(eps), one temporary per tensor; state["step"] is a Python int."""

    def __init__(self, params, lr):
        super().__init__(params, {"lr": lr, "betas": (0.9, 0.999), "eps": 1e-6, "weight_decay": 0.0,
                                  "correct_bias": True})

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                beta1, beta2 = group["betas"]
                state["step"] += 1
                exp_avg.mul_(beta1).add_(grad, alpha=1.0 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1.0 - beta2)
                denom = exp_avg_sq.sqrt().add_(group["eps"])
                step_size = group["lr"]
                if group["correct_bias"]:
                    step_size = step_size * math.sqrt(1.0 - beta2 ** state["step"]) / (1.0 - beta1 ** state["step"])
                p.addcdiv_(exp_avg, denom, value=-step_size)
                if group["weight_decay"] > 0.0:
                    p.add_(p, alpha=-group["lr"] * group["weight_decay"])


OPTIMIZERS = {"adafactor": HfAdafactor, "adamw-hf": HfAdamW}


# Small batches, so that the optimizer step (weights + gradients + its temporaries) is the step's
# peak and the test sees the temporaries; one larger batch whose peak is backward's.
CASES = [
    {"id": "mlp_1024_4096_4096_1024", "arch": {"mlp_widths": [1024, 4096, 4096, 1024]}, "batch": 16, "seq": 0,
     "precision": "fp32"},
    {"id": "mlp_1024_4096_4096_1024", "arch": {"mlp_widths": [1024, 4096, 4096, 1024]}, "batch": 512, "seq": 0,
     "precision": "fp32"},
    {"id": "llama_gqa_rope_L2", "base": "llama_gqa_rope_L2", "batch": 2, "seq": 16, "precision": "fp32"},
    {"id": "llama_gqa_rope_L2", "base": "llama_gqa_rope_L2", "batch": 2, "seq": 16, "precision": "bf16"},
    {"id": "gpt2_style_L2", "base": "gpt2_style_L2", "batch": 2, "seq": 16, "precision": "fp32"},
    {"id": "bert_style_L2_dropout", "base": "bert_style_L2_dropout", "batch": 2, "seq": 16, "precision": "fp32"},
    {"id": "mlp_1024_4096_4096_1024", "arch": {"mlp_widths": [1024, 4096, 4096, 1024]}, "batch": 16, "seq": 0,
     "precision": "fp32", "optimizer": "adamw-hf"},
    {"id": "llama_gqa_rope_L2", "base": "llama_gqa_rope_L2", "batch": 2, "seq": 16, "precision": "fp32",
     "optimizer": "adamw-hf"},
]


def state_bytes(opt):
    return msp.tensor_bytes([v for st in opt.state.values() for v in st.values() if torch.is_tensor(v)])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows = []
    for c in CASES:
        arch, model = msp.build_case(c)
        if c["precision"] == "bf16":
            model = model.to(torch.bfloat16)
        model.train()
        gen = torch.Generator().manual_seed(c["batch"] * 1000 + c["seq"])
        x, y = ma.batch_for(arch, c["batch"], c["seq"], gen)
        if c["precision"] == "bf16" and x.is_floating_point():
            x = x.to(torch.bfloat16)
        trainable = [p for p in model.parameters() if p.requires_grad]
        name = c.get("optimizer", "adafactor")
        opt = OPTIMIZERS[name](trainable, lr=1e-4)
        steps = [msp.profiled_step(arch, model, opt, x, y, c["precision"]) for _ in range(2)]
        row = dict(c)
        row["arch"] = arch
        row.pop("base", None)
        row["optimizer"] = name
        row["params"] = {"count": sum(p.numel() for p in model.parameters()),
                         "bytes": msp.tensor_bytes(list(model.parameters())),
                         "trainable": sum(p.numel() for p in trainable), "tensors": len(trainable),
                         "shapes": [list(p.shape) for p in trainable]}
        row["state_bytes"] = state_bytes(opt)
        row["state_rms_bytes"] = sum(st["RMS"].element_size() for st in opt.state.values() if "RMS" in st)
        row["step1"], row["step2"] = steps
        rows.append(row)
        print("  %-9s %-26s %-6s B=%-4d state=%d peak1=%d (%s) peak2=%d (%s) opt2=%d" % (
            name, c["id"], c["precision"], c["batch"], row["state_bytes"], steps[0]["peak_bytes"],
            steps[0]["peak_phase"], steps[1]["peak_bytes"], steps[1]["peak_phase"],
            steps[1]["phase_peak_bytes"]["optimizer"]), file=sys.stderr, flush=True)
    out = {"source": "bench/accuracy/optimizer_step_peak.py (torch profiler, profile_memory=True, CPU)",
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
