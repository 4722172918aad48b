// V1's scheduler defaults by GPU and entry point (see vllm_v1.hpp for the engine code).
#include "core/serving/vllm_v1.hpp"

#include <cctype>
#include <string>

namespace memplan {
namespace {

bool names_a100(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("a100") != std::string::npos;
}

}  // namespace

VllmV1Defaults vllm_v1_defaults(uint64_t total_bytes, std::string_view device_name, VllmEntry entry,
                                VllmV1DefaultRules rules) {
  VllmV1Defaults d;
  d.large_gpu = total_bytes >= k_vllm_v1_large_gpu_bytes && !(rules.a100_small && names_a100(device_name));
  const bool llm = entry == VllmEntry::llm;
  if (rules.tier_160gib && total_bytes >= k_vllm_v1_largest_gpu_bytes) {
    d.large_gpu = true;
    d.max_num_batched_tokens = 16384;
    d.max_num_seqs = 1024;
  } else if (d.large_gpu) {
    d.max_num_batched_tokens = llm ? 16384 : 8192;
    d.max_num_seqs = 1024;
  } else {
    d.max_num_batched_tokens = llm ? 8192 : 2048;
    d.max_num_seqs = 256;
  }
  return d;
}

}  // namespace memplan
