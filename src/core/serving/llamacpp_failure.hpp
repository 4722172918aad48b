#pragma once
// How llama.cpp stops when a plan does not fit, in its own words: the first allocation that fails,
// in the order llama.cpp makes them (llama-model.cpp load_tensors: every device's model buffer;
// llama-kv-cache.cpp: every device's KV buffer; llama-context.cpp sched_reserve: the compute
// buffers), each a cudaMalloc of the buffer's size on that device.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/serving/llamacpp.hpp"

namespace memplan {

enum class LlamaCppStage { model, kv, compute, projector };

struct LlamaCppFailure {
  LlamaCppStage stage = LlamaCppStage::model;
  size_t gpu = 0;                  // device index (CUDA0, ...)
  uint64_t bytes = 0;              // the buffer that cannot be allocated
  uint64_t free = 0;               // what the device had left for it
  std::vector<std::string> lines;  // llama.cpp's log lines, as it prints them
};

// The first allocation of `plan` that does not fit in `req.gpu_bytes` (less each GPU's reserve);
// none when the plan fits. `device` names the backend ("CUDA", "ROCm", "Metal").
std::optional<LlamaCppFailure> llamacpp_start_failure(const LlamaCppRequest& req, const LlamaCppPlan& plan,
                                                      const std::string& device = "CUDA");

}  // namespace memplan
