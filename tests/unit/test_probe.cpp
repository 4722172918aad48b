// The NVML probe against the fake NVML libraries built in tests/fake_nvml (scenario syntax there).
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

#include <memplan/error.hpp>
#include <memplan/probe.hpp>

#include "probe_test_support.hpp"

using namespace memplan;
using memplan::test::EnvVar;
using memplan::test::k_h100;
using memplan::test::k_t4;

#ifdef MEMPLAN_FAKE_NVML

namespace {

ProbeReport probe_with(const std::string& scenario, const char* library = MEMPLAN_FAKE_NVML,
                       std::optional<std::string> visible = std::nullopt,
                       std::optional<std::string> order = std::string("PCI_BUS_ID")) {
  EnvVar env("FAKE_NVML_SCENARIO", scenario);
  ProbeOptions o;
  o.library = library;
  o.cuda_visible_devices = std::move(visible);
  o.cuda_device_order = std::move(order);
  return probe_devices(o);
}

// Counters the fake keeps (it stays loaded while this handle is open).
struct FakeStats {
  void* handle = dlopen(MEMPLAN_FAKE_NVML, RTLD_NOW | RTLD_LOCAL);
  int (*stat)(const char*) = nullptr;
  FakeStats() {
    void* p = handle ? dlsym(handle, "fake_nvml_stat") : nullptr;
    std::memcpy(&stat, &p, sizeof stat);
  }
  ~FakeStats() {
    if (handle) dlclose(handle);
  }
  int operator()(const char* what) const { return stat ? stat(what) : -1; }
};

std::vector<std::string> names(const ProbeReport& r) {
  std::vector<std::string> n;
  for (const auto& d : r.devices) n.push_back(d.name);
  return n;
}

}  // namespace

TEST_CASE("probe reads two GPUs through the v2 memory call", "[probe]") {
  const ProbeReport r = probe_with("driver=550.54.15;" + k_h100 + ";" + k_t4);
  REQUIRE(r.error.empty());
  CHECK(r.driver_version == "550.54.15");
  CHECK(r.library == MEMPLAN_FAKE_NVML);
  REQUIRE(r.devices.size() == 2);
  const ProbedDevice& h = r.devices[0];
  CHECK(h.index == 0);
  CHECK(h.name == "NVIDIA H100 80GB HBM3");
  CHECK(h.uuid == "GPU-11111111-aaaa");
  // 81559 MiB = 81559 * 1048576 = 85520809984 B; reserved 469 MiB = 491782144 B (research notes).
  CHECK(h.total_bytes == 85520809984ull);
  CHECK(h.reserved_known);
  CHECK(h.reserved_bytes == 491782144ull);
  CHECK(h.used_bytes == 0);
  CHECK(h.free_bytes == 85520809984ull - 491782144ull);
  CHECK(h.cc_major == 9);
  CHECK(h.cc_minor == 0);
  CHECK(h.bf16);
  CHECK(h.fp8);
  CHECK_FALSE(h.mig);
  const ProbedDevice& t = r.devices[1];
  CHECK(t.index == 1);
  CHECK(t.nvml_index == 1);
  // T4: 15360 MiB total, 251 MiB reserved, 3 MiB used -> free = 15106 MiB = 15839789056 B.
  CHECK(t.total_bytes == 16106127360ull);
  CHECK(t.free_bytes == 15839789056ull);
  CHECK(t.cc_major == 7);
  CHECK(t.cc_minor == 5);
  CHECK_FALSE(t.bf16);
  CHECK_FALSE(t.fp8);
  CHECK(r.notes.empty());
}

TEST_CASE("probe passes nvmlMemory_v2 = 0x02000028, not 2, and shuts NVML down once", "[probe]") {
  FakeStats stats;
  REQUIRE(stats.stat);
  const int inits = stats("init"), shutdowns = stats("shutdown");
  const ProbeReport r = probe_with(k_h100);
  REQUIRE(r.error.empty());
  CHECK(static_cast<unsigned>(stats("v2_version")) == 0x02000028u);  // sizeof(40) | 2 << 24
  CHECK(stats("init") == inits + 1);
  CHECK(stats("shutdown") == shutdowns + 1);
  // A failed init is not shut down.
  probe_with("init=9");
  CHECK(stats("shutdown") == shutdowns + 1);
}

