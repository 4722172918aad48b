#!/usr/bin/env python3
"""What real Hugging Face models keep for backward, on the CPU with today's torch.

Each configuration builds a small model of a real architecture with transformers' from_config
(random weights, nothing downloaded: every config below is the library's own config class with
few layers and small widths, its structure unchanged), runs one forward with labels (the
model's own loss) and records, with torch.autograd.graph.saved_tensors_hooks, every tensor
autograd saves. Each storage is counted once (autograd saves views of one storage; the key is the
storage's data pointer) at the storage's size, and classified:

  param       a parameter's storage (not an activation)
  buffer      a module buffer's storage (a causal-mask buffer, rotary inv_freq: model memory)
  input       the input ids / labels handed to the model
  param_cast  a half copy of a parameter made by autocast (batch independent)
  scalar      a 0-dim tensor
  int         any other integer tensor (shifted labels, router indices)
  activation  any other floating tensor

The figure compared with memplan (compare_saved.py) is activation + int + param_cast; a
batch-independent part (autocast's weight copies, rotary cos/sin) is found by measuring two batch
sizes. Then backward runs once, so a configuration that cannot train fails here and not silently.

Where the CPU differs from a GPU, the harness does as CUDA does (cuda_autocast.py): amp rows cast
with CUDA autocast's lists (read from the installed torch's autocast_mode.h) instead of the CPU's,
and sdpa gets its query in the memory order CUDA's kernels give their output
(--cpu-autocast and --cpu-sdpa-layout measure the CPU's own way).

Inference rows (mode infer) run the forward under torch.no_grad() with use_cache=True and record
the bytes of the outputs: the logits (all positions, or the last one with logits_to_keep=1) and
the KV cache.

Run it with the harness's virtual environment (bench/frameworks/setup_venv.sh):
    nice -n 10 bench/frameworks/.venv/bin/python bench/frameworks/measure_saved.py \
        --out bench/frameworks/results/saved.jsonl
Every row is one JSON line: the configuration, the shrunk config.json (so memplan can read the
same model), the framework versions and the saved bytes per kind at each batch size.
"""
import argparse
import contextlib
import copy
import itertools
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cuda_autocast  # noqa: E402

torch.set_num_threads(1)

SCHEMA = "memplan.frameworks_saved/1"

# Small widths shared by every architecture: head_dim 16, 4 query heads, 2 kv heads where the
# family groups them, 2 layers, a vocabulary large enough for the logits and loss to weigh what
# they do in a real model relative to one layer.
BASE = dict(hidden_size=64, intermediate_size=160, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, vocab_size=1024, max_position_embeddings=256)

