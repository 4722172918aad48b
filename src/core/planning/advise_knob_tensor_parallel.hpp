#pragma once
// The tensor-parallel knob of advise() for inference: the playbook's "shard across GPUs" for
// serving. A row of knob_table().

#include <vector>

#include "core/planning/advise_knobs.hpp"

namespace memplan::advice {

// The largest tensor-parallel size this knob offers: one node's GPUs (tp all-reduces every layer,
// which wants NVLink; beyond a node vLLM adds pipeline stages instead).
inline constexpr uint64_t k_max_inference_tp = 8;

// The smallest tensor-parallel size (2, 4, 8, dividing the heads) whose most-loaded GPU fits;
// empty for training, for a run already spread over GPUs, or when one GPU suffices or none does.
std::vector<Candidate> tensor_parallel(const Candidate& c, const KnobContext& ctx);

}  // namespace memplan::advice
