#pragma once
// The plan `memplan serve` works from, for vLLM and SGLang alike: inference, and without
// --precision the dtype both engines choose with dtype "auto".
#include <string>

#include "cli/plan_options.hpp"

namespace memplan::cli {

struct ServePlan {
  Plan plan;
  std::string dtype_note;  // why bf16 was chosen; "" when the plan's own notes say the dtype
};

// `raw` resolved for serving (mode infer). Without --precision: a checkpoint's fp16 or bf16 as
// stored; a quantised checkpoint (quantization_config, GGUF) at its stored bytes; anything else
// (presets, fp32 checkpoints) bf16, as vLLM 0.10's dtype "auto" downcasts fp32 checkpoints
// (vllm/config.py _resolve_auto_dtype: the platform's first supported dtype, bf16 from Ampere on)
// and SGLang takes the checkpoint's. --quantize keeps bf16 for what it does not quantise.
ServePlan resolve_serve_plan(RawPlan raw);

}  // namespace memplan::cli
