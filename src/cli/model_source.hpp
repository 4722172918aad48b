#pragma once
// Where the model comes from: exactly one of --params, --model, --config, --safetensors,
// --gguf, --mlp (architecture flags may refine a preset or stand alone).

#include <map>
#include <string>

#include <memplan/model.hpp>
#include <memplan/presets.hpp>

#include "cli/plan_options.hpp"

namespace memplan::cli {

// Builds the ModelSpec from the plan values (keys as in plan files). Throws Error when there
// is no source, two sources, or a bad value.
ModelSpec resolve_model_source(const std::map<std::string, std::string>& values, const Presets& presets);

// Adds the real device named `name` ("local", "cuda:N") to `targets`, or a note why it can't.
void resolve_local_gpu(const std::string& name, GpuTargets& targets);

}  // namespace memplan::cli
