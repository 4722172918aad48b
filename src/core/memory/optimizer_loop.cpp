#include "core/memory/optimizer_loop.hpp"

#include <algorithm>

#include "core/base/checked.hpp"
#include "core/memory/parameter_tensors.hpp"

namespace memplan {

std::vector<LoopTensor> optimizer_loop_tensors(const EstimateRequest& r, const Estimate& e) {
  std::vector<LoopTensor> out;
  if (e.lora) {
    // LoRA's A (rank x in) and B (out x rank) of each adapted matrix, as the replay divides them.
    const uint64_t count = std::max<uint64_t>(2 * e.lora->matrices, 1);
    const uint64_t n = e.trainable_parameters / count;
    if (n) out.assign(count, {n, 0});
    return out;
  }
  for (const TensorShape& t : parameter_shapes(r.model).in_order())
    out.push_back({t.elements(), t.factors()});
  return out;
}

uint64_t adafactor_fp32_copies(const EstimateRequest& r) {
  // The optimizer sees fp32 tensors when the recipe keeps fp32 weights, an fp32 master copy
  // (which it steps instead) or fp32 adapters.
  const ElementCost w = r.recipe.weights.cost;
  const bool fp32 = r.recipe.has_master() || r.fp32_lora_adapters() || (w.den && w.num >= 4 * w.den);
  return fp32 ? 2 : 4;
}

LoopPeak adafactor_loop_peak(const std::vector<LoopTensor>& tensors, uint64_t copies) {
  LoopPeak best;
  uint64_t previous = 0;
  for (const LoopTensor& t : tensors) {
    const uint64_t extra = std::max(previous, t.factors);
    const uint64_t numbers = checked_add(checked_mul(copies, t.n, "tensor"), extra, "tensor");
    const uint64_t bytes = checked_mul(numbers, 4, "timeline bytes");
    if (bytes > best.bytes) best = {t.n, extra, copies, bytes};
    previous = t.n;
  }
  return best;
}

LoopPeak hf_adamw_loop_peak(const std::vector<LoopTensor>& tensors, uint64_t bytes_per_number) {
  LoopPeak best;
  uint64_t previous = 0;
  for (const LoopTensor& t : tensors) {
    const uint64_t bytes =
        checked_mul(checked_add(t.n, previous, "tensor"), bytes_per_number, "timeline bytes");
    if (bytes > best.bytes) best = {t.n, previous, 1, bytes};
    previous = t.n;
  }
  return best;
}

}  // namespace memplan
