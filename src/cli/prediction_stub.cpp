// Stand-in until the estimator is wired in: replace this file with one that builds a model and
// an estimate from the plan args (the flags of `memplan estimate` / `max-batch`).
#include "cli/prediction.hpp"

namespace memplan::cli {

std::optional<Prediction> predict_from_plan_args(const std::vector<std::string>& plan_args,
                                                 std::string& why) {
  (void)plan_args;
  why = "needs the estimator";
  return std::nullopt;
}

}  // namespace memplan::cli
