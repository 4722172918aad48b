#include "cli/options.hpp"

#include <sstream>

#include <memplan/quantity.hpp>
#include "core/base/did_you_mean.hpp"
#include "core/base/quantity_kinds.hpp"
#include "core/formats/llama_quant.hpp"
#include "core/models/arch_limits.hpp"

namespace memplan::cli {
namespace {

using V = PlanValues;

// A hard limit far above any real model (the largest published are ~2T) that keeps every
// byte count well inside 64 bits.
constexpr uint64_t k_max_parameters = 1000000000000000ull;  // 1e15

uint64_t count(const std::string& flag, const std::string& text, uint64_t max, bool positive = true) {
  const uint64_t n = parse_count(flag, text, max);
  if (positive && n == 0) throw Error(flag, "\"" + text + "\" must be at least 1");
  return n;
}

// A count option: `Max` bounds it, `Positive` refuses 0.
template <std::optional<uint64_t> V::*Member, uint64_t Max, bool Positive = true>
void count_rule(const std::string& flag, const std::string& text, V& v) {
  v.*Member = count(flag, text, Max, Positive);
}

// A token-count option (--seq, --prefill-chunk): k = 1,024 (parse_tokens).
template <std::optional<uint64_t> V::*Member, uint64_t Max, bool Positive = true>
void token_rule(const std::string& flag, const std::string& text, V& v) {
  const uint64_t n = parse_tokens(flag, text, Max);
  if (Positive && n == 0) throw Error(flag, "\"" + text + "\" must be at least 1");
  v.*Member = n;
}

// A batch-size option (--batch): digits, no k suffix (parse_batch_size).
template <std::optional<uint64_t> V::*Member, uint64_t Max>
void batch_rule(const std::string& flag, const std::string& text, V& v) {
  const uint64_t n = parse_batch_size(flag, text, Max);
  if (n == 0) throw Error(flag, "\"" + text + "\" must be at least 1");
  v.*Member = n;
}

template <std::optional<std::string> V::*Member>
void text_rule(const std::string&, const std::string& text, V& v) {
  v.*Member = text;
}

// A file or folder path: any text but the empty one.
template <std::optional<std::string> V::*Member>
void path_rule(const std::string& flag, const std::string& text, V& v) {
  if (text.empty()) throw Error(flag, "empty value (expected the path of a file or folder)");
  v.*Member = text;
}

std::vector<uint64_t> parse_widths(const std::string& flag, const std::string& text) {
  std::vector<uint64_t> widths;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) widths.push_back(parse_count(flag, item, 1ull << 32));
  if (widths.size() < 2)
    throw Error(flag, "\"" + text + "\" needs at least two widths (expected e.g. 784,512,256,10)");
  for (uint64_t w : widths)
    if (w == 0) throw Error(flag, "\"" + text + "\" has a zero width");
  return widths;
}

void one_of(const std::string& flag, const std::string& text, const std::vector<std::string>& allowed) {
  for (const std::string& a : allowed)
    if (text == a) return;
  std::string list;
  for (size_t i = 0; i < allowed.size(); ++i)
    list += (i ? (i + 1 == allowed.size() ? " or " : ", ") : "") + allowed[i];
  throw Error(flag, "\"" + text + "\" is not valid (expected " + list + did_you_mean(text, allowed) + ")");
}

// Bare digits: no decimal point, exponent or suffix ("7", "1_000").
bool bare_digits(const std::string& text) {
  for (char c : text)
    if (!(c >= '0' && c <= '9') && c != '_') return false;
  return !text.empty();
}

void params_rule(const std::string& flag, const std::string& text, V& v) {
  const uint64_t n = count(flag, text, k_max_parameters);
  // "--params 7" is 7 parameters: every GPU fits it, so a script would read "fits" for 7B mistyped.
  // Refused below 1,000 when written as bare digits; a model that small is written 7e0.
  if (n < 1000 && bare_digits(text))
    throw Error(flag, "\"" + text + "\" is " + text + " parameter" + (n == 1 ? "" : "s") + "; did you mean " +
                          text + "B? (expected e.g. 7B, 7e9, 125M; a model this small: " + text + "e0)");
  v.params = n;
}

void mlp_rule(const std::string& flag, const std::string& text, V& v) {
  v.mlp = parse_widths(flag, text);
  v.mlp_text = text;
}

void family_rule(const std::string& flag, const std::string& text, V& v) {
  if (text != "gpt2" && text != "llama" && text != "bert")
    throw Error(flag, "\"" + text + "\" is not a family (expected gpt2, llama or bert)");
  v.family = text;
}

void precision_rule(const std::string& flag, const std::string& text, V& v) {
  if (text.empty()) return;  // the stored format of the weights, as when not given
  v.precision = parse_recipe(flag, text);
}

void optimizer_rule(const std::string& flag, const std::string& text, V& v) {
  v.optimizer = parse_optimizer(flag, text);
}

void mode_rule(const std::string& flag, const std::string& text, V& v) {
  one_of(flag, text, {"train", "infer", "inference", "training"});
  v.mode = text == "infer" || text == "inference" ? Mode::infer : Mode::train;
}

void trainable_rule(const std::string& flag, const std::string& text, V& v) {
  v.trainable = parse_fraction(flag, text);
}

void lora_dtype_rule(const std::string& flag, const std::string& text, V& v) {
  one_of(flag, text, {"fp32", "base"});
  v.lora_fp32 = text == "fp32";
}

void lora_dropout_rule(const std::string& flag, const std::string& text, V& v) {
  const double p = parse_real(flag, text);
  if (!(p >= 0.0 && p < 1.0))
    throw Error(flag, "\"" + text + "\" is outside [0, 1) (expected a dropout probability, e.g. 0.05)");
  v.lora_dropout = p;
}

void quantize_rule(const std::string& flag, const std::string& text, V& v) {
  if (const LlamaFtype* f = find_llama_ftype(text)) {
    v.llama_ftype = f->id;
    v.quantize.reset();
    return;
  }
  v.quantize = find_quantize_format(flag, text).id;
  v.llama_ftype.reset();
}

void kv_format_rule(const std::string& flag, const std::string& text, V& v) {
  v.kv_format = find_storage_format(flag, text).id;
}

void lora_targets_rule(const std::string& flag, const std::string& text, V& v) {
  v.lora_targets = parse_lora_targets(flag, text, 0);
}

void activation_bytes_rule(const std::string& flag, const std::string& text, V& v) {
  v.activation_bytes_per_row = parse_size(flag, text);
  if (!*v.activation_bytes_per_row) throw Error(flag, "\"" + text + "\" must be at least 1");
}

void attention_rule(const std::string& flag, const std::string& text, V& v) {
  v.attention = parse_attention(flag, text);
}

void checkpointing_rule(const std::string& flag, const std::string& text, V& v) {
  v.checkpointing = parse_checkpointing(flag, text);
}

void device_rule(const std::string& flag, const std::string& text, V& v) {
  v.device = parse_device(flag, text);
}

void loss_rule(const std::string& flag, const std::string& text, V& v) { v.loss = parse_loss(flag, text); }

void framework_rule(const std::string& flag, const std::string& text, V& v) {
  v.framework = parse_framework(flag, text);
}

void zero_grad_rule(const std::string& flag, const std::string& text, V& v) {
  one_of(flag, text, {"none", "zeros"});
  v.grads_kept = text == "zeros";
}

void logits_rule(const std::string& flag, const std::string& text, V& v) {
  one_of(flag, text, {"last", "all"});
  v.all_logits = text == "all";
}

void optimizer_loop_rule(const std::string& flag, const std::string& text, V& v) {
  one_of(flag, text, {"foreach", "per-tensor", "fused"});
  v.optimizer_loop = text == "foreach" ? OptimizerLoop::foreach
                     : text == "fused" ? OptimizerLoop::fused
                                       : OptimizerLoop::per_tensor;
}

void overhead_rule(const std::string& flag, const std::string& text, V& v) {
  v.overhead = parse_size(flag, text);
}

void cuda_rule(const std::string& flag, const std::string& text, V& v) {
  v.cuda = parse_cuda_version(flag, text);
}

void torch_rule(const std::string& flag, const std::string& text, V& v) {
  v.torch = parse_torch_release(flag, text);
}

void transformers_rule(const std::string& flag, const std::string& text, V& v) {
  v.transformers = parse_transformers_release(flag, text);
}

void bitsandbytes_rule(const std::string& flag, const std::string& text, V& v) {
  v.bitsandbytes = parse_bitsandbytes_release(flag, text);
}

void module_loading_rule(const std::string& flag, const std::string& text, V& v) {
  v.cuda_module_loading = parse_module_loading(flag, text);
}

void gpus_rule(const std::string& flag, const std::string& text, V& v) {
  v.gpus_auto = text == "auto";
  if (!v.gpus_auto) v.gpus = count(flag, text, 1ull << 20);
}

void zero_rule(const std::string& flag, const std::string& text, V& v) {
  v.zero = parse_zero_stage(flag, text);
}

void fsdp_rule(const std::string& flag, const std::string& text, V& v) {
  v.fsdp = parse_fsdp_strategy(flag, text);
}

void offload_rule(const std::string& flag, const std::string& text, V& v) {
  v.offload = parse_offload(flag, text);
}

void grad_format_rule(const std::string& flag, const std::string& text, V& v) {
  v.grad_format = parse_grad_format(flag, text);
}

// A switch: the flag alone, or true/false in a plan file.
template <bool V::*Member>
void switch_rule(const std::string& flag, const std::string& text, V& v) {
  one_of(flag, text, {"true", "false"});
  v.*Member = text == "true";
}

const std::vector<OptionSpec>& table() {
  using F = Field;
  static const std::vector<OptionSpec> t = {
      {"--params", F::params, "Parameter count: 7e9, 7B, 6.74b, 125M (decimal: k 1e3, M 1e6, B 1e9, T 1e12)",
       params_rule},
      {"--model", F::model, "Model preset (see `memplan models`)", text_rule<&V::model>},
      {"--config", F::config, "Hugging Face config.json of the model", path_rule<&V::config>},
      {"--safetensors", F::safetensors, "A .safetensors file or a model directory (headers only)",
       path_rule<&V::safetensors>},
      {"--gguf", F::gguf, "A .gguf file (header only)", path_rule<&V::gguf>},
      {"--mlp", F::mlp, "Multilayer perceptron widths, e.g. 784,512,256,10", mlp_rule},
      {"--layers", F::layers, "Transformer layers", count_rule<&V::layers, arch_limit::k_layers>},
      {"--hidden", F::hidden, "Transformer hidden size", count_rule<&V::hidden, arch_limit::k_hidden>},
      {"--heads", F::heads, "Attention heads", count_rule<&V::heads, arch_limit::k_heads>},
      {"--kv-heads", F::kv_heads, "Key/value heads (grouped-query attention)",
       count_rule<&V::kv_heads, arch_limit::k_heads>},
      {"--intermediate", F::intermediate, "MLP inner width",
       count_rule<&V::intermediate, arch_limit::k_intermediate>},
      {"--vocab", F::vocab, "Vocabulary size", count_rule<&V::vocab, arch_limit::k_vocab>},
      {"--family", F::family, "Block layout of an architecture given by flags", family_rule},
      {"--tensors", F::tensors, "Number of parameter tensors (Adam keeps a 4-byte step per tensor)",
       count_rule<&V::tensors, (1ull << 32)>},
      {"--precision", F::precision,
       "fp32, fp16, bf16, amp-fp16, amp-bf16, mixed-fp16, mixed-bf16, or bytes per number", precision_rule},
      {"--optimizer", F::optimizer,
       "none, sgd, sgd-momentum, adam, adamw(-hf), adagrad, rmsprop, lion, adamw-8bit, adafactor, "
       "paged-adamw(-8bit), or copies",
       optimizer_rule},
      {"--mode", F::mode, "Training (default) or inference", mode_rule},
      {"--trainable", F::trainable, "Share of parameters trained, in (0, 1] (LoRA: e.g. 0.002 or 0.2%)",
       trainable_rule},
      {"--quantize", F::quantize,
       "Frozen-weight format: int8, int4, nf4, nf4-dq, fp8, gptq-4bit, awq-4bit, or a llama.cpp type "
       "(q4_k_m, q8_0, ...)",
       quantize_rule},
      {"--lora", F::lora, "LoRA rank: train adapters only, base weights frozen (with --quantize nf4: QLoRA)",
       count_rule<&V::lora, (1ull << 20)>},
      {"--lora-targets", F::lora_targets,
       "Matrices with LoRA adapters: q,k,v,o,gate,up,down, c_attn, all (default q,v)", lora_targets_rule},
      {"--batch", F::batch, "Micro-batch size in digits (default 1; no k suffix)",
       batch_rule<&V::batch, (1ull << 40)>},
      {"--seq", F::seq, "Sequence length in tokens (k = 1,024: 8k = 8,192, 128k = 131,072)",
       token_rule<&V::seq, (1ull << 32)>},
      {"--activation-bytes-per-row", F::activation_bytes_per_row, "Measured activation bytes per batch row",
       activation_bytes_rule},
      {"--attention", F::attention,
       "eager (keeps s x s scores; also math) or sdpa (fused; also flash, fused)", attention_rule},
      {"--checkpointing", F::checkpointing, "Recompute activations in backward (full: ~30% more compute)",
       checkpointing_rule},
      {"--kv-format", F::kv_format, "KV-cache format for inference (default: the activation format)",
       kv_format_rule},
      {"--overhead", F::overhead,
       "Per-process overhead on every GPU (default: the CUDA context predicted for each GPU)", overhead_rule},
      {"--cuda", F::cuda,
       "CUDA version of the run (default 13.0, torch 2.11/2.12 wheels): before 11.7 kernels load eagerly",
       cuda_rule},
      {"--cuda-module-loading", F::cuda_module_loading,
       "CUDA_MODULE_LOADING (default lazy from CUDA 11.7, eager before)", module_loading_rule},
      {"--torch", F::torch,
       "PyTorch release of the step (default 2.11); older ones change the defaults: before 1.11 softmax "
       "keeps its input, before 1.13 --cuda 11.3 (eager kernels), before 2.0 eager attention, --zero-grad "
       "zeros, --optimizer-loop per-tensor",
       torch_rule},
      {"--gpu", F::gpu,
       "GPUs: preset ids or aliases, sizes (12GiB, 24GB:bf16, 16GiB:8.9), all, local, cuda or cuda:N",
       text_rule<&V::gpu>},
      {"--gpus", F::gpus, "Number of GPUs the run spans (world size), or auto: the smallest that fits",
       gpus_rule},
      {"--nodes", F::nodes, "Nodes the GPUs are spread over (default 1)",
       count_rule<&V::nodes, (1ull << 16)>},
      {"--gpus-per-node", F::gpus_per_node, "GPUs per node for --gpus auto (default 8)",
       count_rule<&V::gpus_per_node, 1024>},
      {"--zero", F::zero, "DeepSpeed ZeRO stage 0-3", zero_rule},
      {"--fsdp", F::fsdp, "PyTorch FSDP: no-shard, shard-grad-op, full-shard or hybrid-shard", fsdp_rule},
      {"--offload", F::offload, "CPU offload: none, optimizer or parameters", offload_rule},
      {"--tp", F::tp, "Tensor-parallel size", count_rule<&V::tp, (1ull << 16)>},
      {"--pp", F::pp, "Pipeline-parallel stages", count_rule<&V::pp, (1ull << 16)>},
      {"--dp", F::dp, "Data-parallel size (default gpus / (tp x pp))", count_rule<&V::dp, (1ull << 20)>},
      {"--virtual-stages", F::virtual_stages, "Interleaved pipeline: model chunks per stage",
       count_rule<&V::virtual_stages, 1024>},
      {"--micro-batches", F::micro_batches, "Micro-batches per step in the pipeline",
       count_rule<&V::micro_batches, (1ull << 20)>},
      {"--grad-format", F::grad_format,
       "Gradient buffers of mixed recipes: half (16 B/param), fp32 (18) or half+fp32 (20)", grad_format_rule},
      {"--largest-layer", F::largest_layer, "Parameters of the largest layer (ZeRO-3/FSDP gather unit)",
       count_rule<&V::largest_layer, (1ull << 50)>},
      {"--prefetch", F::prefetch, "ZeRO-3/FSDP layers gathered ahead (default 1)",
       count_rule<&V::prefetch, 1024, false>},
      {"--batchnorm", F::batchnorm,
       "The MLP has BatchNorm after each hidden layer (accumulation then differs from a large batch)",
       switch_rule<&V::batchnorm>, true},
      {"--sequence-parallel", F::sequence_parallel, "Megatron sequence parallelism (with --tp)",
       switch_rule<&V::sequence_parallel>, true},
      {"--wired-limit-mb", F::wired_limit_mb,
       "Apple silicon: the GPU wired-memory limit in MiB, as set with sysctl iogpu.wired_limit_mb",
       count_rule<&V::wired_limit_mb, (1ull << 24)>},
      {"--images", F::images, "Vision-language models: images per sequence (their tokens join --seq)",
       count_rule<&V::images, (1ull << 20)>},
      {"--image-size", F::image_size, "Vision-language models: image side in pixels",
       count_rule<&V::image_size, (1ull << 20)>},
      {"--device", F::device, "What runs the step: cuda (torch 2, default) or cpu (torch 1.13's rules)",
       device_rule},
      {"--loss", F::loss,
       "Causal LM loss: plain (HF: fp32 logits), chunked (Lit-GPT, torchtune), fused (Liger) or logprob "
       "(TRL's "
       "fused LM head)",
       loss_rule},
      {"--grad-accum", F::grad_accum, "Micro-batches per optimizer step (gradients stay alive across them)",
       count_rule<&V::grad_accum, (1ull << 20)>},
      {"--zero-grad", F::zero_grad,
       "none (set_to_none, torch >= 2's default) or zeros (torch < 2: gradients stay allocated)",
       zero_grad_rule},
      {"--optimizer-loop", F::optimizer_loop,
       "The optimizer step's temporaries: foreach (torch >= 2 on CUDA), per-tensor (torch 1.13, "
       "transformers.AdamW) or fused (fused=True, Trainer's adamw_torch_fused: none)",
       optimizer_loop_rule},
      {"--assume-llama", F::assume_llama,
       "Count a config.json of an unknown model_type as a llama-style decoder (the output says so)",
       switch_rule<&V::assume_llama>, true},
      {"--prefill-chunk", F::prefill_chunk,
       "Inference: tokens per prefill pass (default 2048, as vLLM and llama.cpp; --logits all: 0; 0: the "
       "whole batch; "
       "2k = 2,048)",
       token_rule<&V::prefill_chunk, (1ull << 32), false>},
      {"--logits", F::logits,
       "Inference: logits of the last position of each sequence (generation: generate(), vLLM, "
       "llama.cpp; default) or of all positions (a plain forward: scoring, perplexity)",
       logits_rule},
      {"--lora-dtype", F::lora_dtype,
       "LoRA adapters in fp32 (peft's default: each adapted input cast to fp32) or the model's format "
       "(base, as Lit-GPT)",
       lora_dtype_rule},
      {"--lora-dropout", F::lora_dropout,
       "LoRA dropout probability in [0, 1) (default 0, peft's; keeps a mask and the dropped copy)",
       lora_dropout_rule},
      {"--keep-logits", F::keep_logits,
       "The loop keeps the logits through backward (nanoGPT, Lit-GPT; default: only the loss, as HF "
       "Trainer)",
       switch_rule<&V::keep_logits>, true},
      {"--framework", F::framework,
       "What runs the step, with its defaults (the output names each): hf (transformers + peft in a loop "
       "of your own, default), trainer, trl, axolotl, llamafactory, torchtune, unsloth, litgpt (Lit-GPT "
       "8641822 on Fabric 2.1, torch 2.1)",
       framework_rule},
      {"--transformers", F::transformers,
       "transformers release of the model's code (default 5.24); older ones keep what they kept: the "
       "loss's logits in the model's format (GPT-2, OPT before 4.48, GPT-NeoX before 4.49), a shifted "
       "copy before 4.49, OPT's and GPT-NeoX's eager softmax, eager where sdpa did not exist yet",
       transformers_rule},
      {"--bitsandbytes", F::bitsandbytes,
       "bitsandbytes release of the 4-bit layers (QLoRA; default 0.50.2): before 0.43.2 each 4-bit "
       "matmul keeps its input for backward",
       bitsandbytes_rule},
      {"--train-vision", F::train_vision,
       "With --images: the vision tower trains too, keeping its activations (default frozen, as LLaVA "
       "and LoRA recipes)",
       switch_rule<&V::train_vision>, true},
      {"--expandable-segments", F::expandable_segments,
       "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (torch >= 2.1): one growing segment per pool, "
       "less fragmentation",
       switch_rule<&V::expandable_segments>, true},
  };
  return t;
}

}  // namespace

