#include "cli/render_fit.hpp"

namespace memplan::cli {
namespace {

// 75 -> "7.5", 120 -> "12.0".
std::string capability_text(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

std::string reason_text(const FitWarning& w) {
  const std::string have = "this card is " + capability_text(w.compute_capability);
  switch (w.family) {
    case FormatFamily::bf16:
      return "bf16 needs compute capability 8.0 (Ampere) or newer; " + have +
             ": PyTorch refuses or emulates it slowly";
    case FormatFamily::fp8:
      return "fp8 tensor cores need compute capability 8.9 (Ada) or 9.0 (Hopper); " + have;
    case FormatFamily::tf32:
      return "TF32 tensor cores need compute capability 8.0 (Ampere); " + have;
    case FormatFamily::fp16:
      return "fp16 arithmetic needs compute capability 5.3; " + have;
    case FormatFamily::int8:
      return "int8 tensor cores need compute capability 7.5 (Turing); " + have;
    case FormatFamily::plain:
    case FormatFamily::weight_only:
      break;
  }
  return "needs compute capability " + capability_text(w.needs) + "; " + have;
}

}  // namespace

std::string substitute_text(Substitute use) {
  switch (use) {
    case Substitute::none:
      return "";
    case Substitute::amp_fp16_scaler:
      return "amp-fp16 with a GradScaler (torch.cuda.amp.GradScaler)";
    case Substitute::mixed_fp16_scaler:
      return "mixed-fp16 with loss scaling (a GradScaler)";
    case Substitute::fp16_inference:
      return "fp16 (inference needs no loss scaling)";
    case Substitute::amp_bf16_or_int8:
      return "bf16 (amp-bf16), or int8 weights for inference";
    case Substitute::amp_fp16_scaler_or_int8:
      return "amp-fp16 with a GradScaler, or int8 weights for inference";
    case Substitute::fp32_same_memory:
      return "fp32 (same memory: TF32 is stored as fp32; only matmul speed differs)";
    case Substitute::fp32:
      return "fp32";
    case Substitute::int8_weights_or_fp16:
      return "int8 weights still save memory (dequantised to fp16 per matmul, slower); or fp16";
  }
  return "";
}

std::string fit_warning_text(const FitWarning& w, const GpuSpec& gpu) {
  switch (w.code) {
    case FitWarningCode::not_native:
      return w.format + ": " + reason_text(w) + "; use " + substitute_text(w.use);
    case FitWarningCode::no_hardware:
      return w.format + ": " + gpu.id + " has no " + (w.family == FormatFamily::bf16 ? "bf16" : "fp8") +
             " hardware";
    case FitWarningCode::unified_budget:
      return gpu.budget_note;
  }
  return "";
}

std::vector<std::string> fit_warning_texts(const std::vector<FitWarning>& warnings, const GpuSpec& gpu) {
  std::vector<std::string> out;
  out.reserve(warnings.size());
  for (const FitWarning& w : warnings) out.push_back(fit_warning_text(w, gpu));
  return out;
}

}  // namespace memplan::cli
