#!/usr/bin/env python3
"""What a real framework's own training step keeps in memory, phase by phase, on the CPU.

Small Llama-shaped models (hidden 64, intermediate 160, 2 layers, 4 heads, 2 kv heads, head_dim
16, vocab 1024, seq 64) go through each framework's own training step: transformers' Trainer
(training_step + its optimizer), trl's SFTTrainer, torchtune 0.6.1 (its LoRA / full single-device
recipe step: CEWithChunkedOutputLoss, fused AdamW, its activation checkpointing) and litgpt
(finetune/lora.py's step: chunked_cross_entropy). peak_tracker.PeakTracker counts the bytes of
every live storage as torch.cuda.memory_allocated would (raw bytes, and `_r` figures rounded to the
CUDA caching allocator's 512-byte blocks) and marks, in each of two steps:

  model_call_end  after the model's forward (HF models compute their loss inside it)
  forward_end     after the framework's loss (SFT's entropy / token accuracy included)
  backward_end    after loss.backward()
  optimizer_end   after optimizer.step()
  step_end        after zero_grad(set_to_none=True) and the loss dropped
each with the live bytes then (`end`) and the peak since the previous mark (`peak`), so
backward_end.peak is the backward peak and optimizer_end.peak the optimizer-step peak. Step 1
creates the optimizer state; step 2 is the steady state. Also per batch: weights_loaded (live
after parameters and buffers), params / trainable / grad / optimizer-state bytes, and, where no
checkpointing is on, the distinct storages autograd saved in the forward (saved_tensors_hooks,
parameters / buffers / inputs excluded) as a cross-check. Two batches (2, 4) separate the
batch-dependent bytes. Each row carries the HF-style config.json of the model so memplan can read
the same model (torchtune and litgpt models as the equivalent LlamaForCausalLM config).

Environment quirks handled here: torchtune 0.6.1 needs torchao 0.10 (installed with the venv's pip
into bench/frameworks/.torchao010 when missing, put first on sys.path); `datasets` / `pyarrow`
do not import with the venv's numpy 1.26, so they are stubbed (pandas is imported first, so it
sees no pyarrow). sdpa's query is laid out as on CUDA (cuda_autocast.install_sdpa_layout) unless
--cpu-sdpa-layout.

Run (about a minute or two):
    nice -n 10 bench/frameworks/.venv/bin/python bench/frameworks/measure_frameworks.py \\
        --out bench/frameworks/results/peak-cpu-2026-12-06.jsonl
    --only framework=torchtune;lora=8   keep matching configurations
Schema memplan.frameworks_peak/1: one JSON line per configuration; a failed one has "error".
"""
import argparse
import contextlib
import importlib.abc
import importlib.machinery
import json
import os
import subprocess
import sys
import tempfile
import time
import types
import warnings

os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
TAO = os.path.join(HERE, ".torchao010")
SCHEMA = "memplan.frameworks_peak/1"
DIMS = dict(hidden=64, inter=160, layers=2, heads=4, kv=2, head_dim=16, vocab=1024, max_pos=256)
SEQ, BATCHES, STEPS = 64, (2, 4), 2