TEST_CASE("probe falls back to v1 when the v2 memory call fails", "[probe]") {
  const ProbeReport r = probe_with(k_t4 + ",mem_v2_rc=999");
  REQUIRE(r.error.empty());
  REQUIRE(r.devices.size() == 1);
  const ProbedDevice& t = r.devices[0];
  CHECK_FALSE(t.reserved_known);
  CHECK(t.reserved_bytes == 0);
  CHECK(t.total_bytes == 16106127360ull);
  // v1 "used" includes the reserved part: 251 + 3 MiB = 266338304 B.
  CHECK(t.used_bytes == 266338304ull);
  CHECK(t.free_bytes == 15839789056ull);
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0] == "nvmlDeviceGetMemoryInfo_v2 failed; reserved memory unknown (used includes it)");
}

TEST_CASE("probe works with an old driver that lacks the optional symbols", "[probe]") {
  const ProbeReport r = probe_with("driver=550.54.15;" + k_h100, MEMPLAN_FAKE_NVML_OLD);
  REQUIRE(r.error.empty());
  REQUIRE(r.devices.size() == 1);
  const ProbedDevice& h = r.devices[0];
  CHECK(h.name == "NVIDIA H100 80GB HBM3");
  CHECK(h.uuid.empty());
  CHECK(h.cc_major == -1);
  CHECK_FALSE(h.bf16);
  CHECK(h.total_bytes == 85520809984ull);
  CHECK_FALSE(h.reserved_known);
  CHECK(r.driver_version.empty());
  CHECK(r.notes ==
        std::vector<std::string>{
            "driver without nvmlDeviceGetMemoryInfo_v2; reserved memory unknown (used includes it)"});
}

TEST_CASE("probe turns every failure into one reason", "[probe]") {
  CHECK(probe_with(k_h100, MEMPLAN_FAKE_NVML_BROKEN).error ==
        std::string(MEMPLAN_FAKE_NVML_BROKEN) +
            " has no nvmlDeviceGetCount_v2 (NVIDIA driver too old, or not NVML)");
  CHECK(probe_with(k_h100, "/nonexistent/libnvidia-ml.so.1")
            .error.rfind("cannot load the NVML library /nonexistent/libnvidia-ml.so.1: ", 0) == 0);
  CHECK(probe_with("init=9").error ==
        "NVIDIA driver not loaded (nvmlInit_v2: Driver Not Loaded, NVML code 9)");
  CHECK(probe_with("init=18").error ==
        "NVIDIA driver and library versions differ; reboot or reload the nvidia module "
        "(nvmlInit_v2: RM has detected an NVML/RM version mismatch., NVML code 18)");
  CHECK(probe_with("init=4").error ==
        "no permission to use the NVIDIA driver (nvmlInit_v2: Insufficient Permissions, NVML code 4)");
  CHECK(probe_with("init=15").error == "NVML could not start (nvmlInit_v2: GPU is lost, NVML code 15)");
  CHECK(probe_with("").error == "no NVIDIA GPU found (the driver is loaded but reports 0 devices)");
  CHECK(probe_with("count_rc=999;" + k_h100).error ==
        "NVML cannot count the GPUs (nvmlDeviceGetCount_v2: Unknown Error, NVML code 999)");
  for (const char* s : {"init=9", "init=18", ""}) CHECK(probe_with(s).devices.empty());
}

TEST_CASE("probe skips a GPU it may not open and reports one it cannot read", "[probe]") {
  ProbeReport r = probe_with(k_h100 + ",handle_rc=4;" + k_t4);
  REQUIRE(r.error.empty());
  CHECK(names(r) == std::vector<std::string>{"Tesla T4"});
  CHECK(r.devices[0].index == 0);  // CUDA does not count a device it cannot open
  CHECK(r.devices[0].nvml_index == 1);
  CHECK(r.notes == std::vector<std::string>{"GPU 0 skipped: no permission"});

  r = probe_with(k_h100 + ",handle_rc=4;" + k_t4 + ",handle_rc=15");
  CHECK(r.error == "no GPU could be opened (2 found; GPU 0 skipped: no permission)");

  r = probe_with(k_h100 + ",mem_rc=15;" + k_t4);
  REQUIRE(r.error.empty());
  REQUIRE(r.devices.size() == 2);
  CHECK(r.devices[0].error == "memory could not be read (GPU is lost, NVML code 15)");
  CHECK(r.devices[1].error.empty());

  r = probe_with(k_h100 + ",mem_rc=3");
  CHECK(r.error ==
        "no device could be read: cuda:0 NVIDIA H100 80GB HBM3: memory not reported by NVML "
        "(integrated or unified-memory GPU?)");
}

