#!/usr/bin/env python3
"""memplan accuracy harness: real PyTorch training steps next to memplan's prediction.

For each configuration (model x precision x attention x checkpointing x batch) this builds a
GPT-2-style or LLaMA-style decoder from plain torch.nn modules, runs a few AdamW training steps and
records, read off live tensors:

  parameters       bytes of the parameter storages (tied weights once)
  gradients        bytes of the .grad storages after backward
  optimizer_state  bytes of every tensor in optimizer.state after step (incl. 'step' counters)
  activations      bytes of every storage autograd saved for backward during one forward + loss
                   (torch.autograd.graph.saved_tensors_hooks), each storage once, parameters excluded;
                   autocast's low-precision weight copies are counted here and also shown apart
  peak             torch.cuda.max_memory_allocated() over the steps (GPU only)
  peak_reserved    torch.cuda.max_memory_reserved() (GPU only)
  context          the CUDA context + library workspaces: device memory in use after CUDA and cuBLAS
                   start, minus what was in use before (nvidia-smi) and minus torch's reserved bytes

and runs `memplan estimate ... --format json` for the same configuration, reading `breakdown`,
`total_bytes` and `required_bytes` (a missing field is shown as "-"). It prints the relative error
per term and per case, and writes everything to JSON (--out).

Runs on CPU too (no peak or context there, but the per-term bytes). Examples:
    python3 bench/accuracy/accuracy.py --memplan build/memplan --device cpu --quick
    python3 bench/accuracy/accuracy.py --memplan build/memplan --device cuda --out accuracy.json
"""
import argparse
import contextlib
import gc
import itertools
import json
import math
import os
import shutil
import subprocess
import sys
import time

# Model shapes. "family" picks the module set; the rest maps 1:1 onto memplan's architecture flags.
MODELS = {
    # GPT-2 style: learned positions, LayerNorm, GELU MLP (4h), biases, lm_head tied to the embedding.
    "gpt2-tiny": dict(family="gpt2", layers=2, hidden=128, heads=4, kv_heads=4, intermediate=512,
                      vocab=1000, seq=64),
    "gpt2-small": dict(family="gpt2", layers=12, hidden=768, heads=12, kv_heads=12, intermediate=3072,
                       vocab=50257, seq=1024),
    # LLaMA style: RMSNorm, rotary positions, SwiGLU MLP, grouped KV heads, no biases, untied head.
    "llama-tiny": dict(family="llama", layers=2, hidden=128, heads=4, kv_heads=2, intermediate=352,
                       vocab=1000, seq=64),
    "llama-600m": dict(family="llama", layers=16, hidden=1536, heads=16, kv_heads=4, intermediate=4096,
                       vocab=32000, seq=1024),
}
PRECISIONS = ("fp32", "amp-bf16", "bf16")
ATTENTIONS = ("eager", "sdpa")
CHECKPOINTING = ("none", "full")
TERMS = ("parameters", "gradients", "optimizer_state", "activations")
MIB = 1024 * 1024
SCHEMA = "memplan.accuracy/1"