def prepare_imports(tao):
    if not tao:
        pass
    elif not os.path.isdir(os.path.join(TAO, "torchao")):
        subprocess.check_call([os.path.join(HERE, ".venv", "bin", "pip"), "install", "-q", "--no-deps",
                               "--target", TAO, "torchao==0.10.0"])
    if tao:
        sys.path.insert(0, TAO)
    try:
        import pandas  # noqa: F401  (before the stub, so pandas sees no pyarrow)
    except Exception:  # noqa: BLE001
        pass

    class Stub(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            cls = type(name, (), {})
            setattr(self, name, cls)  # the same class on every look-up (isinstance checks)
            return cls

    class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in ("datasets", "pyarrow"):
                return importlib.machinery.ModuleSpec(name, self, is_package=True)
            return None

        def create_module(self, spec):
            return Stub(spec.name)

        def exec_module(self, m):
            from importlib import metadata
            m.__path__ = []
            m.__version__ = metadata.version(m.__name__.split(".")[0])

    sys.meta_path.insert(0, Finder())


# Each framework runs in its own process (main() re-runs this file with --worker): torchtune needs
# torchao 0.10 first on sys.path, which peft (>= 0.16 wanted) refuses.
WORKER = sys.argv[sys.argv.index("--worker") + 1] if "--worker" in sys.argv else None
prepare_imports(WORKER == "torchtune")
import torch  # noqa: E402

sys.path.insert(0, HERE)
import cuda_autocast  # noqa: E402
from peak_tracker import PeakTracker, SavedBytes, unique_storage_bytes  # noqa: E402

torch.set_num_threads(1)
warnings.filterwarnings("ignore")
DT = {"fp32": torch.float32, "bf16": torch.bfloat16}


def hf_config(rope_theta=10000.0, eps=1e-6):
    d = DIMS
    return dict(model_type="llama", architectures=["LlamaForCausalLM"], hidden_size=d["hidden"],
                intermediate_size=d["inter"], num_hidden_layers=d["layers"], num_attention_heads=d["heads"],
                num_key_value_heads=d["kv"], head_dim=d["head_dim"], vocab_size=d["vocab"],
                max_position_embeddings=d["max_pos"], rope_theta=rope_theta, tie_word_embeddings=False,
                rms_norm_eps=eps)


def optim_info(opt):
    dfl = opt.defaults
    return dict(cls=type(opt).__name__, fused=dfl.get("fused"), foreach=dfl.get("foreach"), lr=dfl.get("lr"),
                weight_decay=dfl.get("weight_decay"), betas=list(dfl.get("betas", ())) or None)


class Run:
    """One framework set up for one batch: model, optimizer, inputs, and its step pieces."""
    model = opt = None
    inputs = {}
    call_module = None  # the module whose forward ends "model_call_end"

    def fwd_bwd(self, mark):  # default: forward+loss, then backward
        loss = self.forward_loss()
        mark("forward_end")
        loss.backward()
        return loss

    def zero_grad(self):
        self.opt.zero_grad(set_to_none=True)


# ---------------------------------------------------------------- transformers / trl
def hf_model(case):
    import transformers
    cfg = transformers.LlamaConfig(**{k: v for k, v in hf_config().items() if k not in ("architectures",
                                                                                       "model_type")})
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(cfg).to(DT[case["precision"]])
    return model, cfg


def hf_inputs(batch, mask=False):
    g = torch.Generator().manual_seed(batch)
    ids = torch.randint(3, DIMS["vocab"], (batch, SEQ), generator=g)
    out = {"input_ids": ids, "labels": ids.clone()}
    if mask:
        out["attention_mask"] = torch.ones_like(ids)
    return out


class HFRun(Run):
    def __init__(self, case, batch, info):
        import peft
        import transformers
        transformers.logging.set_verbosity_error()
        model, cfg = hf_model(case)
        info["attn_implementation"] = cfg._attn_implementation
        self.tmp = tempfile.mkdtemp(prefix="memplan-fw-")
        ckpt = case["checkpointing"]
        peft_cfg = None
        if case["lora"]:
            peft_cfg = peft.LoraConfig(r=case["lora"], target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM")
            info["lora"] = dict(rank=peft_cfg.r, targets=["q_proj", "v_proj"], alpha=peft_cfg.lora_alpha,
                                dropout=peft_cfg.lora_dropout)
        if case["framework"] == "transformers":
            if peft_cfg is not None:
                model = peft.get_peft_model(model, peft_cfg)
            args = transformers.TrainingArguments(output_dir=self.tmp, per_device_train_batch_size=batch,
                                                  use_cpu=True, report_to=[], activation_checkpointing=ckpt)
            trainer = transformers.Trainer(model=model, args=args)
            self.inputs = hf_inputs(batch)
        else:
            import trl
            args = trl.SFTConfig(output_dir=self.tmp, per_device_train_batch_size=batch, use_cpu=True,
                                 report_to=[], activation_checkpointing=ckpt,
                                 dataset_kwargs={"skip_prepare_dataset": True})
            ds = tiny_dataset(batch)
            trainer = trl.SFTTrainer(model=model, args=args, processing_class=tiny_tokenizer(),
                                     train_dataset=ds, peft_config=peft_cfg)
            # the batch as SFT's own collator builds it from pre-tokenized rows (no dataloader)
            self.inputs = dict(trainer.data_collator([ds[i] for i in range(batch)]))
            info["sft_set"] = dict(use_cpu=True, dataset_kwargs={"skip_prepare_dataset": True},
                                   data="pre-tokenized rows through SFTTrainer.data_collator (%s), keys %s"
                                   % (type(trainer.data_collator).__name__, sorted(self.inputs)))
            info["loss"] = f"trl SFTTrainer.compute_loss (loss_type={args.loss_type}, entropy + token accuracy)"
        if args.activation_checkpointing and not getattr(trainer.model, "is_gradient_checkpointing", False):
            # Trainer enables it in train() (_inner_training_loop), not in __init__: the same call here
            trainer.model.activation_checkpointing_enable(
                activation_checkpointing_kwargs=dict(args.activation_checkpointing_kwargs or {}) or None)
            info["checkpointing_enabled_by"] = "Trainer.train()'s activation_checkpointing_enable call, replayed"
        self.trainer, self.model = trainer, trainer.model
        self.call_module = self.model
        trainer.create_optimizer()
        self.opt = trainer.optimizer
        if not hasattr(trainer, "current_gradient_accumulation_steps"):
            trainer.current_gradient_accumulation_steps = 1
        info.setdefault("loss", "HF model loss (ForCausalLMLoss: logits.float(), cross_entropy)")
        info["optimizer"] = dict(optim_info(self.opt), optim=str(getattr(args.optim, "value", args.optim)))
        info["defaults"] = dict(bf16=args.bf16, fp16=args.fp16, optim=info["optimizer"]["optim"],
                                activation_checkpointing=getattr(args, "activation_checkpointing", None),
                                checkpointing_kwargs=getattr(args, "activation_checkpointing_kwargs", None)
                                or getattr(args, "gradient_checkpointing_kwargs", None),
                                use_reentrant=False if ckpt and not (
                                    getattr(args, "activation_checkpointing_kwargs", None) or {}).get(
                                    "use_reentrant") else None,
                                gradient_accumulation_steps=args.gradient_accumulation_steps,
                                max_grad_norm=args.max_grad_norm)
        info["precision_note"] = "model weights in %s; args.bf16=%s (autocast)" % (case["precision"], args.bf16)

    def fwd_bwd(self, mark):
        t = self.trainer
        orig = t.compute_loss

        def compute_loss(*a, **k):
            out = orig(*a, **k)
            mark("forward_end")
            return out
        t.compute_loss = compute_loss
        try:
            return t.training_step(self.model, dict(self.inputs))
        finally:
            t.compute_loss = orig

    def zero_grad(self):
        self.model.zero_grad()  # what Trainer's loop calls (set_to_none=True)


def tiny_dataset(batch):
    import datasets  # the stub: its Dataset is a bare class SFTTrainer checks with isinstance
    rows = [{"input_ids": r.tolist()} for r in hf_inputs(batch)["input_ids"]]

    class Rows(datasets.Dataset):
        column_names = ["input_ids"]
        cache_files = []  # "in memory" (read by trl's telemetry, which HF_HUB_DISABLE_TELEMETRY turns off)

        def __len__(self):
            return len(rows)

        def __getitem__(self, i):
            return rows[i]

        def __iter__(self):
            return iter(rows)
    return Rows()


def tiny_tokenizer():
    import tokenizers
    import transformers
    vocab = {f"t{i}": i for i in range(DIMS["vocab"])}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="t0"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="t0", eos_token="t1",
                                                unk_token="t0")


# ---------------------------------------------------------------- torchtune
class TorchtuneRun(Run):
    def __init__(self, case, batch, info):
        import torchtune
        from torchtune import modules, training
        from torchtune.models.llama3 import llama3, lora_llama3
        from torchtune.modules.loss import CEWithChunkedOutputLoss
        from torchtune.modules.peft import get_adapter_params, set_trainable_params
        d = DIMS
        kw = dict(vocab_size=d["vocab"], num_layers=d["layers"], num_heads=d["heads"], num_kv_heads=d["kv"],
                  embed_dim=d["hidden"], max_seq_len=d["max_pos"], intermediate_dim=d["inter"])
        torch.manual_seed(0)
        if case["lora"]:
            model = lora_llama3(lora_attn_modules=["q_proj", "v_proj"], lora_rank=case["lora"], lora_alpha=16,
                                lora_dropout=0.0, **kw)
            set_trainable_params(model, get_adapter_params(model))
            info["lora"] = dict(rank=case["lora"], targets=["q_proj", "v_proj"], alpha=16, dropout=0.0)
        else:
            model = llama3(**kw)
        model = model.to(DT[case["precision"]])
        if case["checkpointing"]:
            training.set_activation_checkpointing(model, auto_wrap_policy={modules.TransformerSelfAttentionLayer})
        self.loss_fn = CEWithChunkedOutputLoss()
        model.set_num_output_chunks(self.loss_fn.num_output_chunks)
        try:
            self.opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
        except RuntimeError:
            self.opt = torch.optim.AdamW(model.parameters(), lr=3e-4, foreach=True)
        self.model = self.call_module = model
        self.ignore = torch.full((batch, 1), self.loss_fn.ignore_index, dtype=torch.long)
        g = torch.Generator().manual_seed(batch)
        ids = torch.randint(3, d["vocab"], (batch, SEQ), generator=g)
        self.inputs = {"tokens": ids, "labels": ids.clone()}
        self.training = training
        info["torchtune_version"] = torchtune.__version__
        info["config"] = hf_config(rope_theta=500000.0, eps=1e-5)
        info["loss"] = f"CEWithChunkedOutputLoss(num_output_chunks={self.loss_fn.num_output_chunks}), " \
                       "loss * num_tokens then training.scale_grads(1/num_tokens)"
        info["optimizer"] = optim_info(self.opt)
        info["defaults"] = dict(checkpoint_impl="torch checkpoint_wrapper NO_REENTRANT (use_reentrant=False)"
                                if case["checkpointing"] else None, optimizer="AdamW fused=True (recipe config)")

    def fwd_bwd(self, mark):
        labels = self.inputs["labels"]
        num_tokens = (labels != self.loss_fn.ignore_index).sum()
        logits = self.model(self.inputs["tokens"])
        labels = torch.hstack((labels[..., 1:], self.ignore[: labels.shape[0]]))
        if not isinstance(logits, list):
            labels = labels.reshape(-1)
            logits = logits.reshape(-1, logits.size(-1))
        loss = self.loss_fn(logits, labels)
        del logits
        loss = loss * num_tokens
        mark("forward_end")
        loss.backward()
        self.training.scale_grads(self.model, 1 / num_tokens)
        return loss


# ---------------------------------------------------------------- litgpt
class LitgptRun(Run):
    def __init__(self, case, batch, info):
        import litgpt
        from litgpt.utils import chunked_cross_entropy
        d = DIMS
        cfg = dict(name="memplan-tiny", n_layer=d["layers"], n_head=d["heads"], n_embd=d["hidden"],
                   n_query_groups=d["kv"], head_size=d["head_dim"], vocab_size=d["vocab"],
                   padded_vocab_size=d["vocab"], block_size=d["max_pos"], intermediate_size=d["inter"],
                   mlp_class_name="LLaMAMLP", norm_class_name="RMSNorm", bias=False, parallel_residual=False,
                   rotary_percentage=1.0, rope_base=10000, norm_eps=1e-5)
        torch.manual_seed(0)
        if case["lora"]:
            from litgpt import lora
            conf = lora.Config(**cfg, lora_r=case["lora"], lora_alpha=16, lora_dropout=0.05,
                               lora_query=True, lora_value=True)
            model = lora.GPT(conf)
            lora.mark_only_lora_as_trainable(model)
            info["lora"] = dict(rank=case["lora"], targets=["attn.qkv: query", "value"], alpha=16, dropout=0.05)
        else:
            model = litgpt.GPT(litgpt.Config(**cfg))
        model = model.to(DT[case["precision"]])
        self.ce = chunked_cross_entropy
        self.model = self.call_module = model
        self.opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=3e-4)
        g = torch.Generator().manual_seed(batch)
        ids = torch.randint(3, d["vocab"], (batch, SEQ), generator=g)
        self.inputs = {"input_ids": ids, "labels": ids.clone()}
        info["config"] = hf_config(rope_theta=10000.0, eps=1e-5)
        info["loss"] = "litgpt chunked_cross_entropy(chunk_size=128), model(lm_head_chunk_size=128)"
        info["optimizer"] = optim_info(self.opt)
        info["defaults"] = dict(optimizer="torch AdamW defaults (foreach None: single-tensor loop on CPU)")

    def forward_loss(self):
        logits = self.model(self.inputs["input_ids"], lm_head_chunk_size=128)
        logits[-1] = logits[-1][..., :-1, :]
        return self.ce(logits, self.inputs["labels"][..., 1:])

    def zero_grad(self):
        self.opt.zero_grad()


