#pragma once
// The table of the planning options (estimate, fit, max-batch, advise): for each, its flag, the
// request field it sets (whose key names it in plan files and JSON "inputs"), its help and the
// one rule that parses it. A value given as a flag and the same value in a --plan file go
// through the same rule into the same typed PlanValues, and from there into the request.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <memplan/bitsandbytes_release.hpp>
#include <memplan/compute.hpp>
#include <memplan/error.hpp>
#include <memplan/lora.hpp>
#include <memplan/optimizer.hpp>
#include <memplan/recipe.hpp>
#include <memplan/request.hpp>
#include <memplan/sharding.hpp>
#include <memplan/storage_format.hpp>
#include <memplan/torch_release.hpp>
#include <memplan/transformers_release.hpp>

namespace memplan::cli {

// Every planning option, parsed and typed; unset = not given.
struct PlanValues {
  // the model source (exactly one) and its architecture flags
  std::optional<uint64_t> params;
  std::optional<std::string> model, config, safetensors, gguf;  // a preset id, file paths
  std::optional<std::vector<uint64_t>> mlp;
  std::optional<std::string> mlp_text;  // as given, for the model's name
  std::optional<uint64_t> layers, hidden, heads, kv_heads, intermediate, vocab;
  std::optional<std::string> family;  // gpt2 | llama | bert
  std::optional<uint64_t> tensors;
  bool batchnorm = false;
  // the recipe and the run
  std::optional<Recipe> precision;
  std::optional<Optimizer> optimizer;
  std::optional<Mode> mode;
  std::optional<double> trainable;
  std::optional<StorageFormatId> quantize;
  std::optional<uint32_t> llama_ftype;      // --quantize q4_k_m: a llama.cpp file type
  std::optional<uint64_t> lora;             // rank
  std::optional<LoraTargets> lora_targets;  // rank 0 until --lora sets it
  std::optional<uint64_t> batch, seq, activation_bytes_per_row;
  std::optional<Attention> attention;
  std::optional<Checkpointing> checkpointing;
  std::optional<StorageFormatId> kv_format;
  std::optional<uint64_t> overhead;
  std::optional<CudaVersion> cuda;
  std::optional<ModuleLoading> cuda_module_loading;
  std::optional<TorchRelease> torch;                // the PyTorch release of the step
  std::optional<TransformersRelease> transformers;  // the transformers release of the model's code
  std::optional<BitsandbytesRelease> bitsandbytes;  // the bitsandbytes release of the 4-bit layers
  // the GPUs and the layout
  std::optional<std::string> gpu;  // resolved against the presets (and the probe) later
  std::optional<uint64_t> gpus;    // unset with gpus_auto
  bool gpus_auto = false;
  std::optional<uint64_t> nodes, gpus_per_node;
  std::optional<ShardingStrategy> zero, fsdp;
  std::optional<Offload> offload;
  std::optional<uint64_t> tp, pp, dp, virtual_stages, micro_batches;
  std::optional<GradFormat> grad_format;
  std::optional<uint64_t> largest_layer, prefetch;
  bool sequence_parallel = false;
  std::optional<uint64_t> wired_limit_mb;  // Apple: sysctl iogpu.wired_limit_mb
  // vision-language models
  std::optional<uint64_t> images, image_size;
  std::optional<Device> device;  // what runs the step: cuda (torch 2) or cpu (torch 1.13)
  std::optional<Loss> loss;      // plain, chunked or fused cross-entropy
  std::optional<uint64_t> grad_accum;
  std::optional<bool> grads_kept;  // --zero-grad zeros
  std::optional<OptimizerLoop> optimizer_loop;
  bool assume_llama = false;  // an unknown config.json model_type counted as llama-style
  std::optional<uint64_t> prefill_chunk;
  std::optional<bool> all_logits;      // --logits all
  std::optional<bool> lora_fp32;       // --lora-dtype fp32 (true) or base (false)
  std::optional<double> lora_dropout;  // in [0, 1)
  bool keep_logits = false;            // the training loop keeps the logits through backward
  bool expandable_segments = false;    // PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  std::optional<Framework> framework;  // hf (default) or litgpt
  bool train_vision = false;           // the vision tower trains (default frozen)
  bool offloaded_checkpoints = false;  // set by a profile (unsloth), never by a flag
};

// One option: its flag, its field (plan-file key = field_key(field)), its help, and its rule.
// `parse` reads `text` into `values`; errors name `flag`.
struct OptionSpec {
  const char* flag;  // "--kv-heads"
  Field field;       // Field::kv_heads: key "kv_heads"
  const char* help;
  void (*parse)(const std::string& flag, const std::string& text, PlanValues& values);
  bool is_switch = false;  // a flag without a value (--batchnorm); plan files give true/false
};

// The table, in help order.
const std::vector<OptionSpec>& plan_options();

// The option whose plan-file key is `key`, or nullptr.
const OptionSpec* option_for_key(const std::string& key);

// Parses `text` for the option with plan-file key `key` into `values` (the one rule).
void parse_option(const OptionSpec& option, const std::string& text, PlanValues& values);

// The flag a field is given by: "--kv-heads" for Field::kv_heads, from the table; a command's own
// option (ladder's --min, sweep's --rows-per-step) by its key with '-' for '_'.
std::string flag_for(Field field);

// `text` (a core message or note) with each field reference ("{field:pp}") as its flag ("--pp").
std::string with_flags(const std::string& text);

// The text of an error as the command line shows it: a field's error names its flag
// ("--trainable: must be in (0, 1]"); any other error is its subject and message. Field
// references in the message read as flags.
std::string error_text(const Error& e);

}  // namespace memplan::cli
