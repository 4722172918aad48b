#include <memplan/fit.hpp>

#include <algorithm>
#include <cstdlib>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/checked.hpp"
#include "core/formats/hardware_support.hpp"

namespace memplan {
namespace {

// "8.9" -> 89; "" or non-NVIDIA -> -1 (unknown).
int capability(const GpuSpec& g) {
  const std::string& cc = g.compute_capability;
  const auto dot = cc.find('.');
  if (cc.empty() || dot == std::string::npos || g.vendor == "amd" || g.vendor == "apple") return -1;
  return std::atoi(cc.substr(0, dot).c_str()) * 10 + std::atoi(cc.substr(dot + 1).c_str());
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::fits:
      return "fits";
    case Verdict::tight:
      return "tight";
    case Verdict::no:
      return "no";
  }
  return "no";
}

Verdict verdict_for(uint64_t required, uint64_t memory) {
  if (required > memory) return Verdict::no;
  // Tight: spare < 5% of memory, i.e. 20 x spare < memory (exact in integers).
  const u128 spare = memory - required;
  return spare * 20 < memory ? Verdict::tight : Verdict::fits;
}

std::vector<FitWarning> hardware_warnings(const GpuSpec& g, const EstimateRequest& r) {
  std::vector<FitWarning> w;
  if (!g.capabilities_known) return w;
  const int cc = capability(g);
  auto check = [&](const std::string& what) {
    if (cc >= 0) {
      const HardwareSupport hs = hardware_support(field_key(Field::precision), what, g.compute_capability);
      if (hs.native) return;
      FitWarning fw{FitWarningCode::not_native, what, hs.family, cc, hs.needs.value(), hs.use};
      if (r.mode == Mode::infer && hs.family == FormatFamily::bf16) fw.use = Substitute::fp16_inference;
      w.push_back(std::move(fw));
      return;
    }
    // No compute capability (AMD, Apple): the preset's own flags.
    const bool bf16 = what.find("bf16") != std::string::npos, fp8 = what.rfind("fp8", 0) == 0;
    if ((bf16 && !g.bf16) || (fp8 && !g.fp8))
      w.push_back({FitWarningCode::no_hardware, what, bf16 ? FormatFamily::bf16 : FormatFamily::fp8, 0, 0,
                   Substitute::none});
  };
  if (!r.recipe.hardware_format.empty()) check(r.recipe.name);
  if (r.quantize) check(storage_format(*r.quantize).name);
  return w;
}

uint64_t overhead_on(const GpuSpec& gpu, const EstimateRequest& request) {
  return request.overhead_given ? request.overhead_bytes : cuda_context(gpu, request.cuda).bytes();
}

EstimateRequest request_on(const EstimateRequest& request, const GpuSpec& gpu) {
  EstimateRequest r = request;
  r.overhead_bytes = overhead_on(gpu, request);
  return r;
}

uint64_t summary_overhead(const std::vector<GpuSpec>& gpus, const EstimateRequest& request) {
  if (request.overhead_given) return request.overhead_bytes;
  if (gpus.empty()) return cuda_context(GpuSpec{}, request.cuda).bytes();
  uint64_t most = 0;
  for (const GpuSpec& g : gpus) most = std::max(most, overhead_on(g, request));
  return most;
}

FitRow fit_gpu(const GpuSpec& gpu, const EstimateRequest& request, const Estimate& e,
               uint64_t memory_override) {
  FitRow row;
  row.gpu = gpu;
  row.memory_bytes = memory_override ? memory_override : gpu.usable_bytes();
  row.context = cuda_context(gpu, request.cuda);
  row.overhead_given = request.overhead_given;
  row.overhead_bytes = overhead_on(gpu, request);
  row.required_bytes = checked_add(e.reserved_bytes(), row.overhead_bytes, "required bytes");
  const u128 m = row.memory_bytes, q = row.required_bytes;
  const u128 k_max = INT64_MAX;
  // Beyond 2^63 - 1 bytes the shortfall has no signed 64-bit value: refused, never clamped (GPU
  // memory is at most 16 TiB, so a surplus always has one).
  if (q > k_max)
    throw Error("required memory",
                group_thousands(row.required_bytes) +
                    " bytes is above 2^63 - 1 (8 EiB), beyond any machine: check the inputs");
  row.spare_bytes = m >= q ? static_cast<int64_t>(m - q > k_max ? k_max : m - q)
                           : -static_cast<int64_t>(q - m > k_max ? k_max : q - m);
  row.verdict = verdict_for(row.required_bytes, row.memory_bytes);
  row.warnings = hardware_warnings(gpu, request);
  if (gpu.budget_bytes && !memory_override) {
    FitWarning budget;
    budget.code = FitWarningCode::unified_budget;
    row.warnings.push_back(budget);
  }
  return row;
}

}  // namespace memplan
