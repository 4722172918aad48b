#pragma once
// The optimizer step tensor by tensor (optimizer_step_events.cpp): torch's Adam/AdamW loops and
// transformers' AdamW and Adafactor (optimizer_loop.hpp), as events of the allocator replay.

#include <cstdint>
#include <vector>

#include "core/memory/optimizer_loop.hpp"
#include "core/memory/step_event_builder.hpp"

namespace memplan::replay {

// torch's Adam/AdamW step: each tensor's state made at step 1 (`allocate_state`); foreach, one
// temporary per tensor for all at once; the per-tensor loop, two for one tensor at a time.
void optimizer_loop(Builder& b, std::vector<std::vector<Tensor>>& state,
                    const std::vector<uint64_t>& temp_bytes, bool foreach, bool allocate_state);

// transformers.AdamW.step: each tensor's state at step 1 (when state_to_allocate), then its denom.
void hf_adamw_loop(Builder& b, const std::vector<LoopTensor>& ts, uint64_t bytes_per_number,
                   std::vector<std::vector<Tensor>>* state_to_allocate);

// transformers' Adafactor.step, statement by statement.
void adafactor_loop(Builder& b, const std::vector<LoopTensor>& ts, bool half_weights,
                    std::vector<std::vector<Tensor>>* state_to_allocate);

}  // namespace memplan::replay
