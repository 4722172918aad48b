#pragma once
// The longest sequence memplan plans for a model, from the positions it was trained for
// (max_position_embeddings, a preset's max_positions). Issue 32: --seq 1e7 on a 4,096-position
// model was planned (101.8 TiB of activations).

#include <cstdint>

#include <memplan/model.hpp>

namespace memplan {

// Rotary / ALiBi / relative positions run past the trained context, untrained; published context
// extensions reach 32x it (YaRN: Llama 2 4k -> 128k; LongLoRA: 4k -> 100k), each by RoPE scaling
// whose extended model states the new length in its own config (max_position_embeddings).
constexpr uint64_t k_max_context_extension = 32;

struct ContextLimit {
  uint64_t positions = 0;         // the trained positions (0: unknown, no limit)
  bool learned = false;           // a learned position table: not one position past it
  uint64_t longest = UINT64_MAX;  // positions (learned) or k_max_context_extension x positions
};

// The limit of `arch` with its family's layout applied (gpt2, bert, opt: learned).
ContextLimit context_limit(const TransformerArch& arch);

}  // namespace memplan
