// The tensor-parallel inference knob of advise() (see advise_knob_tensor_parallel.hpp).
#include "core/planning/advise_knob_tensor_parallel.hpp"

#include <memplan/error.hpp>
#include "core/parallel/inference_split.hpp"

namespace memplan::advice {

std::vector<Candidate> tensor_parallel(const Candidate& c, const KnobContext& ctx) {
  const EstimateRequest& r = c.request;
  if (r.mode != Mode::infer || r.parallel || !r.model.arch || !r.model.mlp_widths.empty()) return {};
  const std::optional<EstimateRequest> n = smallest_inference_layout(r, ctx.memory);
  if (!n || !n->parallel) return {};
  const uint64_t tp = n->parallel->tp;
  if (tp < 2 || tp > k_max_inference_tp) return {};
  int log2 = 0;
  for (uint64_t t = tp; t > 1; t >>= 1) ++log2;
  AdviceChange ch;
  ch.knob = AdviceKnob::tensor_parallel;
  ch.tier = 2;
  ch.cost_rank = 70 + log2;  // as sharding training state over as many GPUs
  ch.gpus = tp;
  ch.gpu = ctx.gpu.id;
  Candidate out = c;
  out.request = *n;
  out.changes.push_back(std::move(ch));
  return {out};
}

}  // namespace memplan::advice