def build_model(cfg, torch, nn, F, checkpoint_fn):
    """A decoder-only LM of plain modules; forward(idx) -> logits (B, S, V)."""
    fam, h, nh, nkv = cfg["family"], cfg["hidden"], cfg["heads"], cfg["kv_heads"]
    hd = h // nh

    def attention(q, k, v, impl):
        if nkv != nh:  # grouped KV heads: repeat to the query heads
            k = k.repeat_interleave(nh // nkv, dim=1)
            v = v.repeat_interleave(nh // nkv, dim=1)
        if impl == "sdpa":
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        s = q.size(-2)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
        return F.softmax(scores, dim=-1) @ v

    def rotary(x):  # x: (B, heads, S, hd)
        s = x.size(-2)
        inv = 1.0 / (10000 ** (torch.arange(0, hd, 2, device=x.device, dtype=torch.float32) / hd))
        ang = torch.outer(torch.arange(s, device=x.device, dtype=torch.float32), inv)
        cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
        x1, x2 = x[..., ::2], x[..., 1::2]
        return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(h))

        def forward(self, x):
            xf = x.float()
            return self.weight * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype)

    class Block(nn.Module):
        def __init__(self, impl):
            super().__init__()
            self.impl = impl
            bias = fam == "gpt2"
            self.norm1 = nn.LayerNorm(h) if fam == "gpt2" else RMSNorm()
            self.norm2 = nn.LayerNorm(h) if fam == "gpt2" else RMSNorm()
            self.q = nn.Linear(h, h, bias=bias)
            self.kv = nn.Linear(h, 2 * nkv * hd, bias=bias)
            self.o = nn.Linear(h, h, bias=bias)
            if fam == "gpt2":
                self.up = nn.Linear(h, cfg["intermediate"], bias=True)
                self.down = nn.Linear(cfg["intermediate"], h, bias=True)
            else:
                self.gate = nn.Linear(h, cfg["intermediate"], bias=False)
                self.up = nn.Linear(h, cfg["intermediate"], bias=False)
                self.down = nn.Linear(cfg["intermediate"], h, bias=False)

        def forward(self, x):
            b, s, _ = x.shape
            a = self.norm1(x)
            q = self.q(a).view(b, s, nh, hd).transpose(1, 2)
            k, v = self.kv(a).view(b, s, 2, nkv, hd).permute(2, 0, 3, 1, 4)
            if fam == "llama":
                q, k = rotary(q), rotary(k)
            y = attention(q, k, v, self.impl).transpose(1, 2).reshape(b, s, h)
            x = x + self.o(y)
            m = self.norm2(x)
            if fam == "gpt2":
                m = self.down(F.gelu(self.up(m), approximate="tanh"))
            else:
                m = self.down(F.silu(self.gate(m)) * self.up(m))
            return x + m

    class Decoder(nn.Module):
        def __init__(self, impl, ckpt):
            super().__init__()
            self.ckpt = ckpt
            self.embed = nn.Embedding(cfg["vocab"], h)
            self.pos = nn.Embedding(cfg["seq"], h) if fam == "gpt2" else None
            self.blocks = nn.ModuleList(Block(impl) for _ in range(cfg["layers"]))
            self.norm = nn.LayerNorm(h) if fam == "gpt2" else RMSNorm()
            self.head = nn.Linear(h, cfg["vocab"], bias=False)
            if fam == "gpt2":
                self.head.weight = self.embed.weight

        def forward(self, idx):
            x = self.embed(idx)
            if self.pos is not None:
                x = x + self.pos(torch.arange(idx.size(1), device=idx.device))
            for blk in self.blocks:
                x = checkpoint_fn(blk, x) if self.ckpt else blk(x)
            return self.head(self.norm(x))

    return Decoder


def storage_key(t):
    try:
        return t.untyped_storage().data_ptr(), t.untyped_storage().nbytes()
    except AttributeError:  # torch < 2.0
        return t.storage().data_ptr(), t.storage().nbytes()


def unique_bytes(tensors):
    seen = {}
    for t in tensors:
        if t is not None:
            ptr, n = storage_key(t)
            seen[ptr] = max(seen.get(ptr, 0), n)
    return sum(seen.values())


