// The NVML probe: the one file that loads libnvidia-ml.so.1 with dlopen and declares the few NVML
// functions and structs it calls (from NVIDIA's public nvml.h ABI; no NVIDIA header at build time).
#include <memplan/probe.hpp>

#include <dlfcn.h>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "probe/visible_devices.hpp"

namespace memplan {
namespace {

// ---- NVML's C ABI, as far as memplan needs it ------------------------------------------------

using NvmlReturn = int;  // nvmlReturn_t: an enum, int-sized
struct NvmlDeviceSt;
using NvmlDevice = NvmlDeviceSt*;  // nvmlDevice_t: an opaque pointer

constexpr NvmlReturn k_success = 0;
constexpr NvmlReturn k_no_permission = 4;
constexpr NvmlReturn k_not_found = 6;
constexpr NvmlReturn k_not_supported = 3;
constexpr NvmlReturn k_driver_not_loaded = 9;
constexpr NvmlReturn k_lib_rm_version_mismatch = 18;
constexpr unsigned k_mig_enabled = 1;  // NVML_DEVICE_MIG_ENABLE

// nvmlMemory_t (v1): used = reserved + allocated.
struct NvmlMemoryV1 {
  unsigned long long total, free, used;
};
// nvmlMemory_v2_t: total = reserved + used + free.
struct NvmlMemoryV2 {
  unsigned int version;
  unsigned long long total, reserved, free, used;
};
// NVML_STRUCT_VERSION(Memory, 2) = sizeof | 2 << 24 = 0x02000028 on LP64. Not 2 (nvml.h's comment
// says "must be 2"; passing 2 fails and silently drops tools back to v1).
constexpr unsigned k_memory_v2_version = static_cast<unsigned>(sizeof(NvmlMemoryV2)) | (2u << 24);
static_assert(sizeof(void*) != 8 || k_memory_v2_version == 0x02000028u, "nvmlMemory_v2_t layout");

// Buffer sizes (NVML_DEVICE_NAME_V2_BUFFER_SIZE, _UUID_V2_, _SYSTEM_DRIVER_VERSION_); one spare byte
// so a library that fills the whole buffer still leaves a terminator.
constexpr unsigned k_name_buffer = 96;
constexpr unsigned k_driver_buffer = 80;
constexpr size_t k_max_error_text = 160;

struct NvmlApi {
  // Required.
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*device_count)(unsigned*) = nullptr;
  NvmlReturn (*handle_by_index)(unsigned, NvmlDevice*) = nullptr;
  NvmlReturn (*name)(NvmlDevice, char*, unsigned) = nullptr;
  NvmlReturn (*memory)(NvmlDevice, NvmlMemoryV1*) = nullptr;
  // Optional: older drivers or other platforms lack them.
  const char* (*error_string)(NvmlReturn) = nullptr;
  NvmlReturn (*memory_v2)(NvmlDevice, NvmlMemoryV2*) = nullptr;
  NvmlReturn (*uuid)(NvmlDevice, char*, unsigned) = nullptr;
  NvmlReturn (*compute_capability)(NvmlDevice, int*, int*) = nullptr;
  NvmlReturn (*driver_version)(char*, unsigned) = nullptr;
  NvmlReturn (*mig_mode)(NvmlDevice, unsigned*, unsigned*) = nullptr;
  NvmlReturn (*max_mig_count)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*mig_handle)(NvmlDevice, unsigned, NvmlDevice*) = nullptr;
};

// ---- Loading ---------------------------------------------------------------------------------

// A dlopen'ed library, closed when it goes out of scope.
class SharedLibrary {
 public:
  explicit SharedLibrary(void* handle) : m_handle(handle) {}
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;
  ~SharedLibrary() {
    if (m_handle) dlclose(m_handle);
  }
  // Looks `symbol` up and stores it in `fn`; false when the library lacks it.
  template <class Fn>
  bool bind(Fn& fn, const char* symbol) {
    void* address = dlsym(m_handle, symbol);
    std::memcpy(&fn, &address, sizeof fn);  // object pointer -> function pointer, as POSIX allows
    return address != nullptr;
  }

