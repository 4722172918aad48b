#pragma once
// The step timeline of an estimate (include/memplan/timeline.hpp): computed by estimate() from
// its terms and the activation ledger's held tensors and loss input.

#include <memplan/estimate.hpp>
#include <memplan/request.hpp>
#include <memplan/timeline.hpp>

namespace memplan {

// The phases of one steady-state training step and their peak, from the terms of `e` (on several
// GPUs the most-loaded GPU's, sharded as the layout says); present == false for inference, tensor or
// pipeline parallelism (their activations are Megatron's model, not the ledger's) and runs without an
// activation model.
StepTimeline step_timeline(const EstimateRequest& r, const Estimate& e);

// The timeline's transients, for the tensor-level replay (step_events.hpp): cross-entropy's
// backward (and Lit-GPT's dequantised 4-bit head), the last layer's MLP gradients, and the
// optimizer's temporaries.
Transient loss_backward_transient(const EstimateRequest& r, const Estimate& e);
Transient last_layer_backward_transient(const EstimateRequest& r);
Transient optimizer_step_transient(const EstimateRequest& r, const Estimate& e);

}  // namespace memplan
