#pragma once
// The figures a vLLM start-up log prints about memory, read from its text. Recognised lines
// (V0 0.4-0.7 and V1 engines):
//   "Loading model weights took 14.9888 GB" / "Model loading took 14.99 GiB" /
//   "model weights take 14.96GiB"                                 -> weights (GiB = 2^30 B)
//   "# GPU blocks: 1952" / "# cuda blocks: 1952" / "# CUDA blocks"  -> GPU blocks
//   "GPU KV cache size: 2,042,016 tokens"                         -> KV tokens
//   "Maximum concurrency for 20000 tokens per request: 1.56x"     -> concurrency and its length
//   "total_gpu_memory (23.58GiB)" / "total_gpu_memory=23.58GiB"   -> the GPU's total
//   "available_kv_cache_memory 53.29GiB" / "kv_cache_size=3.81GiB" /
//   "reserved for KV Cache is 54.83GiB" / "Available KV cache memory: 8.11 GiB" -> KV memory
//   "non_torch_memory=0.35GiB" (0.6.4's one-line format only)     -> non-torch memory
//   "Requested memory: 0.90 (util), 71.27 GiB" (V1, DEBUG level)  -> utilization x total
// "Available KV cache memory: -2.14 GiB" (V1, a model that does not fit) is read with its sign.
// (From 0.7 "non_torch_memory takes 0.04GiB" is the increase since start-up, without the CUDA
// context: another quantity, not read.)
// The last occurrence of each wins (a log may hold several starts).
#include <cstdint>
#include <optional>
#include <string_view>

namespace memplan {

struct VllmLogFigures {
  std::optional<double> weights_gib;
  std::optional<uint64_t> gpu_blocks;
  std::optional<uint64_t> kv_tokens;
  std::optional<double> max_concurrency;
  std::optional<uint64_t> concurrency_tokens;  // the per-request length of that line
  std::optional<double> total_gib;
  std::optional<double> kv_gib;
  std::optional<double> non_torch_gib;  // vLLM 0.6.4's measure: the CUDA context included
  std::optional<double> requested_gib;  // V1: gpu_memory_utilization x total
  std::optional<double> requested_util;

  bool empty() const {
    return !weights_gib && !gpu_blocks && !kv_tokens && !max_concurrency && !total_gib && !kv_gib &&
           !non_torch_gib && !requested_gib;
  }
};

VllmLogFigures read_vllm_log(std::string_view text);

}  // namespace memplan
