#pragma once
// llama.cpp's own fit (`-fit on`, the default of recent llama-server builds): the parameters the
// user left unset are changed until every GPU keeps a margin free. Rules from llama_params_fit_impl
// (src/llama.cpp, December 2025; later common/fit.cpp), with the plan's own bytes standing in for
// its dry-run measurements (a model loaded with no_alloc):
//  1. Every layer offloaded at the user's context, else the model's training context. Nothing
//     changes when every GPU keeps the margin.
//  2. When the user set no context, lower it by the total deficit over the KV bytes per token, no
//     lower than --fit-ctx; done when the total over all GPUs has room.
//  3. A user-set -ngl stops the fit ("n_gpu_layers already set by user"), as does a user -ts.
//  4. MoE on one GPU: when the dense weights fit with every expert on the CPU, experts of the
//     first layers move to the CPU by linear interpolation between the two plans.
//  5. Otherwise the layers per GPU are extrapolated from the plans at 1 and at layers / GPUs
//     layers per GPU: (free - margin - base) / per layer.
// Several GPUs with an MoE model (the iterative step 3b) are not modelled: the fit reports it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/serving/llamacpp.hpp"

namespace memplan {

struct LlamaCppFitOptions {
  uint64_t margin_bytes = 1024ull << 20;  // --fit-target, per GPU (common.h fit_params_target)
  uint64_t n_ctx_min = 4096;              // --fit-ctx (common.h fit_params_min_ctx)
  uint64_t n_ctx_train = 0;               // the model's training context (-c 0)
  bool ctx_set = false;                   // the user gave -c
  bool ngl_set = false;                   // the user gave -ngl
  bool split_set = false;                 // the user gave -ts
};

struct LlamaCppFit {
  LlamaCppRequest request;         // the request with the fitted n_ctx, -ngl, split and n_cpu_moe
  std::vector<std::string> steps;  // what the fit did, step by step
  std::string failure;             // llama.cpp's "failed to fit params" reason, or ""
  bool changed = false;
};

// Throws Error when the training context is unknown and the user gave no context.
LlamaCppFit llamacpp_fit(const LlamaCppRequest& req, const LlamaCppFitOptions& opt);

}  // namespace memplan
