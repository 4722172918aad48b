#!/usr/bin/env python3
"""What QLoRA keeps for backward (bitsandbytes 4-bit base, peft adapters), on the CPU.

measure_saved.py's method (its Meter, its models, CUDA autocast's lists) with every nn.Linear of the
decoder layers replaced by bitsandbytes' Linear4bit (nf4, compute dtype bf16, the LM head and the
embeddings left as they are, as transformers' bnb quantizer does), quantised from the model's own
weights, then peft's LoRA on it:

  kbit_prep   peft's prepare_model_for_kbit_training (every non-4-bit half parameter cast to fp32:
              the norms, the embeddings, the LM head; gradient checkpointing reentrant with
              enable_input_require_grads when checkpointing is asked for) or not
  autocast    under torch.autocast (bf16) or not, over a model loaded in bf16 (QLoRA's usual
              torch_dtype), as a Trainer with bf16=True runs it

The rows are measure_saved.py's, with quantize, kbit_prep and autocast_over_half added; the
precision field is what memplan is given (amp-bf16 for the fp32 parameters kbit_prep leaves under
autocast, bf16 for a bf16 model).

peft's bnb LoRA layers ask torch.is_autocast_enabled() with no device (CUDA's state); on the CPU
that is always False, so while a row runs under autocast the call answers for the CPU's autocast,
as it would answer for CUDA's on a GPU.

    nice bench/frameworks/.venv/bin/python bench/frameworks/measure_qlora.py --out X.jsonl
"""
import argparse
import contextlib
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cuda_autocast  # noqa: E402
import measure_saved as ms  # noqa: E402

ARCHS = ("llama", "qwen2", "qwen3", "mistral", "gemma", "phi3")
# (memplan precision, kbit_prep, autocast): the three ways QLoRA runs.
RECIPES = (("amp-bf16", True, True),    # peft's QLoRA guide: prepare_model_for_kbit_training + bf16=True
           ("bf16", False, True),       # no kbit prep, Trainer bf16=True over the bf16 model (TRL 1.x)
           ("bf16", False, False))      # no kbit prep, a plain bf16 loop


def quantize_linears(model, bnb):
    """Every nn.Linear inside the decoder layers becomes a bnb Linear4bit holding its weight."""
    body = model.model if hasattr(model, "model") else model
    for name, mod in list(body.named_modules()):
        for cname, child in list(mod.named_children()):
            if type(child) is not torch.nn.Linear:
                continue
            q = bnb.nn.Linear4bit(child.in_features, child.out_features, bias=child.bias is not None,
                                  compute_dtype=torch.bfloat16, quant_type="nf4")
            q.weight = bnb.nn.Params4bit(child.weight.data.to(torch.bfloat16).contiguous(),
                                         requires_grad=False, quant_type="nf4")
            if child.bias is not None:
                q.bias = torch.nn.Parameter(child.bias.data.clone(), requires_grad=False)
            setattr(mod, cname, q.to("cpu"))
    model.is_loaded_in_4bit = True
    return model


@contextlib.contextmanager
def cuda_autocast_query():
    """torch.is_autocast_enabled() (no device: CUDA's) answers for the CPU's autocast."""
    orig = torch.is_autocast_enabled

    def query(*args, **kwargs):
        if not args and not kwargs:
            return orig("cpu")
        return orig(*args, **kwargs)
    torch.is_autocast_enabled = query
    try:
        yield
    finally:
        torch.is_autocast_enabled = orig


