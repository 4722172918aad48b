// issue 27 ("Too many flags, no map"): the planning commands' --help in groups, in the order a user
// decides (Model, Run, Precision, Memory savers, GPUs, Runtime/engine, Output), with typed
// placeholders, each command listing only the options it takes and refusing the others.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.hpp"

using memplan::test::run_cli;

namespace {

const std::vector<std::string> k_planning = {"estimate", "fit",      "max-batch", "advise",
                                             "serve",    "gguf-fit", "why-oom",   "plot"};

// One option line of a --help: "  --seq N   Sequence length" or "  -q,--quiet   ...".
struct HelpLine {
  std::string flag;   // "--seq"
  std::string value;  // "N"; "" for a switch
};

std::vector<HelpLine> help_lines(const std::string& command) {
  const auto r = run_cli({command, "--help"});
  REQUIRE(r.code == 0);
  std::vector<HelpLine> lines;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("  -", 0) != 0) continue;
    // "  NAMES VALUE   description": the placeholder follows the names after one space and is
    // upper case or {a|b}; a switch's description starts after the padding.
    const size_t names_end = line.find(' ', 2);
    const std::string names = line.substr(2, names_end - 2);
    const size_t dashes = names.find("--");
    if (dashes == std::string::npos) continue;
    HelpLine h{names.substr(dashes), ""};
    if (names_end != std::string::npos && names_end + 1 < line.size() && line[names_end + 1] != ' ') {
      const std::string value = line.substr(names_end + 1, line.find(' ', names_end + 1) - names_end - 1);
      const bool upper = std::all_of(value.begin(), value.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
      if (value[0] == '{' || upper) h.value = value;
    }
    lines.push_back(h);
  }
  return lines;
}

bool lists(const std::vector<HelpLine>& lines, const std::string& flag) {
  return std::any_of(lines.begin(), lines.end(), [&](const HelpLine& h) { return h.flag == flag; });
}

}  // namespace

TEST_CASE("issue 27: serve --help lists no training flags", "[cli][help]") {
  const std::vector<HelpLine> serve = help_lines("serve");
  // A serving engine runs inference: no optimizer, adapters, training-state sharding, recompute,
  // accumulation, loss or step batch (vLLM takes --max-num-seqs / --max-model-len instead).
  for (const char* flag : {"--optimizer",
                           "--lora",
                           "--lora-targets",
                           "--lora-dtype",
                           "--lora-dropout",
                           "--trainable",
                           "--mode",
                           "--zero",
                           "--fsdp",
                           "--offload",
                           "--dp",
                           "--micro-batches",
                           "--virtual-stages",
                           "--prefetch",
                           "--largest-layer",
                           "--checkpointing",
                           "--grad-accum",
                           "--grad-format",
                           "--zero-grad",
                           "--optimizer-loop",
                           "--loss",
                           "--keep-logits",
                           "--train-vision",
                           "--batch",
                           "--seq",
                           "--tensors",
                           "--mlp",
                           "--batchnorm"}) {
    INFO(flag);
    CHECK_FALSE(lists(serve, flag));
  }
  for (const char* flag : {"--model", "--config", "--precision", "--quantize", "--kv-format", "--gpu", "--tp",
                           "--pp", "--engine", "--max-model-len", "--gpu-memory-utilization", "--format"}) {
    INFO(flag);
    CHECK(lists(serve, flag));
  }
  // Given anyway, a training flag is refused in one line that names the commands taking it.
  const auto r = run_cli({"serve", "--model", "llama2-7b", "--gpu", "a100-80gb", "--zero", "2"});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "memplan: error: The following arguments were not expected: 2 --zero (--zero: an option of estimate, "
        "fit, max-batch, advise, why-oom and plot, not of serve)\n");
  // Where the engine has its own flag for it, the refusal names that one.
  CHECK(
      run_cli({"serve", "--model", "llama2-7b", "--gpu", "a100-80gb", "--seq", "8192"}).err ==
      "memplan: error: The following arguments were not expected: 8192 --seq (--seq: an option of estimate, "
      "fit, max-batch, advise, models, why-oom and plot, not of serve; it takes --max-model-len)\n");
  // A plan file may carry any key (an estimate's JSON inputs): --zero there meets serve's refusal.
  const std::string path = "memplan_test_help_serve_plan.json";
  std::ofstream(path) << R"({"model": "llama2-7b", "gpu": "a100-80gb", "zero": 2})";
  const auto by_file = run_cli({"serve", "--plan", path});
  std::remove(path.c_str());
  CHECK(by_file.code == 2);
  CHECK(by_file.err ==
        "memplan: error: --zero: shards training state; a serving engine splits the model with --tp/--pp\n");
}

