#pragma once
// The figures an SGLang start-up log prints about memory, read from its text. Recognised lines
// (SGLang 0.3 - 0.5; "GB" there is GiB: get_available_gpu_memory divides by 2^30):
//   "Load weight begin. avail mem=79.06 GB"                      -> free before the weights
//   "Load weight end. type=..., avail mem=63.78 GB, mem usage=15.28 GB."
//                                                                -> free after, weights
//   "KV Cache is allocated. #tokens: 414811, K size: 25.32 GB, V size: 25.32 GB"
//   "KV Cache is allocated. #tokens: 2795207, KV size: 53.31 GB" (MLA) -> tokens, pool GiB
//   "max_total_num_tokens=414811, ..., context_len=131072"      -> tokens, context length
//   "mem_fraction_static=0.88" (the ServerArgs line)             -> the fraction used
// The last occurrence of each wins (a log may hold several starts; ranks print the same).
#include <cstdint>
#include <optional>
#include <string_view>

namespace memplan {

struct SglangLogFigures {
  std::optional<double> free_before_gib;
  std::optional<double> free_after_gib;
  std::optional<double> weights_gib;
  std::optional<uint64_t> kv_tokens;
  std::optional<double> pool_gib;  // K + V (or the one latent "KV size")
  std::optional<uint64_t> context_len;
  std::optional<double> mem_fraction_static;

  bool empty() const {
    return !free_before_gib && !free_after_gib && !weights_gib && !kv_tokens && !pool_gib;
  }
};

SglangLogFigures read_sglang_log(std::string_view text);

}  // namespace memplan
