// memplan's reserved peak (the step replayed through PyTorch's caching allocator, step_events.cpp)
// against torch.cuda.max_memory_reserved() of real training steps on a GPU
// (tests/data/gpu_h200_measured.json: Hugging Face models on an H200, torch 2.11, measured by this
// project; the same runs as bench/accuracy/results/h200-2026-12-01/hf_train.json). The rows outside
// -5% .. +10% are listed with their error (docs/accuracy.md says why) and must not move; the others
// must stay inside; the median absolute error at most 5%.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

namespace fs = std::filesystem;
using memplan::test::run_cli;

TEST_CASE("H200 training steps: the reserved peak within -5% .. +10% of max_memory_reserved",
          "[cli][gpu-measured][many-runs]") {
  // Outside the band, with the error memplan had when they were recorded (docs/accuracy.md: the
  // fragmentation of checkpointed steps the replay does not reproduce).
  const std::map<std::string, double> listed = {
      {"gpt2 full-bf16 b=1 s=1024 ckpt", -0.051},
      {"gpt2 full-amp-bf16 b=8 s=1024 ckpt", 0.245},
  };
  const fs::path previous = fs::current_path();
  fs::current_path(MEMPLAN_SOURCE_DIR);
  std::ifstream in("tests/data/gpu_h200_measured.json");
  REQUIRE(in);
  const nlohmann::json data = nlohmann::json::parse(in);
  std::vector<double> errors;
  for (const auto& row : data.at("rows")) {
    if (!row.contains("peak_reserved")) continue;
    std::vector<std::string> args = row.at("args").get<std::vector<std::string>>();
    args.insert(args.end(), {"--format", "json"});
    const auto r = run_cli(args);
    const std::string id = row.at("id").get<std::string>();
    INFO(id);
    REQUIRE(r.code <= 1);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j.at("reserved").is_object());
    const double measured = row.at("peak_reserved").get<double>();
    const double error = (j.at("reserved_bytes").get<double>() - measured) / measured;
    INFO("predicted " << j.at("reserved_bytes").get<uint64_t>() << " measured " << measured << " error "
                      << error * 100 << "%");
    const auto it = listed.find(id);
    if (it != listed.end()) {
      CHECK(std::fabs(error - it->second) <= 0.005);
    } else {
      CHECK(error >= -0.05);
      CHECK(error <= 0.10);
    }
    errors.push_back(std::fabs(error));
  }
  REQUIRE(errors.size() >= 40);
  std::sort(errors.begin(), errors.end());
  CHECK(errors[errors.size() / 2] <= 0.05);
  fs::current_path(previous);
}
