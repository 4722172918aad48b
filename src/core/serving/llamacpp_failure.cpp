// llama.cpp's start-up failure for a plan that does not fit, in its own words (see llamacpp_failure.hpp).
#include "core/serving/llamacpp_failure.hpp"

#include <algorithm>

#include "core/base/decimal_text.hpp"

namespace memplan {
namespace {

std::string mib2(uint64_t bytes) { return fixed_decimals(static_cast<double>(bytes) / 1024.0 / 1024.0, 2); }

// The lines of ggml-cuda.cu (also built for ROCm by HIP, with the same text), ggml-backend.cpp
// alloc_tensor_range, ggml-alloc.c ggml_gallocr_reserve_n, llama-model.cpp, llama-kv-cache.cpp and
// llama-context.cpp (llama_init_from_model wraps the context's exception).
std::vector<std::string> lines_for(LlamaCppStage stage, const std::string& dev, size_t gpu, uint64_t bytes) {
  // the projector's loader (tools/mtmd) words its failure its own way: not copied
  if (stage == LlamaCppStage::projector) return {};
  const std::string name = dev + std::to_string(gpu), size = std::to_string(bytes);
  std::vector<std::string> out = {"ggml_backend_cuda_buffer_type_alloc_buffer: allocating " + mib2(bytes) +
                                  " MiB on device " + std::to_string(gpu) +
                                  ": cudaMalloc failed: out of memory"};
  const std::string context = "llama_init_from_model: failed to initialize the context: ";
  if (stage == LlamaCppStage::compute) {
    out.push_back("ggml_gallocr_reserve_n: failed to allocate " + name + " buffer of size " + size);
    out.push_back("graph_reserve: failed to allocate compute buffers");
    out.push_back(context + "failed to allocate compute pp buffers");
    return out;
  }
  out.push_back("alloc_tensor_range: failed to allocate " + name + " buffer of size " + size);
  out.push_back(stage == LlamaCppStage::model
                    ? "llama_model_load: error loading model: unable to allocate " + name + " buffer"
                    : context + "failed to allocate buffer for kv cache");
  return out;
}

}  // namespace

std::optional<LlamaCppFailure> llamacpp_start_failure(const LlamaCppRequest& req, const LlamaCppPlan& plan,
                                                      const std::string& device) {
  const size_t n = std::min(plan.gpus.size(), req.gpu_bytes.size());
  std::vector<uint64_t> used(n, 0);
  for (size_t i = 0; i < n; ++i) used[i] = plan.gpus[i].reserve;
  // One stage at a time over every device, in llama.cpp's order.
  for (LlamaCppStage stage :
       {LlamaCppStage::model, LlamaCppStage::kv, LlamaCppStage::compute, LlamaCppStage::projector}) {
    for (size_t i = 0; i < n; ++i) {
      const LlamaCppDevice& d = plan.gpus[i];
      const uint64_t bytes = stage == LlamaCppStage::model     ? d.model
                             : stage == LlamaCppStage::kv      ? d.kv
                             : stage == LlamaCppStage::compute ? d.compute
                                                               : d.projector;
      if (!bytes) continue;
      const uint64_t left = req.gpu_bytes[i] > used[i] ? req.gpu_bytes[i] - used[i] : 0;
      if (bytes > left) {
        LlamaCppFailure f;
        f.stage = stage;
        f.gpu = i;
        f.bytes = bytes;
        f.free = left;
        if (device == "CUDA" || device == "ROCm") f.lines = lines_for(stage, device, i, bytes);
        return f;
      }
      used[i] += bytes;
    }
  }
  return std::nullopt;
}

}  // namespace memplan