# name -> (config class, overrides, auto class kind, LoRA targets {memplan name: peft modules})
ARCHS = {
    "llama": ("LlamaConfig", dict(BASE, tie_word_embeddings=False), "causal",
              {"q,v": ["q_proj", "v_proj"], "all": "all-linear"}),
    "qwen2": ("Qwen2Config", dict(BASE, tie_word_embeddings=False), "causal",
              {"q,v": ["q_proj", "v_proj"], "all": "all-linear"}),
    "qwen3": ("Qwen3Config", dict(BASE, head_dim=16, tie_word_embeddings=True), "causal",
              {"q,v": ["q_proj", "v_proj"], "all": "all-linear"}),
    "mistral": ("MistralConfig", dict(BASE, sliding_window=None, tie_word_embeddings=False), "causal",
                {"q,v": ["q_proj", "v_proj"], "all": "all-linear"}),
    "gemma": ("GemmaConfig", dict(BASE, head_dim=16, num_key_value_heads=1), "causal",
              {"q,v": ["q_proj", "v_proj"], "all": "all-linear"}),
    "gemma2": ("Gemma2Config", dict(BASE, head_dim=16, query_pre_attn_scalar=16, sliding_window=4096),
               "causal", {"q,v": ["q_proj", "v_proj"], "all": "all-linear"}),
    "phi3": ("Phi3Config", dict(BASE, num_key_value_heads=4, pad_token_id=0, tie_word_embeddings=False),
             "causal", {"all": "all-linear"}),
    "gpt_neox": ("GPTNeoXConfig", dict(hidden_size=64, intermediate_size=256, num_hidden_layers=2,
                                       num_attention_heads=4, vocab_size=1024, max_position_embeddings=256,
                                       rotary_pct=0.25, use_parallel_residual=True,
                                       tie_word_embeddings=False, hidden_dropout=0.0, attention_dropout=0.0),
                 "causal", {"c_attn": ["query_key_value"]}),
    "opt": ("OPTConfig", dict(hidden_size=64, ffn_dim=256, num_hidden_layers=2, num_attention_heads=4,
                              vocab_size=1024, max_position_embeddings=256, word_embed_proj_dim=64,
                              dropout=0.0, attention_dropout=0.0, activation_dropout=0.0), "causal",
            {"q,v": ["q_proj", "v_proj"]}),
    "gpt2": ("GPT2Config", dict(n_embd=64, n_layer=2, n_head=4, vocab_size=1024, n_positions=256,
                                resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0), "causal",
             {"c_attn": ["c_attn"]}),
    "mixtral": ("MixtralConfig", dict(BASE, num_local_experts=4, num_experts_per_tok=2,
                                      sliding_window=None, tie_word_embeddings=False), "causal",
                {"q,v": ["q_proj", "v_proj"]}),
    "qwen2_moe": ("Qwen2MoeConfig", dict(BASE, moe_intermediate_size=64, shared_expert_intermediate_size=160,
                                         num_experts=4, num_experts_per_tok=2, decoder_sparse_step=1,
                                         tie_word_embeddings=False), "causal",
                  {"q,v": ["q_proj", "v_proj"]}),
    "olmoe": ("OlmoeConfig", dict(BASE, num_experts=4, num_experts_per_tok=2, tie_word_embeddings=False),
              "causal", {"q,v": ["q_proj", "v_proj"]}),
    "bert-mlm": ("BertConfig", dict(hidden_size=64, intermediate_size=256, num_hidden_layers=2,
                                    num_attention_heads=4, vocab_size=1024, max_position_embeddings=256,
                                    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0), "mlm",
                 {"q,v": ["query", "value"]}),
    "bert-cls": ("BertConfig", dict(hidden_size=64, intermediate_size=256, num_hidden_layers=2,
                                    num_attention_heads=4, vocab_size=1024, max_position_embeddings=256,
                                    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, num_labels=3),
                 "cls", {"q,v": ["query", "value"]}),
    "roberta-mlm": ("RobertaConfig", dict(hidden_size=64, intermediate_size=256, num_hidden_layers=2,
                                          num_attention_heads=4, vocab_size=1024, max_position_embeddings=258,
                                          hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0), "mlm",
                    {"q,v": ["query", "value"]}),
    "roberta-cls": ("RobertaConfig", dict(hidden_size=64, intermediate_size=256, num_hidden_layers=2,
                                          num_attention_heads=4, vocab_size=1024, max_position_embeddings=258,
                                          hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                                          num_labels=3), "cls", {"q,v": ["query", "value"]}),
}

DUMP = False  # --dump: print every saved storage
PRECISIONS = ("fp32", "bf16", "fp16", "amp-bf16", "amp-fp16")


def dtype_of(precision):
    return {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}.get(precision, torch.float32)


def storage_of(t):
    s = t.untyped_storage()
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
    """Every storage autograd saves, once, with its kind, dtype and bytes."""

    def __init__(self, model, inputs):
        ps = list(model.parameters())
        self.params = {storage_of(p)[0] for p in ps}
        # Module buffers (GPT-2's and GPT-NeoX's causal-mask `bias` before transformers 4.47, rotary
        # inv_freq): model memory, not activations, whatever slice of them autograd keeps.
        self.buffers = {storage_of(b)[0] for b in model.buffers()}
        self.param_ids = {id(p) for p in ps}
        self.inputs = {storage_of(x)[0] for x in inputs}
        self.seen = {}
        self.keep = []  # the saved tensors stay referenced so their storages are not reused

    def pack(self, t):
        if t.device.type == "meta":
            return t
        ptr, nbytes = storage_of(t)
        if ptr and ptr not in self.seen:
            if ptr in self.params:
                kind = "param"
            elif ptr in self.buffers:
                kind = "buffer"
            elif ptr in self.inputs:
                kind = "input"
            elif t.dim() == 0:
                kind = "scalar"
            elif not (t.is_floating_point() or t.is_complex()):
                kind = "int"
            elif is_param_cast(t, self.param_ids):
                kind = "param_cast"
            else:
                kind = "activation"
            self.seen[ptr] = (kind, str(t.dtype).replace("torch.", ""), nbytes, list(t.shape))
            if DUMP:
                fn = type(t.grad_fn).__name__ if t.grad_fn is not None else "-"
                print(f"    {kind:<10} {self.seen[ptr][1]:<9} {nbytes:>9} {str(list(t.shape)):<20} made by {fn}")
            self.keep.append(t)
        return t

    def by_kind(self):
        out = {}
        for kind, _, nbytes, _ in self.seen.values():
            out[kind] = out.get(kind, 0) + nbytes
        return out

    def by_dtype(self):
        out = {}
        for kind, dt, nbytes, _ in self.seen.values():
            if kind in ("activation", "int", "param_cast"):
                out[dt] = out.get(dt, 0) + nbytes
        return out


