#pragma once
// A training step's events (step_events.hpp) replayed through torch's caching allocator: the
// reserved peak estimate() reports.

#include <cstdint>

#include <memplan/estimate.hpp>
#include <memplan/request.hpp>
#include <memplan/timeline.hpp>

namespace memplan {

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

// Replays on this thread whose last step was found to repeat the step before (step_replay.cpp's
// fixed point) and was therefore not replayed: for tests and measurements.
uint64_t replay_fixed_points();

}  // namespace memplan
