#pragma once
// The step timeline of an estimate (include/memplan/timeline.hpp): computed by estimate() from
// its terms and the activation ledger's held tensors and loss input.

#include <memplan/estimate.hpp>
#include <memplan/request.hpp>
#include <memplan/timeline.hpp>

namespace memplan {

// The phases of one steady-state training step and their peak; present == false for inference,
// multi-GPU layouts and runs without an activation model.
StepTimeline step_timeline(const EstimateRequest& r, const Estimate& e);

}  // namespace memplan
