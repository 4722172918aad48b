// vLLM's start-up budget: weights, the profile run's activation peak, non-torch memory, then
// KV-cache blocks of block_size tokens (see vllm_budget.hpp for the engine code it follows).
#include "core/serving/vllm_budget.hpp"

#include <algorithm>
#include "core/serving/model_weights.hpp"

#include <memplan/error.hpp>
#include <memplan/estimate.hpp>
#include "core/base/checked.hpp"
#include "core/models/arch_layout.hpp"

namespace memplan {
namespace {

uint64_t mul_vllm(uint64_t a, uint64_t b) { return checked_mul(a, b, "serving bytes"); }

}  // namespace

VllmBudget vllm_budget(const EstimateRequest& r, uint64_t gpu_total_bytes, const VllmSettings& in) {
  if (!r.model.arch)
    throw Error(Field::model, "serving needs the model's architecture (a preset or a config.json)");
  if (!(in.gpu_memory_utilization > 0.0 && in.gpu_memory_utilization <= 1.0))
    throw Error("gpu_memory_utilization", "must be in (0, 1]");
  if (in.block_size == 0) throw Error("block_size", "must be at least 1");
  if (in.max_num_seqs == 0) throw Error("max_num_seqs", "must be at least 1");
  TransformerArch arch = *r.model.arch;
  apply_layout_defaults(arch);

  VllmBudget b;
  b.settings = in;
  b.head_dim = arch.resolved_head_dim();
  b.model_context = arch.max_positions;
  VllmSettings& s = b.settings;
  if (s.max_model_len == 0) s.max_model_len = arch.max_positions;
  if (s.max_model_len == 0)
    throw Error("max_model_len", "the model does not say its context length; give one");
  b.version = s.v1 ? k_vllm_v1_version : k_vllm_version;
  if (s.v1) {
    // V1: chunked prefill always, the step's tokens and sequences by the GPU's memory.
    if (s.chunked_prefill == false)
      throw Error("chunked_prefill", "off is not available with the V1 engine (it always chunks)");
    b.chunked_prefill = true;
    const VllmV1Defaults d = vllm_v1_defaults(gpu_total_bytes, s.device_name, s.entry);
    if (s.max_num_batched_tokens == 0) s.max_num_batched_tokens = d.max_num_batched_tokens;
    // The default never exceeds the step's tokens (arg_utils.py: min(default, max_num_batched_tokens)).
    if (!s.max_num_seqs_given) s.max_num_seqs = std::min(d.max_num_seqs, s.max_num_batched_tokens);
  }
  if (!s.v1) b.chunked_prefill = s.chunked_prefill.value_or(s.max_model_len > k_vllm_chunked_prefill_above);
  if (s.max_num_batched_tokens == 0)
    s.max_num_batched_tokens = b.chunked_prefill ? k_vllm_chunked_batched_tokens
                                                 : std::max(s.max_model_len, k_vllm_min_batched_tokens);
  // SchedulerConfig._verify_args (both engines): every sequence of a step gets at least a token.
  if (s.max_num_batched_tokens < s.max_num_seqs)
    throw Error("max_num_batched_tokens", "(" + std::to_string(s.max_num_batched_tokens) +
                                              ") is smaller than max_num_seqs (" +
                                              std::to_string(s.max_num_seqs) + "): vLLM refuses this");
  if (!b.chunked_prefill && s.max_num_batched_tokens < s.max_model_len)
    throw Error("max_num_batched_tokens",
                "(" + std::to_string(s.max_num_batched_tokens) + ") is smaller than max_model_len (" +
                    std::to_string(s.max_model_len) + ") without chunked prefill: vLLM refuses this");
  b.split = inference_split(r.model, s.tp, s.pp);

  // Weights: the model's bytes scaled to this GPU, plus the rotary cos/sin cache vLLM builds in
  // the model's dtype (max_position_embeddings x rotary dim).
  const ElementCost act = r.recipe.activations.cost;
  b.activation_element_bytes = act.den == 1 ? act.num : 2;
  b.model_weight_bytes = model_weight_bytes(r);
  b.parameter_bytes = weight_bytes_per_gpu(b.model_weight_bytes, r.model.parameters, b.split);
  if (arch.position_embedding == "rotary") {
    b.rotary_positions = arch.max_positions ? arch.max_positions : s.max_model_len;
    b.rotary_cache_bytes =
        bytes_for(mul_vllm(b.rotary_positions, arch.resolved_head_dim()), act, "rotary cache");
  }
  b.weight_bytes = checked_add(b.parameter_bytes, b.rotary_cache_bytes, "weight bytes");

  // The profile run's peak: max_num_batched_tokens tokens, one decoder layer's widest moment.
  b.profile_tokens = s.max_num_batched_tokens;
  const uint64_t stream = mul_vllm(3, arch.hidden);  // layer input, residual, attention output
  const uint64_t mlp = mul_vllm(arch.gated_mlp ? 3 : 2, b.split.intermediate_per_gpu);
  const uint64_t qkv =
      mul_vllm(b.split.heads_per_gpu + 2 * b.split.kv_heads_per_gpu, arch.resolved_head_dim());
  const uint64_t attn = qkv + mul_vllm(b.split.heads_per_gpu, arch.resolved_head_dim());
  b.activation_per_token = stream + std::max(mlp, attn);
  b.activation_bytes = bytes_for(mul_vllm(b.profile_tokens, b.activation_per_token), act, "activation peak");

  b.total_bytes = gpu_total_bytes;
  b.usable_bytes = static_cast<uint64_t>(static_cast<double>(gpu_total_bytes) * s.gpu_memory_utilization);
  b.non_torch = vllm_non_torch(s.tp);
  b.non_torch_given = s.non_torch_bytes.has_value();
  // V1 measures non-torch memory from a snapshot taken after the CUDA context: not subtracted.
  b.non_torch_bytes = s.non_torch_bytes.value_or(s.v1 ? 0 : b.non_torch.context_bytes);
  b.allreduce_bytes = b.non_torch.allreduce_bytes;
  const uint64_t used = checked_add(checked_add(b.weight_bytes, b.activation_bytes, "budget"),
                                    checked_add(b.non_torch_bytes, b.allreduce_bytes, "budget"), "budget");
  b.kv_bytes = static_cast<int64_t>(b.usable_bytes) - static_cast<int64_t>(used);

  // KV cache: a block holds block_size tokens of k and v for every layer of this GPU.
  const ElementCost kv = r.kv_format ? storage_format(*r.kv_format).cost : act;
  b.kv_element_bytes = kv.den == 1 ? kv.num : 2;
  b.kv_bytes_per_token = bytes_for(mul_vllm(mul_vllm(2, b.split.layers_per_gpu),
                                            mul_vllm(b.split.kv_heads_per_gpu, arch.resolved_head_dim())),
                                   kv, "KV bytes");
  b.block_bytes = mul_vllm(s.block_size, b.kv_bytes_per_token);
  const uint64_t kv_left = b.kv_bytes > 0 ? static_cast<uint64_t>(b.kv_bytes) : 0;
  const bool windows = arch.window_layers && arch.attention_window;
  b.window_layers_full = windows;
  if (s.v1) {
    // V1's KV-cache manager: window layers get groups of their own (vllm_kv_groups.hpp) unless
    // they are Llama 4's chunks (the manager is off for them by default in 0.10,
    // VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE) or the layers are split into stages
    // (each stage's own mix is not modelled: every layer full there, fewer tokens than vLLM's).
    VllmKvShape& k = b.kv_shape;
    k.block_size = s.block_size;
    k.max_num_batched_tokens = s.max_num_batched_tokens;
    k.page_bytes = b.block_bytes / b.split.layers_per_gpu;
    k.full_layers = b.split.layers_per_gpu;
    if (windows && !arch.chunked_attention && s.pp == 1) {
      k.window_layers = std::min(arch.window_layers, k.full_layers);
      k.full_layers -= k.window_layers;
      k.window = arch.attention_window;
      b.window_layers_full = false;
    }
    b.kv_groups = vllm_kv_groups(k, kv_left, s.max_model_len);
    b.block_bytes = b.kv_groups->block_bytes;
    b.gpu_blocks = b.kv_groups->num_blocks;
    b.kv_tokens = b.kv_groups->logged_tokens;
    b.max_concurrency = b.kv_groups->max_concurrency;
    const uint64_t cap = std::max(s.max_model_len, arch.max_positions);
    b.largest_model_len = vllm_kv_longest_len(k, kv_left, cap);
    b.fits = b.kv_bytes > 0 && b.kv_groups->needed_bytes <= kv_left;
  } else {
    b.gpu_blocks = kv_left / b.block_bytes;
    b.kv_tokens = mul_vllm(b.gpu_blocks, s.block_size);
    b.max_concurrency = static_cast<double>(b.kv_tokens) / static_cast<double>(s.max_model_len);
    b.largest_model_len = b.kv_tokens;
    b.fits = b.kv_tokens >= s.max_model_len;
  }
  b.cross = vllm_cross_attention(r, s.block_size, s.max_model_len, b.gpu_blocks);
  return b;
}

}  // namespace memplan
