#pragma once
// SGLang's start-up KV-cache budget, as the engine computes it (SGLang 0.5 series, after PR
// #10975 "General heuristics for --mem-fraction-static": python/sglang/srt/server_args.py
// _handle_gpu_memory_settings, python/sglang/srt/model_executor/model_runner.py
// init_torch_distributed / profile_max_num_token / init_memory_pool):
//
//   total  = free GPU memory once torch.distributed is up (before the weights): the GPU's
//            memory less the CUDA context and everything outside torch (NCCL, cuBLAS)
//   avail  = free memory after the weights = total - weights
//   rest   = avail - total x (1 - mem_fraction_static)
//   max_total_num_tokens = floor(rest / cell_size), cut to --max-total-tokens when given,
//            rounded down to a multiple of page_size
//   cell_size = kv_heads per GPU x head_dim x layers x 2 (k, v) x bytes   (MHA / GQA)
//             = (kv_lora_rank + qk_rope_head_dim) x layers x bytes        (MLA: one latent)
//
// The default mem_fraction_static reserves megabytes for what comes after the pool (activations
// of one chunked-prefill step, CUDA graphs, metadata): reserved = 512 + max(chunked_prefill_size,
// 2048) x 1.5 + cuda_graph_max_bs x 2 + tp x pp / 8 x 1024, at least 10 GiB above 60 GiB of GPU
// memory; mem_fraction_static = round((gpu_mem - reserved) / gpu_mem, 3), gpu_mem in MiB as
// nvidia-smi reports it. chunked_prefill_size and cuda_graph_max_bs default by GPU size.
// Before that PR (0.4 series) it was by tp alone: 0.88, 0.87 (tp >= 2), 0.85 (4), 0.81 (8),
// 0.79 (16).
#include <cstdint>
#include <optional>
#include <string>

#include <memplan/request.hpp>
#include "core/parallel/inference_split.hpp"

namespace memplan {

inline constexpr const char* k_sglang_version = "0.5 (server_args.py after PR #10975)";

// The engine settings that change the budget; 0 / none = SGLang's default.
struct SglangSettings {
  bool rule_0_4 = false;  // the 0.4 series' defaults (mem_fraction_static by tp alone)
  std::optional<double> mem_fraction_static;
  uint64_t chunked_prefill_size = 0;
  uint64_t cuda_graph_max_bs = 0;
  uint64_t max_total_tokens = 0;  // --max-total-tokens: a cap on the pool
  uint64_t context_length = 0;    // --context-length; 0 = the model's max_position_embeddings
  uint64_t page_size = 1;
  uint64_t tp = 1;
  uint64_t pp = 1;
  std::optional<uint64_t> non_torch_bytes;  // the user's figure (--overhead); none = the CUDA context
};

// chunked_prefill_size and cuda_graph_max_bs by GPU memory (MiB), as server_args.py buckets them.
struct SglangGpuDefaults {
  uint64_t chunked_prefill_size = 0;
  uint64_t cuda_graph_max_bs = 0;
  std::string bucket;  // "< 20 GiB (T4, 4080)", ...
};
SglangGpuDefaults sglang_gpu_defaults(uint64_t gpu_mem_mib, uint64_t tp);
// The 0.4 series (server_args.py __post_init__ before PR #10975): chunked_prefill_size 2048 below
// 25,000 MiB else 8192; cuda_graph_max_bs 8 (tp < 4) or 80 below 25,000 MiB, else 160.
SglangGpuDefaults sglang_gpu_defaults_0_4(uint64_t gpu_mem_mib, uint64_t tp);
// The 0.4 series' mem_fraction_static: 0.88, 0.87 from tp 2, 0.85 from 4, 0.81 from 8, 0.79 from 16.
double sglang_fraction_0_4(uint64_t tp);
inline constexpr const char* k_sglang_version_0_4 = "0.4 (server_args.py before PR #10975)";

// Every number of the budget, for one GPU (the most-loaded one with tp/pp).
struct SglangBudget {
  SglangSettings settings;  // with the defaults resolved
  bool mem_fraction_default = false;
  std::string gpu_bucket;
  uint64_t gpu_mem_mib = 0;      // the GPU's memory as nvidia-smi reports it (the rule's input)
  double reserved_mib = 0;       // the rule's reserve (when mem_fraction_static is the default)
  uint64_t gpu_total_bytes = 0;  // as torch reports it
  uint64_t non_torch_bytes = 0;  // CUDA context, NCCL, cuBLAS: outside SGLang's "total"
  uint64_t total_bytes = 0;      // SGLang's total_gpu_memory: free before the weights
  uint64_t model_weight_bytes = 0;
  uint64_t weight_bytes = 0;      // on this GPU ("mem usage" at "Load weight end"): the three below
  uint64_t parameter_bytes = 0;   // the parameters' bytes on this GPU
  uint64_t rotary_bytes = 0;      // the rotary cos/sin cache (max positions x head_dim, model dtype)
  uint64_t rounding_bytes = 0;    // PyTorch's caching allocator: each tensor of 10 MiB and more is
                                  // its own cudaMalloc, rounded up to 2 MiB (fused qkv, o, gate_up,
                                  // down, embedding, lm_head per GPU); 0 where not derived
  bool rounding_derived = false;  // a dense 16-bit model whose tensor shapes memplan knows
  uint64_t avail_bytes = 0;       // free after the weights ("avail mem" at "Load weight end")
  uint64_t margin_bytes = 0;      // total x (1 - mem_fraction_static)
  int64_t rest_bytes = 0;         // avail - margin: the pool (negative: nothing)
  bool mla = false;
  uint64_t cell_size = 0;      // bytes per token on this GPU
  uint64_t cell_elements = 0;  // per layer: kv_heads x head_dim x 2, or kv_lora_rank + rope dim
  uint64_t kv_element_bytes = 2;
  uint64_t profiled_tokens = 0;  // floor(rest / cell_size) before the cap
  uint64_t max_total_num_tokens = 0;
  bool capped = false;           // --max-total-tokens cut the pool
  uint64_t pool_bytes = 0;       // max_total_num_tokens x cell_size (K + V sizes in the log)
  double max_concurrency = 0.0;  // max_total_num_tokens / context_length
  bool fits = false;             // one context_length request fits in the pool
  uint64_t model_context = 0;
  InferenceSplit split;
};

// The budget of `r` (model, recipe, quantize, kv format, overhead as non-torch memory) on a GPU
// whose memory is `gpu_total_bytes` as torch reports it and `gpu_mem_mib` as nvidia-smi does.
SglangBudget sglang_budget(const EstimateRequest& r, uint64_t gpu_total_bytes, uint64_t gpu_mem_mib,
                           const SglangSettings& s);

}  // namespace memplan
