#pragma once
// Flags that belong to one mode: given in the other, they would change nothing, so they are refused
// (a flag given either changes the answer or is refused).

#include <memplan/request.hpp>

#include "cli/options.hpp"

namespace memplan::cli {

// Throws Error naming the flag when `v` sets, away from its default, a flag `r.mode` does not use:
// in inference --checkpointing, --grad-accum, --loss, --optimizer-loop, --lora-dropout; in training
// --kv-format and --prefill-chunk.
void refuse_other_mode_flags(const PlanValues& v, const EstimateRequest& r);

}  // namespace memplan::cli
