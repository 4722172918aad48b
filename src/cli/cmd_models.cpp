// memplan models: the model presets.
#include <memplan/presets.hpp>
#include <memplan/quantity.hpp>

#include <memory>

#include <memplan/error.hpp>

#include "cli/command.hpp"
#include "cli/models_fits.hpp"
#include "cli/plan_options.hpp"
#include "cli/text_table.hpp"

namespace memplan::cli {

namespace {

// The model presets as a table, JSON, Markdown or CSV.
int list_models(const Presets& p, const OutputOptions& out, Io& io) {
  if (out.format == Format::json) {
    nlohmann::json list = nlohmann::json::array();
    for (const ModelPreset& mp : p.models) {
      const ModelSpec& m = mp.model;
      nlohmann::json arch = nullptr;
      if (m.arch)
        arch = {{"model_type", m.arch->model_type},
                {"layers", m.arch->layers},
                {"hidden", m.arch->hidden},
                {"heads", m.arch->heads},
                {"kv_heads", m.arch->resolved_kv_heads()},
                {"head_dim", m.arch->resolved_head_dim()},
                {"intermediate", m.arch->intermediate},
                {"vocab", m.arch->vocab}};
      list.push_back({{"id", m.id},
                      {"name", m.name},
                      {"aliases", mp.aliases},
                      {"parameters", m.parameters},
                      {"active_parameters",
                       m.active_parameters ? nlohmann::json(m.active_parameters) : nlohmann::json(nullptr)},
                      {"tensors", m.tensors},
                      {"arch", arch},
                      {"source", m.source}});
    }
    io.out << nlohmann::json{{"schema", "memplan.models/1"}, {"models", list}}.dump(2) << "\n";
    return k_ok;
  }
  if (out.format == Format::csv) {
    CsvWriter csv;
    csv.row({"id", "name", "parameters", "tensors", "layers", "hidden", "heads", "kv_heads"});
    for (const ModelPreset& mp : p.models) {
      const ModelSpec& m = mp.model;
      const bool a = m.arch.has_value();
      csv.row({m.id, m.name, std::to_string(m.parameters), std::to_string(m.tensors),
               a ? std::to_string(m.arch->layers) : "", a ? std::to_string(m.arch->hidden) : "",
               a ? std::to_string(m.arch->heads) : "", a ? std::to_string(m.arch->resolved_kv_heads()) : ""});
    }
    io.out << csv.str();
    return k_ok;
  }
  using A = TextTable::Align;
  TextTable t({{"id", A::left},
               {"parameters", A::right},
               {"tensors", A::right},
               {"layers", A::right},
               {"hidden", A::right},
               {"heads/kv", A::right},
               {"name", A::left}});
  for (const ModelPreset& mp : p.models) {
    const ModelSpec& m = mp.model;
    const bool a = m.arch.has_value();
    t.add_row({m.id, group_thousands(m.parameters), std::to_string(m.tensors),
               a ? std::to_string(m.arch->layers) : "-", a ? std::to_string(m.arch->hidden) : "-",
               a ? std::to_string(m.arch->heads) + "/" + std::to_string(m.arch->resolved_kv_heads()) : "-",
               m.name});
  }
  io.out << (out.format == Format::markdown ? t.render_markdown() : t.render());
  if (out.format == Format::table && !out.quiet)
    io.out << "\n  Every count names its source: memplan models --format json\n";
  return k_ok;
}

}  // namespace

void add_models(CLI::App& sub, Runner& run) {
  auto fits = std::make_shared<FitsOptions>();
  sub.add_option("--fits", fits->gpu,
                 "List which presets fit this GPU, and the context left (with --mode, --quantize, --seq)");
  sub.add_option("--mode", fits->mode, "With --fits: infer (default) or train");
  sub.add_option("--quantize", fits->quantize, "With --fits: the weight format (q4_k_m, q8_0, nf4, ...)");
  sub.add_option("--seq", fits->seq, "With --fits: the context length (default 4096)");
  sub.add_option("--precision", fits->precision,
                 "With --fits: the recipe (default: each checkpoint's torch_dtype, as estimate)");
  add_preset_listing(sub, run, [fits](const Presets& p, const OutputOptions& out, Io& io) {
    if (!fits->gpu.empty()) return list_fits(p, *fits, out, io);
    if (!fits->mode.empty() || !fits->quantize.empty() || !fits->seq.empty() || !fits->precision.empty())
      throw Error("--fits", "required with --mode, --quantize, --precision or --seq (e.g. --fits rtx-4090)");
    return list_models(p, out, io);
  });
}

}  // namespace memplan::cli
