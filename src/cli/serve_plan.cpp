// memplan serve's plan: the checkpoint's dtype unless --precision says otherwise (serve_plan.hpp).
#include "cli/serve_plan.hpp"

namespace memplan::cli {

ServePlan resolve_serve_plan(RawPlan raw) {
  raw.given["mode"] = "infer";
  ServePlan p;
  if (raw.given.count("precision")) {
    p.plan = resolve_plan(raw);
    return p;
  }
  // First as the model's file says (plan_options.cpp: its torch_dtype, or its stored bytes; its
  // notes say which).
  p.plan = resolve_plan(raw);
  const std::string stored = p.plan.request.model.weight_format;
  if (p.plan.request.stored_weights || stored == "bf16" || stored == "fp16") return p;
  raw.given["precision"] = "bf16";
  p.plan = resolve_plan(raw);
  p.dtype_note =
      stored == "fp32"
          ? "dtype bf16: the engine's dtype auto downcasts an fp32 checkpoint (--precision "
            "fp16 on GPUs without bf16)"
          : "dtype bf16, the engine's dtype auto for a bf16 checkpoint (--precision fp16 for fp16 ones)";
  return p;
}

}  // namespace memplan::cli
