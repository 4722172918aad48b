// memplan plot: the estimate as an SVG chart, written by memplan itself (svg_plot.cpp). --vs batch
// (default) or seq: memory against the micro-batch or the sequence length, stacked by term, each
// GPU's usable memory a line, the largest value that fits marked; --vs precision: the breakdown of
// each precision recipe side by side.
#include <algorithm>
#include <memory>

#include <memplan/error.hpp>
#include <memplan/estimate.hpp>
#include <memplan/fit.hpp>
#include <memplan/recipe.hpp>

#include "cli/command.hpp"
#include "cli/plan_options.hpp"
#include "cli/render_estimate.hpp"
#include "cli/svg_plot.hpp"
#include "core/planning/planning.hpp"

namespace memplan::cli {
namespace {

constexpr size_t k_max_points = 64;

// The terms of the estimates at each point, in report order; terms zero everywhere left out.
std::vector<PlotTerm> terms_of(const std::vector<Estimate>& estimates) {
  std::vector<PlotTerm> terms;
  for (size_t k = 0; k < k_term_kinds; ++k) {
    PlotTerm t{static_cast<TermKind>(k), {}};
    bool any = false;
    for (const Estimate& e : estimates) {
      const uint64_t b = e.has(t.kind) ? e.bytes(t.kind) : 0;
      t.bytes.push_back(b);
      any = any || b;
    }
    if (any) terms.push_back(std::move(t));
  }
  return terms;
}

std::vector<PlotCapacity> capacities_of(const Plan& plan) {
  std::vector<PlotCapacity> caps;
  for (const GpuSpec& g : plan.targets.gpus) caps.push_back({g.id, g.usable_bytes()});
  return caps;
}

// Up to k_max_points values from `lo` to `hi`, evenly spread, each a multiple of `unit`.
std::vector<uint64_t> spread(uint64_t lo, uint64_t hi, uint64_t unit) {
  std::vector<uint64_t> xs;
  const uint64_t n = std::min<uint64_t>(k_max_points, (hi - lo) / unit + 1);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t x = lo + (n > 1 ? (hi - lo) * i / (n - 1) : 0);
    x = std::max(lo, x / unit * unit);
    if (xs.empty() || x > xs.back()) xs.push_back(x);
  }
  if (xs.back() != hi) xs.push_back(hi);
  return xs;
}

std::string title_of(const Plan& plan, const std::string& what) {
  const EstimateRequest& r = plan.request;
  return (r.model.name.empty() ? r.model.id : r.model.name) + ", " + r.recipe.name +
         (r.mode == Mode::train ? ", " + r.optimizer.name : std::string(", inference")) + ": " + what;
}

std::string sweep_plot(const Plan& plan, bool by_seq, Units units) {
  AreaChart c;
  c.units = units;
  c.capacities = capacities_of(plan);
  uint64_t furthest = by_seq ? plan.request.seq : plan.request.batch;
  for (size_t i = 0; i < c.capacities.size(); ++i) {
    const PlotCapacity& cap = c.capacities[i];
    PlotMark m{cap.gpu, 0, 0};
    EstimateRequest r = request_on(plan.request, plan.targets.gpus[i]);  // that GPU's CUDA context
    if (by_seq) {
      bool capped = false;
      m.x = max_seq(r, cap.bytes, capped);
      r.seq = m.x;
    } else {
      m.x = max_batch(r, cap.bytes, 0).max_micro_batch;
      r.batch = m.x;
    }
    if (!m.x) continue;  // not even 1 fits: no mark
    m.bytes = estimate(r).required_bytes();
    furthest = std::max(furthest, m.x);
    c.marks.push_back(m);
  }
  const uint64_t unit = by_seq ? 64 : 1;
  uint64_t hi = std::max<uint64_t>(by_seq ? 1024 : 8, furthest + furthest / 4);
  hi = std::min<uint64_t>((hi + unit - 1) / unit * unit, by_seq ? (1u << 22) : (1u << 20));
  c.xs = spread(unit, hi, unit);
  std::vector<Estimate> estimates;
  for (uint64_t x : c.xs) {
    EstimateRequest r = plan.request;
    (by_seq ? r.seq : r.batch) = x;
    estimates.push_back(estimate(r));
  }
  c.terms = terms_of(estimates);
  c.x_name = by_seq ? "sequence length (batch " + std::to_string(plan.request.batch) + ")"
                    : "micro-batch" + (plan.request.seq ? " (seq " + std::to_string(plan.request.seq) + ")"
                                                        : std::string());
  c.title = title_of(plan, by_seq ? "memory vs sequence length" : "memory vs micro-batch");
  return area_chart_svg(c);
}

std::string precision_plot(const RawPlan& raw, const Plan& plan, Units units) {
  BarChart c;
  c.units = units;
  c.capacities = capacities_of(plan);
  const std::vector<std::string> recipes =
      plan.request.mode == Mode::train
          ? std::vector<std::string>{"fp32",       "amp-fp16", "amp-bf16", "mixed-fp16",
                                     "mixed-bf16", "fp16",     "bf16"}
          : std::vector<std::string>{"fp32", "fp16", "bf16"};
  std::vector<Estimate> estimates;
  for (const std::string& name : recipes) {
    RawPlan each = raw;  // resolved as `estimate --precision NAME` would be
    each.given["precision"] = name;
    estimates.push_back(estimate(resolve_plan(each).request));
    c.names.push_back(name);
  }
  c.terms = terms_of(estimates);
  const EstimateRequest& r = plan.request;
  c.title = (r.model.name.empty() ? r.model.id : r.model.name) +
            (r.mode == Mode::train ? ", " + r.optimizer.name : std::string(", inference")) +
            ": memory by precision recipe";
  return bar_chart_svg(c);
}

// The training step's timeline (issue 12's step_timeline) as one bar per phase: what is alive at
// the phase's high point (its transient temporaries drawn as buffers) plus the overhead, so the
// peak phase's bar is the required memory the fit compares.
std::string step_plot(const Plan& plan, Units units) {
  const Estimate e = estimate(plan.request);
  if (!e.timeline.present)
    throw Error("--vs",
                "step: the step timeline needs single-GPU training with an activation model (an "
                "architecture and --batch/--seq)");
  BarChart c;
  c.units = units;
  c.capacities = capacities_of(plan);
  PlotTerm weights{TermKind::parameters, {}}, gradients{TermKind::gradients, {}},
      state{TermKind::optimizer_state, {}}, saved{TermKind::activations, {}},
      transient{TermKind::buffers, {}}, overhead{TermKind::overhead, {}};
  for (const PhasePoint& p : e.timeline.phases) {
    c.names.push_back(to_string(p.phase));
    weights.bytes.push_back(p.weights);
    gradients.bytes.push_back(p.gradients);
    state.bytes.push_back(p.optimizer_state);
    saved.bytes.push_back(p.activations);
    transient.bytes.push_back(p.transient + p.workspace);  // temporaries and cuBLAS workspaces
    overhead.bytes.push_back(e.bytes(TermKind::overhead));
  }
  c.terms = {weights, gradients, state, saved, transient, overhead};
  c.title = title_of(plan, std::string("one training step (peak: ") + to_string(e.timeline.peak_phase) + ")");
  return bar_chart_svg(c);
}

}  // namespace

void add_plot(CLI::App& sub, Runner& run) {
  struct State {
    RawPlan plan;
    std::string vs = "batch";
    std::string units = "gib";
  };
  auto s = std::make_shared<State>();
  add_plan_options(sub, s->plan, PlanScope::torch_step);
  sub.add_option("--vs", s->vs,
                 "What the chart shows: batch (default), seq, precision (recipes side by side), or step (the "
                 "training step's phases)");
  sub.add_option("--units", s->units, "Size units: gib (binary, default) or gb (decimal)");
  run = [s](Io& io) {
    if (s->vs != "batch" && s->vs != "seq" && s->vs != "precision" && s->vs != "step")
      throw Error("--vs", "\"" + s->vs + "\" is not a chart (expected batch, seq, precision or step)");
    const Units units = parse_units("--units", s->units);
    const Plan plan = resolve_plan(s->plan);
    if (s->vs == "precision")
      io.out << precision_plot(s->plan, plan, units);
    else if (s->vs == "step")
      io.out << step_plot(plan, units);
    else
      io.out << sweep_plot(plan, s->vs == "seq", units);
    return k_ok;
  };
}

}  // namespace memplan::cli