TEST_CASE("probe reports MIG instances, not the parent", "[probe]") {
  // An A100 80GB in MIG mode with 2g.20gb instances in slots 0 and 3 (19968 MiB each, as nvidia-smi
  // shows them); slots 1 and 2 are empty. The parent's own memory call is refused, as in containers.
  const std::string a100 =
      "gpu:name=NVIDIA A100-SXM4-80GB,uuid=GPU-a100,total=85899345920,cc=8.0,mem_rc=4,mig=1,mig_slots=7";
  const std::string mig0 =
      "mig:parent=0,slot=0,name=NVIDIA A100-SXM4-80GB MIG 2g.20gb,uuid=MIG-aaaa,"
      "total=20937965568,used=13631488";
  const std::string mig3 =
      "mig:parent=0,slot=3,name=NVIDIA A100-SXM4-80GB MIG 2g.20gb,uuid=MIG-bbbb,"
      "total=20937965568";
  ProbeReport r = probe_with(a100 + ";" + k_t4 + ";" + mig0 + ";" + mig3);
  REQUIRE(r.error.empty());
  REQUIRE(r.devices.size() == 3);
  CHECK(r.devices[0].uuid == "MIG-aaaa");
  CHECK(r.devices[0].mig);
  CHECK(r.devices[0].parent_uuid == "GPU-a100");
  CHECK(r.devices[0].total_bytes == 20937965568ull);  // 19968 MiB
  CHECK(r.devices[0].used_bytes == 13631488ull);      // 13 MiB
  CHECK(r.devices[0].cc_major == 8);                  // from the parent
  CHECK(r.devices[0].bf16);
  CHECK_FALSE(r.devices[0].fp8);
  CHECK(r.devices[1].uuid == "MIG-bbbb");
  CHECK(r.devices[2].name == "Tesla T4");
  CHECK(r.devices[2].index == 2);

  // CUDA shows one MIG instance: the first one named.
  r = probe_with(a100 + ";" + mig0 + ";" + mig3, MEMPLAN_FAKE_NVML, std::string("MIG-bbbb,MIG-aaaa"));
  REQUIRE(r.devices.size() == 1);
  CHECK(r.devices[0].uuid == "MIG-bbbb");
  CHECK(r.devices[0].index == 0);

  // MIG on, no instance created.
  r = probe_with(a100);
  REQUIRE(r.devices.size() == 1);
  CHECK(r.devices[0].error == "MIG mode is on but no MIG instance is visible");
  CHECK_FALSE(r.error.empty());
}

TEST_CASE("probe applies CUDA_VISIBLE_DEVICES like CUDA", "[probe]") {
  const std::string two = k_h100 + ";" + k_t4;
  CHECK(names(probe_with(two, MEMPLAN_FAKE_NVML, std::string("1"))) == std::vector<std::string>{"Tesla T4"});
  const ProbeReport swapped = probe_with(two, MEMPLAN_FAKE_NVML, std::string("1,0"));
  CHECK(names(swapped) == std::vector<std::string>{"Tesla T4", "NVIDIA H100 80GB HBM3"});
  CHECK(swapped.devices[1].index == 1);
  CHECK(swapped.devices[1].nvml_index == 0);
  CHECK(names(probe_with(two, MEMPLAN_FAKE_NVML, std::string("GPU-2222"))) ==
        std::vector<std::string>{"Tesla T4"});
  CHECK(probe_with(two, MEMPLAN_FAKE_NVML, std::string("")).error ==
        "CUDA_VISIBLE_DEVICES=\"\" leaves no device visible (NVML found 2)");
  CHECK(probe_with(two, MEMPLAN_FAKE_NVML, std::string("0,0")).devices.empty());
  // Different GPUs and no CUDA_DEVICE_ORDER=PCI_BUS_ID: CUDA may number them otherwise; say so.
  const ProbeReport unordered = probe_with(two, MEMPLAN_FAKE_NVML, std::nullopt, std::nullopt);
  REQUIRE(unordered.notes.size() == 1);
  CHECK(unordered.notes[0].find("CUDA_DEVICE_ORDER") != std::string::npos);
  // UUIDs name the devices whatever the order.
  CHECK(probe_with(two, MEMPLAN_FAKE_NVML, std::string("GPU-2222,GPU-1111"), std::nullopt).notes.empty());
}

