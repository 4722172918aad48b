#pragma once
// Which planning options a command takes: the PyTorch step's planners (estimate, fit, max-batch,
// advise, why-oom, plot) take every one; serve (a serving engine's inference budget) and gguf-fit
// (llama.cpp) only those their budgets read. A flag outside a command's scope is not registered,
// so the command line refuses it and its --help does not list it.

#include <memplan/error.hpp>

namespace memplan::cli {

enum class PlanScope {
  torch_step,  // a PyTorch training or inference step: every option of the table (options.cpp)
  serving,     // vLLM / SGLang start-up budget: the model, its formats, the GPU and tp x pp
  llamacpp,    // llama.cpp: the model, its file type, the GPUs and the per-process reserve
};

// Whether a command planning with `scope` takes the option of `field` on its command line.
bool scope_takes(PlanScope scope, Field field);

}  // namespace memplan::cli
