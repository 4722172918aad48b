// memplan serve against vLLM's published start-up figures (tests/data/vllm_logs/README.md has
// each log's URL): weights within 1%, GPU blocks (or the KV memory they are cut from) within 5%.
// The figures come from real logs, never from memplan's own output. The logs here come from V0
// engines (vLLM 0.2 to 0.8), so their cases pass --vllm-version 0.6.4 (V1, the default, is
// tested in test_cli_serve_v1.cpp).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "cli_harness.hpp"

using memplan::test::run_cli;

namespace {

const std::string k_vllm_logs = MEMPLAN_SOURCE_DIR "/tests/data/vllm_logs/";
const std::string k_serve_configs = MEMPLAN_SOURCE_DIR "/tests/data/hf_configs/";

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
  const auto j = serve({"--config", k_serve_configs + "Llama-3.1-8B-Instruct.json", "--gpu", "rtx-3090",
                        "--gpu-memory", "23.58GiB", "--max-model-len", "20000", "--vllm-version", "0.6.4"});
  CHECK(rel(gib(j["budget"]["weight_bytes"]), 14.9888) < 0.01);  // "Loading model weights took 14.9888 GB"
  CHECK(rel(j["gpu_blocks"].get<double>(), 1952) < 0.05);        // "GPU blocks: 1952"
  CHECK(j["settings"]["max_num_batched_tokens"] == 20000);       // no chunked prefill below 32K
  CHECK(j["fits"] == true);
}

TEST_CASE("serve: the same at 29,000 tokens does not fit (vllm#10517)", "[serve]") {
  const auto j = serve({"--config", k_serve_configs + "Llama-3.1-8B-Instruct.json", "--gpu", "rtx-3090",
                        "--gpu-memory", "23.58GiB", "--max-model-len", "29000", "--vllm-version", "0.6.4"});
  CHECK(rel(j["gpu_blocks"].get<double>(), 1478) < 0.05);  // "# GPU blocks: 1478"
  CHECK(j["fits"] == false);                               // 23,648 tokens < 29,000: vLLM refused to start
  CHECK(j["largest_max_model_len"].get<uint64_t>() < 29000);
}

TEST_CASE("serve: Meta-Llama-3-8B on an 80 GB GPU, tp 1 and 2 (vllm PR 10511)", "[serve]") {
  const auto one = serve({"--config", k_serve_configs + "Meta-Llama-3-8B.json", "--gpu", "h100-80gb",
                          "--gpu-memory", "79.22GiB", "--vllm-version", "0.6.4"});
  CHECK(rel(gib(one["budget"]["weight_bytes"]), 14.96) < 0.01);  // "model weights take 14.96GiB"
  CHECK(rel(gib(one["budget"]["kv_bytes"]), 53.29) < 0.05);      // "available_kv_cache_memory 53.29GiB"
  const double logged_blocks = std::floor(53.29 * double(1ull << 30) / (2ull << 20));  // 2 MiB blocks
  CHECK(rel(one["gpu_blocks"].get<double>(), logged_blocks) < 0.05);
  const auto two = serve({"--config", k_serve_configs + "Meta-Llama-3-8B.json", "--gpu", "h100-80gb",
                          "--gpu-memory", "79.22GiB", "--tp", "2", "--vllm-version", "0.6.4"});
  CHECK(rel(gib(two["budget"]["weight_bytes"]), 7.48) < 0.01);  // "model weights take 7.48GiB"
}

TEST_CASE("serve: Llama-2-7B on an A100 80GB (vllm PR 2031)", "[serve]") {
  const auto j = serve(
      {"--config", k_serve_configs + "Llama-2-7b-hf.json", "--gpu", "a100-80gb", "--vllm-version", "0.6.4"});
  CHECK(rel(j["gpu_blocks"].get<double>(), 7351) < 0.05);  // "# GPU blocks: 7351"
}

