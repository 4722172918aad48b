#include "cli/render_cuda_context.hpp"

#include <memplan/quantity.hpp>

namespace memplan::cli {

GpuRuntime gpu_runtime(const GpuSpec& gpu) {
  if (gpu.vendor == "amd") return GpuRuntime::rocm;
  if (gpu.vendor == "apple") return GpuRuntime::metal;
  return GpuRuntime::cuda;
}

const char* runtime_name(GpuRuntime rt) {
  switch (rt) {
    case GpuRuntime::rocm:
      return "ROCm/HIP";
    case GpuRuntime::metal:
      return "Metal";
    case GpuRuntime::cuda:
      break;
  }
  return "CUDA";
}

const char* runtime_key(GpuRuntime rt) {
  switch (rt) {
    case GpuRuntime::rocm:
      return "rocm";
    case GpuRuntime::metal:
      return "metal";
    case GpuRuntime::cuda:
      break;
  }
  return "cuda";
}

std::string assumed_context_text(const FitRow& row) {
  const GpuRuntime rt = gpu_runtime(row.gpu);
  if (row.overhead_given || rt == GpuRuntime::cuda) return "";
  // cuda_context() gives such a GPU the H200's SMs (known = false): the figure measured there.
  return std::string(runtime_name(rt)) +
         ": memplan has no measured figure for its context; the CUDA context measured on an H200 (" +
         group_thousands(row.context.bytes()) + " B, " + format_bytes(row.context.bytes(), Units::gib) +
         ") stands in";
}

bool any_cuda(const std::vector<FitRow>& fit) {
  for (const FitRow& row : fit)
    if (gpu_runtime(row.gpu) == GpuRuntime::cuda) return true;
  return false;
}

bool all_cuda(const std::vector<FitRow>& fit) {
  for (const FitRow& row : fit)
    if (gpu_runtime(row.gpu) != GpuRuntime::cuda) return false;
  return true;
}

std::string cuda_runtime_text(const CudaRuntime& rt) {
  return "CUDA " + to_string(rt.version) + ", " + to_string(rt.loading) + " module loading";
}

std::string cuda_context_arithmetic(const CudaContext& c) {
  std::string s = group_thousands(k_cuda_stack_bytes) + " B stack x " + group_thousands(c.threads_per_sm) +
                  " threads x " + group_thousands(c.sm_count) +
                  " SMs = " + group_thousands(c.local_memory_bytes) + " B local memory + " +
                  group_thousands(c.rest_bytes) +
                  " B driver, handles and lazily loaded kernels (measured on an H200)";
  if (c.eager_kernel_bytes)
    s += " + " + group_thousands(c.eager_kernel_bytes) +
         " B kernels loaded eagerly (torch 1.13, pytorch#86509)";
  return s + " = " + group_thousands(c.bytes()) + " B (" + format_bytes(c.bytes(), Units::gib) + ")";
}

std::string cuda_context_text(const std::vector<FitRow>& fit, const EstimateRequest& r) {
  if (r.overhead_given || fit.empty()) return "";
  std::string out = any_cuda(fit) ? "\nCUDA context per GPU (" + cuda_runtime_text(r.cuda) +
                                        "; --cuda, --cuda-module-loading):\n"
                                  : std::string("\nRuntime context per GPU (none of them runs CUDA):\n");
  for (const FitRow& row : fit) {
    if (gpu_runtime(row.gpu) != GpuRuntime::cuda) {  // no CUDA context on it: name what stands in
      out += "  " + row.gpu.id + ": " + assumed_context_text(row) + "\n";
      continue;
    }
    out += "  " + row.gpu.id + ": " + cuda_context_arithmetic(row.context) +
           (row.context.known ? "" : "; SMs unknown: the H200's 132 x 2,048 assumed") + "\n";
  }
  return out;
}

nlohmann::json cuda_context_json(const FitRow& row) {
  if (row.overhead_given || gpu_runtime(row.gpu) != GpuRuntime::cuda) return nullptr;
  const CudaContext& c = row.context;
  return {{"known", c.known},
          {"sm_count", c.sm_count},
          {"threads_per_sm", c.threads_per_sm},
          {"stack_bytes", k_cuda_stack_bytes},
          {"local_memory_bytes", c.local_memory_bytes},
          {"rest_bytes", c.rest_bytes},
          {"eager_kernel_bytes", c.eager_kernel_bytes},
          {"module_loading", to_string(c.loading)},
          {"bytes", c.bytes()}};
}

}  // namespace memplan::cli
