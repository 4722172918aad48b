#pragma once
// Where the model comes from: exactly one of --params, --model, --config, --safetensors,
// --gguf, --mlp (architecture flags may refine a preset or stand alone).

#include <string>

#include <memplan/model.hpp>
#include <memplan/presets.hpp>
#include "core/models/hf_cache.hpp"

#include "cli/options.hpp"
#include "cli/plan_options.hpp"

namespace memplan::cli {

// Builds the ModelSpec from the parsed plan values. Throws Error when there is no source, two
// sources, or architecture flags that do not fit together. `offline`: a Hugging Face model id is
// read from the caches only (as with HF_HUB_OFFLINE=1).
ModelSpec resolve_model_source(const PlanValues& values, const Presets& presets, bool offline = false);

// The local Hugging Face cache's snapshot folder of a model id ("org/name[@revision]"), offline;
// then memplan's cache, then (unless `offline` or HF_HUB_OFFLINE) the Hub. Error naming `subject`
// and the folders looked in when none has it.
std::string resolve_hub_snapshot(const HubModelId& id, const std::string& subject, bool offline = false);

// Adds the real device named `name` ("local", "cuda:N") to `targets`, or a note why it can't.
void resolve_local_gpu(const std::string& name, GpuTargets& targets);

}  // namespace memplan::cli
