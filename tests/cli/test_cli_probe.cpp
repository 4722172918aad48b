// `memplan probe` in-process, against the fake NVML (tests/fake_nvml).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "../unit/probe_test_support.hpp"
#include "cli_harness.hpp"

using memplan::test::EnvVar;
using memplan::test::k_h100;
using memplan::test::k_t4;
using memplan::test::line_count;
using memplan::test::run_cli;

#ifdef MEMPLAN_FAKE_NVML

namespace {

// The environment `memplan probe` reads, set for one scope.
struct FakeMachine {
  EnvVar library;
  EnvVar scenario;
  EnvVar visible;
  EnvVar order{"CUDA_DEVICE_ORDER", std::string("PCI_BUS_ID")};
  explicit FakeMachine(const std::string& s, std::optional<std::string> cuda_visible = std::nullopt,
                       const char* lib = MEMPLAN_FAKE_NVML)
      : library("MEMPLAN_NVML_LIBRARY", std::string(lib)),
        scenario("FAKE_NVML_SCENARIO", s),
        visible("CUDA_VISIBLE_DEVICES", std::move(cuda_visible)) {}
};

}  // namespace

TEST_CASE("memplan probe --format json lists the devices", "[cli][probe]") {
  FakeMachine m("driver=550.54.15;" + k_h100 + ";" + k_t4);
  const auto r = run_cli({"probe", "--format", "json"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["schema"] == "memplan.probe/1");
  CHECK(j["driver_version"] == "550.54.15");
  CHECK(j["error"].is_null());
  REQUIRE(j["devices"].size() == 2);
  const auto& h = j["devices"][0];
  CHECK(h["index"] == 0);
  CHECK(h["name"] == "NVIDIA H100 80GB HBM3");
  CHECK(h["uuid"] == "GPU-11111111-aaaa");
  CHECK(h["memory_total_bytes"] == 85520809984ull);   // 81559 MiB
  CHECK(h["memory_reserved_bytes"] == 491782144ull);  // 469 MiB
  CHECK(h["memory_used_bytes"] == 0);
  CHECK(h["memory_free_bytes"] == 85029027840ull);  // 81090 MiB
  CHECK(h["compute_capability"] == "9.0");
  CHECK(h["bf16"] == true);
  CHECK(h["fp8"] == true);
  CHECK(h["mig"] == false);
  CHECK(j["devices"][1]["compute_capability"] == "7.5");
  CHECK(j["devices"][1]["bf16"] == false);
  CHECK(j["inputs"]["cuda_device_order"] == "PCI_BUS_ID");
}

TEST_CASE("memplan probe prints a table with units", "[cli][probe]") {
  FakeMachine m("driver=550.54.15;" + k_h100 + ";" + k_t4);
  auto r = run_cli({"probe"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(line_count(r.out) == 4);  // driver line, header, two devices
  // 81559 MiB = 79.6 GiB; 469 MiB; 81090 MiB = 79.2 GiB.
  CHECK(r.out.find("cuda:0  NVIDIA H100 80GB HBM3  79.6 GiB  469.0 MiB") != std::string::npos);
  CHECK(r.out.find("79.2 GiB  9.0  yes   yes  no   GPU-11111111-aaaa") != std::string::npos);
  r = run_cli({"probe", "--format", "csv"});
  CHECK(r.out.find("\n0,NVIDIA H100 80GB HBM3,85520809984,491782144,0,85029027840,9.0,yes,yes,no,") !=
        std::string::npos);
  r = run_cli({"probe", "--units", "gb"});
  CHECK(r.out.find("85.5 GB") != std::string::npos);  // 85520809984 B
}

TEST_CASE("memplan probe honours CUDA_VISIBLE_DEVICES", "[cli][probe]") {
  FakeMachine m(k_h100 + ";" + k_t4, std::string("1"));
  const auto r = run_cli({"probe", "--format", "json"});
  CHECK(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["devices"].size() == 1);
  CHECK(j["devices"][0]["index"] == 0);
  CHECK(j["devices"][0]["nvml_index"] == 1);
  CHECK(j["devices"][0]["name"] == "Tesla T4");
  CHECK(j["inputs"]["cuda_visible_devices"] == "1");
}

TEST_CASE("memplan probe: no GPU readable is exit 3 with one reason", "[cli][probe]") {
  {
    FakeMachine m("init=9");
    auto r = run_cli({"probe"});
    CHECK(r.code == 3);
    CHECK(r.out.empty());
    CHECK(r.err ==
          "memplan: probe: NVIDIA driver not loaded (nvmlInit_v2: Driver Not Loaded, NVML code 9)\n");
    r = run_cli({"probe", "--format", "json"});
    CHECK(r.code == 3);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["error"] == "NVIDIA driver not loaded (nvmlInit_v2: Driver Not Loaded, NVML code 9)");
    CHECK(j["devices"].empty());
  }
  {
    FakeMachine m(k_h100, std::nullopt, "/nonexistent/libfake.so");
    const auto r = run_cli({"probe"});
    CHECK(r.code == 3);
    CHECK(line_count(r.err) == 1);
    CHECK(r.err.rfind("memplan: probe: cannot load the NVML library /nonexistent/libfake.so: ", 0) == 0);
  }
  {
    FakeMachine m(k_h100, std::string("-1"));
    const auto r = run_cli({"probe"});
    CHECK(r.code == 3);
    CHECK(r.err == "memplan: probe: CUDA_VISIBLE_DEVICES=\"-1\" leaves no device visible (NVML found 1)\n");
  }
}

TEST_CASE("memplan probe shows an unreadable device with its reason", "[cli][probe]") {
  FakeMachine m(k_h100 + ",mem_rc=15;" + k_t4);
  const auto r = run_cli({"probe"});
  CHECK(r.code == 0);
  CHECK(r.out.find("note: cuda:0: memory could not be read (GPU is lost, NVML code 15)\n") !=
        std::string::npos);
  const auto j = nlohmann::json::parse(run_cli({"probe", "--format", "json"}).out);
  CHECK(j["devices"][0]["memory_total_bytes"].is_null());
  CHECK(j["devices"][0]["error"] == "memory could not be read (GPU is lost, NVML code 15)");
}

#endif  // MEMPLAN_FAKE_NVML

TEST_CASE("memplan probe refuses a bad --format", "[cli][probe]") {
  const auto r = run_cli({"probe", "--format", "xml"});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "memplan: error: --format: \"xml\" is not a format (expected table, json, markdown or csv)\n");
}