TEST_CASE("serve: Qwen3-4B fp16 on an RTX 2060 12GB at 10,000 tokens (Q07K/langgraph-mcp-example)",
          "[serve]") {
  // A third model and GPU (vLLM 0.8.x, V0 engine): Qwen3-4B's 36 layers x 8 KV heads x 128 in
  // fp16 on a Turing card without bf16. The GPU is not a preset: its 12.00 GiB come from the log
  // (as the other logs' totals do), and so does the non-torch memory (0.04 GiB), which vLLM
  // measures and memplan cannot derive (CUDA context and library workspaces outside torch).
  // Weights, the profiled activation peak and the block size are memplan's own.
  const auto j =
      serve({"--config", k_serve_configs + "Qwen3-4B.json", "--gpu", "rtx-3060", "--gpu-memory", "12GiB",
             "--gpu-memory-utilization", "0.95", "--max-model-len", "10000", "--max-num-seqs", "1",
             "--precision", "fp16", "--overhead", "0.04GiB", "--vllm-version", "0.6.4"});
  CHECK(rel(gib(j["budget"]["weight_bytes"]), 7.5552) < 0.01);    // "Model loading took 7.5552 GiB"
  CHECK(rel(gib(j["budget"]["activation_bytes"]), 0.74) < 0.10);  // "PyTorch activation peak ... 0.74GiB"
  CHECK(rel(j["gpu_blocks"].get<double>(), 1394) < 0.05);         // "# cuda blocks: 1394"
  CHECK(rel(j["max_concurrency"].get<double>(), 2.23) < 0.05);    // "Maximum concurrency ...: 2.23x"
  CHECK(j["settings"]["max_num_batched_tokens"] == 10000);        // max(max_model_len, 2048), no chunking
  CHECK(j["fits"] == true);
}