def train_saved(transformers, peft, bnb, cfg, kind, case, batch):
    torch.manual_seed(0)
    model = ms.build_model(transformers, cfg, kind, "bf16", case["attention"])
    model = quantize_linears(model, bnb)
    ckpt = case["checkpointing"] == "full"
    if case["kbit_prep"]:
        model = peft.prepare_model_for_kbit_training(
            model, use_gradient_checkpointing=ckpt,
            gradient_checkpointing_kwargs={"use_reentrant": True} if ckpt else None)
    targets = ms.ARCHS[case["arch"]][3][case["lora_targets"]]
    lcfg = peft.LoraConfig(r=case["lora"], lora_alpha=2 * case["lora"], lora_dropout=0.0,
                           target_modules=targets, task_type="CAUSAL_LM")
    model = peft.get_peft_model(model, lcfg)
    if ckpt and not case["kbit_prep"]:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
        model.enable_input_require_grads()
    model.train()
    ids, labels = ms.batch_inputs(cfg, kind, batch, case["seq"])
    meter = ms.Meter(model, [ids, labels])
    ac = torch.autocast("cpu", dtype=torch.bfloat16) if case["autocast_over_half"] else contextlib.nullcontext()
    if case["autocast_over_half"]:
        cuda_autocast.install()
    try:
        with torch.autograd.graph.saved_tensors_hooks(meter.pack, lambda t: t), cuda_autocast_query(), ac:
            out = model(input_ids=ids, labels=labels)
        loss = out.loss
        with cuda_autocast_query():
            loss.backward()
    finally:
        cuda_autocast.clear_cache()
    dtypes = {str(p.dtype).replace("torch.", "") for p in model.parameters() if not p.requires_grad
              and p.__class__.__name__ != "Params4bit"}
    res = {"kinds": meter.by_kind(), "dtypes": meter.by_dtype(), "loss_dtype": str(loss.dtype),
           "frozen_dtypes": sorted(dtypes)}
    del meter, out, loss, model
    return res


def cases(archs):
    for arch in archs:
        attentions = ("eager",) if arch == "gemma2" else ("eager", "sdpa")
        for (precision, prep, ac) in RECIPES:
            for targets in ms.ARCHS[arch][3]:
                for ckpt in ("none", "full"):
                    for attention in attentions:
                        yield dict(arch=arch, mode="train", precision=precision, attention=attention, lora=8,
                                   lora_targets=targets, checkpointing=ckpt, seq=64, batches=[2, 4],
                                   quantize="nf4", kbit_prep=prep, autocast_over_half=ac)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--archs", default=",".join(ARCHS))
    ap.add_argument("--only", default="", help="key=value pairs separated by ';' (as measure_saved.py)")
    ap.add_argument("--dump", action="store_true")
    args = ap.parse_args()
    ms.DUMP = args.dump
    cuda_autocast.install_sdpa_layout()
    only = dict(kv.split("=", 1) for kv in args.only.split(";") if kv)
    import bitsandbytes as bnb
    import peft
    import transformers
    transformers.logging.set_verbosity_error()
    env = ms.versions()
    n_ok = n_fail = 0
    t_all = time.time()
    with open(args.out, "w") as f:
        for case in cases(args.archs.split(",")):
            if any(str(case.get(k)) != v for k, v in only.items()):
                continue
            cfg, kind = ms.build_config(transformers, case["arch"])
            row = dict(case, kind=kind, config=cfg.to_diff_dict(), versions=env)
            row["config"]["model_type"] = cfg.model_type
            row["config"]["architectures"] = [ms.model_class(transformers, cfg, kind)]
            if case["attention"] == "sdpa":
                row["sdpa_output_layout"] = "cuda"
            if case["autocast_over_half"]:
                row["autocast_policies"] = "cuda"
            t0 = time.time()
            try:
                row["measured"] = {}
                for b in case["batches"]:
                    if args.dump:
                        print(case, "batch", b)
                    row["measured"][str(b)] = train_saved(transformers, peft, bnb, cfg, kind, case, b)
                n_ok += 1
            except Exception as e:  # noqa: BLE001 - one configuration failing must not stop the others
                row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
                n_fail += 1
            row["seconds"] = round(time.time() - t0, 3)
            f.write(json.dumps(row) + "\n")
            f.flush()
    print(f"{n_ok} configurations measured, {n_fail} failed, {time.time() - t_all:.0f} s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
