#pragma once
// The fit rule (DESIGN.md section 3): required = total + overhead; a GPU fits when required <=
// what a process can allocate on it, is tight when it fits with under 5% of that to spare.

#include <cstdint>
#include <string>
#include <vector>

#include <memplan/estimate.hpp>
#include <memplan/gpu.hpp>

namespace memplan {

enum class Verdict { fits, tight, no };

const char* verdict_name(Verdict v);  // "fits", "tight", "no"

struct FitRow {
  GpuSpec gpu;
  uint64_t memory_bytes = 0;  // usable memory of the GPU
  uint64_t required_bytes = 0;
  int64_t spare_bytes = 0;  // negative: shortfall
  Verdict verdict = Verdict::no;
  std::vector<std::string> warnings;  // recipe the card cannot run natively, unknown reserve, ...
};

// Verdict for `required` bytes against `memory` bytes.
Verdict verdict_for(uint64_t required, uint64_t memory);

// One GPU against the estimate `e` of `request`; `memory_override` (non-zero) replaces the GPU's
// usable memory (fit --against free).
FitRow fit_gpu(const GpuSpec& gpu, const EstimateRequest& request, const Estimate& e,
               uint64_t memory_override = 0);

// Warnings for running `recipe` (and a --quantize format) on `gpu`: bf16 before compute
// capability 8.0, fp8 before 8.9, with what to use instead.
std::vector<std::string> hardware_warnings(const GpuSpec& gpu, const EstimateRequest& r);

}  // namespace memplan
