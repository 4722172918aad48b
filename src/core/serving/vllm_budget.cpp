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

VllmCudaGraphs vllm_cuda_graphs(uint64_t max_num_seqs, uint64_t max_num_batched_tokens) {
  // vllm/config/vllm.py: max_cudagraph_capture_size = min(max_num_seqs x 2, 512), at most the
  // step's tokens; sizes [1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16) up to it.
  const uint64_t cap = std::min(std::min<uint64_t>(2 * max_num_seqs, 512), max_num_batched_tokens);
  VllmCudaGraphs g;
  auto take = [&](uint64_t size) {
    if (size > cap) return;
    ++g.sizes;
    g.largest = size;
  };
  for (uint64_t x : {1, 2, 4}) take(x);
  for (uint64_t x = 8; x < 256; x += 8) take(x);
  for (uint64_t x = 256; x <= 512; x += 16) take(x);
  return g;
}

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
  const VllmRules& rules = s.rules;
  s.v1 = rules.v1;
  b.version = rules.label;
  if (s.v1) {
    // V1: chunked prefill always, the step's tokens and sequences by the GPU's memory.
    if (s.chunked_prefill == false)
      throw Error("chunked_prefill", "off is not available with the V1 engine (it always chunks)");
    b.chunked_prefill = true;
    const VllmV1Defaults d = vllm_v1_defaults(gpu_total_bytes, s.device_name, s.entry,
                                              {rules.a100_small_defaults, rules.tier_160gib});
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
  b.forward_activation_bytes =
      bytes_for(mul_vllm(b.profile_tokens, b.activation_per_token), act, "activation peak");
  b.activation_bytes = b.forward_activation_bytes;
  // V1's dummy sampler run (gpu_model_runner.py _dummy_sampler_run): min(max_num_seqs, tokens)
  // requests' logits over the whole vocabulary (gathered on every rank at tp > 1), beside the
  // profile run's hidden states; the forward's activations are freed by then.
  b.vocab = arch.vocab;
  if (rules.sampler_bytes_per_logit && arch.vocab) {
    b.sampler_requests = std::min(s.max_num_seqs, s.max_num_batched_tokens);
    b.sampler_bytes = mul_vllm(mul_vllm(b.sampler_requests, arch.vocab), rules.sampler_bytes_per_logit);
    b.sampler_hidden_bytes = bytes_for(mul_vllm(b.profile_tokens, arch.hidden), act, "hidden states");
    const uint64_t sampler = checked_add(b.sampler_bytes, b.sampler_hidden_bytes, "sampler peak");
    b.sampler_peak = sampler > b.forward_activation_bytes;
    b.activation_bytes = std::max(b.forward_activation_bytes, sampler);
  }

  b.total_bytes = gpu_total_bytes;
  b.usable_bytes = static_cast<uint64_t>(static_cast<double>(gpu_total_bytes) * s.gpu_memory_utilization);
  b.non_torch = vllm_non_torch(s.tp);
  b.non_torch_given = s.non_torch_bytes.has_value();
  // The CUDA context counts where the release measures from an empty device (0.6 V0, 0.8 V1);
  // elsewhere the snapshot is taken after it and only what grows after is subtracted.
  b.non_torch_bytes = s.non_torch_bytes.value_or(rules.context_in_non_torch ? b.non_torch.context_bytes : 0);
  b.allreduce_bytes = rules.comm_in_non_torch ? b.non_torch.allreduce_bytes : 0;
  b.allreduce_before_snapshot = !rules.comm_in_non_torch && b.non_torch.allreduce_bytes;
  if (rules.cuda_graphs_before_kv) {
    const VllmCudaGraphs g = vllm_cuda_graphs(s.max_num_seqs, s.max_num_batched_tokens);
    b.cuda_graph_sizes = g.sizes;
    b.cuda_graph_largest = g.largest;
    // profile_cudagraph_memory: the first (largest) capture's memory, in 2 MiB segments, plus at
    // least 1 MiB for each further graph of each mode (FULL and PIECEWISE).
    const uint64_t first = bytes_for(mul_vllm(g.largest, b.activation_per_token), act, "CUDA graphs");
    const uint64_t seg = 2ull << 20;
    b.cuda_graph_bytes =
        checked_add(ceil_div(first, seg) * seg, mul_vllm(2 * (g.sizes - 1), 1ull << 20), "CUDA graphs");
  }
  const uint64_t used =
      checked_add(checked_add(checked_add(b.weight_bytes, b.activation_bytes, "budget"),
                              checked_add(b.non_torch_bytes, b.allreduce_bytes, "budget"), "budget"),
                  b.cuda_graph_bytes, "budget");
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