TEST_CASE("serve --check-log reads each log and agrees within the tolerances", "[serve]") {
  struct Case {
    std::vector<std::string> args;
    std::string log;
    size_t figures;
  };
  const std::vector<Case> cases = {
      {{"--config", k_serve_configs + "Llama-3.1-8B-Instruct.json", "--gpu", "rtx-3090", "--gpu-memory",
        "23.58GiB", "--max-model-len", "20000"},
       "llama-3.1-8b-instruct_rtx3090_20000.log",
       6},  // total, weights, non-torch, KV memory, blocks, concurrency
      // The non-torch memory is predicted (the CUDA context, 400 MiB) against the log's 0.35 GiB.
      {{"--config", k_serve_configs + "Llama-3.1-8B-Instruct.json", "--gpu", "rtx-3090", "--gpu-memory",
        "23.58GiB", "--max-model-len", "29000"},
       "llama-3.1-8b-instruct_rtx3090_29000.log",
       6},
      {{"--config", k_serve_configs + "Meta-Llama-3-8B.json", "--gpu", "h100-80gb", "--gpu-memory",
        "79.22GiB"},
       "meta-llama-3-8b_80gb_tp1.log",
       3},  // total, weights, KV memory
      {{"--config", k_serve_configs + "Meta-Llama-3-8B.json", "--gpu", "h100-80gb", "--gpu-memory",
        "79.22GiB", "--tp", "2"},
       "meta-llama-3-8b_80gb_tp2.log",
       2},  // total, weights
      {{"--config", k_serve_configs + "Llama-2-7b-hf.json", "--gpu", "a100-80gb"},
       "llama-2-7b_a100-80gb.log",
       1},
      // V1 (vllm PR 24577, lm_eval through vllm.LLM on an A100): the LLM class's default step on an
      // A100 is 8,192 tokens (arg_utils.py: the 16,384 of 70 GiB GPUs leaves A100s out, PR 17885).
      // The log is vLLM's main branch of September 2025 (between 0.10.1 and 0.10.2): 0.10.1's rules.
      {{"--config", k_serve_configs + "Qwen3-0.6B.json", "--gpu", "a100-80gb", "--vllm-entry", "llm",
        "--max-model-len", "4096", "--vllm-version", "0.10.1"},
       "qwen3-0.6b_a100_v1_pr24577.log",
       4},  // weights, KV memory, KV tokens, concurrency
      {{"--config", k_serve_configs + "Qwen3-4B.json", "--gpu", "rtx-3060", "--gpu-memory", "12GiB",
        "--gpu-memory-utilization", "0.95", "--max-model-len", "10000", "--max-num-seqs", "1", "--precision",
        "fp16", "--overhead", "0.04GiB", "--vllm-version", "0.7"},  // V0 of 0.8.x: 0.7's worker.py
       "qwen3-4b_rtx2060-12gb_10000.log",
       5},  // total, weights, KV memory, blocks, concurrency
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    const bool pinned = std::find(args.begin(), args.end(), "--vllm-version") != args.end();
    if (!pinned && c.log.find("_v1_") == std::string::npos) {  // the V0 logs (README.md)
      args.push_back("--vllm-version");
      args.push_back("0.6.4");
    }
    args.push_back("--check-log");
    args.push_back(k_vllm_logs + c.log);
    const auto j = serve(args);
    INFO(c.log << "\n" << j["log_checks"].dump(1));
    REQUIRE(j["log_checks"].size() == c.figures);
    for (const auto& k : j["log_checks"]) CHECK(k["within"] == true);
  }
  // The table form prints the comparison, and a log that disagrees gives exit code 1.
  const auto t =
      run_cli({"serve", "--config", k_serve_configs + "Llama-2-7b-hf.json", "--gpu", "a100-80gb",
               "--vllm-version", "0.6.4", "--check-log", k_vllm_logs + "llama-2-7b_a100-80gb.log"});
  CHECK(t.code == 0);
  CHECK(t.out.find("GPU blocks") != std::string::npos);
  const auto off = run_cli({"serve", "--config", k_serve_configs + "Llama-2-7b-hf.json", "--gpu", "a100-80gb",
                            "--vllm-version", "0.6.4", "--gpu-memory-utilization", "0.5", "--check-log",
                            k_vllm_logs + "llama-2-7b_a100-80gb.log"});
  CHECK(off.code == 1);
}

