#pragma once
// The weights a serving engine loads, as estimate() counts them (vLLM, SGLang budgets).
#include <cstdint>

#include <memplan/request.hpp>

namespace memplan {

// The weights as estimate() counts them for inference on one GPU (recipe, quantisation, stored
// file bytes).
uint64_t model_weight_bytes(const EstimateRequest& r);

}  // namespace memplan
