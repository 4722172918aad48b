// A fake NVML (libnvidia-ml) for tests: the NVML entry points memplan's probe calls, answering from
// a scenario a test writes into FAKE_NVML_SCENARIO before each probe (read again at every init).
//
// Scenario: entries separated by ';'.
//   init=9              nvmlInit_v2 returns 9 (NVML_ERROR_DRIVER_NOT_LOADED)
//   init_sleep_ms=1500  nvmlInit_v2 sleeps, then fails with 999 (a hung driver)
//   count=1000          nvmlDeviceGetCount_v2 claims 1000 devices; count_rc=4 makes it fail
//   driver=550.54.15    nvmlSystemGetDriverVersion
//   gpu:k=v,k=v,...     one physical GPU, in order. Keys: name, uuid, total, reserved, used (bytes),
//                       cc=9.0, handle_rc, name_rc, name_fill=1 (fill the buffer, no terminator),
//                       mem_rc, mem_v2_rc, cc_rc, mig=1 (MIG mode on), mig_rc, mig_slots=7, mig_list_rc
//   mig:parent=0,slot=2,...   a MIG instance of GPU 0 in slot 2; keys as for gpu (name, uuid, memory, rc's)
// Built three times: the full library, FAKE_NVML_OLD (no _v2 memory, UUID, compute capability, driver
// version or MIG symbols, like an old driver) and FAKE_NVML_BROKEN (no nvmlDeviceGetCount_v2).
// Counters for tests: fake_nvml_stat("init"|"shutdown"|"handle_calls"|"v2_version").
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr int k_success = 0, k_invalid_argument = 2, k_insufficient_size = 7, k_unknown = 999;
#ifndef FAKE_NVML_OLD  // only the newer entry points answer these
constexpr int k_not_supported = 3, k_not_found = 6, k_argument_version_mismatch = 25;
#endif
constexpr unsigned k_max = 128;

struct FakeDevice {
  char name[128];
  char uuid[128];
  unsigned long long total, reserved, used;
  int cc_major, cc_minor;
  int handle_rc, name_rc, mem_rc, mem_v2_rc, cc_rc, uuid_rc;
  int name_fill;
  int mig, mig_rc, mig_slots, mig_list_rc;
  int parent, slot;  // MIG instances only
};

FakeDevice g_gpus[k_max];
FakeDevice g_migs[k_max];
unsigned g_gpu_count = 0, g_mig_count = 0;
int g_init_rc = 0, g_count_rc = 0, g_init_sleep_ms = 0;
long g_count = -1;
char g_driver[64];
int g_init_calls = 0, g_shutdown_calls = 0, g_handle_calls = 0;
unsigned g_v2_version = 0;

long number(const std::string& s) { return std::strtol(s.c_str(), nullptr, 10); }

void copy(char* dst, const std::string& src, size_t cap) {
  std::strncpy(dst, src.c_str(), cap - 1);
  dst[cap - 1] = '\0';
}

void set_device_key(FakeDevice& d, const std::string& key, const std::string& value) {
  if (key == "name")
    copy(d.name, value, sizeof d.name);
  else if (key == "uuid")
    copy(d.uuid, value, sizeof d.uuid);
  else if (key == "total")
    d.total = std::strtoull(value.c_str(), nullptr, 10);
  else if (key == "reserved")
    d.reserved = std::strtoull(value.c_str(), nullptr, 10);
  else if (key == "used")
    d.used = std::strtoull(value.c_str(), nullptr, 10);
  else if (key == "cc") {
    d.cc_major = static_cast<int>(number(value));
    size_t dot = value.find('.');
    d.cc_minor = dot == std::string::npos ? 0 : static_cast<int>(number(value.substr(dot + 1)));
  } else if (key == "handle_rc")
    d.handle_rc = static_cast<int>(number(value));
  else if (key == "name_rc")
    d.name_rc = static_cast<int>(number(value));
  else if (key == "name_fill")
    d.name_fill = static_cast<int>(number(value));
  else if (key == "mem_rc")
    d.mem_rc = static_cast<int>(number(value));
  else if (key == "mem_v2_rc")
    d.mem_v2_rc = static_cast<int>(number(value));
  else if (key == "cc_rc")
    d.cc_rc = static_cast<int>(number(value));
  else if (key == "uuid_rc")
    d.uuid_rc = static_cast<int>(number(value));
  else if (key == "mig")
    d.mig = static_cast<int>(number(value));
  else if (key == "mig_rc")
    d.mig_rc = static_cast<int>(number(value));
  else if (key == "mig_slots")
    d.mig_slots = static_cast<int>(number(value));
  else if (key == "mig_list_rc")
    d.mig_list_rc = static_cast<int>(number(value));
  else if (key == "parent")
    d.parent = static_cast<int>(number(value));
  else if (key == "slot")
    d.slot = static_cast<int>(number(value));
}

