#pragma once
// Which plan --emit writes: advise's cheapest fitting suggestion (or the Nth, --emit-rank), or
// max-batch's batch on its one GPU; with its gradient accumulation set and its memory estimated
// again as written (accumulation keeps the gradients of earlier micro-batches alive).

#include <cstdint>
#include <optional>
#include <string>

#include "cli/command.hpp"
#include "cli/emit_config.hpp"
#include "core/planning/advise.hpp"

namespace memplan::cli {

// The suggestion to write, or nullopt (with `why`) when none a config can hold fits. `rank`: 0 the
// cheapest whose written plan fits, else the rank-th fitting suggestion (an Error past the last).
// A run that already fits is written as given.
std::optional<EmitRequest> advice_emit_request(const Advice& a, const EstimateRequest& given, uint64_t rank,
                                               Units units, std::string& why);

// max-batch's answer on `gpu`: `given` with batch `micro` (or sequence `seq` when nonzero) and
// `steps` accumulation steps (0: as given); `required`: what max-batch counted.
EmitRequest batch_emit_request(const EstimateRequest& given, const GpuSpec& gpu, uint64_t micro,
                               uint64_t steps, uint64_t seq, uint64_t required, Units units);

// --emit-rank's value (1-based), 0 when empty.
uint64_t parse_emit_rank(const std::string& text);

}  // namespace memplan::cli
