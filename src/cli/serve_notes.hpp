#pragma once
// Notes `memplan serve` prints about the rules it applies and what an engine does that memplan
// does not model: torch.compile, CUDA graphs, sliding-window layers' own KV pools.
#include <optional>
#include <string>

#include <memplan/model.hpp>
#include "core/serving/vllm_budget.hpp"

namespace memplan::cli {

// The V1 rules memplan applies (the default engine), with the defaults `b` resolved, and what they
// leave out.
std::string vllm_v1_rules_note(const VllmBudget& b);
// The V0 rules memplan applies (--vllm-version 0.6 or 0.7, or v0), and V1 beside them.
std::string vllm_v0_rules_note(const VllmBudget& b);
// For a model with sliding-window layers: how vLLM's engine in `b` holds their KV.
std::optional<std::string> vllm_window_note(const ModelSpec& m, const VllmBudget& b);
// For a model with sliding-window layers: how SGLang pools their KV.
std::optional<std::string> sglang_window_note(const ModelSpec& m);

}  // namespace memplan::cli
