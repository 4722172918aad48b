#pragma once
// The parallel layout from the planning options: --gpus, --nodes, --zero / --fsdp, --offload,
// --tp / --pp / --dp and the rest, for training and for inference.

#include <memplan/request.hpp>

#include "cli/options.hpp"

namespace memplan::cli {

// Sets r.grad_format, r.largest_layer and, when any layout option is given, r.parallel; r.mode and
// r.model must be resolved. Throws Error naming the option on a layout inference cannot take.
void resolve_layout(const PlanValues& v, EstimateRequest& r);

}  // namespace memplan::cli