 private:
  void* m_handle;
};

std::string dl_error() {
  const char* e = dlerror();
  return e ? std::string(e, strnlen(e, k_max_error_text)) : std::string("unknown error");
}

// Text a library wrote into `buffer`, stopped at the buffer's end even without a terminator,
// control characters replaced.
std::string from_buffer(const char* buffer, size_t capacity) {
  std::string s(buffer, strnlen(buffer, capacity));
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return s;
}

std::string nvml_error(const NvmlApi& api, NvmlReturn rc) {
  std::string text;
  if (api.error_string) {
    const char* s = api.error_string(rc);
    if (s) text = from_buffer(s, k_max_error_text);
  }
  return (text.empty() ? std::string("error") : text) + ", NVML code " + std::to_string(rc);
}

std::string init_failure(const NvmlApi& api, NvmlReturn rc) {
  const std::string detail = " (nvmlInit_v2: " + nvml_error(api, rc) + ")";
  switch (rc) {
    case k_driver_not_loaded:
      return "NVIDIA driver not loaded" + detail;
    case k_lib_rm_version_mismatch:
      return "NVIDIA driver and library versions differ; reboot or reload the nvidia module" + detail;
    case k_no_permission:
      return "no permission to use the NVIDIA driver" + detail;
    default:
      return "NVML could not start" + detail;
  }
}

// ---- Reading one device ----------------------------------------------------------------------

// Reads name, UUID, compute capability and memory of `handle` into `d`. Memory: the v2 call
// (which separates the driver-reserved part) when the library has it, else v1.
void read_device(const NvmlApi& api, NvmlDevice handle, ProbedDevice& d, bool& used_v1) {
  char buffer[k_name_buffer + 1] = {};
  if (api.name(handle, buffer, k_name_buffer) == k_success) d.name = from_buffer(buffer, k_name_buffer);
  if (d.name.empty()) d.name = "unknown NVIDIA GPU";
  if (api.uuid) {
    char uuid[k_name_buffer + 1] = {};
    if (api.uuid(handle, uuid, k_name_buffer) == k_success) d.uuid = from_buffer(uuid, k_name_buffer);
  }
  if (api.compute_capability) {
    int major = -1, minor = -1;
    if (api.compute_capability(handle, &major, &minor) == k_success && major >= 0 && major < 100 &&
        minor >= 0 && minor < 100) {
      d.cc_major = major;
      d.cc_minor = minor;
    }
  }
  d.bf16 = compute_capability_has_bf16(d.cc_major, d.cc_minor);
  d.fp8 = compute_capability_has_fp8(d.cc_major, d.cc_minor);

  // Any v2 failure falls back to v1 (WSL drivers answer v2 with "unknown error").
  if (api.memory_v2) {
    NvmlMemoryV2 m{};
    m.version = k_memory_v2_version;
    if (api.memory_v2(handle, &m) == k_success && m.total > 0) {
      d.total_bytes = m.total;
      d.reserved_bytes = m.reserved <= m.total ? m.reserved : 0;
      d.reserved_known = m.reserved <= m.total;
      d.used_bytes = m.used <= m.total ? m.used : m.total;
      d.free_bytes = m.free <= m.total ? m.free : m.total;
      return;
    }
  }
  NvmlMemoryV1 m{};
  const NvmlReturn rc = api.memory(handle, &m);
  if (rc != k_success) {
    d.error = rc == k_not_supported ? "memory not reported by NVML (integrated or unified-memory GPU?)"
                                    : "memory could not be read (" + nvml_error(api, rc) + ")";
    return;
  }
  if (m.total == 0) {
    d.error = "NVML reports 0 bytes of memory (integrated or unified-memory GPU?)";
    return;
  }
  used_v1 = true;
  d.total_bytes = m.total;
  d.used_bytes = m.used <= m.total ? m.used : m.total;
  d.free_bytes = m.free <= m.total ? m.free : m.total;
}

