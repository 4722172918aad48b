// memplan gpus: the GPU presets.
#include <memplan/cuda_context.hpp>
#include <memplan/presets.hpp>
#include <memplan/quantity.hpp>

#include "cli/command.hpp"
#include "cli/plan_options.hpp"
#include "cli/text_table.hpp"

namespace memplan::cli {

namespace {

// The GPU presets as a table, JSON, Markdown or CSV.
int list_gpus(const Presets& p, const OutputOptions& out, Io& io) {
  if (out.format == Format::json) {
    nlohmann::json list = nlohmann::json::array();
    for (const GpuSpec& g : p.gpus)
      list.push_back(
          {{"id", g.id},
           {"name", g.name},
           {"aliases", g.aliases},
           {"vendor", g.vendor},
           {"memory_total_bytes", g.memory_total_bytes},
           {"memory_reserved_bytes",
            g.reserved_known ? nlohmann::json(g.memory_reserved_bytes) : nlohmann::json(nullptr)},
           {"usable_bytes", g.usable_bytes()},
           {"budget_bytes", g.budget_bytes ? nlohmann::json(g.budget_bytes) : nlohmann::json(nullptr)},
           {"compute_capability",
            g.compute_capability.empty() ? nlohmann::json(nullptr) : nlohmann::json(g.compute_capability)},
           {"sm_count", g.sm_count ? nlohmann::json(g.sm_count) : nlohmann::json(nullptr)},
           {"cuda_context_bytes", cuda_context(g, CudaRuntime{}).bytes()},
           {"bf16", g.bf16},
           {"fp8", g.fp8},
           {"source", g.source}});
    io.out << nlohmann::json{{"schema", "memplan.gpus/1"}, {"defaults", p.default_gpus}, {"gpus", list}}.dump(
                  2)
           << "\n";
    return k_ok;
  }
  if (out.format == Format::csv) {
    CsvWriter csv;
    csv.row({"id", "name", "memory_total_bytes", "memory_reserved_bytes", "usable_bytes",
             "compute_capability", "bf16", "fp8"});
    for (const GpuSpec& g : p.gpus)
      csv.row({g.id, g.name, std::to_string(g.memory_total_bytes),
               g.reserved_known ? std::to_string(g.memory_reserved_bytes) : "",
               std::to_string(g.usable_bytes()), g.compute_capability, g.bf16 ? "true" : "false",
               g.fp8 ? "true" : "false"});
    io.out << csv.str();
    return k_ok;
  }
  using A = TextTable::Align;
  TextTable t({{"id", A::left},
               {"memory", A::right},
               {"usable", A::right},
               {"cc", A::left},
               {"bf16", A::left},
               {"fp8", A::left},
               {"name", A::left},
               {"aliases", A::left}});
  for (const GpuSpec& g : p.gpus) {
    std::string aliases;
    for (const std::string& a : g.aliases) aliases += (aliases.empty() ? "" : ", ") + a;
    t.add_row({g.id, format_bytes(g.memory_total_bytes, out.units),
               format_bytes(g.usable_bytes(), out.units) + (g.budget_bytes     ? "*"
                                                            : g.reserved_known ? ""
                                                                               : "?"),
               g.compute_capability.empty() ? "-" : g.compute_capability, g.bf16 ? "yes" : "no",
               g.fp8 ? "yes" : "no", g.name, aliases});
  }
  io.out << (out.format == Format::markdown ? t.render_markdown() : t.render());
  if (out.format == Format::table && !out.quiet)
    io.out << "\n  memory: NVML total (R510+ drivers). usable: minus the driver-reserved share; ? = reserve "
              "unknown,"
              "\n  usable = total; * = unified memory, the share of RAM the GPU may use. Defaults for "
              "estimate: ";
  if (out.format == Format::table && !out.quiet) {
    for (size_t i = 0; i < p.default_gpus.size(); ++i) io.out << (i ? ", " : "") << p.default_gpus[i];
    io.out << "\n";
  }
  return k_ok;
}

}  // namespace

void add_gpus(CLI::App& sub, Runner& run) { add_preset_listing(sub, run, list_gpus); }

}  // namespace memplan::cli
