// Multi-GPU plans through the CLI, against the ZeRO paper's formulas worked by hand.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using memplan::test::run_cli;
using nlohmann::json;

TEST_CASE("ZeRO-2 on 8 GPUs: 2P + (2 + K)P/N per GPU (K = 12)", "[cli][parallel]") {
  // t5-3b as in DeepSpeed's docs: P = 2,851,598,336; mixed fp16 Adam.
  auto r = run_cli({"estimate", "--params", "2851598336", "--largest-layer", "32899072", "--zero", "2",
                    "--gpus", "8", "--precision", "mixed-fp16", "--optimizer", "adam", "--gpu", "a100-80gb",
                    "--format", "json"});
  REQUIRE(r.code == 0);
  json j = json::parse(r.out);
  const uint64_t p = 2851598336ull;
  CHECK(j["breakdown"]["parameters"] == 2 * p);
  CHECK(j["breakdown"]["gradients"] == 2 * p / 8);
  CHECK(j["breakdown"]["optimizer_state"] == 12 * p / 8);
  CHECK(j["total_bytes"] == 2 * p + 14 * p / 8);  // 10,693,493,760 B
  CHECK(j["layout"]["sharding"] == "zero-2");
  CHECK(j["ranks"].size() == 1);
}

TEST_CASE("ZeRO-3 with optimizer offload moves the states to the host", "[cli][parallel]") {
  auto r = run_cli({"estimate",    "--model", "llama-2-70b", "--precision", "mixed-bf16",
                    "--optimizer", "adamw",   "--gpus",      "8",           "--nodes",
                    "2",           "--zero",  "3",           "--offload",   "optimizer",
                    "--batch",     "1",       "--seq",       "4096",        "--checkpointing",
                    "full",        "--gpu",   "h100-80gb",   "--format",    "json"});
  REQUIRE(r.code == 0);
  json j = json::parse(r.out);
  const uint64_t p = 68976648192ull;
  CHECK(j["breakdown"]["optimizer_state"] == 0);
  CHECK(j["breakdown"]["parameters"] == 2 * p / 8);      // bf16 weights sharded over 8 ranks
  CHECK(j["host_bytes"].get<uint64_t>() >= 12 * p / 2);  // 4 ranks a node, 12 B per parameter / 8 each
  CHECK(j["layout"]["nodes"] == 2);
}

TEST_CASE("gpus auto finds the smallest count that fits, and fit says so", "[cli][parallel]") {
  auto r = run_cli({"fit", "--model", "llama-2-13b", "--precision", "mixed-bf16", "--optimizer", "adamw",
                    "--seq", "2048", "--gpus", "auto", "--gpu", "a100-80gb", "--format", "json"});
  REQUIRE(r.code == 0);
  json j = json::parse(r.out);
  CHECK(j["fits_all"] == true);
  // 16 B per parameter of 13.0B = 208 GB of model states: more than 2 x 80 GB can hold.
  auto two = run_cli({"fit", "--model", "llama-2-13b", "--precision", "mixed-bf16", "--optimizer", "adamw",
                      "--seq", "2048", "--gpus", "2", "--zero", "3", "--gpu", "a100-80gb"});
  CHECK(two.code == 1);
}

TEST_CASE("CLI layout errors: one line naming the option", "[cli][parallel]") {
  auto r = run_cli({"estimate", "--params", "7B", "--zero", "2", "--fsdp", "full-shard", "--gpus", "8"});
  CHECK(r.code == 2);
  CHECK(r.err == "memplan: error: --zero: cannot be combined with --fsdp (pick one engine)\n");
  auto z = run_cli({"estimate", "--params", "7B", "--zero", "4", "--gpus", "8"});
  CHECK(z.code == 2);
  CHECK(z.err.find("--zero") != std::string::npos);
  CHECK(z.out.empty());
}

TEST_CASE("a plan file round-trips the inputs of the JSON output", "[cli][plan]") {
  auto first = run_cli({"estimate", "--model", "gpt2", "--batch", "8", "--seq", "1024", "--precision",
                        "amp-bf16", "--gpu", "rtx-4090", "--zero", "1", "--gpus", "2", "--format", "json"});
  REQUIRE(first.code == 0);
  json j = json::parse(first.out);
  const std::string path = std::string(MEMPLAN_SOURCE_DIR) + "/build-plan-roundtrip.json";
  {
    std::ofstream out(path);
    out << j["inputs"].dump(2);
  }
  auto again = run_cli({"fit", "--plan", path, "--format", "json"});
  std::remove(path.c_str());
  REQUIRE(again.code == 0);
  CHECK(json::parse(again.out)["required_bytes"] == j["required_bytes"]);
  auto overridden = run_cli({"estimate", "--plan", path, "--batch", "16", "--format", "json"});
  (void)overridden;  // the file is gone: reading it again is an error
  CHECK(overridden.code == 2);
}

TEST_CASE("sharding keeps quantised frozen weights at their own bytes", "[cli][parallel]") {
  auto one = run_cli({"estimate", "--model", "llama-2-7b", "--quantize", "nf4", "--trainable", "0.001",
                      "--precision", "bf16", "--seq", "512", "--gpu", "a100-80gb", "--format", "json"});
  auto sharded =
      run_cli({"estimate",    "--model",   "llama-2-7b", "--quantize", "nf4",       "--trainable", "0.001",
               "--precision", "bf16",      "--seq",      "512",        "--gpus",    "1",           "--zero",
               "2",           "--offload", "optimizer",  "--gpu",      "a100-80gb", "--format",    "json"});
  REQUIRE(one.code == 0);
  REQUIRE(sharded.code == 0);
  // ZeRO-2 on one GPU does not shard the weights: the same bytes as the single-GPU estimate.
  CHECK(json::parse(sharded.out)["breakdown"]["parameters"] ==
        json::parse(one.out)["breakdown"]["parameters"]);
}