// A physical GPU as NVML enumerates it, with its MIG instances when MIG mode is on.
struct PhysicalGpu {
  ProbedDevice whole;
  bool mig_on = false;
  std::vector<ProbedDevice> instances;
};

// Lists the MIG instances of `parent` (empty slots are skipped, not an end).
void read_mig_instances(const NvmlApi& api, NvmlDevice parent, PhysicalGpu& gpu, ProbeReport& report,
                        bool& used_v1) {
  unsigned slots = 0;
  const NvmlReturn rc = api.max_mig_count(parent, &slots);
  if (rc != k_success) {
    gpu.whole.error = "MIG mode is on but its instances could not be listed (" + nvml_error(api, rc) + ")";
    return;
  }
  if (slots > k_max_probed_devices) slots = k_max_probed_devices;
  for (unsigned slot = 0; slot < slots; ++slot) {
    NvmlDevice handle = nullptr;
    const NvmlReturn hrc = api.mig_handle(parent, slot, &handle);
    if (hrc == k_not_found) continue;
    if (hrc != k_success || !handle) {
      report.notes.push_back("GPU " + std::to_string(gpu.whole.nvml_index) + " MIG slot " +
                             std::to_string(slot) + " skipped (" + nvml_error(api, hrc) + ")");
      continue;
    }
    ProbedDevice d;
    d.nvml_index = gpu.whole.nvml_index;
    d.mig = true;
    d.parent_uuid = gpu.whole.uuid;
    read_device(api, handle, d, used_v1);
    if (d.cc_major < 0) {  // instances share the parent's architecture
      d.cc_major = gpu.whole.cc_major;
      d.cc_minor = gpu.whole.cc_minor;
      d.bf16 = gpu.whole.bf16;
      d.fp8 = gpu.whole.fp8;
    }
    gpu.instances.push_back(std::move(d));
  }
}

// Turns the NVML enumeration into the devices a CUDA program sees under CUDA_VISIBLE_DEVICES.
void apply_visibility(const ProbeOptions& options, std::vector<PhysicalGpu>& gpus, ProbeReport& report) {
  const VisibleDevices visible = parse_visible_devices(
      options.cuda_visible_devices ? std::optional<std::string_view>(*options.cuda_visible_devices)
                                   : std::nullopt);
  std::vector<ProbedDevice> chosen;
  if (visible.kind == VisibleDevices::Kind::mig_uuids) {
    std::vector<ProbedDevice> all;
    std::vector<std::string> uuids;
    for (PhysicalGpu& g : gpus)
      for (ProbedDevice& d : g.instances) {
        uuids.push_back(d.uuid);
        all.push_back(d);
      }
    const std::vector<size_t> picked = select_visible(visible, uuids);
    if (!picked.empty()) chosen.push_back(all[picked.front()]);
    if (picked.size() > 1)
      report.notes.push_back("CUDA shows only the first MIG instance in CUDA_VISIBLE_DEVICES");
  } else {
    std::vector<std::string> uuids;
    for (const PhysicalGpu& g : gpus) uuids.push_back(g.whole.uuid);
    for (size_t i : select_visible(visible, uuids)) {
      PhysicalGpu& g = gpus[i];
      if (!g.mig_on) {
        chosen.push_back(g.whole);
      } else if (!g.instances.empty()) {
        for (ProbedDevice& d : g.instances) chosen.push_back(d);
      } else {
        ProbedDevice d = g.whole;
        if (d.error.empty()) d.error = "MIG mode is on but no MIG instance is visible";
        chosen.push_back(d);
      }
    }
    const bool pci_order = options.cuda_device_order && *options.cuda_device_order == "PCI_BUS_ID";
    bool mixed = false;
    for (const PhysicalGpu& g : gpus) mixed = mixed || g.whole.name != gpus.front().whole.name;
    if (mixed && !pci_order && visible.kind != VisibleDevices::Kind::gpu_uuids)  // UUIDs fix the order
      report.notes.push_back(
          "the GPUs differ and CUDA_DEVICE_ORDER is not PCI_BUS_ID: CUDA puts the fastest first, so its "
          "numbering may differ from this one (NVML order)");
  }
  for (size_t i = 0; i < chosen.size(); ++i) chosen[i].index = static_cast<unsigned>(i);
  report.devices = std::move(chosen);

  if (report.devices.empty()) {
    report.error = "CUDA_VISIBLE_DEVICES=\"" + options.cuda_visible_devices.value_or("") +
                   "\" leaves no device visible (NVML found " + std::to_string(gpus.size()) + ")";
    return;
  }
  for (const ProbedDevice& d : report.devices)
    if (d.error.empty()) return;
  report.error =
      "no device could be read: cuda:0 " + report.devices.front().name + ": " + report.devices.front().error;
}

