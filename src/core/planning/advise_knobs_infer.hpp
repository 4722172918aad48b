#pragma once
// The inference knobs of advise(): llama.cpp weight quantisation (the best precision that fits),
// a quantised KV cache, and llama.cpp layer offload (-ngl). Rows of knob_table().

#include <vector>

#include "core/planning/advise_knobs.hpp"

namespace memplan::advice {

std::vector<Candidate> quantize_weights(const Candidate& c, const KnobContext& ctx);
std::vector<Candidate> quantize_kv(const Candidate& c, const KnobContext& ctx);
std::vector<Candidate> layer_offload(const Candidate& c, const KnobContext& ctx);

}  // namespace memplan::advice
