#pragma once
// vLLM's start-up memory budget, as the engine computes it: vLLM 0.10.1's V1 engine (the default;
// vllm_v1.hpp and vllm_kv_groups.hpp say where it differs) or v0.6.4.post1's V0 engine (the rule
// below:
// vllm/worker/worker.py determine_num_available_blocks, vllm/worker/cache_engine.py
// get_cache_block_size, vllm/config.py SchedulerConfig, vllm/worker/model_runner.py profile_run):
//
//   KV memory = gpu_memory_utilization x total - weights - activation peak - non-torch memory
//   GPU blocks = floor(KV memory / block bytes),
//   block bytes = block_size x 2 (k, v) x layers x kv_heads per GPU x head_dim x bytes
//
// The activation peak is predicted, not measured: the profile run pushes max_num_batched_tokens
// tokens through the model in one step, and the largest live set is one decoder layer's MLP
// (gate_up out, activation out: 3 x intermediate per token for a gated MLP) beside the layer
// input, the residual and the attention output (3 x hidden per token). V1 then warms the sampler
// up over min(max_num_seqs, tokens) requests x vocab (the release's bytes per logit,
// vllm_versions.hpp) while the hidden states are alive: the peak is the larger of the two. CUDA
// graphs are captured after the KV cache up to 0.19 (from the 1 - utilization margin); from 0.20
// their estimate is subtracted first. Each release's differences are rows of vllm_versions.hpp.
#include <cstdint>
#include <optional>
#include <string>

#include <memplan/request.hpp>
#include "core/parallel/inference_split.hpp"
#include "core/serving/vllm_cross_attention.hpp"
#include "core/serving/vllm_kv_groups.hpp"
#include "core/serving/vllm_non_torch.hpp"
#include "core/serving/vllm_v1.hpp"
#include "core/serving/vllm_versions.hpp"

