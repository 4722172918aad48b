#pragma once
// vLLM's V1 engine rules (vLLM 0.10.1, the default engine from 0.8), where they differ from the
// V0 budget of vllm_budget.hpp. From vllm/v1/worker/gpu_worker.py determine_available_memory:
//
//   requested  = gpu_memory_utilization x total          (the request, not the free memory)
//   KV memory  = requested - (weights + torch peak increase of the profile run
//                             + non-torch increase since the worker's start-up snapshot)
//
// The start-up snapshot (MemorySnapshot in init_device) is taken after the CUDA context exists,
// so unlike V0 the context is not subtracted; what remains of non-torch memory is what grows
// after it: the custom all-reduce's IPC buffers (tp > 1) and NCCL's (not predicted). CUDA graphs
// are captured after the KV cache (compile_or_warm_up_model) in 0.10, so they come out of the
// 1 - utilization margin as in V0. Chunked prefill is always on; the profile run is one step of
// max_num_batched_tokens tokens, whose default depends on the GPU's memory
// (vllm/engine/arg_utils.py _set_default_args_v1, `vllm serve`'s OPENAI_API_SERVER context):
// 8192 tokens and 1024 sequences on GPUs of at least 70 GiB, else 2048 tokens and 256 sequences.
// V1 logs "Available KV cache memory: X GiB", "GPU KV cache size: N tokens" (blocks x block_size)
// and "Maximum concurrency for L tokens per request: Cx" (tokens / L for full attention).
#include <cstdint>

namespace memplan {

inline constexpr const char* k_vllm_v1_version = "0.10.1";
inline constexpr uint64_t k_vllm_v1_large_gpu_bytes = 70ull << 30;  // "GPUs like H100 and MI300x"
inline constexpr uint64_t k_vllm_v1_batched_tokens_large = 8192;
inline constexpr uint64_t k_vllm_v1_batched_tokens_small = 2048;
inline constexpr uint64_t k_vllm_v1_max_num_seqs_large = 1024;
inline constexpr uint64_t k_vllm_v1_max_num_seqs_small = 256;

// V1's default max_num_batched_tokens for a GPU whose total memory is `total_bytes`.
inline uint64_t vllm_v1_default_batched_tokens(uint64_t total_bytes) {
  return total_bytes >= k_vllm_v1_large_gpu_bytes ? k_vllm_v1_batched_tokens_large
                                                  : k_vllm_v1_batched_tokens_small;
}

// V1's default max_num_seqs for a GPU whose total memory is `total_bytes`.
inline uint64_t vllm_v1_default_max_num_seqs(uint64_t total_bytes) {
  return total_bytes >= k_vllm_v1_large_gpu_bytes ? k_vllm_v1_max_num_seqs_large
                                                  : k_vllm_v1_max_num_seqs_small;
}

}  // namespace memplan