def build_config(transformers, arch):
    cls_name, over, kind, _ = ARCHS[arch]
    cfg = getattr(transformers, cls_name)(**over)
    return cfg, kind


def build_model(transformers, cfg, kind, precision, attention):
    auto = {"causal": transformers.AutoModelForCausalLM, "mlm": transformers.AutoModelForMaskedLM,
            "cls": transformers.AutoModelForSequenceClassification}[kind]
    cfg = copy.deepcopy(cfg)
    dt = dtype_of(precision)
    try:
        model = auto.from_config(cfg, attn_implementation=attention, dtype=dt)
    except TypeError:
        model = auto.from_config(cfg, attn_implementation=attention, torch_dtype=dt)
    return model.to(dt)


def model_class(transformers, cfg, kind):
    auto = {"causal": transformers.AutoModelForCausalLM, "mlm": transformers.AutoModelForMaskedLM,
            "cls": transformers.AutoModelForSequenceClassification}[kind]
    return auto._model_mapping[type(cfg)].__name__


def batch_inputs(cfg, kind, batch, seq):
    g = torch.Generator().manual_seed(batch * 1000 + seq)
    ids = torch.randint(3, cfg.vocab_size, (batch, seq), generator=g)
    if kind == "cls":
        labels = torch.randint(0, cfg.num_labels, (batch,), generator=g)
    else:
        labels = ids.clone()
    return ids, labels


# amp rows cast as CUDA autocast does (cuda_autocast.py) unless --cpu-autocast asks for the CPU's
# own lists (softmax, layer_norm, pow in the half format), which no GPU run has.
AUTOCAST = "cuda"


@contextlib.contextmanager
def autocast_ctx(precision):
    if not precision.startswith("amp-"):
        with torch.autocast("cpu", enabled=False):
            yield
        return
    if AUTOCAST == "cuda":
        cuda_autocast.install()
    try:
        with torch.autocast("cpu", dtype=torch.bfloat16 if precision == "amp-bf16" else torch.float16):
            yield
    finally:
        cuda_autocast.clear_cache()


def train_saved(transformers, peft, cfg, kind, case, batch):
    torch.manual_seed(0)
    model = build_model(transformers, cfg, kind, case["precision"], case["attention"])
    if case["lora"]:
        targets = ARCHS[case["arch"]][3][case["lora_targets"]]
        task = {"causal": "CAUSAL_LM", "mlm": None, "cls": "SEQ_CLS"}[kind]
        lcfg = peft.LoraConfig(r=case["lora"], lora_alpha=2 * case["lora"], lora_dropout=0.0,
                               target_modules=targets, task_type=task)
        model = peft.get_peft_model(model, lcfg)
    if case["checkpointing"] == "full":
        # transformers' default is the reentrant torch.utils.checkpoint: its forward saves the
        # layer's inputs with save_for_backward, which these hooks see.
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
        if case["lora"]:
            model.enable_input_require_grads()
    model.train()
    ids, labels = batch_inputs(cfg, kind, batch, case["seq"])
    meter = Meter(model, [ids, labels])
    with torch.autograd.graph.saved_tensors_hooks(meter.pack, lambda t: t):
        with autocast_ctx(case["precision"]):
            out = model(input_ids=ids, labels=labels)
    loss = out.loss
    loss.backward()
    res = {"kinds": meter.by_kind(), "dtypes": meter.by_dtype(), "loss_dtype": str(loss.dtype)}
    del meter, out, loss, model
    return res


def infer_outputs(transformers, peft, cfg, kind, case, batch):
    torch.manual_seed(0)
    model = build_model(transformers, cfg, kind, case["precision"], case["attention"]).eval()
    ids, _ = batch_inputs(cfg, kind, batch, case["seq"])
    kwargs = {"use_cache": True}
    if case["logits"] == "last":
        kwargs["logits_to_keep"] = 1
    with torch.no_grad(), autocast_ctx(case["precision"]):
        out = model(input_ids=ids, **kwargs)
    logits = out.logits.untyped_storage().nbytes()
    cache = 0
    pkv = getattr(out, "past_key_values", None)
    if pkv is not None:
        seen = set()
        for t in _tensors_in(pkv):
            ptr, n = storage_of(t)
            if ptr not in seen:
                seen.add(ptr)
                cache += n
    return {"kinds": {"logits": logits, "kv_cache": cache}, "logits_dtype": str(out.logits.dtype)}


