// memplan's step events against a real op sequence. tests/data/torch_trace/ holds every allocation
// and free of three training steps of a 4-layer BERT-large (fp32, batch 4 x 512, eager attention,
// dropout, torch's per-tensor AdamW, gradients kept) recorded on CPU with torch 1.13's profiler
// (bench/accuracy/bert_step_trace.py). Replayed through memplan's model of the CUDA caching
// allocator, the real sequence must need what memplan's own events for the same run need: the same
// allocated peak (the timeline) and a reserve within 2% (the fragmentation the events' order makes).

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "core/memory/caching_allocator.hpp"

namespace fs = std::filesystem;
using memplan::test::run_cli;

TEST_CASE("step events: a real BERT step's op sequence reserves what memplan's events reserve",
          "[cli][step_events]") {
  const fs::path previous = fs::current_path();
  fs::current_path(MEMPLAN_SOURCE_DIR);
  std::ifstream in("tests/data/torch_trace/bert4_fp32_b4_s512_cpu_trace.json");
  REQUIRE(in);
  const nlohmann::json trace = nlohmann::json::parse(in);
  memplan::CachingAllocator allocator;
  std::unordered_map<uint64_t, uint64_t> live;
  uint64_t now = 0, requested_peak = 0;
  for (const auto& ev : trace.at("events")) {
    const uint64_t id = ev.at(0).get<uint64_t>(), bytes = ev.at(1).get<uint64_t>();
    if (bytes) {
      REQUIRE(allocator.malloc(id, bytes));
      live[id] = bytes;
      now += bytes;
      requested_peak = std::max(requested_peak, now);
    } else {
      allocator.free(id);
      now -= live[id];
      live.erase(id);
    }
  }
  std::vector<std::string> args = trace.at("args").get<std::vector<std::string>>();
  args.insert(args.end(), {"--format", "json"});
  const auto r = run_cli(args);
  REQUIRE(r.code <= 1);
  const auto j = nlohmann::json::parse(r.out);
  const double peak = j.at("peak_bytes").get<double>();
  const double reserved = j.at("reserved_bytes").get<double>();
  const double real_reserved = static_cast<double>(allocator.stats().peak_reserved);
  INFO("real sequence: requested peak " << requested_peak << ", reserved " << real_reserved
                                        << "; memplan: peak " << peak << ", reserved " << reserved);
  // Recorded at 2,608,836,964 B requested and 2,686,451,712 B reserved.
  CHECK(std::fabs(peak - static_cast<double>(requested_peak)) / static_cast<double>(requested_peak) <= 0.001);
  CHECK(std::fabs(reserved - real_reserved) / real_reserved <= 0.02);
  fs::current_path(previous);
}
