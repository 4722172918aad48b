#pragma once
// Batch and sequence planning: the largest micro-batch (or sequence) whose estimate fits a
// memory budget, exact against the model (micro fits, micro + 1 does not), and the
// gradient-accumulation steps that give back an effective batch.

#include <cstdint>

#include <memplan/estimate.hpp>

namespace memplan {

struct BatchPlan {
  uint64_t micro_batch = 0;          // 0: not even batch 1 fits
  uint64_t max_micro_batch = 0;      // the largest that fits (micro_batch may be lower to balance steps)
  uint64_t accumulation_steps = 0;   // ceil(effective / (micro x ranks)); 0 without --effective-batch
  uint64_t data_parallel_ranks = 1;  // dp = gpus / (tp x pp): each rank runs its own micro-batches
  uint64_t effective_batch = 0;      // micro x steps x ranks
  uint64_t required_bytes = 0;       // at micro_batch (at batch 1 when micro is 0)
  bool capped = false;               // the search stopped at k_max_search (activations ~ free)
};

inline constexpr uint64_t k_max_search = 1ull << 30;

// Data-parallel ranks of the request's layout (dp, or gpus / (tp x pp)); 1 without one and for
// inference.
uint64_t data_parallel_ranks(const EstimateRequest& r);

// Largest batch with estimate(batch).required_bytes() <= memory. `effective_batch` 0 = none; it is
// micro-batch x accumulation steps x data-parallel ranks (every rank adds its micro-batches to the
// gradients the all-reduce averages).
// Throws Error when the activations do not grow with the batch (nothing to solve).
// `ceiling`: a caller that reads the plan only when the largest batch is below it; at or above it the
// search stops as soon as it knows, and only max_micro_batch (some batch >= ceiling) is set.
BatchPlan max_batch(const EstimateRequest& base, uint64_t memory, uint64_t effective_batch,
                    uint64_t ceiling = UINT64_MAX);

// Largest sequence length at the request's batch; 0 when not even 1 fits.
// Throws Error when the estimate does not depend on the sequence (no architecture).
// A caller that needs the length only within [floor, ceiling) gets it exactly there, and otherwise a
// length on the same side (below floor, or at least ceiling), found with fewer estimates: the search
// stops once it knows the side. `capped` is then only meaningful for a length within the range.
uint64_t max_seq(const EstimateRequest& base, uint64_t memory, bool& capped, uint64_t floor = 0,
                 uint64_t ceiling = UINT64_MAX);

}  // namespace memplan
