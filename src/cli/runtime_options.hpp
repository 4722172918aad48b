#pragma once
// The runtime of a training step, from the planning options: the PyTorch release (--torch) and
// what follows from it (defaults of --zero-grad, --optimizer-loop, --attention; the refusals), and
// the CUDA runtime (--cuda, --cuda-module-loading) whose defaults depend on it.

#include <memplan/cuda_runtime.hpp>
#include <memplan/request.hpp>
#include <memplan/torch_release.hpp>

#include "cli/options.hpp"

namespace memplan::cli {

// Sets r.torch and the defaults an older release changes; r.device and r.expandable_segments must be
// resolved. Throws Error naming the option on a combination the release cannot run.
void resolve_torch_release(const PlanValues& v, EstimateRequest& r);

// Sets r.transformers and the attention it implies (eager where the family had no sdpa yet); r.model,
// r.framework, r.device and r.attention must be resolved. Throws Error naming the option on a
// combination that release cannot run.
void resolve_transformers_release(const PlanValues& v, EstimateRequest& r);
void resolve_bitsandbytes_release(const PlanValues& v, EstimateRequest& r);

// The CUDA runtime under `torch` (r.torch once resolved). Throws Error on lazy loading without it.
CudaRuntime resolve_cuda_runtime(const PlanValues& v, TorchRelease torch);

}  // namespace memplan::cli
