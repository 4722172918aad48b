// memplan fit: one line per GPU, for scripts. Exit 0 fits on every GPU, 1 not, 3 no device.
#include <memory>

#include <memplan/error.hpp>
#include <memplan/estimate.hpp>
#include <memplan/fit.hpp>
#include <memplan/quantity.hpp>

#include "cli/command.hpp"
#include "cli/plan_options.hpp"
#include "cli/render_estimate.hpp"
#include "cli/render_fit.hpp"
#include "cli/text_table.hpp"

namespace memplan::cli {

void add_fit(CLI::App& sub, Runner& run) {
  struct State {
    RawPlan plan;
    RawOutputOptions output;
    std::string against = "total";
  };
  auto s = std::make_shared<State>();
  add_plan_options(sub, s->plan);
  add_output_options(sub, s->output);
  sub.add_option("--against", s->against,
                 "total (default): what a process can allocate; free: free memory of a real device");
  run = [s](Io& io) {
    const OutputOptions out = resolve_output_options(s->output, io);
    if (s->against != "total" && s->against != "free")
      throw Error("--against", "\"" + s->against + "\" is not valid (expected total or free)");
    const Plan plan = resolve_plan(s->plan);
    if (!plan.gpu_given)
      throw Error("--gpu", "required: the GPUs to check (e.g. --gpu t4,a100-80gb, or local)");
    const Estimate e = estimate(plan.request);
    std::vector<FitRow> fit;
    for (const GpuSpec& g : plan.targets.gpus) {
      uint64_t memory = 0;
      if (s->against == "free") {
        if (!g.is_device)
          throw Error("--against",
                      "free needs a real device (--gpu local or cuda:N), not the preset \"" + g.id + "\"");
        memory = g.free_bytes;
      }
      fit.push_back(fit_gpu(g, plan.request, e, memory));
    }
    bool all_fit = true;
    for (const FitRow& r : fit) all_fit = all_fit && r.verdict != Verdict::no;
    const bool device_missing = plan.targets.asked_local && !plan.targets.device_notes.empty();

    if (out.format == Format::json) {
      nlohmann::json rows = nlohmann::json::array();
      for (const FitRow& r : fit) rows.push_back(fit_row_json(r));
      nlohmann::json doc = {{"schema", "memplan.fit/1"},
                            {"inputs", plan.inputs},
                            {"against", s->against},
                            {"total_bytes", e.total_bytes()},
                            {"required_bytes", e.required_bytes()},
                            {"fit", rows},
                            {"fits_all", all_fit && !device_missing}};
      if (!plan.targets.device_notes.empty()) doc["device_notes"] = plan.targets.device_notes;
      io.out << doc.dump(2) << "\n";
    } else if (out.format == Format::csv) {
      CsvWriter csv;
      csv.row({"gpu", "memory_bytes", "required_bytes", "spare_bytes", "verdict"});
      for (const FitRow& r : fit)
        csv.row({r.gpu.id, std::to_string(r.memory_bytes), std::to_string(r.required_bytes),
                 std::to_string(r.spare_bytes), verdict_name(r.verdict)});
      io.out << csv.str();
    } else if (!out.quiet) {
      for (const FitRow& r : fit) {
        io.out << r.gpu.id << ": " << verdict_name(r.verdict) << " (required "
               << format_bytes(r.required_bytes, out.units) << " of "
               << format_bytes(r.memory_bytes, out.units) << ", "
               << (r.spare_bytes >= 0
                       ? format_bytes(static_cast<uint64_t>(r.spare_bytes), out.units) + " spare"
                       : format_signed_bytes(r.spare_bytes, out.units).substr(1) + " short")
               << ")";
        if (e.sharded)
          io.out << " per GPU of " << e.sharded->layout.gpus << " ("
                 << sharding_engine(e.sharded->layout.sharding) << ")";
        io.out << "\n";
        for (const std::string& w : fit_warning_texts(r.warnings, r.gpu)) io.out << "  ! " << w << "\n";
      }
    }
    if (device_missing) {
      for (const std::string& n : plan.targets.device_notes) io.err << "memplan: " << n << "\n";
      return k_no_device;
    }
    return all_fit ? k_ok : k_no_fit;
  };
}

}  // namespace memplan::cli
