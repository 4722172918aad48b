#!/usr/bin/env python3
"""Real Hugging Face models on a GPU next to memplan: full fine-tune, LoRA (peft) and inference.

Each case builds a model from a config.json in tests/data/hf_configs (random weights, nothing
downloaded) with transformers' AutoModelForCausalLM and SDPA attention, runs a few training steps
the way a Trainer does (labels passed to the model, so its loss upcasts the logits to fp32; torch's
AdamW, foreach on CUDA; zero_grad(set_to_none=True)) or one inference forward with the KV cache,
and records torch.cuda.max_memory_allocated() / max_memory_reserved(). Next to it, the same case
through `memplan estimate --config ... --format json` (peak_bytes, total_bytes, required_bytes).

Needs torch with CUDA, transformers and, for LoRA, peft. GPU only. Example:
    python3 bench/accuracy/hf_train.py --memplan build/memplan --out hf_train.json
"""
import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CONFIGS = os.path.join(ROOT, "tests", "data", "hf_configs")
MIB = 1024 * 1024
SCHEMA = "memplan.hf_train/1"

# (config, seq, batches) per model; recipes below.
MODELS = {
    "TinyLlama-1.1B-Chat-v1.0": dict(seq=1024, batches=(1, 4)),
    "Qwen3-1.7B": dict(seq=1024, batches=(1, 4)),
    "gpt2": dict(seq=1024, batches=(1, 8), lora_targets=["c_attn"], memplan_targets="c_attn"),
    "Mistral-7B-v0.1": dict(seq=1024, batches=(1, 4), recipes=("lora-bf16", "infer-bf16")),
}
# recipe -> (memplan flags, how the model is trained)
RECIPES = {
    "full-bf16": dict(flags=["--precision", "bf16", "--optimizer", "adamw"], dtype="bf16", lora=False),
    "full-amp-bf16": dict(flags=["--precision", "amp-bf16", "--optimizer", "adamw"], dtype="fp32",
                          amp=True, lora=False),
    "lora-bf16": dict(flags=["--precision", "bf16", "--optimizer", "adamw", "--lora", "16",
                             "--lora-targets", "q,v"], dtype="bf16", lora=True),
    "infer-bf16": dict(flags=["--precision", "bf16", "--mode", "infer"], dtype="bf16", infer=True),
}


def run_memplan(binary, config_path, recipe, seq, batch, ckpt, targets="q,v"):
    flags = ["c_attn" if f == "q,v" and targets == "c_attn" else f for f in RECIPES[recipe]["flags"]]
    cmd = [binary, "estimate", "--config", config_path, "--seq", str(seq), "--batch", str(batch),
           "--attention", "sdpa", "--format", "json"] + flags
    if not RECIPES[recipe].get("infer"):
        cmd += ["--checkpointing", "full" if ckpt else "none"]
    out = {"command": " ".join(cmd[1:])}
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        j = json.loads(p.stdout)
    except (OSError, ValueError, subprocess.TimeoutExpired) as e:
        out["error"] = str(e) + " " + (p.stderr.strip() if "p" in locals() else "")
        return out
    for key in ("peak_bytes", "total_bytes", "required_bytes"):
        if isinstance(j.get(key), int):
            out[key] = j[key]
    out["breakdown"] = j.get("breakdown")
    out["peak_phase"] = j.get("peak_phase")
    return out


def build(torch, transformers, cfg_dir, dtype, device):
    cfg = transformers.AutoConfig.from_pretrained(cfg_dir)
    kwargs = {"attn_implementation": "sdpa"}
    with torch.device(device):
        try:
            model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=dtype, **kwargs)
        except TypeError:
            model = transformers.AutoModelForCausalLM.from_config(cfg, torch_dtype=dtype, **kwargs)
    return model.to(device=device, dtype=dtype)


