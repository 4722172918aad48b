// advise(): the current verdict, one suggestion per knob of the table, the smallest preset GPU
// that fits as is, and the cheapest combinations that first make the run fit.
#include "core/planning/advise.hpp"

#include <algorithm>
#include <utility>

#include <optional>

#include <memplan/error.hpp>
#include <memplan/fit.hpp>
#include <memplan/quantity.hpp>
#include "core/base/checked.hpp"

#include "core/planning/advise_knobs.hpp"

namespace memplan {
namespace {

using advice::Candidate;
using advice::KnobContext;

bool unified_memory(const GpuSpec& g) { return g.vendor == "apple" || g.budget_bytes != 0; }

// The knob's mildest setting that fits, else the one that needs least memory.
std::optional<Suggestion> best_setting(const std::vector<Candidate>& settings, const KnobContext& ctx) {
  for (const Candidate& c : settings) {  // exact only where it may fit: the first that fits is returned
    Suggestion s = advice::to_suggestion(c, ctx, false);
    if (s.fits()) return s;
  }
  std::optional<Suggestion> best;  // none fits: the smallest, each replayed exactly
  for (const Candidate& c : settings) {
    Suggestion s = advice::to_suggestion(c, ctx);
    if (!best || s.required_bytes < best->required_bytes) best = std::move(s);
  }
  return best;
}

// Tier 3: the smallest preset GPU (by usable memory) that runs the request as is, natively;
// unified-memory (Apple) entries only when no other fits.
Suggestion bigger_gpu(const EstimateRequest& r, uint64_t required, const GpuSpec& current,
                      const std::vector<GpuSpec>& presets) {
  // On another GPU the run needs that GPU's CUDA context instead of this one's.
  auto required_on = [&](const GpuSpec& g) { return required - r.overhead_bytes + overhead_on(g, r); };
  const GpuSpec* best = nullptr;
  const GpuSpec* largest = nullptr;
  for (bool unified : {false, true}) {
    for (const GpuSpec& g : presets) {
      if (g.id == current.id || unified_memory(g) != unified || !hardware_warnings(g, r).empty()) continue;
      if (!unified && (!largest || g.usable_bytes() > largest->usable_bytes())) largest = &g;
      if (required_on(g) <= g.usable_bytes() && (!best || g.usable_bytes() < best->usable_bytes())) best = &g;
    }
    if (best) break;
  }
  Suggestion s;
  s.tier = 3;
  s.request = r;
  s.cost_rank = 100;
  const GpuSpec* judged = best ? best : largest ? largest : &current;
  s.required_bytes = required_on(*judged);
  s.request.overhead_bytes = overhead_on(*judged, r);
  s.gpu = judged->id;
  s.memory_bytes = judged->usable_bytes();
  s.verdict = verdict_for(s.required_bytes, s.memory_bytes);
  AdviceChange ch;
  ch.knob = AdviceKnob::gpu;
  ch.tier = 3;
  ch.cost_rank = 100;
  ch.found = best != nullptr;
  ch.gpu = judged->id;
  ch.gpu_bytes = judged->usable_bytes();
  if (best && unified_memory(*best)) {
    AdviceNote unified;
    unified.code = AdviceNoteCode::unified_memory;
    unified.gpu = best->id;
    ch.notes.push_back(std::move(unified));
  }
  s.changes.push_back(std::move(ch));
  return s;
}

}  // namespace

Advice advise(const EstimateRequest& given, const GpuSpec& gpu, const std::vector<GpuSpec>& presets,
              const AdviceOptions& options) {
  const EstimateRequest request = request_on(given, gpu);  // this GPU's CUDA context (or --overhead)
  if (options.max_knobs > 3 || options.max_candidates == 0)
    throw Error("advise", "the search is limited to 3 knobs per combination and needs a candidate budget");
  Advice a;
  a.request = request;
  a.gpu = gpu;
  const Estimate e = estimate(request);
  const FitRow row = fit_gpu(gpu, request, e);
  a.required_bytes = row.required_bytes;
  a.memory_bytes = row.memory_bytes;
  a.spare_bytes = row.spare_bytes;
  a.verdict = row.verdict;
  a.hardware_notes = row.warnings;

  const KnobContext ctx{gpu, a.memory_bytes, options};
  const Candidate base{request, {}};
  const std::vector<advice::Knob>& table = advice::knob_table();
  // Each knob's settings on the run as it is: the single changes, and the first step of every
  // combination the search tries (it reuses them rather than running the knobs again).
  std::vector<std::vector<Candidate>> settings(table.size());
  std::vector<std::size_t> fitting;
  for (std::size_t i = 0; i < table.size(); ++i) {
    settings[i] = advice::apply_knob(table[i], base, ctx);
    std::optional<Suggestion> s = best_setting(settings[i], ctx);
    if (!s || s->required_bytes >= a.required_bytes) continue;  // saves nothing on this run
    if (s->fits()) fitting.push_back(i);
    a.singles.push_back(std::move(*s));
  }
  a.singles.push_back(bigger_gpu(request, a.required_bytes, gpu, presets));
  if (!a.fits())
    a.combinations =
        advice::search_combinations(base, ctx, settings, fitting, a.candidates_tried, a.search_capped);
  return a;
}

std::optional<Suggestion> cheapest_fit(const EstimateRequest& given, const GpuSpec& gpu,
                                       const std::vector<GpuSpec>& presets, const AdviceOptions& options) {
  const EstimateRequest request = request_on(given, gpu);
  const Estimate e = estimate(request);
  const FitRow row = fit_gpu(gpu, request, e);
  if (row.verdict != Verdict::no) return std::nullopt;
  const KnobContext ctx{gpu, row.memory_bytes, options};
  const Candidate base{request, {}};
  const std::vector<advice::Knob>& table = advice::knob_table();
  std::vector<std::size_t> order(table.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return advice::knob_floor(table[a].knob, request.mode) < advice::knob_floor(table[b].knob, request.mode);
  });
  std::optional<Suggestion> best;
  std::vector<std::vector<Candidate>> settings(table.size());
  for (std::size_t i : order) {
    if (best && advice::knob_floor(table[i].knob, request.mode) >= std::pair{best->tier, best->cost_rank})
      break;
    settings[i] = advice::apply_knob(table[i], base, ctx);
    std::optional<Suggestion> s = best_setting(settings[i], ctx);
    if (s && s->fits() &&
        (!best || std::pair{s->tier, s->cost_rank} < std::pair{best->tier, best->cost_rank}))
      best = std::move(s);
  }
  if (best) return best;
  // No one change fits, and every knob ran: advise()'s cheapest combination (from the same settings,
  // none of them fitting alone), else a bigger GPU; advise() would compute the same again.
  if (options.max_knobs > 3 || options.max_candidates == 0)
    throw Error("advise", "the search is limited to 3 knobs per combination and needs a candidate budget");
  if (std::optional<Suggestion> c = advice::cheapest_combination(base, ctx, settings, {})) return c;
  Suggestion bigger = bigger_gpu(request, row.required_bytes, gpu, presets);
  if (bigger.fits()) return bigger;
  return std::nullopt;
}

