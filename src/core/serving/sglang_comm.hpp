#pragma once
// What SGLang's tensor-parallel set-up allocates outside torch before it measures total_gpu_memory
// (model_runner.py init_torch_distributed: get_available_gpu_memory(distributed=True), the minimum
// over the ranks, after init_distributed_environment and initialize_model_parallel):
//
//  - the TP group's NCCL communicator: distributed/device_communicators/pynccl.py PyNcclCommunicator
//    runs "a small all_reduce for warmup" in its constructor, so NCCL connects its ring then. NCCL's
//    buffers per channel and connection: SIMPLE NCCL_BUFFSIZE 4 MiB + LL 512 KiB (8 lines x 512
//    threads x 8 steps x 16 B) + LL128 4,915,200 B (120 x 640 threads x 8 steps x 8 B)
//    (nccl src/include/device.h, src/init.cc defaults). The channel count comes from NCCL's topology
//    search at run time and cannot be read from code: memplan assumes 32 (NCCL's MAXCHANNELS) on
//    NVLink GPUs and 4 on PCIe ones, and counts a send and a receive connection per channel, so the
//    figure is at the high end (less KV, never more).
//  - the custom all-reduce (device_communicators/custom_all_reduce.py, max_size 8 MiB): the meta
//    buffer (meta_size + 8 MiB) and the IPC buffer (8 MiB) by cudaMalloc, each rounded to 2 MiB,
//    and rank_data (8 MiB) from torch's caching allocator, which puts a 1-10 MiB block in a 20 MiB
//    segment: 38 MiB. Built for tp 2, or tp 4, 6 or 8 on full NVLink (world_size > 2 without it is
//    refused: "Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs").
//  - with pp > 1, the PP group's communicator (another PyNcclCommunicator) the same way.
// The world group's torch NCCL communicator has no warmup at init (parallel_state.py): it is made at
// its first collective, after the pool. The NCCL library's own kernels load into the context at the
// warmup; their size depends on the NCCL build and is not counted.
#include <cstdint>
#include <string>
#include <vector>

namespace memplan {

struct SglangCommPart {
  std::string name;
  uint64_t bytes = 0;
  std::string source;
  bool assumed = false;  // a size that hangs on NCCL's topology search (memplan's assumption)
};

inline constexpr uint64_t k_nccl_simple_bytes = 4ull << 20;  // NCCL_BUFFSIZE default
inline constexpr uint64_t k_nccl_ll_bytes = 8ull * 512 * 8 * 16;
inline constexpr uint64_t k_nccl_ll128_bytes = 120ull * 640 * 8 * 8;
inline constexpr uint64_t k_nccl_channels_nvlink = 32;  // NCCL's MAXCHANNELS
inline constexpr uint64_t k_nccl_channels_pcie = 4;
inline constexpr uint64_t k_sglang_custom_ar_bytes = (10ull + 8 + 20) << 20;

// Whether memplan takes `gpu_id` / `gpu_name` for an NVLink (SXM / OAM) part: PCIe cards are named
// ("PCIe" in the name, t4, a10, a10g, l4, l40s, h100-nvl, rtx-*, rx-*, apple-*); anything else is.
bool sglang_gpu_nvlink(const std::string& gpu_id, const std::string& gpu_name);

// The parts on one GPU for tp x pp (none at tp = pp = 1).
std::vector<SglangCommPart> sglang_comm_parts(uint64_t tp, uint64_t pp, bool nvlink);

}  // namespace memplan
