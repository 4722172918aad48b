#pragma once
// The real GPUs of this machine, read at run time through NVIDIA's management library (NVML,
// libnvidia-ml.so.1), which is loaded with dlopen: memplan builds and runs without a driver, a GPU
// or the CUDA toolkit. Nothing here throws or prints because a GPU is missing: every failure
// becomes a one-line reason in the report. Implementation: src/probe/nvml_probe.cpp.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memplan {

// One device a CUDA program could use: a whole GPU, or a MIG instance when the GPU is in MIG mode.
struct ProbedDevice {
  unsigned index = 0;           // CUDA ordinal after CUDA_VISIBLE_DEVICES: what cuda:N (and PyTorch) mean
  unsigned nvml_index = 0;      // NVML / nvidia-smi index of the physical GPU (of the parent under MIG)
  std::string name;             // "NVIDIA H100 80GB HBM3"; a MIG instance's profile name under MIG
  std::string uuid;             // "GPU-..." or, for a MIG instance, "MIG-..."
  std::string parent_uuid;      // MIG only: the physical GPU's UUID
  bool mig = false;             // a MIG instance: the memory numbers are the instance's, not the board's
  uint64_t total_bytes = 0;     // NVML total (the whole framebuffer on R510+ drivers)
  uint64_t reserved_bytes = 0;  // driver/firmware-reserved part of total (0 when unknown)
  bool reserved_known = false;  // read through nvmlDeviceGetMemoryInfo_v2 (else v1: used includes reserved)
  uint64_t used_bytes = 0;      // allocated by processes (v2: excludes reserved)
  uint64_t free_bytes = 0;      // free now
  int cc_major = -1;            // compute capability, -1 when NVML did not say
  int cc_minor = -1;
  bool bf16 = false;  // bf16 in hardware (compute capability >= 8.0)
  bool fp8 = false;   // fp8 in hardware (compute capability >= 8.9)
  std::string error;  // non-empty: this device is visible but its memory could not be read
};

// What the probe found. `error` is empty exactly when at least one device was read.
struct ProbeReport {
  std::vector<ProbedDevice> devices;  // visible devices in CUDA order (devices[i].index == i)
  std::string driver_version;         // "550.54.15", empty when unknown
  std::string library;                // the NVML library that was loaded, empty when none
  std::string error;                  // why nothing could be read: "NVIDIA driver not loaded (...)"
  std::vector<std::string> notes;     // partial problems: a GPU skipped, v1 fallback, ordering caveat
};

// Where to look; the environment is a parameter so tests can set it without setenv.
struct ProbeOptions {
  // NVML library to load; empty: libnvidia-ml.so.1, then libnvidia-ml.so.
  std::string library;
  // CUDA_VISIBLE_DEVICES; nullopt when unset.
  std::optional<std::string> cuda_visible_devices;
  // CUDA_DEVICE_ORDER; nullopt when unset (CUDA then orders FASTEST_FIRST).
  std::optional<std::string> cuda_device_order;
  // Longest wait for the driver; past it the probe reports a reason and leaves the call behind.
  std::chrono::milliseconds timeout{20000};

  // Reads MEMPLAN_NVML_LIBRARY, CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER from the environment.
  static ProbeOptions from_environment();
};

// Most devices the probe reads (NVML counts above it are capped, with a note).
constexpr unsigned k_max_probed_devices = 64;

// Loads NVML, reads every visible device, unloads NVML. Never throws for a missing GPU or driver;
// the reason is in ProbeReport::error.
ProbeReport probe_devices(const ProbeOptions& options);

// Hardware number formats by compute capability: bf16 from 8.0 (Ampere), fp8 from 8.9 (Ada, Hopper).
bool compute_capability_has_bf16(int major, int minor);
bool compute_capability_has_fp8(int major, int minor);

// True for the --gpu values that name a real device: "local", "cuda" and "cuda:N".
bool is_local_gpu_spec(std::string_view spec);

// One device named by a --gpu value, or why there is none.
struct LocalDevice {
  std::optional<ProbedDevice> device;  // set when readable
  std::string reason;                  // otherwise: "cuda:3: no such device (2 visible: cuda:0, cuda:1)"
  std::string driver_version;
};

// Picks the device that `spec` names in `report`: "local" and "cuda" are cuda:0 (PyTorch's default
// device), "cuda:N" the N-th visible one. Throws Error(Field::gpu, ...) only for a malformed spec
// ("cuda:x"), which is bad input; a missing or unreadable device is a reason, not an exception.
LocalDevice choose_local_device(const ProbeReport& report, std::string_view spec);

// Which memory a fit is checked against (`fit --against total|free`).
enum class MemoryBasis { total, free };

// Bytes a process can plan with: total minus the driver-reserved part, or the free memory now.
uint64_t device_memory_bytes(const ProbedDevice& device, MemoryBasis basis);

// A short label for fit tables: "cuda:0 NVIDIA H100 80GB HBM3" (+ " (MIG 1g.10gb)" under MIG).
std::string device_label(const ProbedDevice& device);

}  // namespace memplan
