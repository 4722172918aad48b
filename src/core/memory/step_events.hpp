#pragma once
// A training step as the caching allocator sees it: one alloc or free per tensor, in the order
// PyTorch makes them, built from what the estimate already knows (the parameter, gradient and
// state terms split into the model's parameter tensors; the activation ledger's rows layer by
// layer; the timeline's transients). Its allocated peak is the timeline's peak: the same bytes at
// a finer grain. Replayed through caching_allocator.hpp it gives the reserved peak.

#include <cstdint>
#include <vector>

#include <memplan/estimate.hpp>
#include <memplan/request.hpp>
#include <memplan/timeline.hpp>

namespace memplan {

struct StepEvent {
  uint64_t id = 0;
  uint64_t bytes = 0;  // requested bytes (the same on the free as on its alloc)
  bool alloc = true;
  Phase phase = Phase::weights;
  uint8_t step = 0;  // 0: loading the weights, then 1, 2, ...
};

// Steps replayed: the state appears in step 1, its holes are met by step 2's activations, and
// step 3 shows the pattern repeats (no further growth).
inline constexpr uint8_t k_replayed_steps = 3;

// The events of loading the weights and running `steps` steps; empty when the timeline is absent.
std::vector<StepEvent> step_events(const EstimateRequest& r, const Estimate& e, uint8_t steps);

// step_events() into `out`, cleared first (its memory is reused from one call to the next).
void build_step_events(const EstimateRequest& r, const Estimate& e, uint8_t steps,
                       std::vector<StepEvent>& out);

// The most requested bytes alive at once over steps >= `from_step`.
uint64_t requested_peak(const std::vector<StepEvent>& events, uint8_t from_step);

}  // namespace memplan
