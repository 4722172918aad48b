// Golden output of `memplan diff` and `memplan why-oom` on real inputs: tests/golden/diff/*.txt and
// tests/golden/why_oom/*.txt, each "$ memplan ARGS" (paths relative to the source tree), an optional
// "# exit N", then the exact stdout. MEMPLAN_UPDATE_GOLDEN=1 rewrites them; review the diff.
// Also their bad inputs: one line on stderr, exit 2.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

namespace fs = std::filesystem;
using memplan::test::run_cli;

namespace {

// Runs with the source tree as the working directory, so the paths in commands and outputs are
// the same on every machine.
struct InSourceTree {
  fs::path previous = fs::current_path();
  InSourceTree() { fs::current_path(MEMPLAN_SOURCE_DIR); }
  ~InSourceTree() { fs::current_path(previous); }
};

std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> args;
  std::istringstream ss(line);
  std::string a;
  while (ss >> a) args.push_back(a);
  return args;
}

void check_goldens(const std::string& folder, size_t at_least) {
  InSourceTree here;
  const bool update = std::getenv("MEMPLAN_UPDATE_GOLDEN") != nullptr;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path("tests/golden") / folder))
    if (entry.path().extension() == ".txt") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= at_least);
  for (const fs::path& file : files) {
    std::ifstream in(file);
    std::string command, line;
    std::getline(in, command);
    REQUIRE(command.rfind("$ memplan ", 0) == 0);
    int expected_code = 0;
    std::streampos body = in.tellg();
    if (std::getline(in, line) && line.rfind("# exit ", 0) == 0)
      expected_code = std::atoi(line.c_str() + 7);
    else
      in.seekg(body);
    std::ostringstream rest;
    rest << in.rdbuf();
    const auto r = run_cli(words(command.substr(10)));
    INFO(file.string() << ": " << command << "\nstderr: " << r.err);
    if (update) {
      std::ofstream out(file);
      out << command << "\n";
      if (r.code != 0) out << "# exit " << r.code << "\n";
      out << r.out;
      continue;
    }
    CHECK(r.code == expected_code);
    CHECK(r.out == rest.str());
  }
}

}  // namespace

TEST_CASE("diff: golden outputs", "[cli][golden][diff]") { check_goldens("diff", 4); }

TEST_CASE("why-oom: golden outputs", "[cli][golden][oom][many-runs]") { check_goldens("why_oom", 16); }

TEST_CASE("diff and why-oom: bad inputs", "[cli][diff][oom]") {
  InSourceTree here;
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{"diff", "tests/data/diff/nope.json", "tests/data/diff/nope.json"}, "OLD: cannot read"},
      {{"diff", "tests/data/oom_messages/SOURCES.md", "tests/data/oom_messages/SOURCES.md"},
       "SOURCES.md: the input is not valid JSON"},
      {{"diff", "tests/data/diff/llama_lora_seq2048.json", "tests/golden/gpus.txt"},
       "gpus.txt: the input is not valid JSON"},
      {{"diff", "tests/data/diff/llama_lora_seq2048.json", "tests/data/hf_configs/gpt2.json"},
       "gpt2.json: unknown key"},
      {{"diff", "tests/data/diff/llama_lora_seq2048.json", "tests/data/diff/llama_lora_seq2048.json",
        "--format", "csv"},
       "--format: csv is not offered"},
      {{"why-oom", "tests/data/diff/llama_lora_seq2048.json"}, "holds no out-of-memory message"},
      {{"why-oom", "tests/data"}, "is a directory"},
  };
  for (const Case& c : cases) {
    const auto r = run_cli(c.args);
    INFO(c.args[0] << " " << c.args[1] << "\nstderr: " << r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find(c.error) != std::string::npos);
    CHECK(memplan::test::line_count(r.err) == 1);
  }
}

