// vLLM's non-torch memory as named parts, each with its source (see vllm_non_torch.hpp).
#include "core/serving/vllm_non_torch.hpp"

namespace memplan {

bool vllm_custom_allreduce(uint64_t tp) { return tp == 2 || tp == 4 || tp == 6 || tp == 8; }

VllmNonTorch vllm_non_torch(uint64_t tp) {
  VllmNonTorch n;
  n.context_bytes = k_cuda_context_bytes;
  n.parts.push_back({"CUDA context and lazily loaded kernels", k_cuda_context_bytes,
                     "about 400 MB with CUDA >= 11.7 lazy module loading (pytorch/pytorch#109888)"});
  n.parts.push_back({"cuBLAS/cuBLASLt workspaces", 0,
                     "allocated through PyTorch's caching allocator: in the profiled torch peak"});
  if (tp > 1) {
    n.nccl_unknown = true;
    n.parts.push_back({"NCCL buffers", 0,
                       "not predicted: 4 MiB (NCCL_BUFFSIZE) per protocol, channel and peer, channels by "
                       "topology; the user's figure replaces the prediction"});
  }
  if (vllm_custom_allreduce(tp)) {
    const uint64_t ipc = 2 * k_vllm_custom_allreduce_max_size;
    n.allreduce_bytes = ipc + k_vllm_custom_allreduce_rank_data;
    n.parts.push_back({"custom all-reduce IPC buffers", ipc,
                       "meta + max_size and max_size (8 MiB), cudaMalloc (custom_all_reduce.py)"});
    n.parts.push_back({"custom all-reduce rank_data", k_vllm_custom_allreduce_rank_data,
                       "an 8 MiB torch tensor of IPC pointers (custom_all_reduce.py)"});
  }
  return n;
}

}  // namespace memplan
