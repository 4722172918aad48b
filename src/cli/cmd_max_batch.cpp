// memplan max-batch: the largest micro-batch that fits each GPU, and the accumulation steps
// that give back --effective-batch; --max-seq: the longest sequence at the given batch.
#include <memory>

#include <memplan/error.hpp>
#include <memplan/fit.hpp>
#include <memplan/quantity.hpp>
#include "core/planning/planning.hpp"

#include "cli/command.hpp"
#include "cli/plan_options.hpp"
#include "cli/render_estimate.hpp"
#include "cli/text_table.hpp"

namespace memplan::cli {

void add_max_batch(CLI::App& sub, Runner& run) {
  struct State {
    RawPlan plan;
    RawOutputOptions output;
    std::string effective;
    bool max_seq = false;
  };
  auto s = std::make_shared<State>();
  add_plan_options(sub, s->plan);
  add_output_options(sub, s->output);
  sub.add_option("--effective-batch", s->effective, "Effective batch to reach with gradient accumulation");
  sub.add_flag("--max-seq", s->max_seq, "Find the longest sequence that fits at --batch instead");
  run = [s](Io& io) {
    const OutputOptions out = resolve_output_options(s->output, io);
    const Plan plan = resolve_plan(s->plan);
    if (!plan.gpu_given) throw Error("--gpu", "required: the GPUs to plan for (e.g. --gpu rtx-4090)");
    uint64_t effective = 0;
    if (!s->effective.empty()) {
      effective = parse_count("--effective-batch", s->effective, 1ull << 40);
      if (!effective) throw Error("--effective-batch", "\"0\" must be at least 1");
    }
    nlohmann::json results = nlohmann::json::array();
    using A = TextTable::Align;
    TextTable t(s->max_seq ? std::vector<std::pair<std::string, A>>{{"gpu", A::left},
                                                                    {"batch", A::right},
                                                                    {"max seq", A::right},
                                                                    {"required", A::right},
                                                                    {"memory", A::right}}
                           : std::vector<std::pair<std::string, A>>{{"gpu", A::left},
                                                                    {"micro-batch", A::right},
                                                                    {"accumulation", A::right},
                                                                    {"effective", A::right},
                                                                    {"required", A::right},
                                                                    {"memory", A::right}});
    bool none_fit = false;
    for (const GpuSpec& g : plan.targets.gpus) {
      const uint64_t memory = g.usable_bytes();
      if (s->max_seq) {
        bool capped = false;
        const uint64_t seq = max_seq(plan.request, memory, capped);
        EstimateRequest r = plan.request;
        r.seq = seq ? seq : 1;
        const uint64_t req = estimate(r).required_bytes();
        none_fit = none_fit || seq == 0;
        results.push_back({{"gpu", g.id},
                           {"batch", plan.request.batch},
                           {"max_seq", seq},
                           {"required_bytes", req},
                           {"memory_bytes", memory},
                           {"capped", capped}});
        t.add_row({g.id, std::to_string(plan.request.batch), (capped ? ">= " : "") + group_thousands(seq),
                   format_bytes(req, out.units), format_bytes(memory, out.units)});
        continue;
      }
      const BatchPlan p = max_batch(plan.request, memory, effective);
      none_fit = none_fit || p.micro_batch == 0;
      results.push_back(
          {{"gpu", g.id},
           {"micro_batch", p.micro_batch},
           {"max_micro_batch", p.max_micro_batch},
           {"accumulation_steps", effective ? nlohmann::json(p.accumulation_steps) : nlohmann::json(nullptr)},
           {"effective_batch", effective ? nlohmann::json(p.effective_batch) : nlohmann::json(p.micro_batch)},
           {"required_bytes", p.required_bytes},
           {"memory_bytes", memory},
           {"capped", p.capped}});
      t.add_row({g.id, (p.capped ? ">= " : "") + group_thousands(p.micro_batch),
                 effective ? std::to_string(p.accumulation_steps) : "-",
                 effective ? group_thousands(p.effective_batch) : group_thousands(p.micro_batch),
                 format_bytes(p.required_bytes, out.units), format_bytes(memory, out.units)});
    }
    std::vector<std::string> notes;
    for (const auto& r : results) {
      if (!r.contains("max_micro_batch") || r["max_micro_batch"] == r["micro_batch"] || r["micro_batch"] == 0)
        continue;
      const std::string gpu = r["gpu"].get<std::string>();
      if (r["accumulation_steps"] == 1)
        notes.push_back(gpu + ": up to " + group_thousands(r["max_micro_batch"].get<uint64_t>()) +
                        " fits; the effective batch needs no accumulation");
      else
        notes.push_back(gpu + ": up to " + group_thousands(r["max_micro_batch"].get<uint64_t>()) + " fits; " +
                        r["micro_batch"].dump() + " x " + r["accumulation_steps"].dump() + " steps reaches " +
                        r["effective_batch"].dump() + " with the fewest steps and less memory");
    }
    for (const GpuSpec& g : plan.targets.gpus)
      for (const std::string& w : hardware_warnings(g, plan.request)) notes.push_back(g.id + ": " + w);
    for (const std::string& n : plan.targets.device_notes) notes.push_back(n);
    if (plan.request.model.has_batchnorm)
      notes.push_back(
          "the model has BatchNorm: its statistics see the micro-batch, so accumulation does not reproduce a "
          "large batch");
    if (effective)
      notes.push_back(
          "the learning rate follows the effective batch (micro-batch x accumulation steps x data-parallel "
          "ranks); divide the loss by the accumulation steps");
    if (out.format == Format::json) {
      nlohmann::json doc = {
          {"schema", "memplan.max-batch/1"},
          {"inputs", plan.inputs},
          {"effective_batch", effective ? nlohmann::json(effective) : nlohmann::json(nullptr)},
          {"results", results},
          {"notes", notes}};
      io.out << doc.dump(2) << "\n";
    } else if (out.format == Format::csv) {
      io.out << "gpu,micro_batch,accumulation_steps,effective_batch,required_bytes,memory_bytes\n";
      for (const auto& r : results)
        io.out << r["gpu"].get<std::string>() << ","
               << r.value("micro_batch", r.value("max_seq", uint64_t{0})) << ","
               << (r.contains("accumulation_steps") && !r["accumulation_steps"].is_null()
                       ? r["accumulation_steps"].dump()
                       : "")
               << "," << (r.contains("effective_batch") ? r["effective_batch"].dump() : "") << ","
               << r["required_bytes"].dump() << "," << r["memory_bytes"].dump() << "\n";
    } else {
      if (!out.quiet)
        io.out << "memplan max-batch: " << plan.request.model.name << ", " << plan.request.recipe.name
               << (s->max_seq ? ", longest sequence at batch " + std::to_string(plan.request.batch) : "")
               << "\n\n";
      io.out << (out.format == Format::markdown ? t.render_markdown() : t.render());
      if (!out.quiet)
        for (const std::string& n : notes) io.out << "  note: " << n << "\n";
    }
    return none_fit ? k_no_fit : k_ok;
  };
}

}  // namespace memplan::cli