LoraAdapters lora_adapters(const ModelSpec& model, uint64_t rank) {
  LoraTargets t;
  t.rank = rank;
  t.q = t.v = true;
  return lora_adapters(model, t);
}

const char* advice_knob_name(AdviceKnob k) {
  switch (k) {
    case AdviceKnob::micro_batch:
      return "micro-batch";
    case AdviceKnob::autocast:
      return "autocast";
    case AdviceKnob::sequence:
      return "sequence";
    case AdviceKnob::checkpointing:
      return "checkpointing";
    case AdviceKnob::optimizer_8bit:
      return "optimizer-8bit";
    case AdviceKnob::adafactor:
      return "adafactor";
    case AdviceKnob::lora:
      return "lora";
    case AdviceKnob::qlora:
      return "qlora";
    case AdviceKnob::sharding:
      return "sharding";
    case AdviceKnob::offload:
      return "offload";
    case AdviceKnob::gpu:
      return "gpu";
    case AdviceKnob::quantize:
      return "quantize";
    case AdviceKnob::kv_quantize:
      return "kv-quantize";
    case AdviceKnob::layer_offload:
      return "layer-offload";
    case AdviceKnob::tensor_parallel:
      return "tensor-parallel";
  }
  return "gpu";
}

}  // namespace memplan
