// ladder/sweep's prediction from memplan's own estimator: the estimate flags given before "--"
// (--model gpt2 --seq 1024 --gpu local ...) resolved as a plan, solved for the largest batch on
// the first GPU named.
#include <memplan/error.hpp>
#include <memplan/fit.hpp>
#include "core/planning/planning.hpp"

#include "cli/options.hpp"
#include "cli/plan_options.hpp"
#include "cli/prediction.hpp"

namespace memplan::cli {

std::optional<Prediction> predict_from_plan_args(const std::vector<std::string>& plan_args,
                                                 std::string& why) {
  CLI::App app{"plan"};
  RawPlan raw;
  add_plan_options(app, raw, PlanScope::torch_step);
  try {
    std::vector<std::string> reversed(plan_args.rbegin(), plan_args.rend());
    app.parse(reversed);
    Plan plan = resolve_plan(raw);
    if (!plan.gpu_given) {
      why = "name the GPU to plan for (--gpu local, cuda:N or a preset such as rtx-4090)";
      return std::nullopt;
    }
    if (plan.targets.gpus.empty()) {
      why = plan.targets.device_notes.empty() ? "no GPU" : plan.targets.device_notes.front();
      return std::nullopt;
    }
    const uint64_t memory = plan.targets.gpus.front().usable_bytes();
    const EstimateRequest request = request_on(plan.request, plan.targets.gpus.front());
    const BatchPlan p = max_batch(request, memory, 0);
    Prediction out;
    out.max_batch = p.micro_batch;
    out.bytes_at = [request](uint64_t batch) {
      EstimateRequest r = request;
      r.batch = batch ? batch : 1;
      return estimate(r).required_bytes();
    };
    return out;
  } catch (const CLI::ParseError& e) {
    why = e.what();
  } catch (const Error& e) {
    why = error_text(e);
  }
  return std::nullopt;
}

}  // namespace memplan::cli
