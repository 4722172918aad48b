#pragma once
// DeepSpeed's own model-state memory estimators, reproduced exactly (integer bytes), so memplan can
// show what `estimate_zero2_model_states_mem_needs_all_cold` and
// `estimate_zero3_model_states_mem_needs_all_cold` print. Two ZeRO-2 formulas exist:
//   documented: gpu = 4P + int(16P/N)  (PR #965, April 2021, until PR #5099;
//   docs/code-docs/source/memory.rst) current:    gpu = 2P + int(18P/N)  (PR #5099, merged mid-April 2024:
//   releases from 0.14.1/0.14.2 on)
// ZeRO-3 has one: gpu = 4L + int(18P/N) (+ offload variants), unchanged since PR #965.
// Sources and tables: docs/sharding.md.
// Test support, not the library: no command prints these tables; test_deepspeed_estimators.cpp
// checks them against DeepSpeed's published numbers, the ZeRO arithmetic memplan itself uses
// lives in core/parallel/sharding_estimate.

#include <cstdint>
#include <string>
#include <vector>

namespace memplan {

enum class DeepSpeedFormula {
  documented,  // the formula and tables in DeepSpeed's memory.rst (April 2021 .. April 2024)
  current      // stage_1_and_2.py since PR #5099 (mid-April 2024)
};

// One row of the printed table: bytes per CPU (host, per node) and per GPU, and the options.
struct DeepSpeedEstimate {
  uint64_t cpu_bytes = 0;
  uint64_t gpu_bytes = 0;
  std::string options;  // "cpu_offload=1", "cpu_offload=1, cpu_offload_params=0, zero_init=1"
};

// additional_buffer_factor as a ratio (DeepSpeed's default 1.5 = 3/2).
struct BufferFactor {
  uint64_t num = 3;
  uint64_t den = 2;
};

// estimate_zero2_model_states_mem_needs(total_params, num_gpus_per_node, num_nodes, cpu_offload).
DeepSpeedEstimate deepspeed_zero2_estimate(uint64_t total_params, uint64_t gpus_per_node, uint64_t nodes,
                                           bool cpu_offload, DeepSpeedFormula formula,
                                           BufferFactor factor = {});

// estimate_zero3_model_states_mem_needs(total_params, largest_layer_params, ..., cpu_offload,
// cpu_offload_params, zero_init).
DeepSpeedEstimate deepspeed_zero3_estimate(uint64_t total_params, uint64_t largest_layer_params,
                                           uint64_t gpus_per_node, uint64_t nodes, bool cpu_offload,
                                           bool cpu_offload_params, bool zero_init, BufferFactor factor = {});

// The rows `..._all_cold` prints, in its order (ZeRO-2: offload 1, 0; ZeRO-3: 6 rows).
std::vector<DeepSpeedEstimate> deepspeed_zero2_all_cold(uint64_t total_params, uint64_t gpus_per_node,
                                                        uint64_t nodes, DeepSpeedFormula formula);
std::vector<DeepSpeedEstimate> deepspeed_zero3_all_cold(uint64_t total_params, uint64_t largest_layer_params,
                                                        uint64_t gpus_per_node, uint64_t nodes);

// A row as DeepSpeed prints it: f" {cpu/2**30:7.2f}GB | {gpu/2**30:6.2f}GB | {options}".
std::string format_deepspeed_row(const DeepSpeedEstimate& row);

}  // namespace memplan