const std::vector<OptionSpec>& plan_options() { return table(); }

const OptionSpec* option_for_key(const std::string& key) {
  for (const OptionSpec& o : table())
    if (key == field_key(o.field)) return &o;
  return nullptr;
}

void parse_option(const OptionSpec& option, const std::string& text, PlanValues& values) {
  // The rules name the flag (the library's parsers take a subject); the error leaves tagged with
  // the field, as the library's own errors are.
  try {
    option.parse(option.flag, text, values);
  } catch (const OverflowError& e) {
    if (e.field() != Field::none || e.subject() != option.flag) throw;
    throw OverflowError(option.field, e.message());
  } catch (const Error& e) {
    if (e.field() != Field::none || e.subject() != option.flag) throw;
    throw Error(option.field, e.message());
  }
}

std::string flag_for(Field field) {
  for (const OptionSpec& o : table())
    if (o.field == field) return o.flag;
  std::string flag = std::string("--") + field_key(field);
  for (char& c : flag)
    if (c == '_') c = '-';
  return flag;
}

std::string with_flags(const std::string& text) { return expand_field_refs(text, flag_for); }

std::string error_text(const Error& e) {
  const std::string subject = e.field() == Field::none ? e.subject() : flag_for(e.field());
  const std::string message = with_flags(e.message());
  return subject.empty() ? message : subject + ": " + message;
}

}  // namespace memplan::cli