TEST_CASE("diff: numbers known without memplan's estimate", "[cli][diff]") {
  InSourceTree here;
  // Batch 1 -> 4 and sequence 2048 -> 4096 with fused attention: activations are linear in
  // batch x sequence, so they grow exactly 8x; nothing else of a LoRA run depends on either.
  const auto r = run_cli({"diff", "tests/data/diff/llama_lora_seq2048.json",
                          "tests/data/diff/llama_lora_seq4096_batch4.json", "--format", "json"});
  REQUIRE(r.code == 1);
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& t : j["terms"]) {
    INFO(t.dump());
    if (t["term"] == "activations")
      CHECK(t["new_bytes"].get<uint64_t>() == 8 * t["old_bytes"].get<uint64_t>());
    else
      CHECK(t["change_bytes"] == 0);
  }
  // (The required bytes are the step's peak, not the sum of the terms: no such identity there.)
  CHECK(j["required"]["change_bytes"].get<int64_t>() > 0);
  // The same run given as a fit output and as a plan: nothing changes, exit 0.
  const auto same =
      run_cli({"diff", "tests/data/diff/fit_seq2048.json", "tests/data/diff/llama_lora_seq2048.json"});
  CHECK(same.code == 0);
  CHECK(same.out.find("No GPU's verdict changed.") != std::string::npos);
}

TEST_CASE("why-oom: standard input, bounded", "[cli][oom]") {
  InSourceTree here;
  const std::string binary = MEMPLAN_BINARY;
  auto run = [](const std::string& command) {
    std::string out;
    FILE* p = ::popen(command.c_str(), "r");
    REQUIRE(p);
    char buf[4096];
    size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    const int status = ::pclose(p);
    return std::make_pair(WEXITSTATUS(status), out);
  };
  const auto [code, out] = run(binary + " why-oom < tests/data/oom_messages/vllm_max_seq_len.txt");
  CHECK(code == 0);
  CHECK(out.find("memplan why-oom: standard input") == 0);
  CHECK(out.find("room for 3,664 tokens") != std::string::npos);
  // 17 MB of input is over the 16 MiB limit: one line, exit 2.
  const auto [big, said] = run("head -c 17000000 /dev/zero | " + binary + " why-oom - 2>&1");
  CHECK(big == 2);
  CHECK(said.find("standard input is larger than 16,777,216 bytes") != std::string::npos);
}

TEST_CASE("issue 32: diff refuses an inconsistent spare, a repeated GPU and bounds a non-string schema",
          "[cli][diff]") {
  const fs::path dir = fs::temp_directory_path() / "memplan_issue32_diff";
  fs::create_directories(dir);
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  const std::string row_ok =
      R"({"gpu": "t4", "memory_bytes": 100, "required_bytes": 40, "spare_bytes": 60, "verdict": "fits"})";
  const auto doc = [](const std::string& rows) {
    return R"({"schema": "memplan.estimate/1", "total_bytes": 40, "required_bytes": 40, "fit": [)" + rows +
           "]}";
  };
  struct Case {
    std::string file, error;
  };
  const std::vector<Case> cases = {
      // memory 10, required 40: spare is 10 - 40 = -30, not 2^63 - 1.
      {write("spare.json", doc(R"({"gpu": "t4", "memory_bytes": 10, "required_bytes": 40, )"
                               R"("spare_bytes": 9223372036854775807, "verdict": "fits"})")),
       "is not memory_bytes - required_bytes (-30)"},
      {write("twice.json", doc(row_ok + ", " + row_ok)), "GPU \"t4\" is listed more than once"},
      {write("schema.json", R"({"schema": {"a": ")" + std::string(100'000, 'x') + "\"}}"),
       "... (100008 bytes)"},
  };
  for (const Case& c : cases) {
    const auto r = run_cli({"diff", c.file, c.file});
    INFO(c.file << "\nstderr: " << r.err.substr(0, 300));
    CHECK(r.code == 2);
    CHECK(r.err.find(c.error) != std::string::npos);
    CHECK(memplan::test::line_count(r.err) == 1);
    CHECK(r.err.size() < 400);
  }
  // The consistent row is read: the same file against itself changes nothing, exit 0.
  const std::string ok = write("ok.json", doc(row_ok));
  CHECK(run_cli({"diff", ok, ok}).code == 0);
  fs::remove_all(dir);
}
