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
// The default mem_fraction_static, chunked_prefill_size and cuda_graph_max_bs come from the release's
// row (sglang_versions.hpp). At tp > 1 `total` is also short of what the distributed set-up
// allocated before the measure (NCCL, the custom all-reduce: sglang_comm.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <memplan/request.hpp>
#include "core/parallel/inference_split.hpp"
#include "core/serving/sglang_comm.hpp"
#include "core/serving/sglang_versions.hpp"

namespace memplan {

// The engine settings that change the budget; 0 / none = SGLang's default.
struct SglangSettings {
  SglangRules rules = sglang_newest_rules();  // --sglang-version's row
  bool nvlink = true;                         // the GPUs are on NVLink (NCCL channels, custom all-reduce)
  std::optional<double> mem_fraction_static;
  uint64_t chunked_prefill_size = 0;
  uint64_t cuda_graph_max_bs = 0;
  uint64_t max_total_tokens = 0;  // --max-total-tokens: a cap on the pool
  uint64_t context_length = 0;    // --context-length; 0 = the model's max_position_embeddings
  uint64_t page_size = 1;
  uint64_t tp = 1;
  uint64_t pp = 1;
  std::optional<uint64_t> non_torch_bytes;  // the user's figure (--overhead); none = context + comm parts
};

// Every number of the budget, for one GPU (the most-loaded one with tp/pp).
struct SglangBudget {
  SglangSettings settings;  // with the defaults resolved
  bool mem_fraction_default = false;
  std::string gpu_bucket;
  uint64_t gpu_mem_mib = 0;                // the GPU's memory as nvidia-smi reports it (the rule's input)
  double reserved_mib = 0;                 // the rule's reserve (when mem_fraction_static is the default)
  double piecewise_mib = 0;                // the prefill graphs' part of it (0.5.10 on)
  std::string fraction_rule;               // how the row makes the default fraction
  uint64_t gpu_total_bytes = 0;            // as torch reports it
  uint64_t non_torch_bytes = 0;            // CUDA context, NCCL, cuBLAS: outside SGLang's "total"
  uint64_t context_bytes = 0;              // the CUDA context's part (when non_torch_bytes is memplan's)
  std::vector<SglangCommPart> comm_parts;  // tp / pp set-up before the measure (when memplan's)
  uint64_t total_bytes = 0;                // SGLang's total_gpu_memory: free before the weights
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