def run_memplan(binary, cfg, case):
    """memplan's prediction, or {"error": ...}; missing fields stay missing."""
    cmd = [binary, "estimate", "--family", cfg["family"],
           "--layers", str(cfg["layers"]), "--hidden", str(cfg["hidden"]), "--heads", str(cfg["heads"]),
           "--kv-heads", str(cfg["kv_heads"]), "--intermediate", str(cfg["intermediate"]),
           "--vocab", str(cfg["vocab"]), "--seq", str(cfg["seq"]), "--batch", str(case["batch"]),
           "--precision", case["precision"], "--optimizer", "adamw", "--attention", case["attention"],
           "--checkpointing", case["checkpointing"], "--format", "json",
           "--keep-logits"] + cfg.get("memplan_extra", [])  # run_case keeps `logits` until after the step
    out = {"command": " ".join(cmd)}
    if not binary:
        out["error"] = "no memplan binary (use --memplan or MEMPLAN_BINARY)"
        return out
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        out["error"] = str(e)
        return out
    if p.returncode not in (0, 1):
        out["error"] = (p.stderr.strip() or f"exit {p.returncode}").splitlines()[0]
        return out
    try:
        j = json.loads(p.stdout)
    except ValueError as e:
        out["error"] = f"not JSON: {e}"
        return out
    breakdown = j.get("breakdown") or {}
    for term in TERMS + ("kv_cache", "overhead"):
        if isinstance(breakdown.get(term), int):
            out[term] = breakdown[term]
    for key in ("total_bytes", "peak_bytes", "required_bytes"):
        if isinstance(j.get(key), int):
            out[key] = j[key]
    return out


