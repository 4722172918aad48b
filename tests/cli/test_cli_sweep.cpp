#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli/prediction.hpp"
#include "user_command_harness.hpp"

using memplan::test::bad_input;

namespace {

memplan::test::CliResult sweep(const std::vector<std::string>& options,
                               const std::vector<std::string>& trainer_args) {
  return memplan::test::run_with_trainer("sweep", options, trainer_args);
}

}  // namespace

TEST_CASE("sweep draws the saturating curve, marks the bend and stops at the OOM", "[cli][sweep]") {
  const auto r = sweep({"--batches", "16,32,64,128,256,512,1024,2048,4096"}, {"--oom-above", "1024"});
  CHECK(r.code == 0);
  // 1000*b/(b+64) printed with one decimal (truncated) by the fake: 200.0 ... 941.1; 90% of 941.1 = 847 ->
  // 512.
  CHECK(r.out.find("      16         200.0      21%  #########\n") !=
        std::string::npos);  // 200/941.1 = 21%, 8.5 -> 9
  CHECK(r.out.find("     512         888.8      94%  ###################################### <- bend\n") !=
        std::string::npos);
  CHECK(r.out.find("    2048           OOM") != std::string::npos);
  CHECK(r.out.find("4096") == std::string::npos);
  CHECK(r.out.find("bend: batch 512 (888.8 rows/s, within 10% of the best, 941.1 rows/s at batch 1024)") !=
        std::string::npos);
  CHECK(r.out.find("\033[") == std::string::npos);  // not a terminal: no colour
}

TEST_CASE("sweep JSON has points and the bend", "[cli][sweep]") {
  const auto r = sweep(
      {"--batches", "64,128,256", "--warmup", "0", "--repeat", "2", "--within", "0.2", "--format", "json"},
      {"--oom-above", "128"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["schema"] == "memplan.sweep/1");
  REQUIRE(j["points"].size() == 3);
  CHECK(j["points"][0]["batch"] == 64);
  CHECK(j["points"][0]["throughput"] == Approx(500.0));
  CHECK(j["points"][1]["throughput"] == Approx(666.6));
  CHECK(j["points"][1]["runs"].size() == 2);
  CHECK(j["points"][1]["predicted_bytes"].is_null());
  CHECK(j["points"][2]["oom"] == true);
  CHECK(j["points"][2]["throughput"].is_null());
  CHECK(j["bend"] == 128);  // 80% of 666.6 is 533.3, and 500 (batch 64) is below it
}

TEST_CASE("sweep --batches auto uses the prediction, with predicted memory per point", "[cli][sweep]") {
  memplan::cli::set_predictor_for_tests([](const std::vector<std::string>&, std::string&) {
    // Built in place: g++ 12 -O3 flags a copied std::function as maybe-uninitialized.
    return std::optional<memplan::cli::Prediction>(
        std::in_place, memplan::cli::Prediction{48, [](uint64_t b) { return b * 1000000ull; }});
  });
  const auto r = sweep({"--batches", "auto", "--gpu", "local", "--warmup", "0", "--format", "json"}, {});
  const auto table = sweep({"--batches", "8,48", "--gpu", "local", "--warmup", "0", "--units", "gb"}, {});
  memplan::cli::set_predictor_for_tests({});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  std::vector<uint64_t> batches;
  for (const auto& p : j["points"]) batches.push_back(p["batch"]);
  CHECK(batches == std::vector<uint64_t>{1, 2, 4, 8, 16, 32, 48});
  CHECK(j["points"][6]["predicted_bytes"] == 48000000);
  CHECK(table.out.find("predicted") != std::string::npos);
  CHECK(table.out.find("48.0 MB") != std::string::npos);
}

TEST_CASE("sweep exits 1 when the first batch runs out of memory, 4 on another failure", "[cli][sweep]") {
  const auto none = sweep({"--batches", "256,512", "-q"}, {"--oom-above", "100"});
  CHECK(none.code == 1);
  CHECK(none.out.empty());
  const auto crash = sweep({"--batches", "16,32", "--warmup", "0"}, {"--crash-at", "32"});
  CHECK(crash.code == 4);
  CHECK(crash.out.find("      16         200.0") != std::string::npos);
  CHECK(crash.err.find("memplan: batch 32: the command failed (exit 3)") != std::string::npos);
}

TEST_CASE("sweep falls back to wall time and says so", "[cli][sweep]") {
  const auto r = sweep({"--batches", "16", "--warmup", "0", "--format", "json"}, {"--quiet-rate"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["points"][0]["source"] == "wall_time");
  CHECK(j["points"][0]["throughput"].get<double>() > 0);
}

TEST_CASE("sweep bad input: one line, exit 2, nothing on stdout", "[cli][sweep]") {
  CHECK(bad_input({"sweep", "--batches", "16,,32", "--", "true"}) ==
        "memplan: error: --batches: \"16,,32\" has an empty item (expected e.g. 16,32,64 or auto)\n");
  CHECK(bad_input({"sweep", "--batches", "16", "--within", "1", "--", "true"}) ==
        "memplan: error: --within: \"1\" must be below 1 (100%)\n");
  CHECK(bad_input({"sweep", "--batches", "16", "--throughput-pattern", "([", "--", "true"})
            .find("--throughput-pattern:") != std::string::npos);
  CHECK(bad_input({"sweep", "--batches", "16", "--rows-per-step", "{batch}*x", "--", "true"})
            .find("--rows-per-step:") != std::string::npos);
  CHECK(bad_input({"sweep", "--batches", "auto", "--model", "gpt2", "--", "true"}) ==
        "memplan: error: --batches auto: name the GPU to plan for (--gpu local, cuda:N or a preset such as "
        "rtx-4090)\n");
}
