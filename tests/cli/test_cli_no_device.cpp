// --gpu local with no readable GPU: fit, max-batch and advise all exit 3 with the reason on stderr
// (issue 13 item 4: max-batch printed an empty result and exited 0, advise exited 2).
#include <catch2/catch.hpp>

#include "../unit/probe_test_support.hpp"
#include "cli_harness.hpp"

using memplan::test::EnvVar;
using memplan::test::run_cli;

#ifdef MEMPLAN_FAKE_NVML

TEST_CASE("no GPU readable: fit, max-batch and advise exit 3 with the reason", "[cli][probe][errors]") {
  EnvVar library("MEMPLAN_NVML_LIBRARY", std::string(MEMPLAN_FAKE_NVML));
  EnvVar scenario("FAKE_NVML_SCENARIO", std::string("init=9"));  // driver not loaded
  EnvVar visible("CUDA_VISIBLE_DEVICES", std::nullopt);
  const std::string reason = "NVIDIA driver not loaded (nvmlInit_v2: Driver Not Loaded, NVML code 9)";
  const std::vector<std::vector<std::string>> cases = {
      {"fit", "--params", "7e9", "--gpu", "local"},
      {"max-batch", "--params", "7e9", "--activation-bytes-per-row", "1e6", "--gpu", "local"},
      {"max-batch", "--params", "7e9", "--activation-bytes-per-row", "1e6", "--gpu", "local", "--format",
       "json"},
      {"advise", "--params", "7e9", "--gpu", "local"},
  };
  for (const auto& args : cases) {
    INFO(args[0]);
    const auto r = run_cli(args);
    CHECK(r.code == 3);
    CHECK(r.err.find(reason) != std::string::npos);
    CHECK(r.err.find("memplan: error:") == std::string::npos);
  }
}

#endif
