#include "core/serving/model_weights.hpp"

#include <memplan/estimate.hpp>

namespace memplan {

uint64_t model_weight_bytes(const EstimateRequest& r) {
  EstimateRequest one = r;
  one.mode = Mode::infer;
  one.parallel.reset();
  one.batch = 1;
  one.seq = 1;
  return estimate(one).bytes(TermKind::parameters);
}

}  // namespace memplan
