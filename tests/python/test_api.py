"""memplan's Python functions answer what `memplan ... --format json` answers for the same inputs."""

import json
import os

import pytest

import memplan
from conftest import DATA


@pytest.mark.parametrize("function,command,kwargs,args,codes", [
    # training: mixed precision, AdamW, full checkpointing
    (memplan.estimate, "estimate",
     dict(model="llama-2-7b", precision="amp-bf16", optimizer="adamw", seq=2048, batch=4, checkpointing="full"),
     ["--model", "llama-2-7b", "--precision", "amp-bf16", "--optimizer", "adamw", "--seq", "2048", "--batch", "4",
      "--checkpointing", "full"], (0,)),
    # the lesson's table: a parameter count as a float, LoRA as a trainable share
    (memplan.estimate, "estimate", dict(params=7e9, precision="fp16", optimizer="adamw", trainable=0.002),
     ["--params", "7e9", "--precision", "fp16", "--optimizer", "adamw", "--trainable", "0.002"], (0,)),
    # QLoRA on q,k,v,o with a fit table
    (memplan.estimate, "estimate",
     dict(model="llama-2-7b", lora=16, quantize="nf4", precision="bf16", seq=2048, gpu="rtx-4090",
          lora_targets=["q", "k", "v", "o"]),
     ["--model", "llama-2-7b", "--lora", "16", "--quantize", "nf4", "--precision", "bf16", "--seq", "2048",
      "--gpu", "rtx-4090", "--lora-targets", "q,k,v,o"], (0,)),
    # inference with the KV cache, several GPUs as a list
    (memplan.estimate, "estimate", dict(model="llama-3-8b", mode="infer", batch=16, seq=8192, gpu=["t4", "a100-80gb"]),
     ["--model", "llama-3-8b", "--mode", "infer", "--batch", "16", "--seq", "8192", "--gpu", "t4,a100-80gb"], (0,)),
    # a switch: True is the flag alone
    (memplan.estimate, "estimate", dict(model="gpt2", batch=8, seq=1024, precision="amp-bf16", keep_logits=True),
     ["--model", "gpt2", "--batch", "8", "--seq", "1024", "--precision", "amp-bf16", "--keep-logits"], (0,)),
    # fit: one card fits and one does not (exit 1 is an answer, not an error)
    (memplan.fit, "fit", dict(model="llama-3-8b", mode="infer", seq=4096, gpu=["12GiB", "24GB:bf16", "a100-80gb"]),
     ["--model", "llama-3-8b", "--mode", "infer", "--seq", "4096", "--gpu", "12GiB,24GB:bf16,a100-80gb"], (1,)),
    # fit over several GPUs: ZeRO-3 and the smallest world size that fits
    (memplan.fit, "fit",
     dict(model="llama-2-13b", precision="mixed-bf16", optimizer="adamw", seq=2048, gpus="auto", zero=3,
          gpu="a100-80gb"),
     ["--model", "llama-2-13b", "--precision", "mixed-bf16", "--optimizer", "adamw", "--seq", "2048", "--gpus", "auto",
      "--zero", "3", "--gpu", "a100-80gb"], (0,)),
    (memplan.max_batch, "max-batch",
     dict(model="llama-2-7b", precision="bf16", optimizer="adamw", lora=16, quantize="nf4", seq=2048,
          gpu="rtx-4090", effective_batch=32),
     ["--model", "llama-2-7b", "--precision", "bf16", "--optimizer", "adamw", "--lora", "16", "--quantize", "nf4",
      "--seq", "2048", "--gpu", "rtx-4090", "--effective-batch", "32"], (0,)),
    (memplan.max_batch, "max-batch", dict(model="gpt2", batch=8, gpu="t4", max_seq=True, precision="amp-fp16"),
     ["--model", "gpt2", "--batch", "8", "--gpu", "t4", "--max-seq", "--precision", "amp-fp16"], (0,)),
    (memplan.advise, "advise",
     dict(model="llama-2-7b", precision="fp32", optimizer="adamw", batch=16, seq=2048, gpu="rtx-4090"),
     ["--model", "llama-2-7b", "--precision", "fp32", "--optimizer", "adamw", "--batch", "16", "--seq", "2048",
      "--gpu", "rtx-4090"], (0, 1)),
    (memplan.serve, "serve", dict(model="llama-3-8b", gpu="a100-80gb", max_model_len=8192, max_num_seqs=64),
     ["--model", "llama-3-8b", "--gpu", "a100-80gb", "--max-model-len", "8192", "--max-num-seqs", "64"], (0,)),
    (memplan.serve, "serve", dict(model="llama-3-8b", engine="sglang", gpu="h100-80gb", tp=2),
     ["--model", "llama-3-8b", "--engine", "sglang", "--gpu", "h100-80gb", "--tp", "2"], (0,)),
])
def test_function_equals_cli_json(cli, function, command, kwargs, args, codes):
    expected = cli.json(command, *args, codes=codes)
    assert function(**kwargs) == expected


def test_the_readme_line(cli):
    # python -c "import memplan; print(memplan.estimate(model='llama-3-8b', mode='infer'))"
    r = memplan.estimate(model="llama-3-8b", mode="infer")
    assert r == cli.json("estimate", "--model", "llama-3-8b", "--mode", "infer")
    assert r["breakdown"]["parameters"] == 8030261248 * 2  # bf16, the checkpoint's format


def test_false_switch_and_none_are_the_default(cli):
    expected = cli.json("estimate", "--model", "gpt2", "--seq", "512")
    assert memplan.estimate(model="gpt2", seq=512, keep_logits=False, batch=None) == expected


def test_paths_and_repeated_calls(cli):
    config = os.path.join(DATA, "hf_configs", "Qwen3-0.6B.json")
    expected = cli.json("estimate", "--config", config, "--mode", "infer", "--seq", "4096")
    import pathlib
    for _ in range(2):  # in-process runs leave nothing behind that changes the next
        assert memplan.estimate(config=pathlib.Path(config), mode="infer", seq=4096) == expected
