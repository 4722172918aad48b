#pragma once
// Sanity limits of the architecture fields, one table for every source of an architecture
// (command-line flags and plan files, GGUF metadata; config.json applies the same numbers per
// key in hf_config.cpp). Far above every real model, so a value beyond one is a typo or a broken
// file, not a model. docs/limits.md lists them.

#include <cstdint>
#include <string>

#include <memplan/model.hpp>

namespace memplan {

namespace arch_limit {
inline constexpr uint64_t k_layers = 1ull << 16;         // largest seen: 126 (Llama-3.1-405B)
inline constexpr uint64_t k_hidden = 1ull << 20;         // 18,432 (Falcon-180B, GPT-3 12,288)
inline constexpr uint64_t k_heads = 1ull << 16;          // 128 (Llama-3.1-405B); also kv_heads
inline constexpr uint64_t k_head_dim = 1ull << 16;       // 256 (Gemma)
inline constexpr uint64_t k_intermediate = 1ull << 22;   // 73,728 (Falcon-180B)
inline constexpr uint64_t k_vocab = 1ull << 24;          // 256,000 (Gemma)
inline constexpr uint64_t k_experts = 1ull << 16;        // 256 (DeepSeek-V3); also experts per token
inline constexpr uint64_t k_max_positions = 1ull << 32;  // 10,485,760 (Llama-4-Scout)
}  // namespace arch_limit

// One row of the table: the TransformerArch field and its limit.
struct ArchLimit {
  const char* name;  // "layers"
  uint64_t TransformerArch::*member;
  uint64_t max;
};

// The table, in TransformerArch order.
const ArchLimit* arch_limits_begin();
const ArchLimit* arch_limits_end();

// Throws Error(where, "<name> N is above the limit of M (...)") for the first field of `a` over
// its limit.
void check_arch_limits(const TransformerArch& a, const std::string& where);

}  // namespace memplan
