// memplan estimate: the breakdown and a fit table against the default or named GPUs.
#include <memory>

#include <memplan/estimate.hpp>
#include <memplan/fit.hpp>

#include "cli/command.hpp"
#include "cli/plan_options.hpp"
#include "cli/render_bar.hpp"
#include "cli/render_estimate.hpp"
#include "cli/verdict_fix.hpp"

namespace memplan::cli {

void add_estimate(CLI::App& sub, Runner& run) {
  struct State {
    RawPlan plan;
    RawOutputOptions output;
    RawBarOptions bar;
  };
  auto s = std::make_shared<State>();
  add_plan_options(sub, s->plan, PlanScope::torch_step);
  add_output_options(sub, s->output);
  add_bar_options(sub, s->bar);
  run = with_from_section(s->plan, s->output, [s](Io& io) {
    const OutputOptions out = resolve_output_options(s->output, io);
    const Plan plan = resolve_plan(s->plan);
    const Estimate e = estimate(plan.request);
    std::vector<FitRow> fit;
    for (const GpuSpec& g : plan.targets.gpus) fit.push_back(fit_gpu(g, plan.request, e));
    const BarOptions bar = resolve_bar_options(s->bar, io, out);
    // A "no" names its cheapest fix (advise's search); the quiet and CSV forms carry no words.
    const bool words = !out.quiet && out.format != Format::csv;
    const std::vector<std::optional<VerdictFix>> fixes =
        words ? verdict_fixes(plan, fit) : std::vector<std::optional<VerdictFix>>{};
    io.out << render_estimate(plan, e, fit, out, bar.show ? render_bars(e, fit, out.units, bar) : "", fixes);
    return k_ok;
  });
}

}  // namespace memplan::cli
