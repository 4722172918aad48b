#include <memplan/fit.hpp>

#include <cstdlib>

#include <memplan/checked.hpp>
#include <memplan/quantity.hpp>

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
    case Verdict::fits: return "fits";
    case Verdict::tight: return "tight";
    case Verdict::no: return "no";
  }
  return "no";
}

Verdict verdict_for(uint64_t required, uint64_t memory) {
  if (required > memory) return Verdict::no;
  // Tight: spare < 5% of memory, i.e. 20 x spare < memory (exact in integers).
  const u128 spare = memory - required;
  return spare * 20 < memory ? Verdict::tight : Verdict::fits;
}

std::vector<std::string> hardware_warnings(const GpuSpec& g, const EstimateRequest& r) {
  std::vector<std::string> w;
  const int cc = capability(g);
  const std::string& hw = r.recipe.hardware_format;
  if (hw == "bf16" && !g.bf16) {
    std::string why = g.compute_capability.empty() ? "" : " (compute capability " + g.compute_capability + " < 8.0)";
    w.push_back(r.recipe.name + " needs bf16 hardware, which " + g.id + " lacks" + why + ": use " +
                (r.mode == Mode::infer          ? "fp16"
                 : r.recipe.autocast        ? "amp-fp16 with a GradScaler"
                 : r.recipe.has_master()    ? "mixed-fp16 with loss scaling"
                                            : "amp-fp16 with a GradScaler, or fp16 with loss scaling"));
  }
  const std::string& q = r.quantize;
  if (q.rfind("fp8", 0) == 0 && !g.fp8) {
    std::string why = cc >= 0 ? " (compute capability " + g.compute_capability + " < 8.9)" : "";
    w.push_back(q + " needs fp8 hardware, which " + g.id + " lacks" + why + ": use int8 weights instead");
  }
  return w;
}

FitRow fit_gpu(const GpuSpec& gpu, const Estimate& e, uint64_t memory_override) {
  FitRow row;
  row.gpu = gpu;
  row.memory_bytes = memory_override ? memory_override : gpu.usable_bytes();
  row.required_bytes = e.required_bytes();
  const u128 m = row.memory_bytes, q = row.required_bytes;
  const u128 k_max = INT64_MAX;
  row.spare_bytes = m >= q ? static_cast<int64_t>(m - q > k_max ? k_max : m - q)
                           : -static_cast<int64_t>(q - m > k_max ? k_max : q - m);
  row.verdict = verdict_for(row.required_bytes, row.memory_bytes);
  row.warnings = hardware_warnings(gpu, e.request);
  if (gpu.budget_bytes && !memory_override) row.warnings.push_back(gpu.budget_note);
  return row;
}

}  // namespace memplan
