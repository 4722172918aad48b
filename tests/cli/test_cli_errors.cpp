// Bad input never crashes: one line on stderr naming the option and value, exit 2, empty stdout.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "cli_harness.hpp"

using memplan::test::line_count;
using memplan::test::run_cli;

namespace {

struct BadInput {
  std::vector<std::string> args;
  const char* expected_fragment;  // must appear in the stderr line
};

const BadInput k_bad_inputs[] = {
    {{"estimate", "--params", "7x9"}, "--params: \"7x9\" is not a number (expected e.g. 7e9, 7B, 125M)"},
    {{"estimate", "--params", "-7e9"}, "--params: \"-7e9\" is negative"},
    {{"estimate", "--params", "nan"}, "--params: \"nan\" is not a number"},
    {{"estimate", "--params", "inf"}, "--params: \"inf\" is not a number"},
    {{"estimate", "--params", ""}, "--params: empty value"},
    {{"estimate", "--params", "1e30"}, "--params: \"1e30\" is too large"},
    {{"estimate", "--params", "0"}, "--params: \"0\" must be at least 1"},
    {{"estimate", "--params", "7B", "--model", "llama-2-7b"}, "cannot be combined with --model"},
    {{"estimate"}, "no model given"},
    {{"estimate", "--params", "7B", "--trainable", "0"}, "--trainable: \"0\" is outside (0, 1]"},
    {{"estimate", "--params", "7B", "--trainable", "1.5"}, "--trainable: \"1.5\" is outside (0, 1]"},
    {{"estimate", "--params", "7B", "--trainable", "abc"}, "--trainable: \"abc\" is not a fraction"},
    {{"estimate", "--params", "7B", "--batch", "0"}, "--batch: \"0\" must be at least 1"},
    {{"estimate", "--params", "7B", "--batch", "2.5"}, "--batch: \"2.5\" is not a whole number"},
    {{"estimate", "--params", "7B", "--precision", "fp17"}, "--precision: \"fp17\" is not a precision"},
    {{"estimate", "--params", "7B", "--precision", "bf61"}, "did you mean \"bf16\"?"},
    {{"estimate", "--params", "7B", "--precision", "0"},
     "--precision: \"0\" bytes per number is out of range"},
    {{"estimate", "--params", "7B", "--optimizer", "adamm"}, "did you mean \"adam\"?"},
    {{"estimate", "--params", "7B", "--optimizer", "-1"}, "--optimizer: \"-1\" is not an optimizer"},
    {{"estimate", "--params", "7B", "--mode", "serve"},
     "--mode: \"serve\" is not valid (expected train, infer"},
    {{"estimate", "--params", "7B", "--gpu", "rtx-4909"}, "did you mean \"rtx-4090\"?"},
    {{"estimate", "--params", "7B", "--gpu", "t4,,a100"}, "--gpu: \"t4,,a100\" has an empty name"},
    {{"estimate", "--model", "lama-2-7b"}, "did you mean \"llama-2-7b\"?"},
    {{"estimate", "--params", "7B", "--format", "yaml"}, "--format: \"yaml\" is not a format"},
    {{"estimate", "--params", "7B", "--units", "mb"}, "--units: \"mb\" is not a unit (expected gib or gb)"},
    {{"estimate", "--params", "7B", "--overhead", "12 parsecs"},
     "--overhead: \"12 parsecs\" has an unknown unit"},
    {{"estimate", "--params", "7B", "--quantize", "int3"}, "--quantize: \"int3\" is not a number format"},
    {{"estimate", "--params", "7B", "--attention", "flsh"}, "--attention: \"flsh\" is not valid"},
    {{"estimate", "--params", "7B", "--checkpointing", "some"}, "--checkpointing: \"some\" is not valid"},
    {{"estimate", "--params", "7B", "--activation-bytes-per-row", "-3"},
     "--activation-bytes-per-row: \"-3\" is negative"},
    {{"estimate", "--params", "7B", "--tensors", "x"}, "--tensors: \"x\" is not a number"},
    {{"estimate", "--params", "7B", "--bogus"}, "--bogus"},
    {{"estimate", "--mlp", "784"}, "--mlp: \"784\" needs at least two widths"},
    {{"estimate", "--mlp", "784,0,10"}, "--mlp: \"784,0,10\" has a zero width"},
    {{"estimate", "--params", "7B", "--plan", "/nonexistent/plan.json"}, "--plan: cannot read"},
    {{"estimate", "--params", "7B", "--presets", "/nonexistent/presets.json"}, "--presets: cannot read"},
    {{"estimat", "--params", "7B"}, "\"estimat\" is not a command"},
    {{"fit", "--params", "7B"}, "--gpu: required"},
    {{"fit", "--params", "7B", "--gpu", "t4", "--against", "half"}, "--against: \"half\" is not valid"},
    {{"fit", "--params", "7B", "--gpu", "t4", "--against", "free"}, "free needs a real device"},
    {{"max-batch", "--params", "7B", "--gpu", "t4"}, "does not grow with the batch"},
    {{"max-batch", "--params", "7B", "--gpu", "t4", "--activation-bytes-per-row", "100", "--effective-batch",
      "0"},
     "--effective-batch: \"0\" must be at least 1"},
    {{"estimate", "--params", "1e15", "--activation-bytes-per-row", "1e15", "--batch", "1e12"},
     "exceeds 2^64 bytes"},
    {{"estimate", "--layers", "32", "--hidden", "4096"}, "at least --layers, --hidden and --heads"},
    {{"estimate", "--layers", "2", "--hidden", "64", "--heads", "4"},
     "--vocab: an architecture from flags needs --vocab"},
    {{"estimate", "--layers", "2", "--hidden", "64", "--heads", "4", "--vocab", "100", "--family", "t5"},
     "--family: \"t5\" is not a family"},
    {{"estimate", "--params", "7B", "--layers", "32", "--hidden", "4096", "--heads", "30"},
     "--heads: 30 does not divide --hidden 4096"},
};

}  // namespace

