// Turning a probe report into one fit target: "--gpu local" / "cuda:N", and the memory it offers.
#include <memplan/probe.hpp>

#include <cctype>

#include <memplan/error.hpp>

namespace memplan {

bool compute_capability_has_bf16(int major, int /*minor*/) { return major >= 8; }

bool compute_capability_has_fp8(int major, int minor) { return major > 8 || (major == 8 && minor >= 9); }

bool is_local_gpu_spec(std::string_view spec) {
  return spec == "local" || spec == "cuda" || spec.substr(0, 5) == "cuda:";
}

LocalDevice choose_local_device(const ProbeReport& report, std::string_view spec) {
  size_t ordinal = 0;
  if (spec != "local" && spec != "cuda") {
    const std::string_view digits = spec.substr(0, 5) == "cuda:" ? spec.substr(5) : std::string_view{};
    bool ok = !digits.empty() && digits.size() <= 4;
    for (char c : digits) ok = ok && std::isdigit(static_cast<unsigned char>(c));
    if (!ok)
      throw Error(Field::gpu, "\"" + std::string(spec) +
                                  "\" is not a local device (expected local or cuda:N, e.g. cuda:0)");
    ordinal = std::stoul(std::string(digits));
  }
  const std::string name = "cuda:" + std::to_string(ordinal);
  LocalDevice out;
  out.driver_version = report.driver_version;
  if (report.devices.empty()) {
    out.reason = name + ": " + (report.error.empty() ? std::string("no GPU found") : report.error);
    return out;
  }
  if (ordinal >= report.devices.size()) {
    std::string list;
    for (const ProbedDevice& d : report.devices)
      list += (list.empty() ? "" : ", ") + ("cuda:" + std::to_string(d.index));
    out.reason =
        name + ": no such device (" + std::to_string(report.devices.size()) + " visible: " + list + ")";
    return out;
  }
  const ProbedDevice& d = report.devices[ordinal];
  if (!d.error.empty()) {
    out.reason = name + " " + d.name + ": " + d.error;
    return out;
  }
  out.device = d;
  return out;
}

uint64_t device_memory_bytes(const ProbedDevice& device, MemoryBasis basis) {
  if (basis == MemoryBasis::free) return device.free_bytes;
  return device.reserved_bytes <= device.total_bytes ? device.total_bytes - device.reserved_bytes : 0;
}

std::string device_label(const ProbedDevice& device) {
  return "cuda:" + std::to_string(device.index) + " " + device.name;
}

}  // namespace memplan
