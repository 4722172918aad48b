#!/usr/bin/env python3
"""What one vision-tower encoder layer keeps for backward, counted with
torch.autograd.graph.saved_tensors_hooks on the CPU (Debian's torch 1.13: /usr/bin/python3).

The layers are written out here from the ops of Hugging Face transformers' CLIPEncoderLayer
(LLaVA-1.5's tower, modeling_clip.py) and SiglipEncoderLayer (Gemma 3's tower, modeling_siglip.py),
eager attention as those files write it (q/k/v Linears with biases, q scaled, bmm, softmax,
bmm, out_proj), since torch 1.13 has no scaled_dot_product_attention:
    x -> layer_norm1 -> self_attn -> + x -> layer_norm2 -> fc1 -> act -> fc2 -> + residual
CLIP's act is quick_gelu (QuickGELUActivation: x * sigmoid(1.702 x), written out in Python ops);
SigLIP's is gelu_pytorch_tanh (F.gelu(x, approximate="tanh"), one fused op). Attention dropout is
0.0 in both configs (no mask). The layer's input requires grad (a layer after the first of a
trained tower). Every parameter trains.

    /usr/bin/python3 bench/accuracy/vit_saved.py [--out tests/data/vit_cpu_saved.json]

Prints one line per saved storage (its shape, dtype, bytes and the op that made it) and the total.
--out writes the totals tests/unit/test_vision_activations.cpp compares with memplan's ledger.
The CPU keeps LayerNorm's mean and rstd in the input's dtype (bf16 in the bf16 case); CUDA keeps
them in fp32: layernorm_stats_bytes_cpu says how many bytes those are.
"""
import argparse
import json

import torch
import torch.nn as nn
import torch.nn.functional as F


class EncoderLayer(nn.Module):
    def __init__(self, C, n_head, ff, act):
        super().__init__()
        self.nh, self.hs, self.act = n_head, C // n_head, act
        self.scale = self.hs ** -0.5
        self.layer_norm1 = nn.LayerNorm(C)
        self.q_proj = nn.Linear(C, C)
        self.k_proj = nn.Linear(C, C)
        self.v_proj = nn.Linear(C, C)
        self.out_proj = nn.Linear(C, C)
        self.layer_norm2 = nn.LayerNorm(C)
        self.fc1 = nn.Linear(C, ff)
        self.fc2 = nn.Linear(ff, C)

    def shape(self, t, B, T):  # CLIPAttention._shape
        return t.view(B, T, self.nh, self.hs).transpose(1, 2).contiguous()

    def attention(self, h):
        B, T, C = h.shape
        q = self.q_proj(h) * self.scale
        k = self.shape(self.k_proj(h), B, T)
        v = self.shape(self.v_proj(h), B, T)
        shp = (B * self.nh, -1, self.hs)
        q = self.shape(q, B, T).view(*shp)
        k = k.view(*shp)
        v = v.view(*shp)
        w = torch.bmm(q, k.transpose(1, 2))
        w = F.softmax(w, dim=-1)
        w = F.dropout(w, p=0.0, training=True)
        o = torch.bmm(w, v)
        o = o.view(B, self.nh, T, self.hs).transpose(1, 2).reshape(B, T, C)
        return self.out_proj(o)

    def mlp(self, h):
        h = self.fc1(h)
        if self.act == "quick_gelu":
            h = h * torch.sigmoid(1.702 * h)
        else:
            h = F.gelu(h, approximate="tanh")
        return self.fc2(h)

    def forward(self, x):
        r = x
        x = r + self.attention(self.layer_norm1(x))
        r = x
        return r + self.mlp(self.layer_norm2(x))


def measure(name, C, n_head, ff, act, dtype, batch, seq):
    torch.manual_seed(0)
    layer = EncoderLayer(C, n_head, ff, act).to(dtype)
    x = torch.randn(batch, seq, C, dtype=dtype, requires_grad=True)
    seen = {}
    params = {p.data_ptr() for p in layer.parameters()}

    def pack(t):
        st = t.storage()
        key = st.data_ptr()
        if key not in params and key not in seen and t.numel() > 1:
            seen[key] = (tuple(t.shape), str(t.dtype).replace("torch.", ""), st.nbytes(), type(t.grad_fn).__name__)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = layer(x)
    total = sum(v[2] for v in seen.values())
    print(f"{name}: C={C} heads={n_head} ff={ff} act={act} {dtype} batch={batch} seq={seq}")
    for shape, dt, nbytes, fn in sorted(seen.values(), key=lambda v: -v[2]):
        print(f"  {str(shape):24s} {dt:9s} {nbytes:10d} B  made by {fn}")
    print(f"  total {total} B")
    del out
    stats = sum(v[2] for v in seen.values() if v[0] == (batch, seq, 1))
    return {"case": name, "hidden": C, "heads": n_head, "intermediate": ff, "activation": act,
            "dtype": str(dtype).replace("torch.", ""), "batch": batch, "seq": seq, "saved_bytes_cpu": total,
            "layernorm_stats_bytes_cpu": stats}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    # CLIP ViT-L/14-336 and SigLIP-So400m shapes / 8; seq = 577 / 8 and 256 / 4 tokens
    cases = [measure("clip-style fp32", 128, 2, 512, "quick_gelu", torch.float32, a.batch, 72),
             measure("clip-style bf16", 128, 2, 512, "quick_gelu", torch.bfloat16, a.batch, 72),
             measure("siglip-style fp32", 144, 2, 536, "gelu_pytorch_tanh", torch.float32, a.batch, 64),
             measure("siglip-style bf16", 144, 2, 536, "gelu_pytorch_tanh", torch.bfloat16, a.batch, 64)]
    if a.out:
        doc = {"schema": "vit_cpu_saved/1",
               "description": "One vision-tower encoder layer (bench/accuracy/vit_saved.py: transformers' "
                              "CLIPEncoderLayer with quick_gelu, SiglipEncoderLayer with gelu_pytorch_tanh, "
                              "eager attention), every parameter trained, input requiring grad: the bytes of "
                              "every storage autograd keeps (saved_tensors_hooks, torch " + torch.__version__ +
                              " on the CPU). LayerNorm's mean and rstd are in the input's dtype on the CPU "
                              "(layernorm_stats_bytes_cpu), fp32 on CUDA.",
               "cases": cases}
        with open(a.out, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
