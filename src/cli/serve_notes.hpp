#pragma once
// Notes `memplan serve` prints about what an engine does that memplan does not model: vLLM's V1
// engine (torch.compile, CUDA graphs), sliding-window layers' own KV pools.
#include <optional>
#include <string>

#include <memplan/model.hpp>

namespace memplan::cli {

// vLLM's V1 engine beside the V0 arithmetic memplan follows.
std::string vllm_v1_note();
// The V1 rules memplan applies with --vllm-version 0.10.1, and what they leave out.
std::string vllm_v1_rules_note();
// For a model with sliding-window layers: how `engine` ("vllm" or "sglang") pools their KV.
std::optional<std::string> sliding_window_note(const ModelSpec& m, const std::string& engine);

}  // namespace memplan::cli
