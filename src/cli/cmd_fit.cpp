// memplan fit: one line per GPU, for scripts. Exit 0 fits on every GPU, 1 not, 3 no device.
#include <memory>
#include <optional>

#include <memplan/error.hpp>
#include <memplan/estimate.hpp>
#include <memplan/fit.hpp>
#include <memplan/quantity.hpp>
#include <memplan/sharding.hpp>

#include "cli/command.hpp"
#include "cli/plan_options.hpp"
#include "cli/render_bar.hpp"
#include "cli/render_cuda_context.hpp"
#include "cli/render_estimate.hpp"
#include "cli/render_fit.hpp"
#include "cli/text_table.hpp"
#include "cli/verdict_fix.hpp"

namespace memplan::cli {
namespace {

// The result of `memplan fit`: one row per GPU and what they were judged against.
struct FitReport {
  std::string against;  // "total" or "free"
  uint64_t total_bytes = 0;
  uint64_t required_bytes = 0;
  std::optional<ParallelLayout> layout;  // the run is spread over GPUs: rows are per GPU
  std::vector<FitRow> rows;
  std::vector<std::optional<VerdictFix>> fixes;  // per row: the cheapest change when it says no
  std::vector<std::string> device_notes;         // a local device that could not be read
  bool device_missing = false;                   // --gpu local asked and a device note says why it failed

  bool all_fit() const {
    for (const FitRow& r : rows)
      if (r.verdict == Verdict::no) return false;
    return true;
  }
};

std::string fit_json(const FitReport& f, const nlohmann::json& inputs) {
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < f.rows.size(); ++i)
    rows.push_back(fit_row_json(f.rows[i], i < f.fixes.size() ? f.fixes[i] : std::nullopt));
  nlohmann::json doc = {{"schema", "memplan.fit/1"},
                        {"inputs", inputs},
                        {"against", f.against},
                        {"total_bytes", f.total_bytes},
                        {"required_bytes", f.required_bytes},
                        {"fit", rows},
                        {"fits_all", f.all_fit() && !f.device_missing}};
  if (!f.device_notes.empty()) doc["device_notes"] = f.device_notes;
  return doc.dump(2) + "\n";
}

std::string fit_csv(const FitReport& f) {
  CsvWriter csv;
  csv.row({"gpu", "memory_bytes", "required_bytes", "spare_bytes", "verdict"});
  for (const FitRow& r : f.rows)
    csv.row({r.gpu.id, std::to_string(r.memory_bytes), std::to_string(r.required_bytes),
             std::to_string(r.spare_bytes), verdict_name(r.verdict)});
  return csv.str();
}

// One line per GPU, its warnings after it.
std::string fit_lines(const FitReport& f, const OutputOptions& out) {
  std::string s;
  for (size_t i = 0; i < f.rows.size(); ++i) {
    const FitRow& r = f.rows[i];
    s += r.gpu.id + ": " + verdict_name(r.verdict) + " (required " +
         format_bytes(r.required_bytes, out.units) + " of " + format_bytes(r.memory_bytes, out.units) + ", " +
         (r.spare_bytes >= 0 ? format_bytes(static_cast<uint64_t>(r.spare_bytes), out.units) + " spare"
                             : format_signed_bytes(r.spare_bytes, out.units).substr(1) + " short") +
         (r.overhead_given ? std::string()
          : gpu_runtime(r.gpu) == GpuRuntime::cuda
              ? "; with its CUDA context " + format_bytes(r.overhead_bytes, out.units)
              : "; with " + format_bytes(r.overhead_bytes, out.units) + " for its " +
                    runtime_name(gpu_runtime(r.gpu)) +
                    " context: no measured figure, the H200's CUDA one stands in") +
         ")";
    if (f.layout)
      s += " per GPU of " + std::to_string(f.layout->gpus) + " (" + sharding_engine(f.layout->sharding) + ")";
    s += "\n";
    for (const std::string& w : fit_warning_texts(r.warnings, r.gpu)) s += "  ! " + w + "\n";
    if (i < f.fixes.size() && r.verdict == Verdict::no)
      s += verdict_fix_lines({r}, {f.fixes[i]}, out.units, false);
  }
  return s;
}

}  // namespace

void add_fit(CLI::App& sub, Runner& run) {
  struct State {
    RawPlan plan;
    RawOutputOptions output;
    std::string against = "total";
    RawBarOptions bar;
  };
  auto s = std::make_shared<State>();
  add_plan_options(sub, s->plan, PlanScope::torch_step);
  add_output_options(sub, s->output);
  add_bar_options(sub, s->bar);
  sub.add_option("--against", s->against,
                 "total (default): what a process can allocate; free: free memory of a real device");
  run = with_from_section(s->plan, s->output, [s](Io& io) {
    const OutputOptions out = resolve_output_options(s->output, io);
    if (s->against != "total" && s->against != "free")
      throw Error("--against", "\"" + s->against + "\" is not valid (expected total or free)");
    const Plan plan = resolve_plan(s->plan);
    if (!plan.gpu_given)
      throw Error("--gpu", "required: the GPUs to check (e.g. --gpu t4,a100-80gb, or local)");
    const Estimate e = estimate(plan.request);
    FitReport f;
    f.against = s->against;
    f.total_bytes = e.total_bytes();
    f.required_bytes = e.required_bytes();
    if (e.sharded) f.layout = e.sharded->layout;
    for (const GpuSpec& g : plan.targets.gpus) {
      uint64_t memory = 0;
      if (s->against == "free") {
        if (!g.is_device)
          throw Error("--against",
                      "free needs a real device (--gpu local or cuda:N), not the preset \"" + g.id + "\"");
        memory = g.free_bytes;
      }
      f.rows.push_back(fit_gpu(g, plan.request, e, memory));
    }
    if (!out.quiet && out.format != Format::csv) f.fixes = verdict_fixes(plan, f.rows);
    f.device_notes = plan.targets.device_notes;
    f.device_missing = plan.targets.asked_local && !plan.targets.device_notes.empty();

    if (out.format == Format::json)
      io.out << fit_json(f, plan.inputs);
    else if (out.format == Format::csv)
      io.out << fit_csv(f);
    else if (!out.quiet)
      io.out << fit_lines(f, out)
             << (no_sequence(plan.request) ? "  note: activations are not counted: no --seq given\n" : "");
    const BarOptions bar = resolve_bar_options(s->bar, io, out);
    if (bar.show) io.out << "\n" << render_bars(e, f.rows, out.units, bar);
    if (f.device_missing) {
      for (const std::string& n : f.device_notes) io.err << "memplan: " << n << "\n";
      return k_no_device;
    }
    return f.all_fit() ? k_ok : k_no_fit;
  });
}

}  // namespace memplan::cli
