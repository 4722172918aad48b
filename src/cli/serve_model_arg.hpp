#pragma once
// The model argument of a serving engine's launch line (`vllm serve MODEL`, SGLang's
// --model-path): a preset's Hugging Face repository id, a Hugging Face id as given, or the path
// the user gave (a config.json or safetensors file stands for its folder).
#include <optional>
#include <string>

#include <memplan/model.hpp>

#include "cli/plan_options.hpp"

namespace memplan::cli {

struct ServeModelArg {
  std::string arg;
  std::optional<std::string> note;  // when the argument is a stand-in the user must replace
};

// `preset`: the model came from --model NAME (a preset), not a file or a Hugging Face id.
ServeModelArg serve_model_arg(const ModelSpec& m, bool preset);

// Whether --model named a preset: given, and not a Hugging Face id ("org/name" holds a slash).
inline bool serve_from_preset(const RawPlan& plan, const ModelSpec& m) {
  return plan.given.count("model") && m.id.find('/') == std::string::npos;
}

}  // namespace memplan::cli
