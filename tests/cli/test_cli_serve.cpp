// memplan serve against vLLM's published start-up figures (tests/data/vllm_logs/README.md has
// each log's URL): weights within 1%, GPU blocks (or the KV memory they are cut from) within 5%.
// The figures come from real logs, never from memplan's own output.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "cli_harness.hpp"

using memplan::test::run_cli;

namespace {

const std::string k_logs = MEMPLAN_SOURCE_DIR "/tests/data/vllm_logs/";
const std::string k_configs = MEMPLAN_SOURCE_DIR "/tests/data/hf_configs/";

nlohmann::json serve(std::vector<std::string> args) {
  args.insert(args.begin(), "serve");
  args.push_back("--format");
  args.push_back("json");
  const auto r = run_cli(args);
  INFO(r.err);
  REQUIRE((r.code == 0 || r.code == 1));
  return nlohmann::json::parse(r.out);
}

double gib(const nlohmann::json& bytes) { return bytes.get<double>() / double(1ull << 30); }

double rel(double predicted, double logged) { return std::fabs(predicted - logged) / logged; }

}  // namespace

TEST_CASE("serve: Llama-3.1-8B-Instruct on an RTX 3090 at 20,000 tokens (vllm#10517)", "[serve]") {
  const auto j = serve({"--config", k_configs + "Llama-3.1-8B-Instruct.json", "--gpu", "rtx-3090",
                        "--gpu-memory", "23.58GiB", "--max-model-len", "20000"});
  CHECK(rel(gib(j["budget"]["weight_bytes"]), 14.9888) < 0.01);  // "Loading model weights took 14.9888 GB"
  CHECK(rel(j["gpu_blocks"].get<double>(), 1952) < 0.05);        // "GPU blocks: 1952"
  CHECK(j["settings"]["max_num_batched_tokens"] == 20000);       // no chunked prefill below 32K
  CHECK(j["fits"] == true);
}

TEST_CASE("serve: the same at 29,000 tokens does not fit (vllm#10517)", "[serve]") {
  const auto j = serve({"--config", k_configs + "Llama-3.1-8B-Instruct.json", "--gpu", "rtx-3090",
                        "--gpu-memory", "23.58GiB", "--max-model-len", "29000"});
  CHECK(rel(j["gpu_blocks"].get<double>(), 1478) < 0.05);  // "# GPU blocks: 1478"
  CHECK(j["fits"] == false);                               // 23,648 tokens < 29,000: vLLM refused to start
  CHECK(j["largest_max_model_len"].get<uint64_t>() < 29000);
}

TEST_CASE("serve: Meta-Llama-3-8B on an 80 GB GPU, tp 1 and 2 (vllm PR 10511)", "[serve]") {
  const auto one = serve(
      {"--config", k_configs + "Meta-Llama-3-8B.json", "--gpu", "h100-80gb", "--gpu-memory", "79.22GiB"});
  CHECK(rel(gib(one["budget"]["weight_bytes"]), 14.96) < 0.01);  // "model weights take 14.96GiB"
  CHECK(rel(gib(one["budget"]["kv_bytes"]), 53.29) < 0.05);      // "available_kv_cache_memory 53.29GiB"
  const double logged_blocks = std::floor(53.29 * double(1ull << 30) / (2ull << 20));  // 2 MiB blocks
  CHECK(rel(one["gpu_blocks"].get<double>(), logged_blocks) < 0.05);
  const auto two = serve({"--config", k_configs + "Meta-Llama-3-8B.json", "--gpu", "h100-80gb",
                          "--gpu-memory", "79.22GiB", "--tp", "2"});
  CHECK(rel(gib(two["budget"]["weight_bytes"]), 7.48) < 0.01);  // "model weights take 7.48GiB"
}

TEST_CASE("serve: Llama-2-7B on an A100 80GB (vllm PR 2031)", "[serve]") {
  const auto j = serve({"--config", k_configs + "Llama-2-7b-hf.json", "--gpu", "a100-80gb"});
  CHECK(rel(j["gpu_blocks"].get<double>(), 7351) < 0.05);  // "# GPU blocks: 7351"
}