def nvidia_smi_used(requested):
    """Device memory in use on the GPU `requested` names ("cuda", "cuda:N", "auto"), as nvidia-smi
    sees it, in bytes; None without nvidia-smi. Called before this process touches CUDA. cuda:N is
    mapped through a numeric CUDA_VISIBLE_DEVICES to nvidia-smi's index."""
    if not shutil.which("nvidia-smi") or requested == "cpu":
        return None
    n = int(requested.split(":")[1]) if requested.startswith("cuda:") else 0
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        parts = [p.strip() for p in visible.split(",")]
        if n >= len(parts):
            return None
        n = parts[n]  # an ordinal or a UUID: nvidia-smi -i takes both
    try:
        p = subprocess.run(["nvidia-smi", "-i", str(n), "--query-gpu=memory.used",
                            "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=30)
        return int(p.stdout.strip().splitlines()[0]) * MIB
    except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
        return None


def measure_context(torch, device, before):
    """CUDA context + cuBLAS workspace bytes: in use after the first CUDA work, minus `before`
    (nvidia-smi, taken before CUDA started) and minus torch's own reserved bytes; None on CPU."""
    if device.type != "cuda" or before is None:
        return None
    a = torch.randn(256, 256, device=device)
    (a @ a).sum().item()  # starts cuBLAS
    del a
    free, total = torch.cuda.mem_get_info(device)
    return max(0, (total - free) - before - torch.cuda.memory_reserved(device))


def run_case(torch, nn, F, cfg, case, device, steps):
    from torch.utils.checkpoint import checkpoint

    def ckpt(fn, x):
        return checkpoint(fn, x, use_reentrant=True)  # reentrant: the saved inputs are visible to hooks

    torch.manual_seed(0)
    if device.type == "cuda":
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
    Decoder = build_model(cfg, torch, nn, F, ckpt)
    # Built on the device where torch allows it (seconds instead of a CPU init of 600M parameters).
    where = device if hasattr(torch, "set_default_device") else contextlib.nullcontext()
    with where:
        model = Decoder(case["attention"], case["checkpointing"] == "full").to(device)
    if case["precision"] == "bf16":
        model = model.to(torch.bfloat16)
    if device.type == "cuda":  # only the training step is measured, not the model's construction
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    params = list(model.parameters())
    param_ptrs = {storage_key(p)[0] for p in params}
    param_shapes = {tuple(p.shape) for p in params} | {tuple(reversed(p.shape)) for p in params}
    autocast = (torch.autocast(device_type=device.type, dtype=torch.bfloat16)
                if case["precision"] == "amp-bf16" else contextlib.nullcontext())
    b, s, v = case["batch"], cfg["seq"], cfg["vocab"]
    idx = torch.randint(0, v, (b, s), device=device)
    target = torch.randint(0, v, (b, s), device=device)

    saved = {}
    casts = {}

    def pack(t):
        ptr, n = storage_key(t)
        if ptr not in param_ptrs:
            saved[ptr] = max(saved.get(ptr, 0), n)
            if t.dtype == torch.bfloat16 and case["precision"] == "amp-bf16" and tuple(t.shape) in param_shapes:
                casts[ptr] = n
        return t

    row = {"measured": {}}
    start = time.time()
    for step in range(steps):
        opt.zero_grad(set_to_none=True)
        hooks = torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t) if step == 0 else contextlib.nullcontext()
        with hooks:
            with autocast:
                logits = model(idx)
                loss = F.cross_entropy(logits.float().view(-1, v) if case["precision"] != "amp-bf16"
                                       else logits.view(-1, v), target.view(-1))
        loss.backward()
        if step == 0:
            row["measured"]["gradients"] = unique_bytes(p.grad for p in params)
        opt.step()
        del logits, loss
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    m = row["measured"]
    m["parameters"] = unique_bytes(params)
    m["optimizer_state"] = unique_bytes(t for st in opt.state.values() for t in st.values()
                                        if torch.is_tensor(t))
    m["activations"] = sum(saved.values())
    m["autocast_weight_copies"] = sum(casts.values())
    if device.type == "cuda":
        m["peak"] = torch.cuda.max_memory_allocated(device)
        m["peak_reserved"] = torch.cuda.max_memory_reserved(device)
    row["seconds"] = round(time.time() - start, 3)
    del model, opt, params
    return row


def rel(pred, meas):
    if pred is None or meas in (None, 0):
        return None
    return (pred - meas) / meas


def fmt_err(e):
    return "-" if e is None else f"{100 * e:+.1f}%"


def find_memplan(arg):
    for cand in (arg, os.environ.get("MEMPLAN_BINARY"), shutil.which("memplan"),
                 os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "memplan")):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return os.path.abspath(cand)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memplan", help="memplan binary (default: $MEMPLAN_BINARY, PATH, build/memplan)")
    ap.add_argument("--device", default="auto", help="cuda, cuda:N, cpu or auto")
    ap.add_argument("--models", default=None, help="comma list of " + ",".join(MODELS))
    ap.add_argument("--precisions", default=",".join(PRECISIONS))
    ap.add_argument("--attention", default=",".join(ATTENTIONS))
    ap.add_argument("--checkpointing", default=",".join(CHECKPOINTING))
    ap.add_argument("--batches", default=None, help="comma list of batch sizes")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="tiny models, batches 1,4 (seconds on CPU)")
    ap.add_argument("--out", default=None, help="write the results as JSON here")
    args = ap.parse_args()

    before = nvidia_smi_used(args.device)  # before torch starts CUDA
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    dev_name = args.device
    if dev_name == "auto":
        dev_name = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(dev_name)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    tiny = args.quick or device.type == "cpu"
    models = (args.models or ("gpt2-tiny,llama-tiny" if tiny else "gpt2-small,llama-600m")).split(",")
    batches = [int(x) for x in (args.batches or ("1,4" if tiny else "1,4,8")).split(",")]
    memplan = find_memplan(args.memplan)
    has_sdpa = hasattr(torch.nn.functional, "scaled_dot_product_attention")

    env = {"torch": torch.__version__, "device": str(device), "memplan": memplan,
           "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None}
    env["context_bytes"] = measure_context(torch, device, before)
    print(f"# torch {env['torch']} on {env['device']} {env['gpu'] or ''}; memplan: {memplan or 'not found'}")
    if env["context_bytes"] is not None:
        print(f"# CUDA context + cuBLAS: {env['context_bytes'] / MIB:.0f} MiB (memplan predicts it per GPU: see docs/accuracy.md, The CUDA context)")

    results = []
    header = (f"{'case':<44} {'term':<16} {'measured':>12} {'memplan':>12} {'error':>8}")
    print(header)
    for model_name, prec, attn, ck, batch in itertools.product(
            models, args.precisions.split(","), args.attention.split(","), args.checkpointing.split(","), batches):
        cfg = MODELS[model_name]
        case = {"model": model_name, "precision": prec, "attention": attn, "checkpointing": ck, "batch": batch}
        name = f"{model_name} {prec} {attn} ckpt={ck} b={batch}"
        if attn == "sdpa" and not has_sdpa:
            print(f"{name:<44} skipped: this torch has no scaled_dot_product_attention")
            continue
        if prec != "fp32" and device.type == "cuda" and not torch.cuda.is_bf16_supported():
            print(f"{name:<44} skipped: no bf16 on this GPU")
            continue
        try:
            row = run_case(torch, nn, F, cfg, case, device, args.steps)
        except RuntimeError as e:  # CUDA out of memory and friends
            row = {"measured": {}, "error": str(e).splitlines()[0]}
            if device.type == "cuda":
                torch.cuda.empty_cache()
        row.update(case=case, config=cfg, predicted=run_memplan(memplan, cfg, case))
        meas, pred = row["measured"], row["predicted"]
        row["errors"] = {t: rel(pred.get(t), meas.get(t)) for t in TERMS}
        # Peak allocated against memplan's step peak (no overhead); reserved + context against required.
        row["errors"]["peak_vs_total"] = rel(pred.get("total_bytes"), meas.get("peak"))
        row["errors"]["peak_vs_peak"] = rel(pred.get("peak_bytes"), meas.get("peak"))
        if meas.get("peak_reserved") is not None and env["context_bytes"] is not None:
            meas["peak_reserved_plus_context"] = meas["peak_reserved"] + env["context_bytes"]
            row["errors"]["required_vs_reserved_plus_context"] = rel(pred.get("required_bytes"),
                                                                     meas["peak_reserved_plus_context"])
        results.append(row)
        if args.out:  # after every case, so a run cut short still leaves its rows
            with open(args.out, "w") as f:
                json.dump({"schema": SCHEMA, "environment": env, "results": results}, f, indent=1)
        if "error" in row:
            print(f"{name:<44} measurement failed: {row['error']}")
        lines = [(t, meas.get(t), pred.get(t), row["errors"].get(t)) for t in TERMS]
        lines.append(("peak/total", meas.get("peak"), pred.get("total_bytes"), row["errors"]["peak_vs_total"]))
        lines.append(("peak/peak", meas.get("peak"), pred.get("peak_bytes"), row["errors"]["peak_vs_peak"]))
        if "peak_reserved_plus_context" in meas:
            lines.append(("resv+ctx/required", meas["peak_reserved_plus_context"], pred.get("required_bytes"),
                          row["errors"]["required_vs_reserved_plus_context"]))
        for i, (term, m, p, e) in enumerate(lines):
            ms = "-" if m is None else f"{m / MIB:.1f} MiB"
            ps = "-" if p is None else f"{p / MIB:.1f} MiB"
            print(f"{name if i == 0 else '':<44} {term:<16} {ms:>12} {ps:>12} {fmt_err(e):>8}")
        if "error" in pred:
            print(f"{'':<44} memplan: {pred['error']}")

    for key, what in (("peak_vs_peak", "step peak"), ("peak_vs_total", "total"),
                      ("required_vs_reserved_plus_context", "required vs reserved + context")):
        errs = [r["errors"][key] for r in results if r["errors"].get(key) is not None]
        if errs:
            print(f"# measured peak vs memplan {what}: mean |error| {100 * sum(map(abs, errs)) / len(errs):.1f}%, "
                  f"min {100 * min(errs):+.1f}%, max {100 * max(errs):+.1f}% over {len(errs)} cases")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"schema": "memplan.accuracy/1", "environment": env, "results": results}, f, indent=1)
        print(f"# wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
