#pragma once
// The CUDA context a PyTorch process holds on a GPU outside torch's caching allocator: what
// nvidia-smi shows beyond torch.cuda.memory_reserved(). Predicted from the GPU (its streaming
// multiprocessors and the threads each keeps resident) and the CUDA runtime (cuda_runtime.hpp):
//   local memory  = 1 KiB stack x resident threads per SM x SMs (the driver reserves it up front)
//   the rest      = driver structures, library handles, lazily loaded kernels (measured, H200)
//   eager kernels = every kernel image of libtorch_cuda, with eager module loading only

#include <cstdint>

#include <memplan/cuda_runtime.hpp>
#include <memplan/gpu.hpp>

namespace memplan {

struct CudaContext {
  bool known = true;                // false: the GPU's SMs are unknown; the H200's were assumed
  uint64_t sm_count = 0;            // streaming multiprocessors
  uint64_t threads_per_sm = 0;      // maximum resident threads per SM (by compute capability)
  uint64_t local_memory_bytes = 0;  // k_cuda_stack_bytes x threads_per_sm x sm_count
  uint64_t rest_bytes = 0;          // k_cuda_context_rest_bytes (measured on an H200)
  uint64_t eager_kernel_bytes = 0;  // k_eager_kernel_bytes with eager loading, else 0
  ModuleLoading loading = ModuleLoading::lazy;

  uint64_t bytes() const { return local_memory_bytes + rest_bytes + eager_kernel_bytes; }
};

// Maximum resident threads per SM for a compute capability ("8.6" -> 1536), from the CUDA C++
// Programming Guide's table of technical specifications per compute capability; 0 when unknown.
uint64_t max_threads_per_sm(const std::string& compute_capability);

// The context on `gpu` under `runtime`. A GPU without an SM count or compute capability (or not
// NVIDIA) gets the H200's (known = false), since that is where the rest was measured.
CudaContext cuda_context(const GpuSpec& gpu, const CudaRuntime& runtime);

}  // namespace memplan