void load_scenario() {
  std::memset(g_gpus, 0, sizeof g_gpus);
  std::memset(g_migs, 0, sizeof g_migs);
  g_gpu_count = g_mig_count = 0;
  g_init_rc = g_count_rc = g_init_sleep_ms = 0;
  g_count = -1;
  g_driver[0] = '\0';
  const char* env = std::getenv("FAKE_NVML_SCENARIO");
  std::string text = env ? env : "";
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string::npos) end = text.size();
    std::string entry = text.substr(start, end - start);
    start = end + 1;
    if (entry.empty()) continue;
    FakeDevice* device = nullptr;
    if (entry.rfind("gpu:", 0) == 0 && g_gpu_count < k_max) {
      device = &g_gpus[g_gpu_count++];
      entry = entry.substr(4);
    } else if (entry.rfind("mig:", 0) == 0 && g_mig_count < k_max) {
      device = &g_migs[g_mig_count++];
      entry = entry.substr(4);
    }
    if (device) {
      device->cc_major = device->cc_minor = -1;
      size_t p = 0;
      while (p <= entry.size()) {
        size_t comma = entry.find(',', p);
        if (comma == std::string::npos) comma = entry.size();
        const std::string kv = entry.substr(p, comma - p);
        p = comma + 1;
        const size_t eq = kv.find('=');
        if (eq != std::string::npos) set_device_key(*device, kv.substr(0, eq), kv.substr(eq + 1));
      }
      continue;
    }
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = entry.substr(0, eq), value = entry.substr(eq + 1);
    if (key == "init")
      g_init_rc = static_cast<int>(number(value));
    else if (key == "init_sleep_ms")
      g_init_sleep_ms = static_cast<int>(number(value));
    else if (key == "count")
      g_count = number(value);
    else if (key == "count_rc")
      g_count_rc = static_cast<int>(number(value));
    else if (key == "driver")
      copy(g_driver, value, sizeof g_driver);
  }
}

FakeDevice* device_of(void* handle) { return static_cast<FakeDevice*>(handle); }

int copy_out(const char* text, char* buffer, unsigned length) {
  if (!buffer || length == 0) return k_invalid_argument;
  const size_t n = std::strlen(text);
  if (n + 1 > length) return k_insufficient_size;
  std::memcpy(buffer, text, n + 1);
  return k_success;
}

}  // namespace

struct FakeMemoryV1 {
  unsigned long long total, free, used;
};
struct FakeMemoryV2 {
  unsigned int version;
  unsigned long long total, reserved, free, used;
};

FAKE_EXPORT int fake_nvml_stat(const char* what) {
  const std::string w = what;
  if (w == "init") return g_init_calls;
  if (w == "shutdown") return g_shutdown_calls;
  if (w == "handle_calls") return g_handle_calls;
  if (w == "v2_version") return static_cast<int>(g_v2_version);
  return -1;
}

FAKE_EXPORT int nvmlInit_v2() {
  load_scenario();
  if (g_init_sleep_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(g_init_sleep_ms));
    return k_unknown;
  }
  if (g_init_rc != k_success) return g_init_rc;
  ++g_init_calls;
  return k_success;
}

FAKE_EXPORT int nvmlShutdown() {
  ++g_shutdown_calls;
  return k_success;
}

FAKE_EXPORT const char* nvmlErrorString(int rc) {
  switch (rc) {
    case 0:
      return "Success";
    case 3:
      return "Not Supported";
    case 4:
      return "Insufficient Permissions";
    case 6:
      return "Not Found";
    case 9:
      return "Driver Not Loaded";
    case 13:
      return "Function Not Found";
    case 15:
      return "GPU is lost";
    case 18:
      return "RM has detected an NVML/RM version mismatch.";
    case 25:
      return "Argument version mismatch";
    default:
      return "Unknown Error";
  }
}

