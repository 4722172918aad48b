#pragma once
// vLLM's V1 engine rules (vLLM 0.10.1, the default engine from 0.8; V0 was removed in 0.11), where
// they differ from the V0 budget of vllm_budget.hpp. From vllm/v1/worker/gpu_worker.py
// determine_available_memory:
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
// max_num_batched_tokens tokens.
//
// The step's defaults (vllm/engine/arg_utils.py EngineArgs._set_default_args_v1, v0.10.1; the
// A100 exception is vLLM PR 17885): by the entry point (UsageContext) and the GPU,
//
//   GPU                                   vllm serve (OPENAI_API_SERVER)   vllm.LLM (LLM_CLASS)
//   >= 70 GiB total and "a100" not in     8192 tokens, 1024 sequences      16384 tokens, 1024
//     torch.cuda.get_device_name()
//   otherwise (A100 80GB included)        2048 tokens, 256 sequences       8192 tokens, 256
//
// max_num_seqs's default is capped at max_num_batched_tokens (min(default, tokens)); a user's
// max_num_seqs above the step's tokens is refused (SchedulerConfig._verify_args).
// The total is current_platform.get_device_total_memory() (the device's total, not the free
// memory); the name test is case-insensitive ("NVIDIA A100-SXM4-80GB"). V1 logs "Available KV cache
// memory: X GiB", "GPU KV cache size: N tokens" and "Maximum concurrency for L tokens per request:
// Cx" (vllm_kv_groups.hpp for how they are computed).
#include <cstdint>
#include <string_view>

namespace memplan {

inline constexpr uint64_t k_vllm_v1_large_gpu_bytes = 70ull << 30;     // "GPUs like H100 and MI300x"
inline constexpr uint64_t k_vllm_v1_largest_gpu_bytes = 160ull << 30;  // 0.30: "GPUs like B200/B300"

// Who starts the engine: the OpenAI-compatible server (`vllm serve`) or the Python class.
enum class VllmEntry { serve, llm };

// The rules that differ by release (vllm_versions.hpp): 0.8 has no A100 exception; from 0.30 GPUs of
// 160 GiB or more get 16,384 tokens and 1,024 sequences for vllm serve as well.
struct VllmV1DefaultRules {
  bool a100_small = true;
  bool tier_160gib = false;
};

// The scheduler defaults V1 picks for a GPU.
struct VllmV1Defaults {
  uint64_t max_num_batched_tokens = 0;
  uint64_t max_num_seqs = 0;
  bool large_gpu = false;  // >= 70 GiB and not an A100: the larger row of the table above
};

// V1's defaults for a GPU of `total_bytes` named `device_name` (as torch reports it, or memplan's
// preset name), started through `entry`.
VllmV1Defaults vllm_v1_defaults(uint64_t total_bytes, std::string_view device_name, VllmEntry entry,
                                VllmV1DefaultRules rules = {});

}  // namespace memplan
