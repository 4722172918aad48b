#!/usr/bin/env python3
"""What Qwen2-VL's and Qwen2.5-VL's PatchMerger keeps for backward when it trains and the vision
tower before it is frozen (its input does not require grad), counted with
torch.autograd.graph.saved_tensors_hooks on the CPU (Debian's torch 1.13: /usr/bin/python3).
The merger is written out here from the ops of Hugging Face transformers' PatchMerger
(modeling_qwen2_vl.py: ln_q LayerNorm(eps 1e-6); modeling_qwen2_5_vl.py: ln_q Qwen2RMSNorm), then
    x -> ln_q -> view(-1, merge^2 x width) -> Linear -> GELU (erf) -> Linear
Sizes of Qwen2-VL-7B / Qwen2.5-VL-7B: width 1,280, merge 2, out 3,584; one 448 px image =
1,024 patches.
    /usr/bin/python3 bench/accuracy/qwen_merger_saved.py
Prints one line per saved storage and the total per case. The CPU keeps LayerNorm's mean and rstd
in the input's dtype; CUDA keeps them in fp32 (what memplan counts): the lines name them.
"""
import torch
import torch.nn as nn


class RMSNorm(nn.Module):  # Qwen2RMSNorm
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, h):
        dt = h.dtype
        h = h.to(torch.float32)
        var = h.pow(2).mean(-1, keepdim=True)
        h = h * torch.rsqrt(var + self.eps)
        return self.weight * h.to(dt)


class Merger(nn.Module):
    def __init__(self, d, out, m, rms):
        super().__init__()
        self.hidden = d * m * m
        self.ln_q = RMSNorm(d) if rms else nn.LayerNorm(d, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(self.hidden, self.hidden), nn.GELU(), nn.Linear(self.hidden, out))

    def forward(self, x):
        return self.mlp(self.ln_q(x).view(-1, self.hidden))


def measure(rms, dtype, P=1024, d=1280, out=3584, m=2):
    torch.manual_seed(0)
    mod = Merger(d, out, m, rms).to(dtype)
    x = torch.randn(P, d, dtype=dtype)  # the frozen tower's output: no grad
    params = {p.data_ptr() for p in mod.parameters()}
    seen = {}

    def pack(t):
        st = t.storage()
        key = st.data_ptr()
        if key not in params and key not in seen and t.numel() > 1:
            seen[key] = (tuple(t.shape), str(t.dtype).replace("torch.", ""), st.nbytes(), type(t.grad_fn).__name__)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = mod(x)
    y.float().sum().backward()
    name = ("qwen2_5_vl RMSNorm" if rms else "qwen2_vl LayerNorm") + " " + str(dtype).replace("torch.", "")
    total = 0
    for shape, dt, nb, fn in seen.values():
        print(f"  {name}: {shape} {dt} {nb} B ({fn})")
        total += nb
    print(f"{name}: total {total} B")


if __name__ == "__main__":
    for rms in (False, True):
        for dt in (torch.float32, torch.bfloat16):
            measure(rms, dt)