#ifndef FAKE_NVML_BROKEN
FAKE_EXPORT int nvmlDeviceGetCount_v2(unsigned* count) {
  if (g_count_rc != k_success) return g_count_rc;
  *count = g_count >= 0 ? static_cast<unsigned>(g_count) : g_gpu_count;
  return k_success;
}
#endif

FAKE_EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
  ++g_handle_calls;
  if (index >= g_gpu_count) return k_invalid_argument;
  if (g_gpus[index].handle_rc != k_success) return g_gpus[index].handle_rc;
  *device = &g_gpus[index];
  return k_success;
}

FAKE_EXPORT int nvmlDeviceGetName(void* handle, char* name, unsigned length) {
  FakeDevice* d = device_of(handle);
  if (d->name_rc != k_success) return d->name_rc;
  if (d->name_fill) {
    std::memset(name, 'A', length);  // a buggy library: no terminator
    return k_success;
  }
  return copy_out(d->name, name, length);
}

FAKE_EXPORT int nvmlDeviceGetMemoryInfo(void* handle, FakeMemoryV1* memory) {
  FakeDevice* d = device_of(handle);
  if (d->mem_rc != k_success) return d->mem_rc;
  memory->total = d->total;
  memory->used = d->reserved + d->used;  // v1: used includes the reserved part
  memory->free = d->total - d->reserved - d->used;
  return k_success;
}

#ifndef FAKE_NVML_OLD
FAKE_EXPORT int nvmlDeviceGetMemoryInfo_v2(void* handle, FakeMemoryV2* memory) {
  FakeDevice* d = device_of(handle);
  g_v2_version = memory->version;
  if (memory->version != 0x02000028u) return k_argument_version_mismatch;  // as real drivers do
  if (d->mem_v2_rc != k_success) return d->mem_v2_rc;
  if (d->mem_rc != k_success) return d->mem_rc;
  memory->total = d->total;
  memory->reserved = d->reserved;
  memory->used = d->used;
  memory->free = d->total - d->reserved - d->used;
  return k_success;
}

FAKE_EXPORT int nvmlDeviceGetUUID(void* handle, char* uuid, unsigned length) {
  FakeDevice* d = device_of(handle);
  if (d->uuid_rc != k_success) return d->uuid_rc;
  return copy_out(d->uuid, uuid, length);
}

FAKE_EXPORT int nvmlDeviceGetCudaComputeCapability(void* handle, int* major, int* minor) {
  FakeDevice* d = device_of(handle);
  if (d->cc_rc != k_success) return d->cc_rc;
  if (d->cc_major < 0) return k_not_supported;
  *major = d->cc_major;
  *minor = d->cc_minor;
  return k_success;
}

FAKE_EXPORT int nvmlSystemGetDriverVersion(char* version, unsigned length) {
  if (g_driver[0] == '\0') return k_not_supported;
  return copy_out(g_driver, version, length);
}

FAKE_EXPORT int nvmlDeviceGetMigMode(void* handle, unsigned* current, unsigned* pending) {
  FakeDevice* d = device_of(handle);
  if (d->mig_rc != k_success) return d->mig_rc;
  *current = *pending = static_cast<unsigned>(d->mig);
  return k_success;
}

FAKE_EXPORT int nvmlDeviceGetMaxMigDeviceCount(void* handle, unsigned* count) {
  FakeDevice* d = device_of(handle);
  if (d->mig_list_rc != k_success) return d->mig_list_rc;
  *count = d->mig ? static_cast<unsigned>(d->mig_slots) : 0;
  return k_success;
}

FAKE_EXPORT int nvmlDeviceGetMigDeviceHandleByIndex(void* handle, unsigned index, void** mig) {
  FakeDevice* parent = device_of(handle);
  const long parent_index = parent - g_gpus;
  for (unsigned i = 0; i < g_mig_count; ++i)
    if (g_migs[i].parent == parent_index && g_migs[i].slot == static_cast<int>(index)) {
      if (g_migs[i].handle_rc != k_success) return g_migs[i].handle_rc;
      *mig = &g_migs[i];
      return k_success;
    }
  return k_not_found;
}
#endif
