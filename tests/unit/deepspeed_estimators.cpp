#include <fmt/format.h>

#include "deepspeed_estimators.hpp"

#include <algorithm>
#include <cstdio>

#include <memplan/error.hpp>
#include "core/base/checked.hpp"

namespace memplan {

namespace {

// floor(n * num / den), as Python's int() of the same product (exact here, no float rounding).
uint64_t floor_ratio(uint64_t n, uint64_t num, uint64_t den) {
  if (den == 0) throw Error("deepspeed estimator", "division by zero");
  u128 q = static_cast<u128>(n) * num / den;
  if (q > UINT64_MAX) throw OverflowError("deepspeed estimator", "the result exceeds 2^64 bytes");
  return static_cast<uint64_t>(q);
}

void check_counts(uint64_t gpus_per_node, uint64_t nodes) {
  if (gpus_per_node == 0) throw Error("num_gpus_per_node", "must be at least 1");
  if (nodes == 0) throw Error("num_nodes", "must be at least 1");
}

std::string flag(bool on) { return on ? "1" : "0"; }

}  // namespace

DeepSpeedEstimate deepspeed_zero2_estimate(uint64_t total_params, uint64_t gpus_per_node, uint64_t nodes,
                                           bool cpu_offload, DeepSpeedFormula formula, BufferFactor factor) {
  check_counts(gpus_per_node, nodes);
  const uint64_t total_gpus = checked_mul(gpus_per_node, nodes);
  DeepSpeedEstimate e;
  if (cpu_offload) {
    // gpu = 2P; cpu = P * max(4 * total_gpus, 16) * factor
    e.gpu_bytes = checked_mul(2, total_params);
    const uint64_t mult = std::max<uint64_t>(checked_mul(4, total_gpus), 16);
    e.cpu_bytes = floor_ratio(checked_mul(total_params, mult), factor.num, factor.den);
  } else {
    if (formula == DeepSpeedFormula::documented)
      e.gpu_bytes = checked_add(checked_mul(4, total_params), floor_ratio(total_params, 16, total_gpus));
    else
      e.gpu_bytes = checked_add(checked_mul(2, total_params), floor_ratio(total_params, 18, total_gpus));
    // cpu = P * 4 * num_gpus_per_node * factor: every rank of a node loads the fp32 model first
    e.cpu_bytes =
        floor_ratio(checked_mul(total_params, checked_mul(4, gpus_per_node)), factor.num, factor.den);
  }
  if (formula == DeepSpeedFormula::documented)
    e.options = "cpu_offload=" + flag(cpu_offload);
  else
    e.options = std::string("offload_optimizer=") + (cpu_offload ? "cpu" : "none");
  return e;
}

DeepSpeedEstimate deepspeed_zero3_estimate(uint64_t total_params, uint64_t largest_layer_params,
                                           uint64_t gpus_per_node, uint64_t nodes, bool cpu_offload,
                                           bool cpu_offload_params, bool zero_init, BufferFactor factor) {
  check_counts(gpus_per_node, nodes);
  const uint64_t total_gpus = checked_mul(gpus_per_node, nodes);
  // 2 B fp16 parameters gathered + 2 B fp16 gradients computed for the largest layer.
  const uint64_t largest_layer_memory = checked_mul(4, largest_layer_params);
  const uint64_t den = checked_mul(factor.den, nodes);  // gpus_factor = 1 / num_nodes
  DeepSpeedEstimate e;
  if (cpu_offload) {
    // 18 = 16 B fp32 (params, grads, momentum, variance) + 2 B fp16 params; 16 without the latter.
    const uint64_t per_param = cpu_offload_params ? 18 : 16;
    e.gpu_bytes = cpu_offload_params
                      ? largest_layer_memory
                      : checked_add(largest_layer_memory, floor_ratio(total_params, 2, total_gpus));
    // zero_init: P * per_param / nodes * factor; else P * max(4 * gpus_per_node, per_param / nodes) * factor
    uint64_t num = per_param;
    if (!zero_init) num = std::max(checked_mul(checked_mul(4, gpus_per_node), nodes), per_param);
    e.cpu_bytes = floor_ratio(checked_mul(total_params, num), factor.num, den);
  } else {
    e.gpu_bytes = checked_add(largest_layer_memory, floor_ratio(total_params, 18, total_gpus));
    const uint64_t loaded = zero_init ? largest_layer_params : total_params;
    e.cpu_bytes = floor_ratio(checked_mul(loaded, checked_mul(4, gpus_per_node)), factor.num, factor.den);
  }
  e.options = "cpu_offload=" + flag(cpu_offload) + ", cpu_offload_params=" + flag(cpu_offload_params) +
              ", zero_init=" + flag(zero_init);
  return e;
}

std::vector<DeepSpeedEstimate> deepspeed_zero2_all_cold(uint64_t total_params, uint64_t gpus_per_node,
                                                        uint64_t nodes, DeepSpeedFormula formula) {
  return {deepspeed_zero2_estimate(total_params, gpus_per_node, nodes, true, formula),
          deepspeed_zero2_estimate(total_params, gpus_per_node, nodes, false, formula)};
}

std::vector<DeepSpeedEstimate> deepspeed_zero3_all_cold(uint64_t total_params, uint64_t largest_layer_params,
                                                        uint64_t gpus_per_node, uint64_t nodes) {
  std::vector<DeepSpeedEstimate> rows;
  for (bool offload : {true, false})
    for (bool offload_params : {true, false}) {
      if (!offload && offload_params) continue;
      for (bool init : {true, false})
        rows.push_back(deepspeed_zero3_estimate(total_params, largest_layer_params, gpus_per_node, nodes,
                                                offload, offload_params, init));
    }
  return rows;
}

std::string format_deepspeed_row(const DeepSpeedEstimate& row) {
  const double gib = 1073741824.0;
  return fmt::format(" {:7.2f}GB | {:6.2f}GB | ", static_cast<double>(row.cpu_bytes) / gib,
                     static_cast<double>(row.gpu_bytes) / gib) +
         row.options;
}

}  // namespace memplan
