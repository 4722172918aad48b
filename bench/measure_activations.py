#!/usr/bin/env python3
"""Measure what PyTorch keeps for backward, for any architecture memplan models, so that
memplan's activation ledger can be compared with real bytes. Not part of the test suite: the
suite reads the checked-in tests/data/torch_cpu_reference.json.

Run with Debian's interpreter (apt-get install python3-torch):

  /usr/bin/python3 bench/measure_activations.py measure --arch arch.json [--batch 1,4,8] \
        [--seq 64] [--precision fp32,autocast_bf16] [--out measured.json]
  /usr/bin/python3 bench/measure_activations.py builtin [--out measured.json]
        # the small GPT-2 / LLaMA (GQA, RoPE, SwiGLU) / BERT-style / Falcon-style set below
  /usr/bin/python3 bench/measure_activations.py compact SRC.json OUT.json
        # trim the output of tests/data/torch_reference/measure.py to the test format

arch.json uses memplan's TransformerArch field names (include/memplan/model.hpp):
  {"layers": 2, "hidden": 256, "heads": 4, "kv_heads": 2, "intermediate": 688, "vocab": 1000,
   "activation": "silu", "gated_mlp": true, "norm": "rmsnorm", "norm_first": true,
   "fused_qkv": false, "parallel_attention": false, "ffn_dropout": false, "final_norm": true,
   "bias": false, "position_embedding": "rotary", "max_positions": 128, "tied_embeddings": false,
   "hidden_dropout": 0.0, "attention_dropout": 0.0, "causal": true, "attention": "eager"}
or {"mlp_widths": [784, 512, 256, 10]}.

Every byte is read off live tensors: a saved_tensors_hooks pack hook sees each tensor autograd
saves; each storage is counted once and classified as parameter (excluded), autocast weight copy,
buffer, model input, 0-dim scalar, or activation. The model phase (model(x)) and the loss phase
(cross-entropy for causal LMs) are reported separately. Output: the compact format the C++ test
reads (see compact()).
"""
import argparse
import contextlib
import json
import math
import os
import sys

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:  # compact mode needs no torch; the model classes below need a base class
    torch = None

    class nn:  # noqa: N801
        Module = Sequential = object


# ------------------------------------------------------------------------------------------------
# Models built from a memplan architecture
# ------------------------------------------------------------------------------------------------
def act_fn(name):
    return {"relu": nn.ReLU(), "gelu": nn.GELU(), "gelu_new": nn.GELU(approximate="tanh"),
            "gelu_pytorch_tanh": nn.GELU(approximate="tanh"), "silu": nn.SiLU(), "swish": nn.SiLU()}[name]


class RMSNorm(nn.Module):
    """Hugging Face LlamaRMSNorm: normalise in fp32, cast back, multiply by the weight."""

    def __init__(self, h, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h))
        self.eps = eps

    def forward(self, x):
        dt = x.dtype
        xf = x.to(torch.float32)
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * xf.to(dt)