// The whole probe, on the calling thread.
ProbeReport run_probe(const ProbeOptions& options) {
  ProbeReport report;
  void* handle = nullptr;
  if (!options.library.empty()) {
    handle = dlopen(options.library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      report.error = "cannot load the NVML library " + options.library + ": " + dl_error();
      return report;
    }
    report.library = options.library;
  } else {
    std::string first_error;
    for (const char* name : {"libnvidia-ml.so.1", "libnvidia-ml.so"}) {
      handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle) {
        report.library = name;
        break;
      }
      if (first_error.empty()) first_error = dl_error();
    }
    if (!handle) {
      report.error = "no NVIDIA driver: " + first_error;
      return report;
    }
  }
  SharedLibrary library(handle);

  NvmlApi api;
  library.bind(api.error_string, "nvmlErrorString");
  const char* missing = nullptr;
  auto require = [&](auto& fn, const char* symbol) {
    if (!missing && !library.bind(fn, symbol)) missing = symbol;
  };
  require(api.init, "nvmlInit_v2");
  require(api.shutdown, "nvmlShutdown");
  require(api.device_count, "nvmlDeviceGetCount_v2");
  require(api.handle_by_index, "nvmlDeviceGetHandleByIndex_v2");
  require(api.name, "nvmlDeviceGetName");
  require(api.memory, "nvmlDeviceGetMemoryInfo");
  if (missing) {
    report.error = report.library + " has no " + missing + " (NVIDIA driver too old, or not NVML)";
    return report;
  }
  library.bind(api.memory_v2, "nvmlDeviceGetMemoryInfo_v2");
  library.bind(api.uuid, "nvmlDeviceGetUUID");
  library.bind(api.compute_capability, "nvmlDeviceGetCudaComputeCapability");
  library.bind(api.driver_version, "nvmlSystemGetDriverVersion");
  const bool has_mig = library.bind(api.mig_mode, "nvmlDeviceGetMigMode") &&
                       library.bind(api.max_mig_count, "nvmlDeviceGetMaxMigDeviceCount") &&
                       library.bind(api.mig_handle, "nvmlDeviceGetMigDeviceHandleByIndex");

  const NvmlReturn init_rc = api.init();
  if (init_rc != k_success) {
    report.error = init_failure(api, init_rc);
    return report;
  }
  // nvmlInit is reference-counted: one shutdown per successful init, before dlclose.
  struct Shutdown {
    NvmlReturn (*fn)();
    ~Shutdown() { fn(); }
  } shutdown{api.shutdown};

  if (api.driver_version) {
    char buffer[k_driver_buffer + 1] = {};
    if (api.driver_version(buffer, k_driver_buffer) == k_success)
      report.driver_version = from_buffer(buffer, k_driver_buffer);
  }
  unsigned count = 0;
  const NvmlReturn count_rc = api.device_count(&count);
  if (count_rc != k_success) {
    report.error = "NVML cannot count the GPUs (nvmlDeviceGetCount_v2: " + nvml_error(api, count_rc) + ")";
    return report;
  }
  if (count == 0) {
    report.error = "no NVIDIA GPU found (the driver is loaded but reports 0 devices)";
    return report;
  }
  if (count > k_max_probed_devices) {
    report.notes.push_back("NVML reports " + std::to_string(count) + " GPUs; only the first " +
                           std::to_string(k_max_probed_devices) + " are read");
    count = k_max_probed_devices;
  }

  bool used_v1 = false;
  std::vector<PhysicalGpu> gpus;
  for (unsigned i = 0; i < count; ++i) {
    NvmlDevice device = nullptr;
    const NvmlReturn rc = api.handle_by_index(i, &device);
    if (rc != k_success || !device) {
      report.notes.push_back("GPU " + std::to_string(i) + " skipped: " +
                             (rc == k_no_permission ? std::string("no permission") : nvml_error(api, rc)));
      continue;
    }
    PhysicalGpu gpu;
    gpu.whole.nvml_index = i;
    unsigned current = 0, pending = 0;
    gpu.mig_on = has_mig && api.mig_mode(device, &current, &pending) == k_success && current == k_mig_enabled;
    if (gpu.mig_on) {
      // The parent's memory call needs privileges under MIG; the instances are what a process gets.
      bool ignored = false;
      ProbedDevice parent;
      read_device(api, device, parent, ignored);
      gpu.whole.name = parent.name;
      gpu.whole.uuid = parent.uuid;
      gpu.whole.cc_major = parent.cc_major;
      gpu.whole.cc_minor = parent.cc_minor;
      gpu.whole.bf16 = parent.bf16;
      gpu.whole.fp8 = parent.fp8;
      read_mig_instances(api, device, gpu, report, used_v1);
    } else {
      read_device(api, device, gpu.whole, used_v1);
    }
    gpus.push_back(std::move(gpu));
  }
  if (gpus.empty()) {
    report.error =
        "no GPU could be opened (" + std::to_string(count) + " found; " + report.notes.front() + ")";
    return report;
  }
  if (used_v1)
    report.notes.push_back(
        api.memory_v2
            ? "nvmlDeviceGetMemoryInfo_v2 failed; reserved memory unknown (used includes it)"
            : "driver without nvmlDeviceGetMemoryInfo_v2; reserved memory unknown (used includes it)");
  apply_visibility(options, gpus, report);
  return report;
}

