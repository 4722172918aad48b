// SGLang's tensor-parallel memory outside torch before total_gpu_memory (see sglang_comm.hpp).
#include "core/serving/sglang_comm.hpp"

#include <cctype>

namespace memplan {
namespace {

std::string sgl_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

SglangCommPart nccl_part(const char* group, bool nvlink) {
  const uint64_t channels = nvlink ? k_nccl_channels_nvlink : k_nccl_channels_pcie;
  const uint64_t per_connection = k_nccl_simple_bytes + k_nccl_ll_bytes + k_nccl_ll128_bytes;
  SglangCommPart p;
  p.name = std::string("NCCL buffers, ") + group + " group (" + std::to_string(channels) +
           " channels x 2 connections x " + std::to_string(per_connection) + " B)";
  p.bytes = channels * 2 * per_connection;
  p.source =
      "sglang distributed/device_communicators/pynccl.py (warm-up all_reduce before the measure); NCCL "
      "SIMPLE 4 MiB + LL 512 KiB + LL128 4,915,200 B per connection; channels assumed (" +
      std::string(nvlink ? "NCCL's MAXCHANNELS 32 on NVLink" : "4 on PCIe") +
      "): NCCL's topology search sets them at run time";
  p.assumed = true;
  return p;
}

}  // namespace

bool sglang_gpu_nvlink(const std::string& gpu_id, const std::string& gpu_name) {
  const std::string id = sgl_lower(gpu_id), name = sgl_lower(gpu_name);
  if (name.find("pcie") != std::string::npos) return false;
  for (const char* pcie : {"t4", "a10", "a10g", "l4", "l40s", "h100-nvl"})
    if (id == pcie) return false;
  for (const char* prefix : {"rtx", "rx-", "apple"})
    if (id.rfind(prefix, 0) == 0) return false;
  return true;  // SXM / OAM parts, and a GPU memplan does not know (more NCCL buffers: less KV)
}

std::vector<SglangCommPart> sglang_comm_parts(uint64_t tp, uint64_t pp, bool nvlink) {
  std::vector<SglangCommPart> parts;
  if (tp > 1) {
    parts.push_back(nccl_part("TP", nvlink));
    if (tp == 2 || (nvlink && (tp == 4 || tp == 6 || tp == 8)))
      parts.push_back(
          {"custom all-reduce buffers (meta 10 MiB + IPC buffer 8 MiB + rank_data's 20 MiB segment)",
           k_sglang_custom_ar_bytes,
           "sglang distributed/device_communicators/custom_all_reduce.py (_MAX_CAR_SIZE 8 MiB)", false});
  }
  if (pp > 1) parts.push_back(nccl_part("PP", nvlink));
  return parts;
}

}  // namespace memplan
