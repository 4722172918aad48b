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

// The most requested bytes alive at once over steps >= `from_step`.
uint64_t requested_peak(const std::vector<StepEvent>& events, uint8_t from_step);

// The events replayed through torch's caching allocator (expandable segments as asked). The replay
// stops as soon as the reserved bytes pass `stop_above`: the result then holds the reserved peak so
// far (above `stop_above`, a lower bound of the whole step's), which is all a caller that only asks
// "does it fit?" needs.
ReservedPeak replay_reserved(const EstimateRequest& r, const Estimate& e, bool expandable_segments,
                             uint64_t stop_above = UINT64_MAX);

// replay_reserved for `e` as estimate(r) has it when it replays (its terms and timeline, nothing
// changed since): the same result, but a request met before (step_request_key) whose replay is
// still cached returns it without building the events.
ReservedPeak replay_request(const EstimateRequest& r, const Estimate& e, bool expandable_segments,
                            uint64_t stop_above = UINT64_MAX);

}  // namespace memplan
