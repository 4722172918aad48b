#pragma once
// A GPU as memplan plans for it: a preset (data/gpus.json) or a real device read through NVML.

#include <cstdint>
#include <string>
#include <vector>

namespace memplan {

struct GpuSpec {
  std::string id;    // "rtx-4090", "cuda:0"
  std::string name;  // "NVIDIA GeForce RTX 4090 24GB"
  std::vector<std::string> aliases;
  std::string vendor;                  // "nvidia", "amd", "apple"
  uint64_t memory_total_bytes = 0;     // what NVML reports as total (R510+ drivers)
  uint64_t memory_reserved_bytes = 0;  // driver/firmware share a process cannot allocate
  bool reserved_known = false;
  uint64_t budget_bytes = 0;  // unified memory: the share of RAM the GPU may use (0 = n/a)
  std::string budget_note;
  std::string compute_capability;  // "8.9"; "" where it does not apply
  uint64_t sm_count = 0;           // streaming multiprocessors (0 = unknown): the CUDA context's local memory
  bool bf16 = false;
  bool fp8 = false;
  std::string source;
  std::string notes;
  bool is_device = false;  // read from a real device, not a preset
  // False for a GPU given only by its size (--gpu 12GiB): what it runs is unknown, so no
  // hardware warning is made for it.
  bool capabilities_known = true;
  uint64_t free_bytes = 0;  // real devices: free memory when probed (fit --against free)

  // What a process can allocate: the unified-memory budget, else total minus the reserved share.
  uint64_t usable_bytes() const {
    if (budget_bytes) return budget_bytes;
    return memory_total_bytes > memory_reserved_bytes ? memory_total_bytes - memory_reserved_bytes : 0;
  }
};

}  // namespace memplan
