#pragma once
// The CUDA runtime a PyTorch process runs on: its version and how it loads kernels into the
// context. The CUDA context it predicts (cuda_context.hpp) is the per-process overhead of the fit.

#include <cstdint>
#include <string>
#include <string_view>

namespace memplan {

// CUDA_MODULE_LOADING. lazy: a kernel is loaded into the context when it is first used (CUDA >= 11.7;
// PyTorch >= 1.13 sets LAZY when the variable is unset, https://github.com/pytorch/pytorch/pull/86509;
// CUDA's own default since 12.2 on Linux,
// https://docs.nvidia.com/cuda/cuda-programming-guide/04-special-topics/lazy-loading.html). eager: every
// kernel of the library is loaded when the context starts (before 11.7, or EAGER).
enum class ModuleLoading { lazy, eager };

struct CudaVersion {
  uint32_t major = 13;
  uint32_t minor = 0;
  uint32_t value() const { return major * 100 + minor; }  // 12.8 -> 1208
};

// Lazy loading needs a CUDA runtime of 11.7 or later (the programming guide's "Lazy Loading"), and is
// CUDA's own default from 12.2 on Linux (before that, only where PyTorch sets it: 1.13 on).
inline constexpr CudaVersion k_lazy_loading_since{11, 7};
inline constexpr CudaVersion k_lazy_loading_default_since{12, 2};

// The runtime of the step. 13.0 by default: the CUDA of the wheels `pip install torch` installs for
// torch 2.11 and 2.12 (https://github.com/pytorch/pytorch/pull/177975 "Move cuda stable 12.8->13.0";
// https://github.com/googlecolab/colabtools/issues/5982), the stack the H200 context was measured on.
// Every version from 11.7 on gives the same prediction: only the module loading changes the context.
struct CudaRuntime {
  CudaVersion version;
  ModuleLoading loading = ModuleLoading::lazy;
};

// "12.8", "11.2", "13" (= 13.0); between 8.0 and 99.x. Else an Error naming `subject`.
CudaVersion parse_cuda_version(std::string_view subject, std::string_view text);
std::string to_string(CudaVersion v);  // "12.8"

// "lazy" / "eager" (also CUDA's "default" = lazy), case-insensitive; else an Error naming `subject`.
ModuleLoading parse_module_loading(std::string_view subject, std::string_view text);
const char* to_string(ModuleLoading m);  // "lazy", "eager"

// Each thread's stack, the default cudaLimitStackSize (1 KiB): the driver reserves it in local memory
// for every thread the GPU can keep resident
// (https://forums.developer.nvidia.com/t/local-memory-management/289339/9).
inline constexpr uint64_t k_cuda_stack_bytes = 1024;

// What the context holds beyond the local memory, with lazy loading: the driver's own structures,
// the handles torch and cuBLAS create, and the kernels loaded so far (and the printf FIFO, 1 MiB, and
// malloc heap, 8 MiB, where a launched kernel used them: the driver allocates those only then). No public
// figure splits it; it is measured: on an NVIDIA H200 with torch 2.11.0+cu130 (CUDA 13, lazy),
// cudaMemGetInfo's total - free after a cuBLAS matmul was 753,729,536 B with 35,651,584 B reserved by torch
// (tests/data/gpu_h200_measured.json "environment"), so the context was 718,077,952 B; less
// 1,024 B x 2,048 threads x 132 SMs = 276,824,064 B of local memory leaves 441,253,888 B.
inline constexpr uint64_t k_cuda_context_rest_bytes = 441'253'888;

// Kernels loaded eagerly on top of the lazy context: torch 1.13 (CUDA 11.7) measured 666,632,192 B
// in use with CUDA_MODULE_LOADING=DEFAULT (eager then) and 287,047,680 B with LAZY after the same
// tensor.cuda(), https://github.com/pytorch/pytorch/pull/86509: the difference, 379,584,512 B, is
// the kernel images of libtorch_cuda for one GPU architecture.
inline constexpr uint64_t k_eager_kernel_bytes = 666'632'192 - 287'047'680;

// The context of a GPU whose streaming multiprocessors are not known (AMD, Apple, a size, a local
// device matching no preset): that of the H200 it was measured on (132 SMs x 2,048 threads),
// 718,077,952 B with lazy loading. Of the presets only a B200 and an RTX PRO 6000 have more threads.
inline constexpr uint64_t k_measured_sm_count = 132;
inline constexpr uint64_t k_measured_threads_per_sm = 2048;
inline constexpr uint64_t k_measured_context_bytes =
    k_cuda_stack_bytes * k_measured_threads_per_sm * k_measured_sm_count + k_cuda_context_rest_bytes;

}  // namespace memplan
