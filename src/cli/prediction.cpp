#include "cli/prediction.hpp"

namespace memplan::cli {
namespace {

Predictor& override_slot() {
  static Predictor predictor;
  return predictor;
}

}  // namespace

std::optional<Prediction> predict(const std::vector<std::string>& plan_args, std::string& why) {
  if (override_slot()) return override_slot()(plan_args, why);
  return predict_from_plan_args(plan_args, why);
}

void set_predictor_for_tests(Predictor predictor) { override_slot() = std::move(predictor); }

}  // namespace memplan::cli