TEST_CASE("serve --check-log reads each log and agrees within the tolerances", "[serve]") {
  struct Case {
    std::vector<std::string> args;
    std::string log;
    size_t figures;
  };
  const std::vector<Case> cases = {
      {{"--config", k_configs + "Llama-3.1-8B-Instruct.json", "--gpu", "rtx-3090", "--gpu-memory", "23.58GiB",
        "--max-model-len", "20000"},
       "llama-3.1-8b-instruct_rtx3090_20000.log",
       5},  // total, weights, KV memory, blocks, concurrency
      {{"--config", k_configs + "Meta-Llama-3-8B.json", "--gpu", "h100-80gb", "--gpu-memory", "79.22GiB"},
       "meta-llama-3-8b_80gb_tp1.log",
       3},  // total, weights, KV memory
      {{"--config", k_configs + "Meta-Llama-3-8B.json", "--gpu", "h100-80gb", "--gpu-memory", "79.22GiB",
        "--tp", "2"},
       "meta-llama-3-8b_80gb_tp2.log",
       2},  // total, weights
      {{"--config", k_configs + "Llama-2-7b-hf.json", "--gpu", "a100-80gb"}, "llama-2-7b_a100-80gb.log", 1},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.push_back("--check-log");
    args.push_back(k_logs + c.log);
    const auto j = serve(args);
    INFO(c.log << "\n" << j["log_checks"].dump(1));
    REQUIRE(j["log_checks"].size() == c.figures);
    for (const auto& k : j["log_checks"]) CHECK(k["within"] == true);
  }
  // The table form prints the comparison, and a log that disagrees gives exit code 1.
  const auto t = run_cli({"serve", "--config", k_configs + "Llama-2-7b-hf.json", "--gpu", "a100-80gb",
                          "--check-log", k_logs + "llama-2-7b_a100-80gb.log"});
  CHECK(t.code == 0);
  CHECK(t.out.find("GPU blocks") != std::string::npos);
  const auto off =
      run_cli({"serve", "--config", k_configs + "Llama-2-7b-hf.json", "--gpu", "a100-80gb",
               "--gpu-memory-utilization", "0.5", "--check-log", k_logs + "llama-2-7b_a100-80gb.log"});
  CHECK(off.code == 1);
}

TEST_CASE("serve prints vLLM's own lines, the flags and every term under --explain", "[serve]") {
  const auto r = run_cli({"serve", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--explain"});
  REQUIRE(r.code == 0);
  for (const char* s :
       {"# GPU blocks: ", "GPU KV cache size: ", "Maximum concurrency for 8,192 tokens per request",
        "largest max_model_len that fits", "vllm serve llama-3-8b", "--gpu-memory-utilization 0.90",
        "vLLM 0.6.4.post1", "activation peak = 8,192 tokens", "GPU blocks = floor("})
    CHECK(r.out.find(s) != std::string::npos);
}

TEST_CASE("serve --gpus auto picks the smallest tensor-parallel size that holds a request", "[serve]") {
  // Llama-3-70B in bf16 is 131 GiB: more than one 80 GB GPU, and two leave room for the cache.
  const auto j = serve({"--model", "llama-3-70b", "--gpu", "a100-80gb", "--gpus", "auto"});
  CHECK(j["settings"]["tp"] == 2);
  CHECK(j["fits"] == true);
  const auto r = run_cli({"serve", "--model", "llama-3-70b", "--gpu", "a100-80gb"});
  CHECK(r.code == 1);  // one GPU cannot hold the weights
  CHECK(r.out.find("No available memory for the cache blocks") != std::string::npos);
}

TEST_CASE("serve: bad values get one line and exit 2", "[serve][errors]") {
  const std::vector<std::vector<std::string>> bad = {
      {"--gpu-memory-utilization", "1.5"},
      {"--gpu-memory-utilization", "x"},
      {"--max-model-len", "0"},
      {"--max-num-seqs", "-1"},
      {"--max-num-batched-tokens", "0"},
      {"--block-size", "12"},
      {"--chunked-prefill", "maybe"},
      {"--gpu-memory", "lots"},
      {"--check-log", "/nonexistent.log"},
      {"--engine", "tgi"},
      {"--max-num-batched-tokens", "100"},
  };
  for (const auto& b : bad) {
    std::vector<std::string> args = {"serve", "--model", "llama-3-8b", "--gpu", "a100-80gb"};
    args.insert(args.end(), b.begin(), b.end());
    const auto r = run_cli(args);
    INFO(b[0] << " " << b[1] << ": " << r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(memplan::test::line_count(r.err) == 1);
    CHECK(r.err.rfind("memplan: error: ", 0) == 0);
  }
  const auto no_gpu = run_cli({"serve", "--model", "llama-3-8b"});
  CHECK(no_gpu.code == 2);
}

TEST_CASE("serve: Llama-3-8B on an A100 80GB at 2,048 tokens holds about 219 requests (issue 15)",
          "[serve]") {
  const auto j = serve({"--model", "llama-3-8b", "--gpu", "a100-80gb", "--max-model-len", "2048"});
  CHECK(std::fabs(j["max_concurrency"].get<double>() - 219) / 219 < 0.05);
}
