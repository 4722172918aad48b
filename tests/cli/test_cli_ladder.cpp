#include <catch2/catch.hpp>

#include <chrono>

#include <nlohmann/json.hpp>

#include "cli/prediction.hpp"
#include "user_command_harness.hpp"

using memplan::test::bad_input;
using memplan::test::line_count;

namespace {

memplan::test::CliResult ladder(const std::vector<std::string>& options,
                                const std::vector<std::string>& trainer_args) {
  return memplan::test::run_with_trainer("ladder", options, trainer_args);
}

}  // namespace

TEST_CASE("ladder halves on a real-looking OOM and reports the largest batch that ran", "[cli][ladder]") {
  const auto r = ladder({"--start", "1024"}, {"--oom-above", "100"});
  CHECK(r.code == 0);
  CHECK(r.out.find("    1024  oom             1") != std::string::npos);
  CHECK(r.out.find("      64  ok              0") != std::string::npos);
  CHECK(r.out.find("largest batch that ran: 64\n") != std::string::npos);
  // The command's output streams on stderr with a prefix; stdout is only the result.
  CHECK(r.err.find("[batch 64] throughput: 500.0 rows/s\n") != std::string::npos);
  CHECK(r.err.find("[batch 128] torch.OutOfMemoryError: CUDA out of memory.") != std::string::npos);
  CHECK(r.err.find("memplan: batch 128: out of memory (exit 1,") != std::string::npos);
}

TEST_CASE("ladder JSON has the fixed names and --refine finds the exact edge", "[cli][ladder]") {
  const auto r = ladder({"--start", "1024", "--refine", "--format", "json"}, {"--oom-above", "100"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["schema"] == "memplan.ladder/1");
  CHECK(j["largest_ok"] == 100);
  CHECK(j["smallest_oom"] == 101);
  std::vector<uint64_t> batches;
  for (const auto& t : j["tries"]) batches.push_back(t["batch"]);
  CHECK(batches == std::vector<uint64_t>{1024, 512, 256, 128, 64, 96, 112, 104, 100, 102, 101});
  CHECK(j["tries"][0]["oom"] == true);
  CHECK(j["tries"][0]["exit_code"] == 1);
  CHECK(j["tries"][4]["oom"] == false);
  CHECK(j["tries"][4]["exit_code"] == 0);
  CHECK(j["tries"][4]["seconds"].is_number());
  CHECK(j["inputs"]["start"] == 1024);
  CHECK(j["inputs"]["command"][0] == "/bin/sh");
}

TEST_CASE("ladder exits 1 when nothing fits down to --min", "[cli][ladder]") {
  const auto r = ladder({"--start", "8", "--min", "2"}, {"--oom-above", "1"});
  CHECK(r.code == 1);
  CHECK(line_count(r.out) == 6);  // header, 8, 4, 2, blank, verdict
  CHECK(r.out.find("no batch ran") != std::string::npos);
}

TEST_CASE("ladder passes through a failure that is not OOM with exit 4 and the stderr tail",
          "[cli][ladder]") {
  const auto r = ladder({"--start", "1024", "-q"}, {"--oom-above", "100", "--crash-at", "256"});
  CHECK(r.code == 4);
  CHECK(r.out.empty());  // -q: only the largest batch, and none was found
  CHECK(r.err.find("memplan: batch 256: the command failed (exit 3) and it was not out of memory") !=
        std::string::npos);
  CHECK(r.err.find("  | ValueError: expected input batch_size (256) to match target batch_size (3)") !=
        std::string::npos);
  CHECK(r.err.find("[batch") == std::string::npos);  // -q: no streaming
}

TEST_CASE("ladder --timeout stops a command that ignores signals", "[cli][ladder]") {
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = ladder({"--start", "8", "--timeout", "0.2", "--grace", "0.1", "--format", "json"},
                        {"--sleep", "5", "--ignore-signals"});
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 1.5);
  CHECK(r.code == 4);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["tries"][0]["outcome"] == "timeout");
  CHECK(j["tries"][0]["signal"] == 9);
  CHECK(r.err.find("still running after the 0.2 s timeout") != std::string::npos);

  const auto ok = ladder({"--start", "8", "--timeout", "0.2", "--grace", "0.1", "--timeout-is-ok", "-q"},
                         {"--sleep", "5", "--ignore-signals"});
  CHECK(ok.code == 0);
  CHECK(ok.out == "8\n");
}

TEST_CASE("Ctrl-C stops the child and the ladder, keeping what was found", "[cli][ladder]") {
  const auto r = ladder({"--start", "8", "--grace", "0.2"}, {"--interrupt-parent", "--sleep", "5"});
  CHECK(r.code == 130);
  CHECK(r.out.find("interrupted") != std::string::npos);
  CHECK(r.err.find("memplan: interrupted by Ctrl-C\n") != std::string::npos);
}

TEST_CASE("ladder --start auto begins at the predicted max batch", "[cli][ladder]") {
  std::vector<std::string> seen;
  memplan::cli::set_predictor_for_tests([&seen](const std::vector<std::string>& args, std::string&) {
    seen = args;
    memplan::cli::Prediction p;
    p.max_batch = 300;
    p.bytes_at = [](uint64_t b) { return (1ull << 30) + b * (1ull << 20); };  // 1 GiB + 1 MiB per row
    return std::optional<memplan::cli::Prediction>(p);
  });
  const auto r = ladder({"--start", "auto", "--model", "gpt2", "--seq=1024", "--format", "json"},
                        {"--oom-above", "100"});
  memplan::cli::set_predictor_for_tests({});
  REQUIRE(r.code == 0);
  CHECK(seen == std::vector<std::string>{"--model", "gpt2", "--seq=1024"});
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["inputs"]["start"] == 300);
  CHECK(j["tries"][0]["batch"] == 300);
  CHECK(j["tries"][0]["predicted_bytes"] == 1073741824ull + 300ull * 1048576ull);
  CHECK(j["largest_ok"] == 75);
}

TEST_CASE("ladder bad input: one line on stderr, exit 2, nothing on stdout", "[cli][ladder]") {
  CHECK(
      bad_input({"ladder", "--start", "64"}) ==
      "memplan: error: --: expected the command to run after --, e.g. memplan ladder --start 1024 -- python "
      "train.py --batch-size {batch}\n");
  CHECK(bad_input({"ladder", "--start", "64", "python", "train.py"}) ==
        "memplan: error: \"python\": unexpected before -- (the command to run goes after --)\n");
  CHECK(bad_input({"ladder", "--start", "6x4", "--", "true"}) ==
        "memplan: error: --start: \"6x4\" is not a number (expected e.g. 8, 512, 1024)\n");
  CHECK(
      bad_input({"ladder", "--start", "auto", "--", "true"}).find("--start: auto needs the estimate flags") !=
      std::string::npos);
  CHECK(bad_input({"ladder", "--start", "4", "--min", "8", "--", "true"}) ==
        "memplan: error: --start: 4 is below --min 8\n");
  CHECK(bad_input({"ladder", "--start", "4", "--timeout", "-1", "--", "true"}).find("--timeout:") !=
        std::string::npos);
  CHECK(bad_input({"ladder", "--start", "4", "--oom-pattern", "(", "--", "true"}).find("--oom-pattern:") !=
        std::string::npos);
  CHECK(bad_input({"ladder", "--start", "4", "--", "/nonexistent/train.sh", "{batch}"}) ==
        "memplan: error: /nonexistent/train.sh: cannot run it: No such file or directory\n");
}
