#pragma once
// The seam between ladder/sweep and memplan's estimator: the estimate flags a user gives before
// "--" (--model gpt2 --seq 1024 --gpu local ...) become a prediction of the largest batch and of
// the memory at any batch, computed by prediction_estimate.cpp; tests substitute their own predictor
// (sweep's tests run on a fake GPU whose memory no estimate matches).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace memplan::cli {

struct Prediction {
  uint64_t max_batch = 0;                            // largest micro-batch that fits (0: not even 1)
  std::function<uint64_t(uint64_t batch)> bytes_at;  // required bytes (with overhead) at a batch
};

// The estimator's answer for `plan_args`, or nullopt with `why` set (one line, for an error
// message). Implemented in prediction_estimate.cpp.
std::optional<Prediction> predict_from_plan_args(const std::vector<std::string>& plan_args, std::string& why);

// What ladder and sweep call: the predictor set for tests, else predict_from_plan_args.
std::optional<Prediction> predict(const std::vector<std::string>& plan_args, std::string& why);

using Predictor = std::function<std::optional<Prediction>(const std::vector<std::string>&, std::string&)>;

// Replaces the predictor until reset with an empty function (tests only).
void set_predictor_for_tests(Predictor predictor);

}  // namespace memplan::cli