TEST_CASE("probe is bounded: device count, strings, time", "[probe]") {
  FakeStats stats;
  const int calls = stats("handle_calls");
  ProbeReport r = probe_with("count=1000000;" + k_h100 + ";" + k_t4);
  REQUIRE(r.error.empty());
  CHECK(r.devices.size() == 2);
  CHECK(stats("handle_calls") - calls == 64);
  CHECK(r.notes.front() == "NVML reports 1000000 GPUs; only the first 64 are read");

  // A library that fills the name buffer without a terminator: the name stops at the buffer (96).
  r = probe_with(k_h100 + ",name_fill=1");
  REQUIRE(r.devices.size() == 1);
  CHECK(r.devices[0].name == std::string(96, 'A'));

  // A driver that does not answer: the probe gives up after the timeout.
  EnvVar env("FAKE_NVML_SCENARIO", "init_sleep_ms=600");
  ProbeOptions o;
  o.library = MEMPLAN_FAKE_NVML;
  o.timeout = std::chrono::milliseconds(50);
  const auto start = std::chrono::steady_clock::now();
  r = probe_devices(o);
  const auto waited = std::chrono::steady_clock::now() - start;
  CHECK(r.error == "the NVIDIA driver did not answer within 50 ms (GPU hung or driver busy?)");
  CHECK(waited < std::chrono::milliseconds(500));
}

#endif  // MEMPLAN_FAKE_NVML

TEST_CASE("compute capability gives bf16 from 8.0 and fp8 from 8.9", "[probe]") {
  // T4 7.5, A100 8.0, A10 8.6, L4 8.9, H100 9.0, B200 10.0, RTX 5090 12.0.
  CHECK_FALSE(compute_capability_has_bf16(7, 5));
  CHECK(compute_capability_has_bf16(8, 0));
  CHECK(compute_capability_has_bf16(12, 0));
  CHECK_FALSE(compute_capability_has_bf16(-1, -1));
  CHECK_FALSE(compute_capability_has_fp8(8, 0));
  CHECK_FALSE(compute_capability_has_fp8(8, 6));
  CHECK(compute_capability_has_fp8(8, 9));
  CHECK(compute_capability_has_fp8(9, 0));
  CHECK(compute_capability_has_fp8(10, 0));
}

TEST_CASE("choose_local_device resolves local and cuda:N", "[probe]") {
  ProbeReport r;
  r.driver_version = "550.54.15";
  ProbedDevice a;
  a.index = 0;
  a.name = "NVIDIA H100 80GB HBM3";
  a.total_bytes = 85520809984ull;
  a.reserved_bytes = 491782144ull;
  a.reserved_known = true;
  a.free_bytes = 80000000000ull;
  ProbedDevice b;
  b.index = 1;
  b.name = "Tesla T4";
  b.error = "memory could not be read (GPU is lost, NVML code 15)";
  r.devices = {a, b};

  CHECK(is_local_gpu_spec("local"));
  CHECK(is_local_gpu_spec("cuda:1"));
  CHECK_FALSE(is_local_gpu_spec("h100"));
  LocalDevice c = choose_local_device(r, "local");
  REQUIRE(c.device);
  CHECK(c.device->name == "NVIDIA H100 80GB HBM3");
  CHECK(c.driver_version == "550.54.15");
  // total - reserved = 81559 - 469 = 81090 MiB = 85029027840 B (what PyTorch reports as total_memory).
  CHECK(device_memory_bytes(*c.device, MemoryBasis::total) == 85029027840ull);
  CHECK(device_memory_bytes(*c.device, MemoryBasis::free) == 80000000000ull);
  CHECK(device_label(*c.device) == "cuda:0 NVIDIA H100 80GB HBM3");
  CHECK(choose_local_device(r, "cuda:0").device);
  c = choose_local_device(r, "cuda:1");
  CHECK_FALSE(c.device);
  CHECK(c.reason == "cuda:1 Tesla T4: memory could not be read (GPU is lost, NVML code 15)");
  CHECK(choose_local_device(r, "cuda:7").reason == "cuda:7: no such device (2 visible: cuda:0, cuda:1)");
  try {
    choose_local_device(r, "cuda:x");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) ==
          "gpu: \"cuda:x\" is not a local device (expected local or cuda:N, e.g. cuda:0)");
  }
  ProbeReport none;
  none.error =
      "no NVIDIA driver: libnvidia-ml.so.1: cannot open shared object file: No such file or directory";
  CHECK(choose_local_device(none, "local").reason ==
        "cuda:0: no NVIDIA driver: libnvidia-ml.so.1: cannot open shared object file: No such file or "
        "directory");
}