def _tensors_in(obj, depth=0):
    if depth > 6:
        return
    if torch.is_tensor(obj):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _tensors_in(x, depth + 1)
    elif hasattr(obj, "layers"):
        for layer in obj.layers:
            for name in ("keys", "values"):
                t = getattr(layer, name, None)
                if torch.is_tensor(t):
                    yield t
    elif hasattr(obj, "key_cache"):
        yield from _tensors_in(list(obj.key_cache) + list(obj.value_cache), depth + 1)


def cases(archs, quick):
    seqs = (64,) if quick else (64, 128)
    for arch in archs:
        kind = ARCHS[arch][2]
        lora_sets = [(0, None)] + [(8, t) for t in ARCHS[arch][3]]
        # Gemma 2's soft-capped attention scores have no sdpa path in transformers.
        attentions = ("eager",) if arch == "gemma2" else ("eager", "sdpa")
        for precision, attention, (r, targets), ckpt, seq in itertools.product(
                PRECISIONS, attentions, lora_sets, ("none", "full"), seqs):
            if quick and (seq != 64 or precision in ("fp16", "amp-fp16")):
                continue
            if seq == 128 and (r or ckpt == "full" or precision not in ("fp32", "bf16")):
                continue  # the longer sequence only for the plain runs
            yield dict(arch=arch, mode="train", precision=precision, attention=attention, lora=r,
                       lora_targets=targets, checkpointing=ckpt, seq=seq, batches=[2, 4])
        if kind == "causal":
            for precision, attention, logits in itertools.product(("fp32", "bf16"), attentions,
                                                                  ("all", "last")):
                yield dict(arch=arch, mode="infer", precision=precision, attention=attention, logits=logits,
                           seq=64, batches=[2, 4])


def versions():
    from importlib import metadata
    out = {"python": sys.version.split()[0]}
    for dist in ("torch", "transformers", "peft", "accelerate", "trl", "torchtune", "torchao", "litgpt",
                 "bitsandbytes"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="JSON lines file to write")
    ap.add_argument("--archs", default=",".join(ARCHS))
    ap.add_argument("--quick", action="store_true", help="seq 64, no fp16 (a smoke run)")
    ap.add_argument("--only", default="", help="keep configurations whose key=value pairs match, e.g. "
                    "precision=bf16;attention=eager;lora=0;checkpointing=none;mode=train")
    ap.add_argument("--dump", action="store_true", help="print every saved storage (with --only)")
    ap.add_argument("--cpu-autocast", action="store_true",
                    help="amp rows with the CPU's autocast lists instead of CUDA's (cuda_autocast.py)")
    ap.add_argument("--cpu-sdpa-layout", action="store_true",
                    help="leave sdpa's CPU output layout as it is (cuda_autocast.install_sdpa_layout)")
    args = ap.parse_args()
    global DUMP, AUTOCAST
    DUMP = args.dump
    AUTOCAST = "cpu" if args.cpu_autocast else "cuda"
    if not args.cpu_sdpa_layout:
        cuda_autocast.install_sdpa_layout()
    only = dict(kv.split("=", 1) for kv in args.only.split(";") if kv)

    import transformers
    import peft
    transformers.logging.set_verbosity_error()
    env = versions()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    n_ok = n_fail = 0
    t_all = time.time()
    with open(args.out, "w") as f:
        for case in cases(args.archs.split(","), args.quick):
            if any(str(case.get(k)) != v for k, v in only.items()):
                continue
            if DUMP:
                print(case)
            cfg, kind = build_config(transformers, case["arch"])
            row = dict(case, kind=kind, config=cfg.to_diff_dict(), versions=env)
            if case["precision"].startswith("amp-"):
                row["autocast_policies"] = AUTOCAST
            if case.get("attention") == "sdpa":
                row["sdpa_output_layout"] = "cpu" if args.cpu_sdpa_layout else "cuda"
            row["config"]["model_type"] = cfg.model_type
            row["config"]["architectures"] = [model_class(transformers, cfg, kind)]
            t0 = time.time()
            try:
                row["measured"] = {}
                for b in case["batches"]:
                    if DUMP:
                        print(f"  batch {b}")
                    fn = train_saved if case["mode"] == "train" else infer_outputs
                    row["measured"][str(b)] = fn(transformers, peft, cfg, kind, case, b)
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