TEST_CASE("serve prints vLLM's own lines, the flags and every term under --explain", "[serve]") {
  const auto r =
      run_cli({"serve", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--explain", "--vllm-version", "v0"});
  REQUIRE(r.code == 0);
  for (const char* s : {"# GPU blocks: ", "GPU KV cache size: ",
                        "Maximum concurrency for 8,192 tokens per request", "largest max_model_len that fits",
                        "vllm serve meta-llama/Meta-Llama-3-8B", "--gpu-memory-utilization 0.90",
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
      {"--max-num-batched-tokens", "100", "--vllm-version", "0.6.4"},  // V0 without chunked prefill
      {"--max-num-batched-tokens", "100", "--max-num-seqs", "256"},    // fewer tokens than sequences
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
  // (The 219 is vLLM 0.6.4's V0 budget, as the issue computed it.)
  const auto j = serve(
      {"--model", "llama-3-8b", "--gpu", "a100-80gb", "--max-model-len", "2048", "--vllm-version", "0.6.4"});
  CHECK(std::fabs(j["max_concurrency"].get<double>() - 219) / 219 < 0.05);
}

TEST_CASE("serve and estimate --tp 2/4/8: GLM-4-9B's 2 KV heads replicate once tp passes them",
          "[serve][infer_parallel]") {
  // GLM-4-9B (config.json: 40 layers, 32 heads, 2 KV groups of head_dim 128). vLLM gives each GPU
  // max(1, kv_heads / tp) KV heads (ModelConfig.get_num_kv_heads): 1 at tp 2, and still 1 at tp
  // 4 and 8, where each KV head is copied on tp / 2 GPUs. A block of 16 tokens on one GPU is then
  // 16 x 2 (k, v) x 40 layers x 1 head x 128 x 2 bytes at every tp from 2 up.
  const uint64_t one_head_block = 16ull * 2 * 40 * 1 * 128 * 2;
  const auto tp1 = serve({"--model", "glm-4-9b", "--gpu", "h100-80gb", "--max-model-len", "8192"});
  CHECK(tp1["kv_heads_per_gpu"] == 2);
  CHECK(tp1["block_bytes"] == 2 * one_head_block);
  for (const char* tp : {"2", "4", "8"}) {
    INFO("tp " << tp);
    const auto j =
        serve({"--model", "glm-4-9b", "--gpu", "h100-80gb", "--max-model-len", "8192", "--tp", tp});
    CHECK(j["kv_heads_per_gpu"] == 1);
    CHECK(j["block_bytes"] == one_head_block);
  }
  // estimate --mode infer: one 8,192-token sequence's cache on a GPU, 2 x 40 x heads x 128 x 8192 x 2 B.
  const uint64_t per_head = 2ull * 40 * 128 * 8192 * 2;
  uint64_t weights_tp1 = 0;
  for (const char* tp : {"1", "2", "4", "8"}) {
    INFO("tp " << tp);
    const auto r = run_cli({"estimate", "--model", "glm-4-9b", "--mode", "infer", "--precision", "bf16",
                            "--seq", "8192", "--tp", tp, "--format", "json"});
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["breakdown"]["kv_cache"] == per_head * (std::string(tp) == "1" ? 2 : 1));
    const uint64_t w = j["breakdown"]["parameters"];
    if (std::string(tp) == "1") weights_tp1 = w;
    if (std::string(tp) == "8") {
      // Each GPU keeps a whole KV head's k_proj and v_proj (2 x 128 x 4096 per layer, 40 layers, 2 B)
      // where an even split would give it a sixteenth of both heads' projections.
      const uint64_t kept = 2ull * 128 * 4096 * 40 * 2, even = 2ull * 2 * 128 * 4096 * 40 * 2 / 8;
      CHECK(w >= weights_tp1 / 8 + (kept - even));
    }
  }
}

TEST_CASE("advise --mode infer offers the smallest tensor-parallel size that fits, with vLLM's flag",
          "[serve][advise]") {
  // Llama-3-70B in bf16 is 131 GiB of weights: two 80 GB GPUs hold it (and the cache), one does not.
  const auto r = run_cli({"advise", "--model", "llama-3-70b", "--mode", "infer", "--precision", "bf16",
                          "--seq", "4096", "--gpu", "a100-80gb", "--format", "json"});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  bool found = false;
  for (const auto& s : doc["suggestions"]) {
    if (s["knobs"].size() != 1 || s["knobs"][0] != "tensor-parallel") continue;
    found = true;
    CHECK(s["gpus"] == 2);
    CHECK(s["verdict"] != "no");
    CHECK(s["change"].get<std::string>().find("--tensor-parallel-size 2") != std::string::npos);
  }
  CHECK(found);
  // The table says it too; a model that fits one GPU is not offered tensor parallelism.
  const auto t = run_cli({"advise", "--model", "llama-3-70b", "--mode", "infer", "--precision", "bf16",
                          "--seq", "4096", "--gpu", "a100-80gb"});
  CHECK(t.out.find("--tensor-parallel-size 2") != std::string::npos);
  const auto small = run_cli({"advise", "--model", "llama-3-8b", "--mode", "infer", "--precision", "bf16",
                              "--seq", "4096", "--batch", "512", "--gpu", "rtx-4090", "--format", "json"});
  REQUIRE(small.code == 0);
  const auto advice = nlohmann::json::parse(small.out);  // (a temporary would die before the loop body)
  for (const char* list : {"suggestions", "combinations"})
    for (const auto& s : advice[list])
      for (const auto& k : s["knobs"])
        if (k == "tensor-parallel") CHECK(s["gpus"].get<uint64_t>() >= 2);
}

TEST_CASE("serve predicts vLLM 0.6.4's non-torch memory as named parts, and --overhead overrides it",
          "[serve][non-torch]") {
  // vLLM 0.6.4 logs non_torch_memory=0.35GiB on the RTX 3090 (vllm#10517): the CUDA context
  // (about 400 MB with lazy loading, pytorch#109888) is the part memplan predicts.
  const auto one = serve({"--config", k_serve_configs + "Llama-3.1-8B-Instruct.json", "--gpu", "rtx-3090",
                          "--gpu-memory", "23.58GiB", "--max-model-len", "20000", "--vllm-version", "0.6.4"});
  CHECK(rel(gib(one["budget"]["non_torch_bytes"]), 0.35) < 0.15);
  CHECK(one["budget"]["non_torch_given"] == false);
  CHECK(one["budget"]["allreduce_bytes"] == 0);
  bool context = false;
  for (const auto& p : one["budget"]["non_torch_parts"])
    context = context || p["name"].get<std::string>().find("CUDA context") != std::string::npos;
  CHECK(context);
  // tp 2: vLLM's custom all-reduce holds two 8 MiB IPC buffers and an 8 MiB rank_data tensor
  // (custom_all_reduce.py); NCCL's buffers are not predicted, and a note says so.
  const auto two = serve({"--config", k_serve_configs + "Meta-Llama-3-8B.json", "--gpu", "h100-80gb", "--tp",
                          "2", "--vllm-version", "0.6.4"});
  CHECK(two["budget"]["allreduce_bytes"] == 24ull << 20);
  bool nccl_note = false;
  for (const auto& n : two["notes"])
    nccl_note = nccl_note || n.get<std::string>().find("NCCL") != std::string::npos;
  CHECK(nccl_note);
  const auto four = serve({"--config", k_serve_configs + "Meta-Llama-3-8B.json", "--gpu", "h100-80gb", "--tp",
                           "4", "--vllm-version", "0.10.1"});
  CHECK(four["budget"]["allreduce_bytes"] == 24ull << 20);
  // From 0.11 the start-up snapshot is taken after the distributed set-up (gpu_worker.py init_device):
  // the custom all-reduce's buffers are made before it and are not subtracted.
  const auto later = serve({"--config", k_serve_configs + "Meta-Llama-3-8B.json", "--gpu", "h100-80gb",
                            "--tp", "4", "--vllm-version", "0.11.0"});
  CHECK(later["budget"]["allreduce_bytes"] == 0);
  CHECK(later["budget"]["kv_bytes"].get<int64_t>() - four["budget"]["kv_bytes"].get<int64_t>() == 24ll << 20);
  const auto given =
      serve({"--config", k_serve_configs + "Llama-3.1-8B-Instruct.json", "--gpu", "rtx-3090", "--gpu-memory",
             "23.58GiB", "--max-model-len", "20000", "--overhead", "1GiB", "--vllm-version", "0.6.4"});
  CHECK(given["budget"]["non_torch_bytes"] == 1ull << 30);
  CHECK(given["budget"]["non_torch_given"] == true);
  CHECK(given["gpu_blocks"].get<uint64_t>() < one["gpu_blocks"].get<uint64_t>());
  const auto t = run_cli(
      {"serve", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--explain", "--vllm-version", "0.6.4"});
  CHECK(t.out.find("CUDA context and lazily loaded kernels = 419,430,400 B") != std::string::npos);
}

TEST_CASE("serve prints a preset's Hugging Face repository id, or the path given", "[serve][model-arg]") {
  const auto preset = serve({"--model", "llama-3-8b", "--gpu", "a100-80gb"});
  CHECK(preset["flags"].get<std::string>().rfind("vllm serve meta-llama/Meta-Llama-3-8B ", 0) == 0);
  const auto sg = serve({"--engine", "sglang", "--model", "qwen3-8b", "--gpu", "a100-80gb"});
  CHECK(sg["flags"].get<std::string>().find("--model-path Qwen/Qwen3-8B ") != std::string::npos);
  // A config.json stands for its folder, as given.
  const auto file = serve({"--config", k_serve_configs + "Meta-Llama-3-8B.json", "--gpu", "a100-80gb"});
  const std::string folder = k_serve_configs.substr(0, k_serve_configs.size() - 1);
  CHECK(file["flags"].get<std::string>().rfind("vllm serve " + folder + " ", 0) == 0);
  // GPT-3 175B's weights were never published: the flags keep the preset name and a note says so.
  const auto r = run_cli({"serve", "--model", "gpt3-175b", "--gpu", "h100-80gb", "--tp", "8"});
  CHECK(r.out.find("vllm serve gpt3-175b") != std::string::npos);
  CHECK(r.out.find("no Hugging Face repository id is known for the preset gpt3-175b") != std::string::npos);
  const auto custom = run_cli({"serve", "--layers", "32", "--hidden", "4096", "--heads", "32", "--vocab",
                               "32000", "--gpu", "a100-80gb", "--max-model-len", "4096"});
  CHECK(custom.out.find("vllm serve MODEL ") != std::string::npos);
}

TEST_CASE("serve names how each engine holds sliding-window layers", "[serve][notes]") {
  // Gemma 2 (config.json: sliding_window 4096, every other layer) on both engines.
  const auto v = run_cli({"serve", "--config", k_serve_configs + "gemma-2-2b.json", "--gpu", "a100-80gb"});
  CHECK(v.out.find("13 of 26 layers attend to a window of 4,096 tokens") != std::string::npos);
  CHECK(v.out.find("V1's hybrid KV-cache manager: 1 full and 1 window group(s) of 13 layers") !=
        std::string::npos);
  const auto v0 = run_cli({"serve", "--config", k_serve_configs + "gemma-2-2b.json", "--gpu", "a100-80gb",
                           "--vllm-version", "0.6.4"});
  CHECK(v0.out.find("V0 block table holds every layer's KV for every token") != std::string::npos);
  const auto s = run_cli(
      {"serve", "--engine", "sglang", "--config", k_serve_configs + "gemma-2-2b.json", "--gpu", "a100-80gb"});
  CHECK(s.out.find("SGLang keeps their KV in a pool of its own") != std::string::npos);
  // A model without windows gets neither window note.
  const auto l = run_cli({"serve", "--model", "llama-3-8b", "--gpu", "a100-80gb"});
  CHECK(l.out.find("attend to a window") == std::string::npos);
}

TEST_CASE("serve: Llama-3.2-11B-Vision on an H100, weights and the block size (vllm PR 12126)", "[serve]") {
  // The log's activation peak (36.63 GiB) is the vision encoder's profile run, which memplan does
  // not predict; the weights and the bytes of one block (all 40 layers, the 8 cross-attention
  // layers included, as V0 allocates them) are checked.
  // No --vllm-version: vLLM 0.10.1 itself falls back to V0 for encoder-decoder models, and so does serve.
  const auto j =
      serve({"--config", k_serve_configs + "Llama-3.2-11B-Vision-Instruct.json", "--gpu", "h100-80gb",
             "--gpu-memory", "79.22GiB", "--max-model-len", "65536", "--max-num-seqs", "128"});
  CHECK(j["engine_version"] == "0.6.4.post1");
  CHECK(rel(gib(j["budget"]["weight_bytes"]), 19.86) < 0.01);  // "model weights take 19.86GiB"
  // "reserved for KV Cache is 14.65GiB" over "# CUDA blocks: 6001": 2.5 MiB a block (to the
  // rounding of 14.65).
  CHECK(rel(j["block_bytes"].get<double>(), 14.65 * double(1ull << 30) / 6001) < 0.001);
}
