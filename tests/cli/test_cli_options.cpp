// One rule per input: a flag and the same key in a --plan file are parsed by the same rule (same
// request, same error text); the CLI accepts what the library accepts (--gpu cuda, --attention
// aliases); --grad-format counts on one GPU as on many.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using memplan::test::run_cli;
using nlohmann::json;

namespace {

// A plan file holding `doc`, removed when the test ends.
struct PlanFile {
  std::string path;
  explicit PlanFile(const json& doc) {
    static int n = 0;
    path = "memplan_test_plan_" + std::to_string(++n) + ".json";
    std::ofstream(path) << doc.dump();
  }
  ~PlanFile() { std::remove(path.c_str()); }
};

json breakdown(const std::vector<std::string>& args) {
  auto r = run_cli(args);
  INFO("stderr: " << r.err);
  REQUIRE(r.code == 0);
  return json::parse(r.out)["breakdown"];
}

// Model-state bytes (weights + gradients + optimizer state) per parameter of a 1e9-parameter model.
double state_bytes_per_parameter(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"estimate", "--params", "1e9", "--optimizer", "adam", "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const json b = breakdown(args);
  const double sum =
      b["parameters"].get<double>() + b["gradients"].get<double>() + b["optimizer_state"].get<double>();
  return sum / 1e9;
}

}  // namespace

TEST_CASE("grad format counts on one GPU: Megatron's 16/18/20 B per parameter", "[cli][options]") {
  // Megatron Core's distributed-optimizer guide, non-distributed column: fp32 param + fp32 grads
  // 16 B, float16 param + fp32 grads 18 B, float16 param + float16 grads (plus the fp32 copy the
  // step reads) 20 B. DeepSpeed's ZeRO paper: mixed precision with half gradients 16 B.
  CHECK(state_bytes_per_parameter({"--precision", "fp32"}) == 16.0);
  CHECK(state_bytes_per_parameter({"--precision", "mixed-bf16"}) == 16.0);
  CHECK(state_bytes_per_parameter({"--precision", "mixed-bf16", "--grad-format", "half"}) == 16.0);
  CHECK(state_bytes_per_parameter({"--precision", "mixed-bf16", "--grad-format", "fp32"}) == 18.0);
  CHECK(state_bytes_per_parameter({"--precision", "mixed-fp16", "--grad-format", "half+fp32"}) == 20.0);
  // Recipes without master weights have one gradient format: --grad-format does not apply.
  CHECK(state_bytes_per_parameter({"--precision", "fp32", "--grad-format", "fp32"}) == 16.0);
  // One GPU and a one-GPU DDP layout agree.
  CHECK(state_bytes_per_parameter({"--precision", "mixed-bf16", "--grad-format", "fp32", "--gpus", "1"}) ==
        18.0);
  CHECK(state_bytes_per_parameter(
            {"--precision", "mixed-fp16", "--grad-format", "half+fp32", "--gpus", "1"}) == 20.0);
}

