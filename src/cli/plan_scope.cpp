#include "cli/plan_scope.hpp"

#include <algorithm>
#include <initializer_list>
#include <vector>

namespace memplan::cli {
namespace {

using F = Field;

// The model source and its architecture flags, which every engine loads, and `more`.
std::vector<Field> model_and(std::initializer_list<Field> more) {
  std::vector<Field> fields = {F::params, F::model,  F::config,      F::safetensors, F::gguf,
                               F::layers, F::hidden, F::heads,       F::kv_heads,    F::intermediate,
                               F::vocab,  F::family, F::assume_llama};
  fields.insert(fields.end(), more);
  return fields;
}

// serve: what vllm_budget / sglang_budget read from the request (core/serving/): the weights
// (format, quantisation), the KV-cache format, the images of a vision-language model, the GPU,
// --gpus auto and tp x pp (vLLM's split), and the non-torch memory (--overhead). Batch, sequence,
// optimizer, LoRA, checkpointing and ZeRO/FSDP describe a training step the engines do not run
// (--max-num-seqs and --max-model-len set the engine's own batch and context).
const std::vector<Field> k_serving = model_and({F::precision, F::quantize, F::kv_format, F::images,
                                                F::image_size, F::gpu, F::gpus, F::tp, F::pp, F::overhead});

// gguf-fit: llama.cpp takes the weights from the GGUF file type (--quantize q4_k_m), its KV cache
// and batch from its own flags (--cache-type-k, --ctx-size, --ubatch-size); the GPUs, Apple's wired
// limit (llama.cpp runs on Metal) and the per-process reserve (--overhead, else the CUDA context of
// --cuda) are memplan's.
const std::vector<Field> k_llamacpp =
    model_and({F::quantize, F::gpu, F::overhead, F::cuda, F::cuda_module_loading, F::wired_limit_mb});

bool listed(const std::vector<Field>& fields, Field f) {
  return std::find(fields.begin(), fields.end(), f) != fields.end();
}

}  // namespace

bool scope_takes(PlanScope scope, Field field) {
  switch (scope) {
    case PlanScope::torch_step:
      return true;
    case PlanScope::serving:
      return listed(k_serving, field);
    case PlanScope::llamacpp:
      return listed(k_llamacpp, field);
  }
  return false;
}

}  // namespace memplan::cli
