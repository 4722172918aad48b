// Issue 32: every JSON reader refuses an object with a key twice (nlohmann kept the last value
// without a word), naming the key and the file, on one line, exit 2.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "cli_harness.hpp"

namespace fs = std::filesystem;
using memplan::test::line_count;
using memplan::test::run_cli;

namespace {

struct DupDir {
  fs::path path = fs::temp_directory_path() / ("memplan_dupkeys_" + std::to_string(::getpid()));
  DupDir() { fs::create_directories(path); }
  ~DupDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    fs::create_directories((path / name).parent_path());
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

}  // namespace

TEST_CASE("issue 32: duplicate JSON keys refused by every reader (config, plan, diff, presets, index)",
          "[cli][json]") {
  DupDir d;
  const std::string config = d.write("config.json", R"({"model_type": "gpt2", "vocab_size": 50257,
    "n_embd": 1, "n_embd": 768, "n_layer": 12, "n_head": 12, "n_positions": 1024})");
  const std::string plan = d.write("plan.json", R"({"params": "7e9", "batch": 1, "batch": 64})");
  const std::string diff = d.write("diff.json", R"({"schema": "memplan.fit/1", "total_bytes": 40,
    "required_bytes": 40, "fit": [{"gpu": "t4", "memory_bytes": 100, "memory_bytes": 1,
    "required_bytes": 40, "spare_bytes": 60, "verdict": "fits"}]})");
  const std::string presets = d.write("presets.json", R"({"gpus": [{"id": "lab", "name": "Lab card",
    "source": "s", "memory_total_bytes": 1073741824, "memory_total_bytes": 2147483648,
    "compute_capability": "8.0", "bf16": true}]})");
  const std::string index = d.write("model/model.safetensors.index.json", R"({"metadata": {"total_size": 8},
    "weight_map": {"a.weight": "model-00001-of-00002.safetensors", "a.weight": "model-00002-of-00002.safetensors"}})");
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{"estimate", "--config", config}, config + ": the config has the key \"n_embd\" twice"},
      {{"estimate", "--plan", plan}, plan + ": the plan has the key \"batch\" twice"},
      {{"diff", diff, diff}, diff + ": the input has the key \"memory_bytes\" twice (in fit[0])"},
      {{"gpus", "--presets", presets},
       presets + ": the presets file has the key \"memory_total_bytes\" twice (in gpus[0])"},
      {{"inspect", (d.path / "model").string()},
       "model.safetensors.index.json: the index has the key \"a.weight\" twice (in weight_map)"},
  };
  for (const Case& c : cases) {
    const auto r = run_cli(c.args);
    INFO(c.args.front() << " " << c.args.back() << "\nstderr: " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(c.error) != std::string::npos);
    CHECK(line_count(r.err) == 1);
    CHECK(r.out.empty());
  }
}