std::optional<std::string> env_value(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::optional<std::string>(v) : std::nullopt;
}

}  // namespace

ProbeOptions ProbeOptions::from_environment() {
  ProbeOptions o;
  o.library = env_value("MEMPLAN_NVML_LIBRARY").value_or("");
  o.cuda_visible_devices = env_value("CUDA_VISIBLE_DEVICES");
  o.cuda_device_order = env_value("CUDA_DEVICE_ORDER");
  return o;
}

ProbeReport probe_devices(const ProbeOptions& options) {
  // The driver can block (a GPU fallen off the bus, a wedged kernel module): the probe runs on its
  // own thread and is left behind after `timeout`, so memplan still answers.
  struct Shared {
    std::mutex mutex;
    std::condition_variable done_cv;
    bool done = false;
    ProbeReport report;
  };
  auto shared = std::make_shared<Shared>();
  auto work = [shared, options] {
    ProbeReport r;
    try {
      r = run_probe(options);
    } catch (const std::exception& e) {
      r = ProbeReport{};
      r.error = std::string("the probe failed: ") + e.what();
    }
    std::lock_guard<std::mutex> lock(shared->mutex);
    shared->report = std::move(r);
    shared->done = true;
    shared->done_cv.notify_all();
  };
  std::thread worker;
  try {
    worker = std::thread(work);
  } catch (const std::system_error&) {
    work();  // no thread to be had: probe without the time limit
    return shared->report;
  }
  std::unique_lock<std::mutex> lock(shared->mutex);
  if (shared->done_cv.wait_for(lock, options.timeout, [&] { return shared->done; })) {
    lock.unlock();
    worker.join();
    return std::move(shared->report);
  }
  lock.unlock();
  worker.detach();
  ProbeReport late;
  late.error = "the NVIDIA driver did not answer within " + std::to_string(options.timeout.count()) +
               " ms (GPU hung or driver busy?)";
  return late;
}

}  // namespace memplan