namespace memplan {

// The engine settings that change the budget (defaults: vllm_budget resolves the zeros by the
// engine's rules).
struct VllmSettings {
  double gpu_memory_utilization = 0.9;
  uint64_t block_size = 16;
  uint64_t max_num_seqs = 256;          // V0's default; V1's by the GPU (vllm_v1.hpp)
  uint64_t max_model_len = 0;           // 0 = the model's max_position_embeddings
  uint64_t max_num_batched_tokens = 0;  // 0 = the engine's default (below)
  std::optional<bool> chunked_prefill;  // none = the engine's default: on above 32,768 tokens
  uint64_t tp = 1;
  uint64_t pp = 1;
  std::optional<uint64_t> non_torch_bytes;  // the user's figure (--overhead); none = predicted
  VllmRules rules = vllm_newest_rules();    // the release's rules (vllm_versions.hpp)
  std::string requested_version;            // the user's --vllm-version (empty: the default)
  bool v1 = true;                           // rules.v1, set by vllm_budget
  bool max_num_seqs_given = false;          // max_num_seqs is the user's, not a default
  std::string device_name;                  // the GPU's name: V1's defaults test it for "a100"
  VllmEntry entry = VllmEntry::serve;       // V1's defaults differ for vllm serve and vllm.LLM
};

// V0's defaults.
inline constexpr uint64_t k_vllm_chunked_prefill_above = 32768;  // EngineArgs: long contexts chunk
inline constexpr uint64_t k_vllm_chunked_batched_tokens = 512;   // SchedulerConfig with chunked prefill
inline constexpr uint64_t k_vllm_min_batched_tokens = 2048;      // SchedulerConfig: max(max_model_len, 2048)

// Every number of the budget, for one GPU (the most-loaded one with tp/pp).
struct VllmBudget {
  VllmSettings settings;  // with the defaults resolved
  bool chunked_prefill = false;
  uint64_t total_bytes = 0;         // the GPU's memory as torch.cuda.mem_get_info reports it
  uint64_t usable_bytes = 0;        // utilization x total
  uint64_t model_weight_bytes = 0;  // the whole model's weights
  uint64_t weight_bytes = 0;        // on this GPU, parameters plus the rotary cache
  uint64_t parameter_bytes = 0;     // weights without the rotary cache
  uint64_t rotary_cache_bytes = 0;  // cos/sin cache: max_position x head_dim x weight bytes
  uint64_t rotary_positions = 0;
  uint64_t profile_tokens = 0;            // max_num_batched_tokens, the profile run's tokens
  uint64_t activation_per_token = 0;      // elements per token live at the peak
  uint64_t activation_bytes = 0;          // predicted PyTorch activation peak: max(forward, sampler)
  uint64_t forward_activation_bytes = 0;  // one decoder layer's widest moment over the profile tokens
  uint64_t vocab = 0;                     // the logits' width (the model's vocabulary)
  uint64_t sampler_requests = 0;          // V1's dummy sampler run: min(max_num_seqs, tokens)
  uint64_t sampler_bytes = 0;             // requests x vocab x the release's bytes per logit
  uint64_t sampler_hidden_bytes = 0;      // the profile run's hidden states, alive beside the sampler
  bool sampler_peak = false;              // the sampler, not the forward, sets the peak
  uint64_t activation_element_bytes = 2;
  uint64_t non_torch_bytes = 0;            // CUDA context (and NCCL): predicted, or the user's figure
  bool non_torch_given = false;            // non_torch_bytes is the user's figure
  VllmNonTorch non_torch;                  // the predicted parts, with their sources
  uint64_t allreduce_bytes = 0;            // custom all-reduce buffers subtracted (tp in {2, 4, 6, 8})
  bool allreduce_before_snapshot = false;  // 0.11 on: the buffers predate the snapshot (not subtracted)
  uint64_t cuda_graph_bytes = 0;    // 0.20 on: the CUDA-graph estimate subtracted; else 0 (after the KV)
  uint64_t cuda_graph_sizes = 0;    // capture sizes per mode (FULL and PIECEWISE)
  uint64_t cuda_graph_largest = 0;  // the largest capture size
  int64_t kv_bytes = 0;             // what is left for the KV cache (negative: nothing)
  uint64_t kv_bytes_per_token = 0;  // on this GPU
  uint64_t kv_element_bytes = 2;
  uint64_t block_bytes = 0;  // V0: every layer's block; V1: the layers of one group
  uint64_t gpu_blocks = 0;
  uint64_t kv_tokens = 0;                 // gpu_blocks x block_size (V1 with window layers: per group)
  double max_concurrency = 0.0;           // vLLM's log line (V0: kv_tokens / max_model_len)
  std::optional<VllmKvGroups> kv_groups;  // V1: how the layers were grouped (vllm_kv_groups.hpp)
  VllmKvShape kv_shape;                   // V1: full and window layers of this GPU
  bool window_layers_full = false;        // window layers kept at full length (V0, pp, chunked)
  uint64_t largest_model_len = 0;         // kv_tokens: the longest max_model_len that fits
  bool fits = false;                      // one max_model_len request fits in the cache
  uint64_t head_dim = 0;
  uint64_t model_context = 0;  // the model's max_position_embeddings (0 unknown)
  InferenceSplit split;
  std::optional<VllmCrossAttention> cross;  // mllama with images: the requests' cross-attention blocks
  std::string version;                      // the vLLM version whose rules apply
};

// The CUDA graphs vLLM captures (0.20 on: profiled before the KV cache): sizes per mode, the largest.
struct VllmCudaGraphs {
  uint64_t sizes = 0;
  uint64_t largest = 0;
};
VllmCudaGraphs vllm_cuda_graphs(uint64_t max_num_seqs, uint64_t max_num_batched_tokens);

// The budget of `r` (model, recipe, quantize, kv format) on a GPU
// whose total memory is `gpu_total_bytes`. Error on a model without an architecture.
VllmBudget vllm_budget(const EstimateRequest& r, uint64_t gpu_total_bytes, const VllmSettings& s);

}  // namespace memplan