RUNS = {"transformers": HFRun, "trl": HFRun, "torchtune": TorchtuneRun, "litgpt": LitgptRun}


def measure(case, batch, info):
    run = RUNS[case["framework"]](case, batch, info)
    model = run.model
    params = list(model.parameters())
    tr = PeakTracker()
    out = {}
    with tr:
        tr.register(model)
        out["weights_loaded"] = tr.cur
        tr.register(list(run.inputs.values()))
        out["inputs_bytes"] = tr.cur - out["weights_loaded"]
        out["params_bytes"] = unique_storage_bytes(params)
        out["trainable_params_bytes"] = unique_storage_bytes([p for p in params if p.requires_grad])
        out["trainable_dtypes"] = sorted({str(p.dtype).replace("torch.", "") for p in params if p.requires_grad})
        out["buffers_bytes"] = unique_storage_bytes(list(model.buffers()))
        steps = []
        for step in range(STEPS):
            marks = {}
            saved = SavedBytes(exclude=params + list(model.buffers()) + list(run.inputs.values()))

            def mark(name, marks=marks):
                marks[name] = tr.mark(name)
                if name == "forward_end":
                    saved.active = False
            saved.active = step == 0 and not case["checkpointing"]
            pack = saved.pack
            hook_ctx = torch.autograd.graph.saved_tensors_hooks(
                lambda t: pack(t) if saved.active else t, lambda t: t)
            h = run.call_module.register_forward_hook(
                lambda m, a, o: (mark("model_call_end") if "model_call_end" not in marks else None))
            tr.mark("start")
            with hook_ctx if saved.active else contextlib.nullcontext():
                loss = run.fwd_bwd(mark)
            h.remove()
            mark("backward_end")
            if step == 0:
                out["grad_bytes"] = unique_storage_bytes([p.grad for p in params])
            run.opt.step()
            mark("optimizer_end")
            run.zero_grad()
            out["loss"] = float(loss.detach().float())
            del loss
            mark("step_end")
            if step == 0:
                out["optimizer_state_bytes"] = unique_storage_bytes(
                    [v for st in run.opt.state.values() for v in st.values() if torch.is_tensor(v)])
                if not case["checkpointing"]:
                    out["saved_activation_bytes"] = saved.bytes
                    out["saved_by_dtype"] = saved.by_dtype
            steps.append(marks)
        out["steps"] = steps
    return out