def make_norm(a):
    return RMSNorm(a["hidden"]) if a.get("norm") == "rmsnorm" else nn.LayerNorm(a["hidden"])


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Attention(nn.Module):
    def __init__(self, a):
        super().__init__()
        h, nh = a["hidden"], a["heads"]
        self.nh, self.kvh = nh, a.get("kv_heads") or nh
        self.hd = a.get("head_dim") or h // nh
        self.impl, self.causal = a.get("attention", "eager"), a.get("causal", True)
        self.rotary = a.get("position_embedding") == "rotary"
        bias = a.get("bias", False)
        qd, kvd = self.nh * self.hd, self.kvh * self.hd
        self.fused = a.get("fused_qkv", False)
        if self.fused:
            self.qkv = nn.Linear(h, qd + 2 * kvd, bias=bias)
        else:
            self.q = nn.Linear(h, qd, bias=bias)
            self.k = nn.Linear(h, kvd, bias=bias)
            self.v = nn.Linear(h, kvd, bias=bias)
        self.o = nn.Linear(qd, h, bias=bias)
        self.p = a.get("attention_dropout", 0.0)
        self.drop = nn.Dropout(self.p)
        T = a.get("max_positions") or 4096
        self.register_buffer("mask", torch.ones(T, T, dtype=torch.bool).triu(1), persistent=False)
        if self.rotary:
            inv = 1.0 / (10000 ** (torch.arange(0, self.hd, 2).float() / self.hd))
            f = torch.outer(torch.arange(T).float(), inv)
            emb = torch.cat((f, f), dim=-1)
            self.register_buffer("cos", emb.cos(), persistent=False)
            self.register_buffer("sin", emb.sin(), persistent=False)

    def forward(self, x):
        B, T, _ = x.shape
        if self.fused:
            qd, kvd = self.nh * self.hd, self.kvh * self.hd
            q, k, v = self.qkv(x).split([qd, kvd, kvd], dim=-1)
        else:
            q, k, v = self.q(x), self.k(x), self.v(x)
        q = q.view(B, T, self.nh, self.hd).transpose(1, 2)
        k = k.view(B, T, self.kvh, self.hd).transpose(1, 2)
        v = v.view(B, T, self.kvh, self.hd).transpose(1, 2)
        if self.rotary:
            cos, sin = self.cos[:T], self.sin[:T]
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
        if self.impl == "sdpa" and hasattr(F, "scaled_dot_product_attention"):
            if self.kvh != self.nh:
                k = k.repeat_interleave(self.nh // self.kvh, dim=1)
                v = v.repeat_interleave(self.nh // self.kvh, dim=1)
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.p if self.training else 0.0,
                                               is_causal=self.causal)
        else:
            if self.kvh != self.nh:  # Hugging Face repeat_kv
                r = self.nh // self.kvh
                k = k[:, :, None].expand(B, self.kvh, r, T, self.hd).reshape(B, self.nh, T, self.hd)
                v = v[:, :, None].expand(B, self.kvh, r, T, self.hd).reshape(B, self.nh, T, self.hd)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.hd))
            if self.causal:
                att = att.masked_fill(self.mask[:T, :T], float("-inf"))
            att = self.drop(F.softmax(att, dim=-1))
            y = att @ v
        return self.o(y.transpose(1, 2).contiguous().view(B, T, self.nh * self.hd))


class MLP(nn.Module):
    def __init__(self, a):
        super().__init__()
        h, ff, bias = a["hidden"], a.get("intermediate") or 4 * a["hidden"], a.get("bias", False)
        self.gated = a.get("gated_mlp", False)
        self.up = nn.Linear(h, ff, bias=bias)
        if self.gated:
            self.gate = nn.Linear(h, ff, bias=bias)
        self.down = nn.Linear(ff, h, bias=bias)
        self.act = act_fn(a.get("activation", "gelu"))
        self.drop = nn.Dropout(a.get("hidden_dropout", 0.0)) if a.get("ffn_dropout") else nn.Identity()

    def forward(self, x):
        inner = self.act(self.gate(x)) * self.up(x) if self.gated else self.act(self.up(x))
        return self.down(self.drop(inner))


