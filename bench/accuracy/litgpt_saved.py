#!/usr/bin/env python3
"""What one Lit-GPT block (commit 8641822) keeps for backward under LoRA, counted with
torch.autograd.graph.saved_tensors_hooks on the CPU (Debian's torch: /usr/bin/python3).

The block is written out here from the ops of lit_gpt/model.py and lit_gpt/lora.py at that commit
(github.com/Lightning-AI/litgpt, 8641822): its RMSNorm (x * rsqrt(mean(x*x) + eps) * w, in the
model's dtype, no fp32 upcast), the fused qkv Linear with LoRAQKVLinear's adapter path (one dropout
on the input, x @ A^T for q and v together, a grouped conv1d with B, and zero_pad: new_zeros +
index_copy scattering the (B, T, 2C) update into (B, T, 3C)), the q/k/v views of the qkv output,
the rope cache in fp32 (rebuilt outside Fabric's bf16 context when max_seq_length is set), the
LLaMA MLP (silu(fc_1) * fc_2) or the GPT-NeoX one (gelu), parallel residual for NeoX. Everything
runs in bf16 (Fabric's bf16-true), every base weight frozen.

torch 1.13 on the CPU has no flash attention, so the attention core is a stand-in autograd Function
that saves what torch 2.1's _scaled_dot_product_flash_attention saves on CUDA (query, key, value
as given, the output and an fp32 log-sum-exp of batch x heads x seq): what matters here is which
*storages* those are (v is a view of the qkv output, so it keeps all of it). Dropout on the CPU keeps
a mask of the input's dtype; torch 2.1's fused CUDA dropout keeps a 1-byte mask, which the report
converts (the column cuda_bytes).

    /usr/bin/python3 bench/accuracy/litgpt_saved.py [--seq 64 --batch 2] [--out tests/data/litgpt_cpu_saved.json]

Prints one line per saved storage (its shape, dtype, bytes and the op that made it) and the total in
units of (batch x seq x hidden) bf16 elements, for Llama-2-style and StableLM-alpha-style blocks. The
block's input counts (in a model it is the previous layer's output, kept by this layer's norm).
--out writes the totals that tests/unit/test_litgpt_saved.cpp compares with memplan's ledger.
"""
import argparse
import json
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class FlashLike(torch.autograd.Function):
    """Saves what torch 2.1's flash kernel saves: q, k, v, out, lse (fp32)."""

    @staticmethod
    def forward(ctx, q, k, v):
        scale = 1.0 / math.sqrt(q.size(-1))
        att = (q.float() @ k.float().transpose(-2, -1)) * scale
        T = q.size(-2)
        mask = torch.ones(T, T, dtype=torch.bool).tril()
        att = att.masked_fill(~mask, float("-inf"))
        lse = torch.logsumexp(att, dim=-1)
        out = (torch.softmax(att, dim=-1) @ v.float()).to(q.dtype)
        ctx.save_for_backward(q, k, v, out, lse)
        return out

    @staticmethod
    def backward(ctx, g):
        q, k, v, out, lse = ctx.saved_tensors
        return torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)


