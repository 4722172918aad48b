#pragma once
// The fit rule: required = reserved + overhead; a GPU fits when required <=
// what a process can allocate on it, is tight when it fits with under 5% of that to spare. The
// overhead is --overhead when given, else the CUDA context predicted for each GPU (cuda_context.hpp).

#include <cstdint>
#include <string>
#include <vector>

#include <memplan/cuda_context.hpp>
#include <memplan/estimate.hpp>
#include <memplan/gpu.hpp>

namespace memplan {

enum class Verdict { fits, tight, no };

const char* verdict_name(Verdict v);  // "fits", "tight", "no"

// Why a recipe or number format is a poor match for a GPU; the CLI words it.
enum class FitWarningCode {
  not_native,      // the card's compute capability lacks the format's arithmetic (`family` says which)
  no_hardware,     // no compute capability known (AMD, Apple): the preset says the card lacks it
  unified_budget,  // usable memory is a unified-memory budget (the GPU's budget_note says how)
};

// The format families whose arithmetic a card may lack.
enum class FormatFamily { plain, tf32, fp16, bf16, fp8, int8, weight_only };

// What to use instead of a format the card cannot run natively.
enum class Substitute {
  none,
  amp_fp16_scaler,          // amp-fp16 with a GradScaler
  mixed_fp16_scaler,        // mixed-fp16 with loss scaling
  fp16_inference,           // fp16: inference needs no loss scaling
  amp_bf16_or_int8,         // bf16 (amp-bf16), or int8 weights for inference
  amp_fp16_scaler_or_int8,  // amp-fp16 with a GradScaler, or int8 weights for inference
  fp32_same_memory,         // fp32 (TF32 is stored as fp32)
  fp32,
  int8_weights_or_fp16,  // int8 weights (dequantised per matmul), or fp16
};

struct FitWarning {
  FitWarningCode code = FitWarningCode::not_native;
  std::string format;  // the recipe or format concerned: "amp-bf16", "fp8-e4m3"
  FormatFamily family = FormatFamily::plain;
  int compute_capability = 0;  // the card's, major x 10 + minor (75 = 7.5); 0 unknown
  int needs = 0;               // the least that runs the format natively, same scale
  Substitute use = Substitute::none;
};

struct FitRow {
  GpuSpec gpu;
  uint64_t memory_bytes = 0;    // usable memory of the GPU
  uint64_t required_bytes = 0;  // the estimate's reserved bytes + overhead_bytes
  uint64_t overhead_bytes = 0;  // --overhead, or the CUDA context predicted for this GPU
  bool overhead_given = false;  // --overhead was given (context is then not used)
  CudaContext context;          // the prediction for this GPU
  int64_t spare_bytes = 0;      // negative: shortfall
  Verdict verdict = Verdict::no;
  std::vector<FitWarning> warnings;  // recipe the card cannot run natively, unified memory, ...
};

// The overhead the fit adds on `gpu`: the request's when given (--overhead), else the CUDA context
// predicted for the GPU under the request's runtime.
uint64_t overhead_on(const GpuSpec& gpu, const EstimateRequest& request);

// `request` planned for `gpu`: overhead_bytes = overhead_on(gpu, request). Searches on one GPU
// (max-batch, max-seq, advise) estimate with it.
EstimateRequest request_on(const EstimateRequest& request, const GpuSpec& gpu);

// The breakdown's overhead for a plan over `gpus`: the largest predicted context among them (the
// measured H200's when there are none), or the given overhead.
uint64_t summary_overhead(const std::vector<GpuSpec>& gpus, const EstimateRequest& request);

// Verdict for `required` bytes against `memory` bytes.
Verdict verdict_for(uint64_t required, uint64_t memory);

// One GPU against the estimate `e` of `request`; `memory_override` (non-zero) replaces the GPU's
// usable memory (fit --against free).
FitRow fit_gpu(const GpuSpec& gpu, const EstimateRequest& request, const Estimate& e,
               uint64_t memory_override = 0);

// Warnings for running the request's recipe (and its quantisation format) on `gpu`: bf16 before
// compute capability 8.0, fp8 before 8.9, with what to use instead.
std::vector<FitWarning> hardware_warnings(const GpuSpec& gpu, const EstimateRequest& r);

}  // namespace memplan
