// memplan models --fits GPU (see models_fits.hpp).
#include "cli/models_fits.hpp"

#include <memplan/error.hpp>
#include <memplan/estimate.hpp>
#include <memplan/quantity.hpp>
#include <memplan/recipe.hpp>
#include "core/base/quantity_kinds.hpp"

#include "cli/options.hpp"
#include "cli/plan_options.hpp"
#include "cli/text_table.hpp"
#include "core/formats/llama_quant.hpp"
#include "core/planning/planning.hpp"

namespace memplan::cli {
namespace {

struct FitsRow {
  std::string id;
  bool fits = false;
  uint64_t required = 0;
  uint64_t max_context = 0;  // the longest context that fits at batch 1 (0: none)
  bool capped = false;       // the search stopped at its cap
  uint64_t trained = 0;      // the model's own context length (0: unknown)
  std::string skipped;       // why a preset could not be planned
};

}  // namespace

int list_fits(const Presets& presets, const FitsOptions& given, const OutputOptions& out, Io& io) {
  FitsOptions o = given;
  if (o.mode.empty()) o.mode = "infer";
  if (o.seq.empty()) o.seq = "4096";
  const GpuTargets targets = resolve_gpus(presets, o.gpu);
  if (targets.gpus.size() != 1)
    throw Error("--fits",
                "\"" + o.gpu + "\" names " + std::to_string(targets.gpus.size()) + " GPUs (expected one)");
  const GpuSpec& gpu = targets.gpus.front();
  const uint64_t memory = gpu.usable_bytes();
  // The options are checked once, here; a preset that cannot be planned is a row that says why.
  if (o.mode != "infer" && o.mode != "inference" && o.mode != "train" && o.mode != "training")
    throw Error("--mode", "\"" + o.mode + "\" is not valid (expected train or infer)");
  if (!parse_tokens("--seq", o.seq, 1ull << 32)) throw Error("--seq", "\"" + o.seq + "\" must be at least 1");
  if (!o.quantize.empty() && !find_llama_ftype(o.quantize)) find_quantize_format("--quantize", o.quantize);
  if (!o.precision.empty()) parse_recipe("--precision", o.precision);
  std::vector<FitsRow> rows;
  for (const ModelPreset& mp : presets.models) {
    RawPlan raw;
    raw.given["model"] = mp.model.id;
    raw.given["mode"] = o.mode;
    raw.given["seq"] = o.seq;
    raw.given["gpu"] = o.gpu;
    if (!o.quantize.empty()) raw.given["quantize"] = o.quantize;
    if (!o.precision.empty()) raw.given["precision"] = o.precision;
    FitsRow row;
    row.id = mp.model.id;
    Plan plan;
    try {
      plan = resolve_plan(raw);
    } catch (const Error& e) {
      row.skipped = error_text(e);
      rows.push_back(row);
      continue;
    }
    const Estimate e = estimate(plan.request);
    row.required = e.required_bytes();
    row.fits = row.required <= memory;
    if (plan.request.model.arch) {
      row.trained = plan.request.model.arch->max_positions;
      try {
        row.max_context = max_seq(plan.request, memory, row.capped);
      } catch (const Error&) {
        row.max_context = 0;
      }
    }
    rows.push_back(row);
  }
  if (out.format == Format::json) {
    nlohmann::json list = nlohmann::json::array();
    for (const FitsRow& r : rows) {
      nlohmann::json j = {{"id", r.id},
                          {"fits", r.fits},
                          {"required_bytes", r.required},
                          {"max_context", r.max_context},
                          {"trained_context", r.trained}};
      if (!r.skipped.empty()) j["skipped"] = r.skipped;
      list.push_back(j);
    }
    io.out << nlohmann::json{{"schema", "memplan.models-fits/1"},
                             {"gpu", gpu.id},
                             {"memory_bytes", memory},
                             {"mode", o.mode},
                             {"quantize", o.quantize},
                             {"precision",
                              o.precision.empty() ? nlohmann::json() : nlohmann::json(o.precision)},
                             {"seq", o.seq},
                             {"models", list}}
                  .dump(2)
           << "\n";
    return k_ok;
  }
  using A = TextTable::Align;
  TextTable t({{"id", A::left},
               {"fits", A::left},
               {"required", A::right},
               {"context that fits", A::right},
               {"trained", A::right},
               {"note", A::left}});
  for (const FitsRow& r : rows) {
    if (!r.skipped.empty()) {
      t.add_row({r.id, "-", "-", "-", "-", r.skipped});
      continue;
    }
    t.add_row({r.id, r.fits ? "yes" : "no", format_bytes(r.required, out.units),
               r.max_context ? group_thousands(r.max_context) + (r.capped ? "+" : "") : "none",
               r.trained ? group_thousands(r.trained) : "-", ""});
  }
  io.out << (out.format == Format::markdown ? t.render_markdown() : t.render());
  if (out.format == Format::table && !out.quiet)
    io.out << "\n  On " << gpu.id << " (" << format_bytes(memory, out.units) << " usable), --mode " << o.mode
           << ", --seq " << o.seq << (o.quantize.empty() ? "" : ", --quantize " + o.quantize)
           << (o.precision.empty() ? ", each checkpoint's dtype" : ", --precision " + o.precision)
           << "; the context column is the longest sequence that fits at batch 1\n";
  return k_ok;
}

}  // namespace memplan::cli