TEST_CASE("the gradients row names the format it counts", "[cli][options]") {
  auto r = run_cli(
      {"estimate", "--params", "1e9", "--precision", "mixed-bf16", "--grad-format", "fp32", "--explain"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("gradients = 1,000,000,000 x 4 B (fp32) = 4,000,000,000 B") != std::string::npos);
  r = run_cli({"estimate", "--params", "1e9", "--precision", "mixed-fp16", "--grad-format", "half+fp32",
               "--explain"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("gradients = 1,000,000,000 x 2 B (fp16) = 2,000,000,000 B") != std::string::npos);
  CHECK(r.out.find("fp32 gradient copy for the step = 1,000,000,000 x 4 B (fp32) = 4,000,000,000 B") !=
        std::string::npos);
}

TEST_CASE("attention takes the library's aliases", "[cli][options]") {
  auto act = [](const std::string& attention) {
    return breakdown({"estimate", "--model", "gpt2", "--seq", "1024", "--batch", "4", "--attention",
                      attention, "--format", "json"})["activations"]
        .get<uint64_t>();
  };
  const uint64_t eager = act("eager"), sdpa = act("sdpa");
  CHECK(eager > sdpa);  // eager keeps the s x s probabilities
  CHECK(act("flash") == sdpa);
  CHECK(act("fused") == sdpa);
  CHECK(act("math") == eager);
  CHECK(act("SDPA") == sdpa);
  auto r = run_cli({"estimate", "--params", "7B", "--attention", "flsh"});
  CHECK(r.code == 2);
  CHECK(r.err ==
        "memplan: error: --attention: \"flsh\" is not valid (expected eager or sdpa; did you mean "
        "\"flash\"?)\n");
}

TEST_CASE("gpu cuda is the probe's cuda:0, like local", "[cli][options]") {
  // No NVML here (or a fake one): either way cuda, local and cuda:0 are the same device.
  auto cuda = run_cli({"fit", "--params", "1e6", "--gpu", "cuda", "--format", "json"});
  auto local = run_cli({"fit", "--params", "1e6", "--gpu", "local", "--format", "json"});
  auto cuda0 = run_cli({"fit", "--params", "1e6", "--gpu", "cuda:0", "--format", "json"});
  CHECK(cuda.err.find("is not a known GPU") == std::string::npos);
  CHECK(cuda.code == local.code);
  CHECK(cuda.code == cuda0.code);
  CHECK(cuda.err == cuda0.err);
  auto bad = run_cli({"fit", "--params", "1e6", "--gpu", "cuda:x"});
  CHECK(bad.code == 2);
  CHECK(bad.err ==
        "memplan: error: --gpu: \"cuda:x\" is not a local device (expected local or cuda:N, e.g. cuda:0)\n");
}

TEST_CASE("a plan-file value and the same flag are parsed by the same rule", "[cli][options][plan]") {
  struct Case {
    const char* key;
    const char* flag;
    json value;
    const char* text;
  };
  // Bad values: the same error line, whoever gives it.
  const Case bad[] = {
      {"batch", "--batch", "0", "0"},
      {"batch", "--batch", 2.5, "2.5"},
      {"trainable", "--trainable", "1.5", "1.5"},
      {"precision", "--precision", "fp17", "fp17"},
      {"optimizer", "--optimizer", "adamm", "adamm"},
      {"mode", "--mode", "serve", "serve"},
      {"attention", "--attention", "flsh", "flsh"},
      {"checkpointing", "--checkpointing", "some", "some"},
      {"quantize", "--quantize", "int3", "int3"},
      {"kv_format", "--kv-format", "fp17", "fp17"},
      {"overhead", "--overhead", "12 parsecs", "12 parsecs"},
      {"zero", "--zero", "4", "4"},
      {"fsdp", "--fsdp", "full-shrad", "full-shrad"},
      {"grad_format", "--grad-format", "fp64", "fp64"},
      {"gpu", "--gpu", "rtx-4909", "rtx-4909"},
      {"tensors", "--tensors", "x", "x"},
      {"seq", "--seq", "-3", "-3"},
      {"lora_targets", "--lora-targets", "qq", "qq"},
      {"cuda", "--cuda", "12.x", "12.x"},
      {"cuda_module_loading", "--cuda-module-loading", "sloth", "sloth"},
  };
  for (const Case& c : bad) {
    INFO(c.flag << " " << c.text);
    PlanFile plan(json{{c.key, c.value}});
    auto by_flag = run_cli({"estimate", "--params", "7B", c.flag, c.text});
    auto by_file = run_cli({"estimate", "--params", "7B", "--plan", plan.path});
    CHECK(by_flag.code == 2);
    CHECK(by_file.code == 2);
    CHECK(by_flag.err.rfind(std::string("memplan: error: ") + c.flag + ": ", 0) == 0);
    CHECK(by_file.err == by_flag.err);
  }
  // Good values: the same request, hence the same output.
  const std::vector<std::vector<std::string>> good = {
      {"--model", "gpt2", "--seq", "512", "--batch", "8", "--attention", "math", "--checkpointing",
       "selective"},
      {"--model", "llama-2-7b", "--mode", "inference", "--seq", "4096", "--kv-format", "int8"},
      {"--model", "llama-2-7b", "--lora", "16", "--lora-targets", "q,k,v,o", "--quantize", "nf4"},
      {"--params", "7B", "--precision", "mixed-bf16", "--grad-format", "fp32", "--gpus", "8", "--zero", "2"},
      {"--params", "1e9", "--trainable", "0.2%", "--overhead", "1GiB"},
      {"--params", "1e9", "--cuda", "11.2", "--cuda-module-loading", "eager"},
  };
  for (const auto& flags : good) {
    json doc = json::object();
    std::string shown;
    for (size_t i = 0; i + 1 < flags.size(); i += 2) {
      std::string key = flags[i].substr(2);
      for (char& ch : key)
        if (ch == '-') ch = '_';
      doc[key] = flags[i + 1];
      shown += flags[i] + " " + flags[i + 1] + " ";
    }
    INFO(shown);
    PlanFile plan(doc);
    std::vector<std::string> by_flag_args = {"estimate", "--format", "json"};
    by_flag_args.insert(by_flag_args.end(), flags.begin(), flags.end());
    auto by_flag = run_cli(by_flag_args);
    auto by_file = run_cli({"estimate", "--format", "json", "--plan", plan.path});
    REQUIRE(by_flag.code == 0);
    CHECK(by_file.code == 0);
    CHECK(by_file.out == by_flag.out);
    // The output's inputs give the same plan back.
    PlanFile echo(json::parse(by_flag.out)["inputs"]);
    auto again = run_cli({"estimate", "--format", "json", "--plan", echo.path});
    CHECK(again.out == by_flag.out);
  }
}

TEST_CASE("a library error names its field, the CLI shows the flag", "[cli][options]") {
  // Thrown by the core (sharding layout, estimate), printed with the flag.
  auto r = run_cli({"estimate", "--params", "7B", "--gpus", "16", "--nodes", "3"});
  CHECK(r.err == "memplan: error: --nodes: 16 GPUs do not split evenly over 3 nodes\n");
  r = run_cli({"estimate", "--model", "llama-2-7b", "--tp", "5"});
  CHECK(r.err == "memplan: error: --tp: 32 attention heads do not divide over tp 5\n");
  r = run_cli({"estimate", "--params", "7B", "--virtual-stages", "2"});
  CHECK(r.err == "memplan: error: --virtual-stages: interleaving needs pipeline parallelism (--pp > 1)\n");
}

TEST_CASE("a switch given =false is off and =true is on (as its error text offers)", "[cli][options]") {
  // --expandable-segments changes the reserve's replay, so the switch changes the answer.
  auto with = [](const std::string& extra) {
    std::vector<std::string> args = {"estimate", "--model",  "llama-2-7b", "--seq",
                                     "2048",     "--format", "json"};
    if (!extra.empty()) args.push_back(extra);
    auto r = run_cli(args);
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    return json::parse(r.out);
  };
  const json off = with("");
  const json on = with("--expandable-segments");
  CHECK(on != off);
  CHECK(with("--expandable-segments=false") == off);
  CHECK(with("--expandable-segments=true") == on);
  CHECK(with("--batchnorm=false") == off);
}