class RMSNorm(nn.Module):  # lit_gpt/rmsnorm.py at 8641822
    def __init__(self, n, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        norm_x = torch.mean(x * x, dim=-1, keepdim=True)
        x_normed = x * torch.rsqrt(norm_x + self.eps)
        return self.weight * x_normed


class QKVLoRA(nn.Module):
    """lit_gpt/lora.py LoRAQKVLinear, q and v enabled, k not (its defaults in finetune/lora.py)."""

    def __init__(self, C, n_head, r, alpha, dropout):
        super().__init__()
        self.C = C
        self.linear = nn.Linear(C, 3 * C, bias=False)
        self.lora_A = nn.Parameter(torch.randn(2 * r, C) * 0.01)
        self.lora_B = nn.Parameter(torch.randn(2 * C, r) * 0.01)
        self.dropout = nn.Dropout(dropout) if dropout > 0 else (lambda x: x)
        self.scaling = alpha / r
        self.ind = list(range(0, C)) + list(range(2 * C, 3 * C))

    def zero_pad(self, x):
        x = x.transpose(0, 1)
        result = x.new_zeros((*x.shape[:-1], 3 * self.C))
        result = result.view(-1, 3 * self.C)
        result = result.index_copy(1, torch.tensor(self.ind), x.reshape(-1, 2 * self.C))
        return result.view((*x.shape[:-1], 3 * self.C)).transpose(0, 1)

    def forward(self, x):
        pretrained = self.linear(x)
        after_A = F.linear(self.dropout(x), self.lora_A)
        after_B = F.conv1d(after_A.transpose(-2, -1), self.lora_B.unsqueeze(-1), groups=2).transpose(-2, -1)
        return pretrained + self.zero_pad(after_B) * self.scaling


def rope_cache(T, n_elem, base=10000):
    theta = 1.0 / (base ** (torch.arange(0, n_elem, 2) / n_elem))
    idx_theta = torch.outer(torch.arange(T).float(), theta).repeat(1, 2)
    return torch.cos(idx_theta), torch.sin(idx_theta)  # fp32: built outside the bf16 context


def apply_rope(x, cos, sin):
    hs = x.size(-1)
    rotated = torch.cat((-x[..., hs // 2:], x[..., : hs // 2]), dim=-1)
    return ((x * cos) + (rotated * sin)).type_as(x)


class Block(nn.Module):
    def __init__(self, C, n_head, ff, r, alpha, dropout, neox, rotary_pct):
        super().__init__()
        self.neox, self.nh, self.hs = neox, n_head, C // n_head
        self.n_elem = int(rotary_pct * self.hs)
        self.norm_1 = nn.LayerNorm(C) if neox else RMSNorm(C)
        self.norm_2 = nn.LayerNorm(C) if neox else RMSNorm(C)
        self.qkv = QKVLoRA(C, n_head, r, alpha, dropout)
        self.proj = nn.Linear(C, C, bias=neox)
        if neox:
            self.fc = nn.Linear(C, ff, bias=True)
            self.mproj = nn.Linear(ff, C, bias=True)
        else:
            self.fc_1 = nn.Linear(C, ff, bias=False)
            self.fc_2 = nn.Linear(C, ff, bias=False)
            self.mproj = nn.Linear(ff, C, bias=False)

    def mlp(self, x):
        if self.neox:
            return self.mproj(F.gelu(self.fc(x)))
        return self.mproj(F.silu(self.fc_1(x)) * self.fc_2(x))

    def attn(self, x, cos, sin):
        B, T, C = x.shape
        qkv = self.qkv(x)
        qkv = qkv.view(B, T, self.nh, 3, self.hs).permute(0, 2, 3, 1, 4)
        q, k, v = qkv.split((1, 1, 1), dim=2)
        k = k.expand(B, self.nh, 1, T, self.hs)
        v = v.expand(B, self.nh, 1, T, self.hs)
        q, k, v = (t.reshape(B, -1, T, self.hs) for t in (q, k, v))
        n = self.n_elem
        q = torch.cat((apply_rope(q[..., :n], cos, sin), q[..., n:]), dim=-1)
        k = torch.cat((apply_rope(k[..., :n], cos, sin), k[..., n:]), dim=-1)
        y = FlashLike.apply(q, k, v)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))

    def forward(self, x, cos, sin):
        n_1 = self.norm_1(x)
        h = self.attn(n_1, cos, sin)
        if self.neox:
            return x + h + self.mlp(self.norm_2(x))
        x = x + h
        return x + self.mlp(self.norm_2(x))


def measure(name, C, n_head, ff, neox, rotary_pct, batch, seq, r=8, alpha=16, dropout=0.05):
    torch.manual_seed(0)
    blk = Block(C, n_head, ff, r, alpha, dropout, neox, rotary_pct).to(torch.bfloat16)
    for n, p in blk.named_parameters():
        p.requires_grad_("lora_" in n)
    cos, sin = rope_cache(seq, blk.n_elem)
    x = torch.randn(batch, seq, C, dtype=torch.bfloat16, requires_grad=True)  # a layer after the first
    seen = {}
    params = {p.data_ptr() for p in blk.parameters()} | {cos.data_ptr(), sin.data_ptr()}

    def pack(t):
        st = t.storage()
        key = st.data_ptr()
        if key not in params and key not in seen and t.numel() > 1:
            seen[key] = (tuple(t.shape), str(t.dtype).replace("torch.", ""), st.nbytes(), t.grad_fn)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = blk(x, cos, sin)
    unit = batch * seq * C * 2  # one (batch, seq, hidden) bf16 tensor
    total = cuda = 0
    print(f"{name}: C={C} heads={n_head} ff={ff} batch={batch} seq={seq} (unit = batch x seq x C bf16 = {unit} B)")
    for shape, dtype, nbytes, _ in sorted(seen.values(), key=lambda v: -v[2]):
        print(f"  {str(shape):28s} {dtype:9s} {nbytes:10d} B  {nbytes / unit:6.3f} units  made by {type(_).__name__}")
        total += nbytes
    # the dropout mask: CPU keeps it in the input's dtype (bf16), CUDA a 1-byte bool
    mask_bytes = batch * seq * C * 2 if dropout > 0 else 0
    cuda = total - mask_bytes // 2
    print(f"  total {total} B = {total / unit:.3f} units; with CUDA's 1-byte dropout mask {cuda} B = "
          f"{cuda / unit:.3f} units")
    del out
    index = sum(v[2] for v in seen.values() if v[1] == "int64")
    # LayerNorm's mean and rstd (batch, seq, 1): the CPU keeps them in bf16, CUDA in fp32 (twice the bytes)
    stats = sum(v[2] for v in seen.values() if v[0] == (batch, seq, 1) and v[3] is None)
    return {"case": name, "hidden": C, "heads": n_head, "intermediate": ff, "neox": neox, "rotary_pct": rotary_pct,
            "batch": batch, "seq": seq, "lora_rank": r, "lora_dropout": dropout, "saved_bytes_cpu": total,
            "dropout_mask_bytes_cpu": mask_bytes, "index_bytes": index, "layernorm_stats_bytes_cpu": stats}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    cases = [measure("llama-style (Llama-2 shapes / 32)", 128, 4, 344, False, 1.0, a.batch, a.seq),
             measure("neox-style (StableLM-alpha shapes / 32)", 128, 4, 512, True, 0.25, a.batch, a.seq)]
    if a.out:
        doc = {"schema": "litgpt_cpu_saved/1",
               "description": "One Lit-GPT 8641822 block (bench/accuracy/litgpt_saved.py), bf16, base weights "
                              "frozen, LoRA on q and v: the bytes of every storage autograd keeps "
                              "(saved_tensors_hooks, torch " + torch.__version__ + " on the CPU; attention by a "
                              "stand-in saving what torch 2.1's flash kernel saves). The CPU keeps the dropout "
                              "mask in bf16 (dropout_mask_bytes_cpu), CUDA in 1 byte; LayerNorm's mean and rstd in bf16 "
                              "(layernorm_stats_bytes_cpu), CUDA in fp32; index_bytes is zero_pad's int64 index "
                              "(batch independent).",
               "cases": cases}
        with open(a.out, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
