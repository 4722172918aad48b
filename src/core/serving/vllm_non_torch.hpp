#pragma once
// vLLM's non-torch memory, predicted as named parts (vLLM 0.6.4.post1, the V0 engine).
//
// What vLLM calls non-torch memory in this version is, after the profile run and
// torch.cuda.empty_cache(), the device memory in use (mem_get_info's total - free) minus
// torch's allocated bytes (memory_stats()["allocated_bytes.all.current"]): everything the
// process holds outside PyTorch's tensors. The measure starts from an empty device, so it holds
// the CUDA context. (vLLM PR 11809 quotes this measure and replaces it; from 0.7 the log's
// non_torch_memory is only the increase since start-up, with the context left out.)
//
// The parts:
//  - the CUDA context with the kernels loaded lazily into it (CUDA >= 11.7, PyTorch's default
//    CUDA_MODULE_LOADING=LAZY): about 400 MB (PyTorch's maintainer in
//    https://github.com/pytorch/pytorch/issues/109888; before lazy loading it was over 1000 MB,
//    https://github.com/pytorch/pytorch/issues/107667). One figure: no public measurement per GPU
//    generation with lazy loading was found.
//  - cuBLAS / cuBLASLt workspaces: 0 here. PyTorch allocates them through its caching allocator,
//    so vLLM counts them among torch's bytes (the profiled peak), not here.
//  - NCCL's buffers (tp > 1): not predicted. Their size is NCCL_BUFFSIZE (4 MiB) per protocol,
//    channel and peer, and the channel count depends on the topology NCCL detects (NVLink,
//    NVSwitch with NVLS, PCIe); give the logged figure with --overhead.
//  - vLLM's custom all-reduce (tp in {2, 4, 6, 8}, GPUs with peer access): two IPC buffers from
//    cudaMalloc (meta_size + max_size, and max_size) and the 8 MiB rank_data tensor
//    (vllm/distributed/device_communicators/custom_all_reduce.py, max_size 8 MiB). rank_data is
//    a torch tensor, reserved before the KV cache like the others.
#include <cstdint>
#include <string>
#include <vector>

#include "core/serving/cuda_context.hpp"  // k_cuda_context_bytes (pytorch#109888, lazy loading)

namespace memplan {

inline constexpr uint64_t k_vllm_custom_allreduce_max_size = 8ull << 20;   // CustomAllreduce max_size
inline constexpr uint64_t k_vllm_custom_allreduce_rank_data = 8ull << 20;  // rank_data tensor

// One part of the memory vLLM holds outside the weights, activations and KV cache.
struct NonTorchPart {
  std::string name;
  uint64_t bytes = 0;
  std::string source;
};

struct VllmNonTorch {
  std::vector<NonTorchPart> parts;
  uint64_t context_bytes = 0;    // what vLLM 0.6.4 logs as non_torch_memory at tp 1
  uint64_t allreduce_bytes = 0;  // the custom all-reduce's buffers (tp in {2, 4, 6, 8})
  bool nccl_unknown = false;     // tp > 1: NCCL's buffers are not in the figure
};

// The parts for tensor-parallel size `tp`.
VllmNonTorch vllm_non_torch(uint64_t tp);

// Whether vLLM's custom all-reduce runs at this tensor-parallel size (_SUPPORTED_WORLD_SIZES).
bool vllm_custom_allreduce(uint64_t tp);

}  // namespace memplan
