#pragma once
// CUDA_VISIBLE_DEVICES, parsed and applied the way the CUDA driver (and PyTorch's emulation of it,
// torch.cuda._parse_visible_devices) does, so that "cuda:N" in memplan means what it means in PyTorch.
// Pure functions: no environment access, no NVML.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memplan {

// What CUDA_VISIBLE_DEVICES asks for.
struct VisibleDevices {
  enum class Kind {
    all,        // unset: every device, in enumeration order
    ordinals,   // "1,0": device ordinals (NVML / PCI order)
    gpu_uuids,  // "GPU-8e7f...,GPU-1a": full or prefix UUIDs of physical GPUs
    mig_uuids,  // "MIG-...": MIG instances (CUDA shows at most one)
  };
  Kind kind = Kind::all;
  std::vector<unsigned> ordinals;  // Kind::ordinals
  std::vector<std::string> uuids;  // Kind::gpu_uuids / Kind::mig_uuids
};

// Parses the variable's value; nullopt means unset. Rules (CUDA / PyTorch): entries split on ',';
// an ordinal is read like strtoul ("1gpu2" -> 1, surrounding spaces ignored); the first entry that
// is not valid (negative, empty, junk, or not of the first entry's kind) ends the list; a repeated
// entry makes the list empty; "" and "-1" mean no device.
// parse_visible_devices("1,0") -> ordinals {1, 0}; parse_visible_devices("0,0") -> ordinals {}.
VisibleDevices parse_visible_devices(std::optional<std::string_view> value);

// Applies `visible` to the enumerated devices, given their UUIDs in enumeration order. Returns the
// enumeration positions that become cuda:0, cuda:1, ... An ordinal past the end, or a UUID prefix
// matching zero or several devices, ends the list there; a repeat empties it (as CUDA does).
// Kind::mig_uuids is not handled here (the probe matches MIG instances itself).
std::vector<size_t> select_visible(const VisibleDevices& visible, const std::vector<std::string>& uuids);

}  // namespace memplan