class Block(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.pre, self.parallel = a.get("norm_first", True), a.get("parallel_attention", False)
        self.n1, self.attn, self.n2, self.mlp = make_norm(a), Attention(a), make_norm(a), MLP(a)
        self.d1, self.d2 = nn.Dropout(a.get("hidden_dropout", 0.0)), nn.Dropout(a.get("hidden_dropout", 0.0))

    def forward(self, x):
        if self.parallel:
            return x + self.d1(self.attn(self.n1(x))) + self.d2(self.mlp(self.n2(x)))
        if self.pre:
            x = x + self.d1(self.attn(self.n1(x)))
            return x + self.d2(self.mlp(self.n2(x)))
        x = self.n1(x + self.d1(self.attn(x)))
        return self.n2(x + self.d2(self.mlp(x)))


class Transformer(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.a, h, V = a, a["hidden"], a.get("vocab", 0)
        if V:
            self.wte = nn.Embedding(V, h)
            if a.get("position_embedding") == "learned":
                self.wpe = nn.Embedding(a["max_positions"], h)
                self.register_buffer("pos", torch.arange(a["max_positions"]), persistent=False)
            self.emb_norm = make_norm(a) if not a.get("norm_first", True) else None
            self.emb_drop = nn.Dropout(a.get("hidden_dropout", 0.0))
        self.blocks = nn.ModuleList([Block(a) for _ in range(a["layers"])])
        self.final = make_norm(a) if a.get("final_norm", True) else None
        if V and a.get("causal", True):
            self.head = nn.Linear(h, V, bias=False)
            if a.get("tied_embeddings"):
                self.head.weight = self.wte.weight

    def forward(self, x):
        if self.a.get("vocab", 0):
            T = x.size(1)
            x = self.wte(x) + (self.wpe(self.pos[:T]) if hasattr(self, "wpe") else 0)
            if self.emb_norm is not None:
                x = self.emb_norm(x)
            x = self.emb_drop(x)
        for b in self.blocks:
            x = b(x)
        if self.final is not None:
            x = self.final(x)
        return self.head(x) if hasattr(self, "head") else x


class MLPNet(nn.Sequential):
    def __init__(self, widths):
        layers = []
        for i in range(len(widths) - 1):
            layers.append(nn.Linear(widths[i], widths[i + 1]))
            if i < len(widths) - 2:
                layers.append(nn.ReLU())
        super().__init__(*layers)


# ------------------------------------------------------------------------------------------------
# Measuring
# ------------------------------------------------------------------------------------------------
def storage_of(t):
    s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    return s.data_ptr(), s.nbytes()


def is_param_cast(t, param_ids):
    cur, hops = t, 0
    while cur is not None and hops < 8:
        fn = cur.grad_fn
        if fn is not None and type(fn).__name__.startswith("ToCopyBackward"):
            for nf, _ in fn.next_functions:
                if nf is not None and type(nf).__name__ == "AccumulateGrad" and id(nf.variable) in param_ids:
                    return True
        cur, hops = cur._base, hops + 1
    return False


class Meter:
    def __init__(self, model, inputs):
        ps = list(model.parameters())
        self.params = {storage_of(p)[0] for p in ps}
        self.param_ids = {id(p) for p in ps}
        self.buffers = {storage_of(b)[0] for b in model.buffers()}
        self.inputs = {storage_of(x)[0] for x in inputs if torch.is_tensor(x)}
        self.phase, self.seen = "model", {}

    def pack(self, t):
        ptr, nbytes = storage_of(t)
        if ptr and ptr not in self.seen:
            if ptr in self.params:
                cat = "param"
            elif ptr in self.buffers:
                cat = "buffer"
            elif ptr in self.inputs:
                cat = "input"
            elif is_param_cast(t, self.param_ids):
                cat = "param_cast"
            elif t.dim() == 0:
                cat = "scalar"
            else:
                cat = "activation"
            self.seen[ptr] = (self.phase, cat, nbytes, str(t.dtype).replace("torch.", ""))
        return t.detach()

    def total(self, phase, cat):
        return sum(n for ph, c, n, _ in self.seen.values() if ph == phase and c == cat)

    def by_dtype(self, phase):
        out = {}
        for ph, c, n, dt in self.seen.values():
            if ph == phase and c == "activation":
                out[dt] = out.get(dt, 0) + n
        return dict(sorted(out.items()))


def build(arch):
    torch.manual_seed(0)
    return MLPNet(arch["mlp_widths"]) if "mlp_widths" in arch else Transformer(arch)


def batch_for(arch, B, T, gen):
    if "mlp_widths" in arch:
        w = arch["mlp_widths"]
        return torch.randn(B, w[0], generator=gen), torch.randint(0, w[-1], (B,), generator=gen)
    if arch.get("vocab", 0):
        idx = torch.randint(0, arch["vocab"], (B, T + 1), generator=gen)
        return idx[:, :T].clone(), idx[:, 1:].clone()
    return torch.randn(B, T, arch["hidden"], generator=gen), None


def loss_of(arch, out, y):
    if "mlp_widths" in arch:
        return F.cross_entropy(out, y)
    if arch.get("vocab", 0) and arch.get("causal", True):
        return F.cross_entropy(out.float().view(-1, out.size(-1)), y.reshape(-1))
    return out.float().pow(2).mean()


def measure_one(arch, model, B, T, precision):
    gen = torch.Generator().manual_seed(B * 1000 + (T or 0))
    x, y = batch_for(arch, B, T, gen)
    meter = Meter(model, [x, y])
    ctx = torch.autocast("cpu", dtype=torch.bfloat16) if precision == "autocast_bf16" else contextlib.nullcontext()
    model.train()
    with torch.autograd.graph.saved_tensors_hooks(meter.pack, lambda t: t), ctx:
        out = model(x)
        meter.phase = "loss"
        loss_of(arch, out, y)
    return {
        "precision": precision, "batch_size": B, "seq_len": T,
        "activation_bytes": meter.total("model", "activation"),
        "input_bytes": meter.total("model", "input"),
        "param_cast_bytes": meter.total("model", "param_cast"),
        "batch_independent_bytes": sum(meter.total("model", c) for c in ("param_cast", "buffer", "scalar")),
        "activation_bytes_by_dtype": meter.by_dtype("model"),
        "loss_activation_bytes": meter.total("loss", "activation"),
        "loss_activation_bytes_by_dtype": meter.by_dtype("loss"),
    }


def param_summary(model):
    ps = list(model.parameters())
    return {"bytes": sum(p.numel() * p.element_size() for p in ps), "tensors": len(ps),
            "count": sum(p.numel() for p in ps)}


def measure_arch(case_id, arch, batches, seqs, precisions):
    model = build(arch)
    acts = []
    for T in seqs:
        for prec in precisions:
            for B in batches:
                acts.append(measure_one(arch, model, B, T, prec))
                r = acts[-1]
                print("  %-28s T=%-5s B=%-4d %-14s act=%d loss=%d" % (case_id, T, B, prec, r["activation_bytes"],
                                                                    r["loss_activation_bytes"]), flush=True)
    return {"id": case_id, "arch": arch, "params": param_summary(model), "activations": acts}


BUILTIN = {
    "gpt2_style_L2": {"layers": 2, "hidden": 128, "heads": 4, "intermediate": 512, "vocab": 1000,
                      "activation": "gelu_new", "norm": "layernorm", "fused_qkv": True, "bias": True,
                      "position_embedding": "learned", "max_positions": 64, "tied_embeddings": True,
                      "causal": True, "attention": "eager"},
    "llama_gqa_rope_L2": {"layers": 2, "hidden": 256, "heads": 8, "kv_heads": 2, "intermediate": 688,
                          "vocab": 1000, "activation": "silu", "gated_mlp": True, "norm": "rmsnorm",
                          "position_embedding": "rotary", "max_positions": 128, "causal": True,
                          "attention": "eager"},
    "bert_style_L2_dropout": {"layers": 2, "hidden": 128, "heads": 4, "intermediate": 512, "vocab": 1000,
                              "activation": "gelu", "norm": "layernorm", "norm_first": False, "fused_qkv": False,
                              "bias": True, "position_embedding": "learned", "max_positions": 64,
                              "final_norm": False, "causal": False, "hidden_dropout": 0.1,
                              "attention_dropout": 0.1, "attention": "eager"},
    "falcon_style_parallel_L2": {"layers": 2, "hidden": 128, "heads": 4, "intermediate": 512, "vocab": 1000,
                                 "activation": "gelu", "norm": "layernorm", "parallel_attention": True,
                                 "fused_qkv": True, "position_embedding": "rotary", "max_positions": 64,
                                 "causal": True, "attention": "eager"},
}


# ------------------------------------------------------------------------------------------------
# compact: measure.py's full reference -> the test format, with the memplan architecture of each case
# ------------------------------------------------------------------------------------------------
def arch_of(case):
    c, fam = case["config"], case["family"]
    if fam == "mlp":
        return {"mlp_widths": c["widths"]}
    if fam == "transformer_encoder":
        return {"layers": c["num_layers"], "hidden": c["d_model"], "heads": c["nhead"],
                "intermediate": c["dim_feedforward"], "vocab": 0, "activation": c["activation"],
                "norm": "layernorm", "norm_first": c["norm_first"], "fused_qkv": True, "ffn_dropout": True,
                "final_norm": False, "bias": True, "position_embedding": "none", "causal": False,
                "hidden_dropout": c["dropout"], "attention_dropout": c["dropout"]}
    if fam == "gpt":
        return {"layers": c["n_layer"], "hidden": c["h"], "heads": c["n_head"], "intermediate": c["mlp_hidden"],
                "vocab": c["vocab"], "max_positions": c["block_size"], "activation": "gelu_new",
                "norm": "layernorm", "fused_qkv": True, "bias": True, "position_embedding": "learned",
                "tied_embeddings": True, "causal": True,
                "attention": "eager" if c["attn_impl"] == "explicit" else "sdpa"}
    if fam == "llama":
        return {"layers": c["n_layer"], "hidden": c["h"], "heads": c["n_head"],
                "intermediate": c["intermediate_size"], "vocab": 0, "max_positions": c["block_size"],
                "activation": "silu", "gated_mlp": True, "norm": "rmsnorm", "bias": False,
                "position_embedding": "none", "causal": True, "attention": "eager"}
    raise ValueError(fam)


def compact(src, dst):
    with open(src) as f:
        doc = json.load(f)
    keep_act = ("precision", "batch_size", "seq_len", "activation_bytes", "input_bytes", "param_cast_bytes",
                "batch_independent_bytes", "activation_bytes_by_dtype")
    cases = []
    for c in doc["cases"]:
        acts = []
        for a in c["activations"]:
            r = {k: a[k] for k in keep_act}
            r["loss_activation_bytes"] = a["loss_phase"]["activation_bytes"]
            acts.append(r)
        opt = {}
        for name, o in c["optimizers"].items():
            opt[name] = {"state_bytes_total": o["state_bytes_total"], "state_bytes_excl_step": o["state_bytes_excl_step"],
                         "step_bytes": o["step_bytes"], "step_tensors": o["step_tensors"],
                         "step_dtypes": o["step_dtypes"],
                         "by_key": {k: v["bytes"] for k, v in o["by_key"].items()}}
        cases.append({
            "id": c["id"], "family": c["family"], "config": c["config"], "arch": arch_of(c),
            "params": {k: c["params"][k] for k in ("bytes", "tensors", "count", "trainable_bytes",
                                                   "trainable_tensors", "dtypes")},
            "grads": {p: {k: g[k] for k in ("bytes", "tensors", "dtypes")} for p, g in c["grads"].items()},
            "optimizers": opt, "activations": acts})
    out = {"source": "tests/data/torch_reference/measure.py (full output), trimmed by "
                     "bench/measure_activations.py compact; every case kept",
           "environment": {k: doc["environment"][k] for k in ("torch_version", "python", "cpu")},
           "notes": doc["notes"], "cases": cases}
    with open(dst, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print("wrote %s: %d cases" % (dst, len(cases)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--arch", required=True)
    m.add_argument("--id", default=None)
    b = sub.add_parser("builtin")
    for p in (m, b):
        p.add_argument("--batch", default="1,4,8")
        p.add_argument("--seq", default="64")
        p.add_argument("--precision", default="fp32,autocast_bf16")
        p.add_argument("--out", default=None)
    c = sub.add_parser("compact")
    c.add_argument("src")
    c.add_argument("dst")
    args = ap.parse_args()
    if args.cmd == "compact":
        return compact(args.src, args.dst)
    if torch is None:
        sys.exit("measure_activations.py: torch is not importable; run with /usr/bin/python3 (python3-torch)")
    torch.set_num_threads(2)
    batches = [int(x) for x in args.batch.split(",")]
    seqs = [int(x) for x in args.seq.split(",")]
    precs = args.precision.split(",")
    if args.cmd == "measure":
        with open(args.arch) as f:
            arch = json.load(f)
        todo = {args.id or os.path.splitext(os.path.basename(args.arch))[0]: arch}
    else:
        todo = BUILTIN
    cases = []
    for cid, arch in todo.items():
        s = [None] if "mlp_widths" in arch else seqs
        cases.append(measure_arch(cid, arch, batches, s, precs))
    out = {"source": "bench/measure_activations.py %s" % args.cmd,
           "environment": {"torch_version": torch.__version__, "python": sys.version.split()[0]},
           "cases": cases}
    text = json.dumps(out, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
