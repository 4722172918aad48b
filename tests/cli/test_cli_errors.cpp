// Bad input never crashes: one line on stderr naming the option and value, exit 2, empty stdout.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>

#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "cli_harness.hpp"

using memplan::test::line_count;
using memplan::test::run_cli;

namespace {

struct BadInput {
  std::vector<std::string> args;
  const char* expected_fragment;  // must appear in the stderr line
};

const BadInput k_bad_inputs[] = {
    {{"estimate", "--params", "7x9"}, "--params: \"7x9\" is not a number (expected e.g. 7e9, 7B, 125M)"},
    {{"estimate", "--params", "-7e9"}, "--params: \"-7e9\" is negative"},
    {{"estimate", "--params", "nan"}, "--params: \"nan\" is not a number"},
    {{"estimate", "--params", "inf"}, "--params: \"inf\" is not a number"},
    {{"estimate", "--params", ""}, "--params: empty value"},
    {{"estimate", "--params", "1e30"}, "--params: \"1e30\" is too large"},
    {{"estimate", "--params", "0"}, "--params: \"0\" must be at least 1"},
    {{"estimate", "--params", "7B", "--model", "llama-2-7b"}, "cannot be combined with --model"},
    {{"estimate"}, "no model given"},
    {{"estimate", "--params", "7B", "--trainable", "0"}, "--trainable: \"0\" is outside (0, 1]"},
    {{"estimate", "--params", "7B", "--trainable", "1.5"}, "--trainable: \"1.5\" is outside (0, 1]"},
    {{"estimate", "--params", "7B", "--trainable", "abc"}, "--trainable: \"abc\" is not a fraction"},
    {{"estimate", "--params", "7B", "--batch", "0"}, "--batch: \"0\" must be at least 1"},
    {{"estimate", "--params", "7B", "--batch", "2.5"}, "--batch: \"2.5\" is not a whole number"},
    {{"estimate", "--params", "7B", "--precision", "fp17"}, "--precision: \"fp17\" is not a precision"},
    {{"estimate", "--params", "7B", "--precision", "bf61"}, "did you mean \"bf16\"?"},
    {{"estimate", "--params", "7B", "--precision", "0"},
     "--precision: \"0\" bytes per number is out of range"},
    {{"estimate", "--params", "7B", "--optimizer", "adamm"}, "did you mean \"adam\"?"},
    {{"estimate", "--params", "7B", "--optimizer", "-1"}, "--optimizer: \"-1\" is not an optimizer"},
    {{"estimate", "--params", "7B", "--mode", "serve"},
     "--mode: \"serve\" is not valid (expected train, infer"},
    {{"estimate", "--params", "7B", "--gpu", "rtx-4909"}, "did you mean \"rtx-4090\"?"},
    {{"estimate", "--params", "7B", "--gpu", "t4,,a100"}, "--gpu: \"t4,,a100\" has an empty name"},
    {{"estimate", "--model", "lama-2-7b"}, "did you mean \"llama-2-7b\"?"},
    {{"estimate", "--params", "7B", "--format", "yaml"}, "--format: \"yaml\" is not a format"},
    {{"estimate", "--params", "7B", "--units", "mb"}, "--units: \"mb\" is not a unit (expected gib or gb)"},
    {{"estimate", "--params", "7B", "--overhead", "12 parsecs"},
     "--overhead: \"12 parsecs\" has an unknown unit"},
    {{"estimate", "--params", "7B", "--quantize", "int3"}, "--quantize: \"int3\" is not a number format"},
    {{"estimate", "--params", "7B", "--attention", "flsh"}, "--attention: \"flsh\" is not valid"},
    {{"estimate", "--params", "7B", "--checkpointing", "some"}, "--checkpointing: \"some\" is not valid"},
    {{"estimate", "--params", "7B", "--activation-bytes-per-row", "-3"},
     "--activation-bytes-per-row: \"-3\" is negative"},
    {{"estimate", "--params", "7B", "--tensors", "x"}, "--tensors: \"x\" is not a number"},
    {{"estimate", "--params", "7B", "--bogus"}, "--bogus"},
    {{"estimate", "--mlp", "784"}, "--mlp: \"784\" needs at least two widths"},
    {{"estimate", "--mlp", "784,0,10"}, "--mlp: \"784,0,10\" has a zero width"},
    {{"estimate", "--params", "7B", "--plan", "/nonexistent/plan.json"}, "--plan: cannot read"},
    {{"estimate", "--from", "/nonexistent/axolotl.yml"}, "--from: cannot read"},
    {{"estimate", "--from", std::string(MEMPLAN_SOURCE_DIR) + "/tests/data/from_bad/trainer_fsdp.json"},
     "trainer_fsdp.json: fsdp: \"auto_wrap\" names no sharding"},
    {{"estimate", "--from", std::string(MEMPLAN_SOURCE_DIR) + "/tests/data/from_bad/trainer_bool.yaml"},
     "trainer_bool.yaml:2:25: gradient_checkpointing: \"sometimes\" is not true or false"},
    {{"estimate", "--from",
      std::string(MEMPLAN_SOURCE_DIR) + "/tests/data/from_bad/trainer_deepspeed_missing.json"},
     "trainer_deepspeed_missing.json: deepspeed: cannot read"},
    {{"serve", "--from", "/nonexistent/vllm.sh", "--gpu", "a100-80gb"}, "--from: cannot read"},
    {{"serve", "--from", std::string(MEMPLAN_SOURCE_DIR) + "/tests/data/from_bad/serve_open_quote.sh"},
     "serve_open_quote.sh:3:19: a \" quote is not closed"},
    {{"serve", "--from-command", "vllm serve m --tensor-parallel-size x", "--gpu", "a100-80gb"},
     "--from-command:1:37: \"x\": --tensor-parallel-size: \"x\" is not"},
    {{"serve", "--from-command", "vllm serve $(cat model.txt)"}, "command substitution $(...) is not run"},
    {{"serve", "--from-command", "llama-server -m m.gguf -ngl"}, "\"-ngl\": needs a value"},
    {{"serve", "--from-command", "python train.py --lr 1"}, "--from-command: is not a serving command line"},
    {{"estimate", "--params", "7B", "--presets", "/nonexistent/presets.json"}, "--presets: cannot read"},
    {{"estimat", "--params", "7B"}, "\"estimat\" is not a command"},
    {{"fit", "--params", "7B"}, "--gpu: required"},
    {{"fit", "--params", "7B", "--gpu", "t4", "--against", "half"}, "--against: \"half\" is not valid"},
    {{"fit", "--params", "7B", "--gpu", "t4", "--against", "free"}, "free needs a real device"},
    {{"max-batch", "--params", "7B", "--gpu", "t4"}, "does not grow with the batch"},
    {{"max-batch", "--params", "7B", "--gpu", "t4", "--activation-bytes-per-row", "100", "--effective-batch",
      "0"},
     "--effective-batch: \"0\" must be at least 1"},
    {{"estimate", "--params", "1e15", "--activation-bytes-per-row", "1e15", "--batch", "1e12"},
     "exceeds 2^64 bytes"},
    {{"estimate", "--layers", "32", "--hidden", "4096"}, "at least --layers, --hidden and --heads"},
    {{"estimate", "--layers", "2", "--hidden", "64", "--heads", "4"},
     "--vocab: an architecture from flags needs --vocab"},
    {{"estimate", "--layers", "2", "--hidden", "64", "--heads", "4", "--vocab", "100", "--family", "t5"},
     "--family: \"t5\" is not a family"},
    {{"estimate", "--params", "7B", "--layers", "32", "--hidden", "4096", "--heads", "30"},
     "--heads: 30 does not divide --hidden 4096"},
    // Every other option and command (issue 13: the catalogue covers them all; see the walk below).
    {{"estimate", "--config", ""}, "--config: empty value (expected the path of a file or folder)"},
    {{"estimate", "--safetensors", ""}, "--safetensors: empty value"},
    {{"estimate", "--gguf", ""}, "--gguf: empty value"},
    {{"estimate", "--params", "7e9", "--plan", ""}, "--plan: empty value (expected the path of a file)"},
    {{"estimate", "--params", "7e9", "--presets", ""}, "--presets: empty value"},
    {{"gpus", "--presets", std::string(MEMPLAN_SOURCE_DIR) + "/tests/data/presets_bad/huge_gpu.json"},
     "field \"memory_total_bytes\" 18446744073709551615 is above the limit of 17592186044416 bytes (16 TiB)"},
    {{"estimate", "--params", "7e9", "--presets",
      std::string(MEMPLAN_SOURCE_DIR) + "/tests/data/presets_bad/empty_gpus.json"},
     "\"gpus\" is empty (expected at least one GPU)"},
    {{"estimate", "--layers", "70000", "--hidden", "64", "--heads", "4", "--vocab", "100"},
     "--layers: \"70000\" is too large (at most 65,536)"},
    {{"estimate", "--layers", "2", "--hidden", "2000000", "--heads", "4", "--vocab", "100"},
     "--hidden: \"2000000\" is too large (at most 1,048,576)"},
    {{"estimate", "--layers", "2", "--hidden", "64", "--heads", "4", "--vocab", "100", "--kv-heads", "3"},
     "--kv-heads: 3 does not divide --heads 4"},
    {{"estimate", "--layers", "2", "--hidden", "64", "--heads", "4", "--vocab", "100", "--intermediate", "x"},
     "--intermediate: \"x\" is not a number"},
    {{"estimate", "--layers", "2", "--hidden", "64", "--heads", "4", "--vocab", "1e9"},
     "--vocab: \"1e9\" is too large (at most 16,777,216)"},
    {{"estimate", "--params", "7e9", "--lora", "0"}, "--lora: \"0\" must be at least 1"},
    {{"estimate", "--model", "llama-2-7b", "--lora", "16", "--lora-targets", "q,z"},
     "--lora-targets: \"z\" is not a LoRA target"},
    {{"estimate", "--params", "7e9", "--seq", "-1"}, "--seq: \"-1\" is negative"},
    {{"estimate", "--params", "7e9", "--kv-format", "fp7"}, "--kv-format: \"fp7\" is not a number format"},
    {{"estimate", "--params", "7e9", "--gpus", "0"}, "--gpus: \"0\" must be at least 1"},
    {{"estimate", "--params", "7e9", "--nodes", "x"}, "--nodes: \"x\" is not a number"},
    {{"estimate", "--params", "7e9", "--gpus-per-node", "0"}, "--gpus-per-node: \"0\" must be at least 1"},
    {{"estimate", "--params", "7e9", "--zero", "4"}, "--zero: \"4\" is not a ZeRO stage"},
    {{"estimate", "--params", "7e9", "--fsdp", "wat"}, "--fsdp: \"wat\" is not an FSDP sharding strategy"},
    {{"estimate", "--params", "7e9", "--offload", "disk"}, "--offload: \"disk\" is not an offload mode"},
    {{"estimate", "--params", "7e9", "--tp", "0"}, "--tp: \"0\" must be at least 1"},
    {{"estimate", "--params", "7e9", "--pp", "x"}, "--pp: \"x\" is not a number"},
    {{"estimate", "--params", "7e9", "--dp", "0"}, "--dp: \"0\" must be at least 1"},
    {{"estimate", "--params", "7e9", "--virtual-stages", "x"}, "--virtual-stages: \"x\" is not a number"},
    {{"estimate", "--params", "7e9", "--micro-batches", "x"}, "--micro-batches: \"x\" is not a number"},
    {{"estimate", "--params", "7e9", "--grad-format", "fp64"},
     "--grad-format: \"fp64\" is not a gradient format"},
    {{"estimate", "--params", "7e9", "--largest-layer", "x"}, "--largest-layer: \"x\" is not a number"},
    {{"estimate", "--params", "7e9", "--prefetch", "x"}, "--prefetch: \"x\" is not a number"},
    {{"estimate", "--params", "7e9", "--precision", "fp16", "--quantize", "int8"},
     "--quantize: stores frozen weights, and a full fine-tune has none"},
    {{"advise", "--params", "7e9", "--gpu", "t4", "--limit", "0"}, "--limit: \"0\" must be at least 1"},
    {{"advise", "--params", "7e9", "--gpu", "t4", "--emit", "flags", "--emit-rank", "0"},
     "--emit-rank: \"0\" must be at least 1 (1: the cheapest fitting suggestion)"},
    {{"max-batch", "--params", "7e9", "--gpu", "t4", "--emit", "nosuch"},
     "--emit: \"nosuch\" is not one of deepspeed, axolotl, llamafactory, torchtune, accelerate, trainer, "
     "flags, from"},
    {{"cast", "abc"}, "cast: \"abc\" is not a number"},
    {{"cast", "1", "--to", "fp7"}, "--to: \"fp7\" is not a number format"},
    {{"cast", "1", "--from-bits", "fp7"}, "--from-bits: \"fp7\" is not a number format"},
    {{"dtype", "fp7"}, "dtype: \"fp7\" is not a number format"},
    {{"inspect", "/nonexistent/model"}, "/nonexistent/model: no such file"},
    {{"scale", "--grad-min", "x", "--grad-max", "1"}, "--grad-min: \"x\" is not a number"},
    {{"scale", "--grad-min", "1e-9", "--grad-max", "x"}, "--grad-max: \"x\" is not a number"},
    {{"scale", "--grad-min", "1e-400", "--grad-max", "1"}, "--grad-min: \"1e-400\" underflows to 0"},
    {{"scale", "--values", "/nonexistent/values.txt"}, "--values: cannot read \"/nonexistent/values.txt\""},
    {{"scale", "--grad-min", "1e-9", "--grad-max", "1", "--to", "int8"},
     "--to: loss scaling is for floating"},
    {{"gpus", "--units", "mb"}, "--units: \"mb\" is not a unit"},
    {{"models", "--format", "yaml"}, "--format: \"yaml\" is not a format"},
    {{"probe", "--format", "yaml"}, "--format: \"yaml\" is not a format"},
    {{"ladder", "--start", "x", "--", "true"}, "--start: \"x\" is not a number"},
    {{"ladder", "--start", "8", "--min", "x", "--", "true"}, "--min: \"x\" is not a number"},
    {{"ladder", "--start", "8", "--step", "x", "--", "true"}, "--step: \"x\" is not a number"},
    {{"ladder", "--start", "8", "--timeout", "x", "--", "true"}, "--timeout: \"x\""},
    {{"ladder", "--start", "8", "--grace", "x", "--", "true"}, "--grace: \"x\""},
    {{"ladder", "--start", "8", "--oom-pattern", "(", "--", "true"}, "--oom-pattern: "},
    {{"sweep", "--batches", "x", "--", "true"}, "--batches: \"x\" is not a number"},
    {{"sweep", "--batches", "1", "--warmup", "x", "--", "true"}, "--warmup: \"x\" is not a number"},
    {{"sweep", "--batches", "1", "--within", "x", "--", "true"}, "--within: \"x\" is not a fraction"},
    {{"sweep", "--batches", "1", "--steps", "x", "--", "true"}, "--steps: \"x\" is not a number"},
    {{"sweep", "--batches", "1", "--rows-per-step", "x", "--", "true"},
     "--rows-per-step: \"x\" is not a number"},
    {{"sweep", "--batches", "1", "--repeat", "x", "--", "true"}, "--repeat: \"x\" is not a number"},
    {{""}, "\"\" is not a command"},
    {{"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090", "--ctx-size", "x"},
     "--ctx-size: \"x\" is not a number"},
    {{"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090", "--ubatch-size", "0"},
     "--ubatch-size: \"0\" must be at least 1"},
    {{"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090", "--cache-type-k",
      "q3"},
     "--cache-type-k: "},
    {{"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090", "--cache-type-v",
      "q3"},
     "--cache-type-v: "},
    {{"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090", "--n-gpu-layers",
      "x"},
     "--n-gpu-layers: \"x\" is not a number"},
    {{"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090", "--tensor-split",
      "x"},
     "--tensor-split: "},
    {{"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090", "--fit",
      "--fit-target", "x"},
     "--fit-target: \"x\" is not a number"},
    {{"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090", "--fit", "--fit-ctx",
      "x"},
     "--fit-ctx: "},
    {{"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090", "--llamacpp-build",
      "bx"},
     "--llamacpp-build: \"x\" is not a number"},
    {{"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090", "--parallel", "0"},
     "--parallel: \"0\" must be at least 1"},
    {{"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090", "--ngl-order",
      "last"},
     "--ngl-order: \"last\" is not an order (expected output-first or layers-first)"},
    {{"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090", "--n-cpu-moe", "x"},
     "--n-cpu-moe: \"x\" is not a number"},
    {{"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090", "--mmproj",
      "/nonexistent/mmproj.gguf"},
     "/nonexistent/mmproj.gguf"},
    {{"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090", "--check-log",
      "/nonexistent/llama.log"},
     "/nonexistent/llama.log"},
    {{"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090", "--ollama-version",
      "0.x"},
     "--ollama-version: \"0.x\" is not a version"},
    {{"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090", "--ollama-parallel",
      "x"},
     "--ollama-parallel: \"x\" is not a number"},
    {{"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090",
      "--ollama-gpu-overhead", "-1"},
     "--ollama-gpu-overhead: "},
    {{"models", "--fits", "rtx-4909"}, "did you mean \"rtx-4090\"?"},
    {{"models", "--fits", "rtx-4090", "--mode", "serve"}, "--mode: \"serve\""},
    {{"models", "--fits", "rtx-4090", "--quantize", "q3"}, "--quantize: \"q3\""},
    {{"models", "--fits", "rtx-4090", "--seq", "x"}, "--seq: \"x\" is not a number"},
    {{"estimate", "--params", "7e9", "--wired-limit-mb", "x"}, "--wired-limit-mb: \"x\""},
    // 1e15 B x 9,300 rows + 1e6 x 16 B (fp32 AdamW) + the T4's CUDA context 483,196,928 B
    {{"fit", "--params", "1e6", "--activation-bytes-per-row", "1e15", "--batch", "9300", "--gpu", "t4"},
     "required memory: 9,300,000,000,499,196,928 bytes is above 2^63 - 1 (8 EiB)"},
    {{"sweep", "--batches", "1", "--throughput-pattern", "(", "--", "true"}, "--throughput-pattern: \"(\""},
    // the step timeline, vision inputs, the prefill chunk, serve and why-oom (merged later)
    {{"plot", "--model", "gpt2", "--vs", "x"},
     "--vs: \"x\" is not a chart (expected batch, seq, precision or step)"},
    {{"estimate", "--params", "7B", "--width", "5"},
     "--width: \"5\" is not a width (expected a number of columns from 40 to 1000)"},
    {{"fit", "--params", "7B", "--gpu", "t4", "--width", "5"},
     "--width: \"5\" is not a width (expected a number of columns from 40 to 1000)"},
    {{"diff", "/nonexistent/a.json", "/nonexistent/b.json"},
     "OLD: cannot read \"/nonexistent/a.json\": no such file"},
    {{"estimate", "--params", "7B", "--device", "tpu"},
     "--device: \"tpu\" is not a device (expected cuda or cpu)"},
    {{"estimate", "--params", "7B", "--cuda", "twelve"},
     "--cuda: \"twelve\" is not a CUDA version (expected MAJOR.MINOR from 8.0 on, e.g. 12.8)"},
    {{"estimate", "--params", "7B", "--cuda", "7.5"},
     "--cuda: \"7.5\" is not a CUDA version (expected MAJOR.MINOR from 8.0 on, e.g. 12.8)"},
    {{"estimate", "--params", "7B", "--torch", "1.1"},
     "--torch: \"1.1\" is not a PyTorch release memplan models (expected MAJOR.MINOR from 1.8 to 2.99, e.g. "
     "1.10 or 2.5; quote it in plan files: the JSON number 1.10 reads as 1.1)"},
    {{"estimate", "--params", "7B", "--torch", "latest"},
     "--torch: \"latest\" is not a PyTorch release memplan models (expected MAJOR.MINOR from 1.8 to 2.99, "
     "e.g. "
     "1.10 or 2.5; quote it in plan files: the JSON number 1.10 reads as 1.1)"},
    {{"estimate", "--model", "gpt2", "--seq", "128", "--torch", "1.13", "--attention", "sdpa"},
     "--attention: sdpa needs torch 2.0 or later (--torch is 1.13; expected eager)"},
    {{"estimate", "--params", "7B", "--torch", "1.10", "--expandable-segments"},
     "--expandable-segments: needs torch 2.1 or later (--torch is 1.10)"},
    {{"estimate", "--params", "7B", "--transformers", "3.5"},
     "--transformers: \"3.5\" is not a transformers release memplan models (expected MAJOR.MINOR from 4.0 "
     "to 5.999, e.g. 4.36 or 5.24; quote it in plan files: the JSON number 4.40 reads as 4.4)"},
    {{"estimate", "--params", "7B", "--transformers", "latest"},
     "--transformers: \"latest\" is not a transformers release memplan models (expected MAJOR.MINOR from "
     "4.0 to 5.999, e.g. 4.36 or 5.24; quote it in plan files: the JSON number 4.40 reads as 4.4)"},
    {{"estimate", "--model", "gpt2", "--seq", "128", "--transformers", "4.36", "--attention", "sdpa"},
     "--attention: sdpa: transformers 4.36 runs gpt2 with eager attention only (sdpa from 4.42; expected "
     "eager or a later --transformers)"},
    {{"estimate", "--params", "7B", "--transformers", "4.36", "--framework", "litgpt"},
     "--transformers: is Hugging Face's release; --framework litgpt runs its own model code (expected no "
     "--transformers)"},
    {{"estimate", "--params", "7B", "--bitsandbytes", "0.38"},
     "--bitsandbytes: \"0.38\" is not a bitsandbytes release with 4-bit layers (expected "
     "MAJOR.MINOR[.PATCH] from 0.39, e.g. 0.41.1 or 0.50.2; quote it in plan files)"},
    {{"estimate", "--model", "llama-2-7b", "--seq", "512", "--bitsandbytes", "0.41"},
     "--bitsandbytes: 0.41.0: it changes what a bitsandbytes 4-bit layer keeps for backward, so it needs a "
     "training step with --quantize nf4 or nf4-dq (expected no --bitsandbytes)"},
    {{"estimate", "--model", "llama-2-7b", "--seq", "512", "--lora", "8", "--quantize", "nf4", "--framework",
      "torchtune", "--bitsandbytes", "0.41"},
     "--bitsandbytes: 0.41.0: --framework torchtune quantises with torchao's NF4Tensor, not bitsandbytes "
     "(expected no --bitsandbytes)"},
    {{"estimate", "--params", "7B", "--transformers", "4.36", "--device", "cpu"},
     "--transformers: 4.36 with --device cpu: the CPU rules are torch 1.13's own models, as measured "
     "(expected no --transformers)"},
    {{"estimate", "--params", "7B", "--torch", "2.5", "--device", "cpu"},
     "--torch: 2.5 with --device cpu: the CPU rules are torch 1.13's, as measured (expected 1.13, or no "
     "--torch)"},
    {{"estimate", "--params", "7B", "--cuda-module-loading", "sometimes"},
     "--cuda-module-loading: \"sometimes\" is not a module loading mode (expected lazy or eager)"},
    {{"estimate", "--params", "7B", "--cuda", "11.2", "--cuda-module-loading", "lazy"},
     "--cuda-module-loading: lazy needs CUDA 11.7 or later (--cuda is 11.2; expected eager)"},
    {{"estimate", "--params", "7B", "--grad-accum", "0"}, "--grad-accum: \"0\" must be at least 1"},
    {{"estimate", "--model", "llava-1.5-7b", "--images", "x"},
     "--images: \"x\" is not a number (expected e.g. 7e9, 7B, 125M)"},
    {{"estimate", "--params", "7B", "--images", "1", "--image-size", "0"},
     "--image-size: \"0\" must be at least 1"},
    {{"estimate", "--params", "7B", "--loss", "sum"},
     "--loss: \"sum\" is not valid (expected plain, chunked, fused or logprob)"},
    {{"estimate", "--params", "7B", "--optimizer-loop", "fast"},
     "--optimizer-loop: \"fast\" is not valid (expected foreach, per-tensor or fused)"},
    {{"estimate", "--params", "7B", "--mode", "infer", "--prefill-chunk", "x"},
     "--prefill-chunk: \"x\" is not a number (expected e.g. 4096, 8k = 8,192, 128k = 131,072)"},
    {{"estimate", "--model", "llama-2-7b", "--lora", "8", "--lora-dtype", "fp16"},
     "--lora-dtype: \"fp16\" is not valid (expected fp32 or base; did you mean \"fp32\"?)"},
    {{"estimate", "--model", "llama-2-7b", "--lora-dtype", "base"},
     "--lora-dtype: needs --lora R (the adapters' rank, e.g. --lora 16)"},
    {{"estimate", "--model", "llama-2-7b", "--lora", "8", "--lora-dropout", "1"},
     "--lora-dropout: \"1\" is outside [0, 1) (expected a dropout probability, e.g. 0.05)"},
    {{"estimate", "--model", "llama-2-7b", "--lora", "8", "--lora-dropout", "x"},
     "--lora-dropout: \"x\" is not a number"},
    {{"estimate", "--model", "llama-2-7b", "--mode", "infer", "--framework", "torchtune"},
     "--framework: torchtune is a training framework; its profile has no inference rules (expected hf or "
     "litgpt "
     "with --mode infer)"},
    {{"estimate", "--model", "llama-2-7b", "--framework", "lightning"},
     "--framework: \"lightning\" is not a framework (expected hf, trainer, trl, axolotl, llamafactory, "
     "torchtune, unsloth or litgpt)"},
    {{"estimate", "--model", "llama-2-7b", "--keep-logits=maybe"},
     "--keep-logits: \"maybe\" is not valid (a switch: expected it alone, or =true / =false)"},
    {{"estimate", "--mlp", "3,4", "--batchnorm=maybe"},
     "--batchnorm: \"maybe\" is not valid (a switch: expected it alone, or =true / =false)"},
    {{"estimate", "--params", "7B", "--zero-grad", "maybe"},
     "--zero-grad: \"maybe\" is not valid (expected none or zeros)"},
    {{"estimate", "--model", "llama-2-7b", "--mode", "infer", "--logits", "every"},
     "--logits: \"every\" is not valid (expected last or all)"},
    {{"serve", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--block-size", "0"},
     "--block-size: \"0\" must be at least 1"},
    {{"serve", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--check-log", "/nonexistent/log.txt"},
     "--check-log: cannot read \"/nonexistent/log.txt\": no such file"},
    {{"serve", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--chunked-prefill", "maybe"},
     "--chunked-prefill: \"maybe\" is not on or off"},
    {{"serve", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--engine", "tgi"},
     "--engine: \"tgi\" is not a serving engine memplan models (expected vllm or sglang)"},
    {{"serve", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--gpu-memory", "0"},
     "--gpu-memory: the GPU has no memory to plan with"},
    {{"serve", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--gpu-memory-utilization", "1.5"},
     "--gpu-memory-utilization: \"1.5\" is not in (0, 1] (expected e.g. 0.9)"},
    {{"serve", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--max-model-len", "x"},
     "--max-model-len: \"x\" is not a number (expected e.g. 4096, 8k = 8,192, 128k = 131,072)"},
    {{"serve", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--max-num-batched-tokens", "0"},
     "--max-num-batched-tokens: \"0\" must be at least 1"},
    {{"serve", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--max-num-seqs", "0"},
     "--max-num-seqs: \"0\" must be at least 1"},
    {{"why-oom", "/nonexistent/oom.txt"}, "FILE: cannot read \"/nonexistent/oom.txt\": no such file"},
    {{"serve", "--engine", "sglang", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--mem-fraction-static",
      "1"},
     "--mem-fraction-static: \"1\" is not in (0, 1) (expected e.g. 0.88)"},
    {{"serve", "--engine", "sglang", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--max-total-tokens",
      "0"},
     "--max-total-tokens: \"0\" must be at least 1"},
    {{"serve", "--engine", "sglang", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--chunked-prefill-size",
      "0"},
     "--chunked-prefill-size: \"0\" must be at least 1"},
    {{"serve", "--engine", "sglang", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--context-length", "0"},
     "--context-length: \"0\" must be at least 1"},
    {{"serve", "--engine", "sglang", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--kv-cache-dtype",
      "int3"},
     "--kv-cache-dtype: \"int3\" is not one of SGLang's (expected auto, fp8_e4m3, fp8_e5m2 or bf16)"},
    {{"serve", "--engine", "sglang", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--cuda-graph-max-bs",
      "0"},
     "--cuda-graph-max-bs: \"0\" must be at least 1"},
    {{"serve", "--engine", "sglang", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--sglang-version",
      "0.2.15"},
     "--sglang-version: \"0.2.15\" is older than the releases memplan models (0.3.0 to 0.5.23)"},
    {{"serve", "--engine", "sglang", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--sglang-version",
      "five"},
     "--sglang-version: \"five\" is not an SGLang release (expected X.Y or X.Y.Z, e.g. 0.5.23)"},
    {{"serve", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--vllm-version", "0.5.4"},
     "--vllm-version: \"0.5.4\" is older than the releases memplan models (0.6.0 to 0.34.0)"},
    {{"serve", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--vllm-entry", "python"},
     "--vllm-entry: \"python\" is not an entry point (expected serve for `vllm serve` or llm for the "
     "vllm.LLM "
     "class)"},
    {{"serve", "--engine", "sglang", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--vllm-version",
      "0.10.1"},
     "--vllm-version: \"0.10.1\" is a vLLM flag; with --engine sglang use --sglang-version"},
    {{"serve", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--vllm-version", "0.10.1", "--chunked-prefill",
      "off"},
     "--chunked-prefill: off is not available with the V1 engine (it always chunks)"},
};

}  // namespace

TEST_CASE("every bad input: one stderr line, exit 2, empty stdout", "[cli][errors]") {
  CHECK(std::size(k_bad_inputs) >= 30);
  for (const BadInput& b : k_bad_inputs) {
    std::string cmd;
    for (const std::string& a : b.args) cmd += a + " ";
    INFO("memplan " << cmd);
    auto r = run_cli(b.args);
    INFO("stderr: " << r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(line_count(r.err) == 1);
    CHECK(r.err.rfind("memplan: error: ", 0) == 0);
    CHECK(r.err.find(b.expected_fragment) != std::string::npos);
  }
}

TEST_CASE("MEMPLAN_DATA_DIR replaces the GPU presets for every command", "[cli][presets]") {
  const std::string dir = std::string(MEMPLAN_SOURCE_DIR) + "/tests/data/presets_override";
  setenv("MEMPLAN_DATA_DIR", dir.c_str(), 1);
  auto gpus = run_cli({"gpus", "--format", "csv"});
  auto est = run_cli({"estimate", "--params", "1e6", "--format", "csv"});
  unsetenv("MEMPLAN_DATA_DIR");
  CHECK(gpus.code == 0);
  CHECK(gpus.out.find("lab-card,") != std::string::npos);
  CHECK(gpus.out.find("t4,") == std::string::npos);
  CHECK(est.out.find("gpu,lab-card,") != std::string::npos);  // the defaults: the file's first GPUs
}

// Only the plan flags named on the command line are registered with CLI11 (src/cli/app.cpp):
// the messages must be the ones CLI11 gave with all ~45 registered (taken from that build), plus
// memplan's did-you-mean for a misspelt option. A missing value is named by the option's help
// placeholder (N, {0|1|2|3}: issue 27), not CLI11's TEXT.
TEST_CASE("plan flags: whole error lines as with every flag registered", "[cli][errors]") {
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"estimate", "--params=7x9"},
       "memplan: error: --params: \"7x9\" is not a number (expected e.g. 7e9, 7B, 125M)\n"},
      {{"estimate", "--params", "7e9", "--paramz", "3"},
       "memplan: error: The following arguments were not expected: 3 --paramz (did you mean "
       "\"--params\"?)\n"},
      {{"estimate", "--params", "7e9", "--seq"}, "memplan: error: --seq: 1 required N missing\n"},
      {{"estimate", "--params", "7e9", "--batchnorm=3"},
       "memplan: error: --batchnorm: applies to --mlp models\n"},
      {{"fit", "--params", "7e9", "--seq=-1", "--gpu", "t4"},
       "memplan: error: --seq: \"-1\" is negative (expected a count, e.g. 4096, 8k = 8,192, 128k = "
       "131,072)\n"},
      {{"estimate", "--params", "7e9", "--zero"}, "memplan: error: --zero: 1 required {0|1|2|3} missing\n"},
  };
  for (const auto& [args, expected] : cases) {
    INFO(args[0] << " " << args[1]);
    auto r = run_cli(args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == expected);
  }
}

namespace {

// Options that take any text, so no value of theirs is bad input, each with why. None today: even
// --oom-pattern is checked (a regular expression) and --model looked up.
const std::vector<std::pair<std::string, std::string>> k_any_string = {};

bool names_option(const std::vector<std::string>& args, const std::string& flag) {
  for (const std::string& a : args)
    if (a == flag || a.rfind(flag + "=", 0) == 0) return true;
  return false;
}

}  // namespace

// The catalogue above covers every command and every option that takes a value (issue 13). A new
// option without a bad-input case fails here: add one to k_bad_inputs, or to k_any_string with why.
TEST_CASE("bad-input catalogue: every command and every option has a case", "[cli][errors]") {
  // Options parsed by one shared rule whatever the command (the planning option table, the output
  // options, --plan and --presets): one case covers them for every command.
  // ladder's and sweep's run options are one rule too (add_run_options).
  std::vector<std::string> shared = {"--format",  "--units",       "--plan",    "--from",
                                     "--presets", "--oom-pattern", "--timeout", "--grace"};
  for (const memplan::cli::OptionSpec& o : memplan::cli::plan_options()) shared.emplace_back(o.flag);
  for (const memplan::cli::CommandSpec& spec : memplan::cli::commands()) {
    INFO("memplan " << spec.name);
    bool command_covered = false;
    for (const BadInput& b : k_bad_inputs) command_covered = command_covered || b.args.at(0) == spec.name;
    CHECK(command_covered);

    CLI::App app;
    CLI::App* sub = app.add_subcommand(spec.name);
    memplan::cli::Runner runner;
    spec.add(*sub, runner);
    for (const CLI::Option* o : sub->get_options()) {
      if (o->get_lnames().empty() || o->get_expected_min() == 0) continue;  // positional, or a switch
      const std::string flag = "--" + o->get_lnames().front();
      INFO(flag);
      bool any = false;
      for (const auto& [f, why] : k_any_string) any = any || flag == f;
      if (any) continue;
      const bool is_shared = std::find(shared.begin(), shared.end(), flag) != shared.end();
      bool covered = false;
      for (const BadInput& b : k_bad_inputs)
        if ((is_shared || b.args.at(0) == spec.name) && names_option(b.args, flag)) covered = true;
      CHECK(covered);
    }
  }
}