TEST_CASE("every bad input: one stderr line, exit 2, empty stdout", "[cli][errors]") {
  CHECK(std::size(k_bad_inputs) >= 30);
  for (const BadInput& b : k_bad_inputs) {
    std::string cmd;
    for (const std::string& a : b.args) cmd += a + " ";
    INFO("memplan " << cmd);
    auto r = run_cli(b.args);
    INFO("stderr: " << r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(line_count(r.err) == 1);
    CHECK(r.err.rfind("memplan: error: ", 0) == 0);
    CHECK(r.err.find(b.expected_fragment) != std::string::npos);
  }
}

TEST_CASE("MEMPLAN_DATA_DIR replaces the GPU presets for every command", "[cli][presets]") {
  const std::string dir = std::string(MEMPLAN_SOURCE_DIR) + "/tests/data/presets_override";
  setenv("MEMPLAN_DATA_DIR", dir.c_str(), 1);
  auto gpus = run_cli({"gpus", "--format", "csv"});
  auto est = run_cli({"estimate", "--params", "1e6", "--format", "csv"});
  unsetenv("MEMPLAN_DATA_DIR");
  CHECK(gpus.code == 0);
  CHECK(gpus.out.find("lab-card,") != std::string::npos);
  CHECK(gpus.out.find("t4,") == std::string::npos);
  CHECK(est.out.find("gpu,lab-card,") != std::string::npos);  // the defaults: the file's first GPUs
}

// Only the plan flags named on the command line are registered with CLI11 (src/cli/app.cpp):
// the messages must be the ones CLI11 gave with all ~45 registered (taken from that build).
TEST_CASE("plan flags: whole error lines as with every flag registered", "[cli][errors]") {
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"estimate", "--params=7x9"},
       "memplan: error: --params: \"7x9\" is not a number (expected e.g. 7e9, 7B, 125M)\n"},
      {{"estimate", "--params", "7e9", "--paramz", "3"},
       "memplan: error: The following arguments were not expected: 3 --paramz\n"},
      {{"estimate", "--params", "7e9", "--seq"}, "memplan: error: --seq: 1 required TEXT missing\n"},
      {{"estimate", "--params", "7e9", "--batchnorm=3"},
       "memplan: error: --batchnorm: applies to --mlp models\n"},
      {{"fit", "--params", "7e9", "--seq=-1", "--gpu", "t4"},
       "memplan: error: --seq: \"-1\" is negative (expected a count, e.g. 7e9, 7B, 125M)\n"},
      {{"estimate", "--params", "7e9", "--zero"}, "memplan: error: --zero: 1 required TEXT missing\n"},
  };
  for (const auto& [args, expected] : cases) {
    INFO(args[0] << " " << args[1]);
    auto r = run_cli(args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == expected);
  }
}