TEST_CASE("issue 27: estimate --help lists its groups in the order a user decides", "[cli][help]") {
  const auto r = run_cli({"estimate", "--help"});
  REQUIRE(r.code == 0);
  size_t at = 0;
  for (const char* title :
       {"Model", "Run", "Precision", "Memory savers", "GPUs", "Runtime/engine", "Output"}) {
    INFO(title);
    const size_t found = r.out.find(std::string("\n") + title + ":\n");
    REQUIRE(found != std::string::npos);
    CHECK(found >= at);
    at = found;
  }
  // A few options in the group the issue names for them.
  // The group an option is listed under: the last title line ("Run:", unindented) above it.
  auto group_of = [&](const std::string& flag) {
    std::istringstream in(r.out);
    std::string line, group;
    while (std::getline(in, line)) {
      if (!line.empty() && line[0] != ' ' && line.back() == ':') group = line.substr(0, line.size() - 1);
      if (line.rfind("  " + flag + " ", 0) == 0) return group;
    }
    return std::string("(not listed)");
  };
  CHECK(group_of("--config") == "Model");
  CHECK(group_of("--seq") == "Run");
  CHECK(group_of("--kv-format") == "Precision");
  CHECK(group_of("--checkpointing") == "Memory savers");
  CHECK(group_of("--zero") == "GPUs");
  CHECK(group_of("--torch") == "Runtime/engine");
  CHECK(group_of("--units") == "Output");
}

TEST_CASE("issue 27: planning help has groups, typed placeholders and 100 columns", "[cli][help]") {
  for (const std::string& command : k_planning) {
    INFO(command);
    const auto r = run_cli({command, "--help"});
    REQUIRE(r.code == 0);
    CHECK(r.out.find("TEXT") == std::string::npos);          // every value typed
    CHECK(r.out.find("\nOptions:\n") == std::string::npos);  // every option in a group of the table
    std::istringstream in(r.out);
    std::string line;
    while (std::getline(in, line)) {
      INFO(line);
      CHECK(line.size() <= 100);
    }
  }
  const std::vector<HelpLine> estimate = help_lines("estimate");
  auto value_of = [&](const std::string& flag) {
    for (const HelpLine& h : estimate)
      if (h.flag == flag) return h.value;
    return std::string("(not listed)");
  };
  CHECK(value_of("--batch") == "N");
  CHECK(value_of("--overhead") == "SIZE");
  CHECK(value_of("--gpu") == "LIST");
  CHECK(value_of("--config") == "FILE");
  CHECK(value_of("--checkpointing") == "{none|selective|full}");
  CHECK(value_of("--batchnorm").empty());  // a switch
}

TEST_CASE("issue 27: every option a command's --help lists is accepted by it", "[cli][help]") {
  for (const std::string& command : k_planning) {
    for (const HelpLine& h : help_lines(command)) {
      if (h.flag == "--help") continue;
      std::vector<std::string> args = {command, h.flag};
      if (!h.value.empty()) args.emplace_back("1");
      if (command == "why-oom") args.emplace_back("memplan_test_no_such_log.txt");  // not standard input
      INFO(command << " " << h.flag);
      const auto r = run_cli(args);
      CHECK(r.err.find("not expected") == std::string::npos);  // CLI11 took it (any later error is memplan's)
      CHECK(r.err.find("an option of") == std::string::npos);
    }
  }
}

TEST_CASE("issue 27: gguf-fit refuses the PyTorch step's flags and names who takes them", "[cli][help]") {
  const std::vector<HelpLine> gguf = help_lines("gguf-fit");
  for (const char* flag :
       {"--optimizer", "--lora", "--zero", "--tp", "--batch", "--seq", "--kv-format", "--torch"}) {
    INFO(flag);
    CHECK_FALSE(lists(gguf, flag));
  }
  const auto r = run_cli({"gguf-fit", "--model", "llama2-7b", "--gpu", "rtx-4090", "--tp", "2"});
  CHECK(r.code == 2);
  CHECK(
      r.err ==
      "memplan: error: The following arguments were not expected: 2 --tp (--tp: an option of estimate, fit, "
      "max-batch, advise, serve, why-oom and plot, not of gguf-fit)\n");
}