def run_case(torch, transformers, peft, cfg_dir, recipe, seq, batch, ckpt, steps, device, dropout, targets):
    r = RECIPES[recipe]
    dtype = torch.bfloat16 if r["dtype"] == "bf16" else torch.float32
    gc.collect()
    torch.cuda.empty_cache()
    torch.manual_seed(0)
    model = build(torch, transformers, cfg_dir, dtype, device)
    vocab = model.config.vocab_size
    ids = torch.randint(0, vocab, (batch, seq), device=device)
    m = {}
    if r.get("infer"):
        model.eval()
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
        base = torch.cuda.memory_allocated(device)
        with torch.no_grad():
            out = model(input_ids=ids, use_cache=True)
            torch.cuda.synchronize(device)
        m["weights"] = base
        m["peak"] = torch.cuda.max_memory_allocated(device)
        m["peak_reserved"] = torch.cuda.max_memory_reserved(device)
        del out
    else:
        if r["lora"]:
            cfg = peft.LoraConfig(r=16, lora_alpha=32, lora_dropout=dropout, target_modules=targets,
                                  task_type="CAUSAL_LM")
            model = peft.get_peft_model(model, cfg)
        if ckpt:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            if r["lora"]:
                model.enable_input_require_grads()
        model.train()
        trainable = [p for p in model.parameters() if p.requires_grad]
        m["trainable_params"] = sum(p.numel() for p in trainable)
        m["params"] = sum(p.numel() for p in model.parameters())
        opt = torch.optim.AdamW(trainable, lr=1e-5)
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
        m["weights"] = torch.cuda.memory_allocated(device)
        amp = torch.autocast("cuda", dtype=torch.bfloat16) if r.get("amp") else torch.autocast("cuda", enabled=False)
        peaks = []
        for _ in range(steps):
            opt.zero_grad(set_to_none=True)
            with amp:
                loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            opt.step()
            del loss
            torch.cuda.synchronize(device)
            peaks.append(torch.cuda.max_memory_allocated(device))
        m["peak_per_step"] = peaks
        m["peak"] = torch.cuda.max_memory_allocated(device)
        m["peak_reserved"] = torch.cuda.max_memory_reserved(device)
        m["after_step"] = torch.cuda.memory_allocated(device)
        del opt
    del model
    gc.collect()
    torch.cuda.empty_cache()
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memplan", default=os.environ.get("MEMPLAN_BINARY", os.path.join(ROOT, "build", "memplan")))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    import torch
    import transformers
    try:
        import peft
    except ImportError:
        peft = None
    device = torch.device("cuda", 0)
    a = torch.randn(256, 256, device=device)
    (a @ a).sum().item()
    del a
    free, total = torch.cuda.mem_get_info(device)
    env = {"torch": torch.__version__, "transformers": transformers.__version__,
           "peft": getattr(peft, "__version__", None), "gpu": torch.cuda.get_device_name(device),
           "in_use_after_cublas_start": total - free, "reserved_then": torch.cuda.memory_reserved(device)}
    print(f"# {env}")
    results = []
    tmp = tempfile.mkdtemp()
    print(f"{'case':<58} {'measured peak':>14} {'memplan peak':>13} {'err':>7} {'reserved':>10} {'required':>10}")
    for name in args.models.split(","):
        spec = MODELS[name]
        cfg_dir = os.path.join(tmp, name)
        os.makedirs(cfg_dir, exist_ok=True)
        cfg_path = os.path.join(CONFIGS, name + ".json")
        shutil.copy(cfg_path, os.path.join(cfg_dir, "config.json"))
        cases = []
        for recipe in spec.get("recipes", ("full-bf16", "full-amp-bf16", "lora-bf16", "infer-bf16")):
            for batch in spec["batches"]:
                ckpts = (False,) if RECIPES[recipe].get("infer") else (False, True)
                for ckpt in ckpts:
                    cases.append((recipe, batch, ckpt, 0.0))
        if "lora-bf16" in spec.get("recipes", ("lora-bf16",)):
            cases.append(("lora-bf16", spec["batches"][-1], False, 0.05))
        for recipe, batch, ckpt, dropout in cases:
            label = f"{name} {recipe} b={batch} s={spec['seq']}{' ckpt' if ckpt else ''}" + \
                    (f" drop={dropout}" if dropout else "")
            row = {"model": name, "recipe": recipe, "batch": batch, "seq": spec["seq"], "checkpointing": ckpt,
                   "lora_dropout": dropout}
            t0 = time.time()
            if RECIPES[recipe].get("lora") and peft is None:
                row["error"] = "no peft"
            else:
                try:
                    row["measured"] = run_case(torch, transformers, peft, cfg_dir, recipe, spec["seq"], batch, ckpt,
                                               args.steps, device, dropout,
                                               spec.get("lora_targets", ["q_proj", "v_proj"]))
                except Exception as e:  # noqa: BLE001 - one case failing must not stop the others
                    row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                    gc.collect()
                    torch.cuda.empty_cache()
            row["seconds"] = round(time.time() - t0, 2)
            row["predicted"] = run_memplan(args.memplan, cfg_path, recipe, spec["seq"], batch, ckpt,
                                           spec.get("memplan_targets", "q,v"))
            results.append(row)
            if args.out:  # after every case, so a run cut short still leaves its rows
                with open(args.out, "w") as f:
                    json.dump({"schema": SCHEMA, "environment": env, "results": results}, f, indent=1)
            meas, pred = row.get("measured", {}), row["predicted"]
            if "error" in row:
                print(f"{label:<58} failed: {row['error']}")
                continue
            pk, pp = meas.get("peak"), pred.get("peak_bytes")
            err = f"{100 * (pp - pk) / pk:+.1f}%" if pk and pp else "-"
            rq = pred.get("required_bytes")
            print(f"{label:<58} {pk / MIB:>11.0f} MiB {(pp or 0) / MIB:>10.0f} MiB {err:>7} "
                  f"{meas['peak_reserved'] / MIB:>7.0f} MiB {(rq or 0) / MIB:>7.0f} MiB"
                  + (f"  memplan: {pred['error']}" if "error" in pred else ""))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"schema": "memplan.hf_train/1", "environment": env, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