def configs():
    for fw in ("transformers", "trl", "torchtune", "litgpt"):
        for prec, lora in (("fp32", 0), ("bf16", 0), ("bf16", 8)):
            if fw == "trl" and prec == "bf16" and not lora:
                continue
            for ckpt in (False, True):
                if fw == "litgpt" and ckpt:
                    continue  # litgpt's lora.py has no activation checkpointing switch
                yield dict(framework=fw, precision=prec, lora=lora, checkpointing=ckpt)


def versions():
    from importlib import metadata
    out = {"python": sys.version.split()[0]}
    for dist in ("torch", "transformers", "peft", "accelerate", "trl", "torchtune", "torchao", "litgpt"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    import torchao
    out["torchao_loaded"] = torchao.__version__ if "torchao" in sys.modules else None
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="", help="key=value pairs joined by ';', e.g. framework=torchtune;lora=8")
    ap.add_argument("--cpu-sdpa-layout", action="store_true", help="leave sdpa's CPU output layout alone")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker is None:  # one process per framework, rows gathered into --out
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            for fw in RUNS:
                part = f"{args.out}.{fw}.part"
                cmd = [sys.executable, os.path.abspath(__file__), "--worker", fw, "--out", part, "--only", args.only]
                if args.cpu_sdpa_layout:
                    cmd.append("--cpu-sdpa-layout")
                subprocess.call(cmd)
                if os.path.exists(part):
                    with open(part) as p:
                        f.write(p.read())
                    os.remove(part)
        return 0
    if not args.cpu_sdpa_layout:
        cuda_autocast.install_sdpa_layout()
    only = dict(kv.split("=", 1) for kv in args.only.split(";") if kv)
    env = versions()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    n_ok = n_fail = 0
    with open(args.out, "w") as f:
        for case in configs():
            if case["framework"] != args.worker:
                continue
            if any(str(case.get(k)) != v for k, v in only.items()):
                continue
            row = dict(schema=SCHEMA, **case, framework_version=env.get(case["framework"]), arch="llama",
                       config=hf_config(), seq=SEQ, batches=list(BATCHES), steps=STEPS, versions=env,
                       tracker="peak_tracker.PeakTracker (dispatch-mode storage tracking, CPU)",
                       sdpa_output_layout="cpu" if args.cpu_sdpa_layout else "cuda")
            row["lora"] = None
            t0 = time.time()
            try:
                row["measured"] = {}
                for b in BATCHES:
                    info = {}
                    row["measured"][str(b)] = measure(case, b, info)
                    row.update(info)
                row.setdefault("lora", None)
                if case["lora"] and row["lora"] is not None:
                    row["lora"]["adapter_dtype"] = row["measured"][str(BATCHES[0])]["trainable_dtypes"]
                n_ok += 1
            except Exception as e:  # noqa: BLE001 - one configuration failing must not stop the others
                import traceback
                traceback.print_exc()
                row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
                n_fail += 1
            row["seconds"] = round(time.time() - t0, 2)
            print(f"{case} {'ERROR ' + row['error'] if 'error' in row else 'ok'} {row['seconds']} s", flush=True)
            f.write(json.dumps(row) + "\n")
            f.flush()
    print(f"{n_ok} configurations measured, {n_fail} failed -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
