// memplan gguf-fit (llama.cpp / Ollama offload) and --quantize with llama.cpp file types.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "../unit/model_file_builders.hpp"
#include "cli_harness.hpp"

using memplan::test::line_count;
using memplan::test::run_cli;

namespace {

const std::string k_logs = std::string(MEMPLAN_TEST_DATA_DIR) + "/llamacpp_logs/";

}  // namespace

TEST_CASE("gguf-fit --check-log reproduces public llama.cpp logs within 5%", "[cli][gguf-fit]") {
  SECTION("phi-4 Q4_K_M under Ollama (ollama/ollama#13552): model, KV, compute") {
    auto r =
        run_cli({"gguf-fit", "--config", k_logs + "phi-4.config.json", "--quantize", "q4_k_m", "--gpu",
                 "rtx-4090", "--check-log", k_logs + "ollama_13552_phi4_q4_k_m.log", "--format", "json"});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["buffers"].size() == 4);  // CPU_Mapped and CUDA0 model, KV, CUDA0 compute
    CHECK(j["all_within_5_percent"] == true);
  }
  SECTION("TriLM 3.9B fp16 in llamafile (mozilla-ai/llamafile#552): model, KV, compute") {
    auto r = run_cli({"gguf-fit",
                      "--layers",
                      "30",
                      "--hidden",
                      "3072",
                      "--heads",
                      "24",
                      "--kv-heads",
                      "24",
                      "--intermediate",
                      "9216",
                      "--vocab",
                      "50688",
                      "--family",
                      "llama",
                      "--quantize",
                      "f16",
                      "--gpu",
                      "rtx-4090",
                      "--check-log",
                      k_logs + "llamafile_552_trilm_3.9b_f16.log",
                      "--format",
                      "json"});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["buffers"].size() == 4);
    CHECK(j["all_within_5_percent"] == true);
  }
  SECTION(
      "Llama-3.1-8B-Instruct Q4_K_M under Ollama 0.5.4 (MagicWand18/Securetag-AI-Agent): model, KV, "
      "compute") {
    // n_ctx 8192 (4 slots of 2,048), n_ubatch 512, no flash attention, all 33 layers on an RTX 4090.
    auto r = run_cli({"gguf-fit", "--config",
                      std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/Llama-3.1-8B-Instruct.json",
                      "--quantize", "q4_k_m", "--gpu", "rtx-4090", "--ctx-size", "8192", "--check-log",
                      k_logs + "securetag_ollama_llama3.1_8b_q4_k_m.log", "--format", "json"});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["buffers"].size() == 4);  // CPU and CUDA0 model, CUDA0 KV, CUDA0 compute
    CHECK(j["all_within_5_percent"] == true);
  }
  SECTION("DeepSeek-R1-Distill-Qwen-7B Q4_K_M (canonical/inference-snaps#107): model buffers") {
    auto r = run_cli({"gguf-fit", "--model", "qwen2-7b", "--quantize", "q4_k_m", "--gpu", "rtx-4090",
                      "--check-log", k_logs + "inference_snaps_107_r1_distill_qwen_7b_q4_k_m.log", "--format",
                      "json"});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["buffers"].size() == 2);
    CHECK(j["all_within_5_percent"] == true);
  }
}

namespace {

// --check-log's rows as buffer name -> error (a fraction), and whether all passed.
std::map<std::string, double> log_errors(const std::vector<std::string>& args, bool* all = nullptr) {
  auto r = run_cli(args);
  INFO(r.out << r.err);
  REQUIRE(r.err.empty());
  const auto j = nlohmann::json::parse(r.out);
  std::map<std::string, double> out;
  for (const auto& b : j["buffers"]) out[b["buffer"].get<std::string>()] = b["error"].get<double>();
  if (all) *all = j["all_within_5_percent"].get<bool>();
  return out;
}

}  // namespace

TEST_CASE("gguf-fit --check-log: compute buffers under partial offload and with experts on the CPU",
          "[cli][gguf-fit]") {
  const std::string hf = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/";
  SECTION("Mistral-7B Q4_K_M at -ngl 20 of 33 (arXiv 2509.11947): the output product on GPU 0") {
    // Layers 0-11 and the output layer in host memory; CUDA0's 137.79 MiB is the q6_K output
    // matrix copied in (32000 x 4096 x 210/256 B), the logits 32000 x 256 x 4 and the normed state.
    bool all = false;
    const auto e = log_errors(
        {"gguf-fit", "--config", hf + "Mistral-7B-v0.1.json", "--quantize", "q4_k_m", "--gpu", "8GiB",
         "--check-log", k_logs + "arxiv_2509.11947_mistral_7b_v0.1_q4_k_m.log", "--format", "json"},
        &all);
    CHECK(all);
    CHECK(std::abs(e.at("CUDA0 compute")) < 0.001);
    CHECK(std::abs(e.at("CUDA0 model")) < 0.001);
    // Without op offload CUDA0 would hold its own layers' attention stage alone.
    const auto off = log_errors({"gguf-fit", "--config", hf + "Mistral-7B-v0.1.json", "--quantize", "q4_k_m",
                                 "--gpu", "8GiB", "--no-op-offload", "--check-log",
                                 k_logs + "arxiv_2509.11947_mistral_7b_v0.1_q4_k_m.log", "--format", "json"});
    CHECK(off.at("CUDA0 compute") < -0.5);
  }
  SECTION("Qwen3-30B-A3B Q4_K_M, every expert on the CPU, RTX 4090 + RTX 5090 (ik_llama.cpp#514)") {
    bool all = false;
    const auto e =
        log_errors({"gguf-fit", "--config", hf + "Qwen3-30B-A3B.json", "--quantize", "q4_k_m", "--gpu",
                    "rtx-4090,rtx-5090", "--tensor-split", "9862,31518", "--n-cpu-moe", "48", "--check-log",
                    k_logs + "ik_llama_514_qwen3_30b_a3b_q4_k_m_2gpu_ot.log", "--format", "json"},
                   &all);
    CHECK(all);
    CHECK(std::abs(e.at("CUDA0 compute")) < 0.02);
    CHECK(std::abs(e.at("CUDA1 compute")) < 0.02);
  }
  SECTION("Qwen3-235B-A22B Q6_K: the expert stage on CUDA0 (ik_llama.cpp#357 and #370, b5269/b5271)") {
    const std::string cfg = k_logs + "qwen3-235b-a22b.config.json";
    // All 95 layers on the GPU, the experts of 89 layers in host memory (the log's -ot keeps layers
    // 5-93's; --n-cpu-moe 89 moves as many): CUDA0 holds one 630 MiB q6_K expert tensor copied in.
    const auto one = log_errors(
        {"gguf-fit", "--config", cfg, "--quantize", "q6_k", "--gpu", "rtx-3090", "--n-cpu-moe", "89",
         "--check-log", k_logs + "ik_llama_357_qwen3_235b_a22b_q6_k_1x3090_ot.log", "--format", "json"});
    CHECK(std::abs(one.at("CUDA0 compute")) < 0.05);
    // Two GPUs: the expert copies land on CUDA0 only, CUDA1 holds the output stage (304.75 MiB).
    const auto two = log_errors(
        {"gguf-fit", "--config", cfg, "--quantize", "q6_k", "--gpu", "rtx-3090,rtx-3090", "--n-cpu-moe", "80",
         "--check-log", k_logs + "ik_llama_370_qwen3_235b_a22b_q6_k_2x3090_ot.log", "--format", "json"});
    CHECK(std::abs(two.at("CUDA0 compute")) < 0.05);
    CHECK(std::abs(two.at("CUDA1 compute")) < 0.001);
    // -ngl 0: b5269 kept the output product on the CPU (its CPU compute buffer of 304.75 MiB is the
    // logits), so CUDA0's 742.00 MiB is the expert stage; memplan, following today's scheduler,
    // also counts the output matrix there: over, never under.
    const auto none = log_errors(
        {"gguf-fit", "--config", cfg, "--quantize", "q6_k", "--gpu", "rtx-3090,rtx-3090", "--check-log",
         k_logs + "ik_llama_357_qwen3_235b_a22b_q6_k_ngl0_2x3090.log", "--format", "json"});
    CHECK(none.at("CUDA0 compute") >= 0);
    CHECK(none.at("CUDA0 compute") < 0.07);
  }
}

TEST_CASE("gguf-fit: a plan that does not fit names the allocation llama.cpp fails, in its words",
          "[cli][gguf-fit]") {
  // -ngl 33 at 64k on a 12 GiB card: the weights load, the 8 GiB f16 KV cache does not.
  auto r = run_cli({"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-3060",
                    "--n-gpu-layers", "33", "--ctx-size", "64k"});
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(r.out.find("llama.cpp stops at the KV cache buffer of CUDA0 (8192.00 MiB") != std::string::npos);
  CHECK(r.out.find("alloc_tensor_range: failed to allocate CUDA0 buffer of size 8589934592") !=
        std::string::npos);
  CHECK(r.out.find("failed to allocate buffer for kv cache") != std::string::npos);
  auto j = run_cli({"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-3060",
                    "--n-gpu-layers", "33", "--ctx-size", "64k", "--format", "json"});
  const auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["start_failure"]["stage"] == "KV cache");
  CHECK(doc["start_failure"]["bytes"] == 8589934592ull);
  // A plan that fits has no failure.
  auto ok = run_cli(
      {"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-3060", "--format", "json"});
  CHECK_FALSE(nlohmann::json::parse(ok.out).contains("start_failure"));
}

TEST_CASE("gguf-fit: llama-server from b9460 reserves the logits of its sequences, not of every token",
          "[cli][gguf-fit]") {
  // server_n_outputs_max (PR 23861): min(n_batch 2048, n_parallel) rows; llama-server's default is
  // 4 sequences. Llama-3-8B: vocabulary 128256, hidden 4096, f32.
  auto now = run_cli({"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090",
                      "--flash-attn", "--format", "json"});
  const auto j = nlohmann::json::parse(now.out);
  CHECK(j["n_outputs"] == 4);
  CHECK(j["compute_output_bytes"] == 128256ull * 4 * 4 + 4096ull * 4 * 4);
  // With flash attention the attention stage is now the buffer: the f16 mask 4096 x 512 and three
  // f32 [4096, 512] activations.
  CHECK(j["gpus"][0]["compute_bytes"] == 4096ull * 512 * 2 + 3 * 4096ull * 512 * 4);
  auto old = run_cli({"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090",
                      "--flash-attn", "--llamacpp-build", "b9000", "--format", "json"});
  const auto o = nlohmann::json::parse(old.out);
  CHECK(o["n_outputs"] == 0);
  CHECK(o["compute_output_bytes"] == 128256ull * 512 * 4 + 4096ull * 512 * 4);
  CHECK(o["gpus"][0]["compute_bytes"] == o["compute_output_bytes"]);
}

TEST_CASE("gguf-fit --fit follows llama.cpp's own fit of what the user left unset", "[cli][gguf-fit]") {
  const std::string cfg = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/Llama-3.1-8B-Instruct.json";
  // Llama-3.1-8B Q4_K_M on a 12 GiB card with flash attention and no -c: llama_params_fit starts
  // from the training context, 131072, where the f16 cache is 32 x 2 x 1024 x 2 = 131072 B per
  // token (16 GiB), and cuts the context by the deficit (with the 1024 MiB margin) over those bytes.
  auto full = run_cli({"gguf-fit", "--config", cfg, "--quantize", "q4_k_m", "--gpu", "rtx-3060",
                       "--flash-attn", "--ctx-size", "131072", "--n-gpu-layers", "33", "--format", "json"});
  const auto g = nlohmann::json::parse(full.out)["gpus"][0];
  const int64_t free_bytes = g["memory_bytes"].get<int64_t>() - g["reserve_bytes"].get<int64_t>();
  const int64_t used =
      g["model_bytes"].get<int64_t>() + g["kv_bytes"].get<int64_t>() + g["compute_bytes"].get<int64_t>();
  CHECK(g["kv_bytes"] == 131072ll * 131072);
  const int64_t deficit = (1ll << 30) - (free_bytes - used);
  const int64_t expected_ctx = 131072 - (deficit + 131071) / 131072;
  auto fit = run_cli({"gguf-fit", "--config", cfg, "--quantize", "q4_k_m", "--gpu", "rtx-3060",
                      "--flash-attn", "--fit", "--format", "json"});
  INFO(fit.out << fit.err);
  REQUIRE(fit.code == 0);
  const auto j = nlohmann::json::parse(fit.out);
  CHECK(j["n_ctx"] == expected_ctx);
  CHECK(j["n_gpu_layers"] == 33);
  CHECK(j["fit"]["steps"].back() == "the whole model fits across the GPUs with the shorter context");
  // A user -ngl stops it, in llama.cpp's words, after the context step.
  auto ngl = run_cli({"gguf-fit", "--config", cfg, "--quantize", "q4_k_m", "--gpu", "rtx-3060", "--fit",
                      "--n-gpu-layers", "33", "--format", "json"});
  const auto nj = nlohmann::json::parse(ngl.out);
  CHECK(nj["fit"]["failure"] == "n_gpu_layers already set by user to 33, abort");
  CHECK(nj["n_ctx"].get<uint64_t>() ==
        4096);  // cut to --fit-ctx: without flash attention the scores dominate
  // Llama-3-70B at a user -c 8192 on a 24 GB card: the context stays and the layers are
  // extrapolated from the plans at 1 and at 80 layers; one more layer leaves less than the margin.
  auto big = run_cli({"gguf-fit", "--model", "llama-3-70b", "--quantize", "q4_k_m", "--gpu", "rtx-4090",
                      "--flash-attn", "--ctx-size", "8192", "--fit", "--format", "json"});
  const auto bj = nlohmann::json::parse(big.out);
  CHECK(bj["n_ctx"] == 8192);
  const uint64_t layers = bj["n_gpu_layers"].get<uint64_t>();
  CHECK(layers > 30);
  CHECK(layers < 81);
  CHECK(bj["fit"]["steps"][1] == "context size set by user to 8192: no change");
  // An MoE model on one GPU moves the first layers' experts to the CPU.
  auto moe =
      run_cli({"gguf-fit", "--config", std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/Qwen3-30B-A3B.json",
               "--quantize", "q4_k_m", "--gpu", "16GiB", "--flash-attn", "--fit", "--format", "json"});
  const auto mj = nlohmann::json::parse(moe.out);
  CHECK(mj["n_ctx"] == 4096);
  CHECK(mj["n_gpu_layers"] == 49);
  CHECK(mj["fit"]["n_cpu_moe"].get<uint64_t>() > 0);
  CHECK(mj["fits"] == true);
}

TEST_CASE("gguf-fit: the largest -ngl, the flags, one more layer does not fit", "[cli][gguf-fit]") {
  auto r = run_cli({"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-3060",
                    "--ctx-size", "131072", "--flash-attn", "--format", "json"});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const uint64_t ngl = j["n_gpu_layers"];
  CHECK(ngl > 0);
  CHECK(ngl < 33);
  CHECK(j["fits"] == true);
  CHECK(j["llama_cpp"].get<std::string>().find("-ngl " + std::to_string(ngl)) != std::string::npos);
  auto more =
      run_cli({"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-3060", "--ctx-size",
               "131072", "--flash-attn", "--n-gpu-layers", std::to_string(ngl + 1), "--format", "json"});
  CHECK(more.code == 1);
  CHECK(nlohmann::json::parse(more.out)["fits"] == false);
  auto table = run_cli(
      {"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090", "--explain"});
  REQUIRE(table.code == 0);
  CHECK(table.out.find("-ngl 33 of 33") != std::string::npos);
  CHECK(table.out.find(std::string("ollama ") +
                       "0.30.11: num_ctx 4096, num_batch 512 -> Ollama places num_gpu 33 of 33") !=
        std::string::npos);
  CHECK(table.out.find("ollama 0.30.11 (llm/llama_server.go: upstream llama-server") != std::string::npos);
  CHECK(table.out.find("KV cache per layer: 4096 cells") != std::string::npos);
}

TEST_CASE("gguf-fit --check-log reproduces Ollama's own placement line", "[cli][gguf-fit][ollama]") {
  const std::string logs = std::string(MEMPLAN_TEST_DATA_DIR) + "/ollama_logs/";
  SECTION("llama3.2:3b under Ollama 0.5 (ollama/ollama#8098): layers, KV, both graphs") {
    auto r = run_cli({"gguf-fit", "--config",
                      std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/Llama-3.2-3B-Instruct.json",
                      "--quantize", "q4_k_m", "--gpu", "h100", "--ctx-size", "8192", "--ollama-parallel", "4",
                      "--ollama-version", "0.5.4", "--check-log", logs + "ollama_8098_llama3.2_3b.log",
                      "--format", "json"});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["buffers"].size() == 4);
    CHECK(j["buffers"][0]["buffer"] == "Ollama num_gpu (layers)");
    CHECK(j["buffers"][0]["predicted_mib"] == 29);
    CHECK(j["buffers"][1]["predicted_mib"].get<double>() == Approx(896.0));
    CHECK(j["buffers"][2]["predicted_mib"].get<double>() == Approx(424.0).margin(0.05));
    CHECK(j["buffers"][3]["predicted_mib"].get<double>() == Approx(570.7).margin(0.05));
    CHECK(j["all_within_5_percent"] == true);
  }
  SECTION("dolphin-qwen2:72b Q4_K_S under Ollama 0.3 on a 24 GiB ROCm GPU (ollama/ollama#5913): partial") {
    // Ollama placed 43 of 81 layers where llama.cpp's own buffers leave room for 46.
    auto r =
        run_cli({"gguf-fit", "--config", std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/Qwen2-72B.json",
                 "--quantize", "q4_k_s", "--gpu", "rx-7900-xtx", "--ctx-size", "2048", "--ollama-version",
                 "0.3.0", "--check-log", logs + "ollama_5913_qwen2_72b_q4_k_s.log", "--format", "json"});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["buffers"].size() == 4);
    CHECK(j["buffers"][0]["predicted_mib"] == 43);
    CHECK(j["buffers"][0]["logged_mib"] == 43);
    CHECK(j["buffers"][2]["predicted_mib"].get<double>() == Approx(313.0).margin(0.05));
    CHECK(j["all_within_5_percent"] == true);
    auto fit =
        run_cli({"gguf-fit", "--config", std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/Qwen2-72B.json",
                 "--quantize", "q4_k_s", "--gpu", "rx-7900-xtx", "--ctx-size", "2048", "--ollama-version",
                 "0.3.0", "--format", "json"});
    REQUIRE(fit.code == 0);
    const auto f = nlohmann::json::parse(fit.out);
    CHECK(f["ollama"]["num_gpu"] == 43);
    CHECK(f["n_gpu_layers"].get<uint64_t>() > 43);  // llama.cpp's own fit is not what Ollama does
  }
}

TEST_CASE("estimate --quantize q4_k_m counts the tensors llama-quantize writes", "[cli][gguf-fit]") {
  auto r = run_cli({"estimate", "--model", "tinyllama-1.1b", "--mode", "infer", "--quantize", "q4_k_m",
                    "--seq", "2048", "--format", "json"});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["inputs"]["quantize"] == "q4_k_m");
  // 636.18 MiB: llama-bench's size for TinyLlama 1.1B Q4_K_M (geerlingguy/ai-benchmarks#54).
  CHECK(std::abs(j["breakdown"]["parameters"].get<double>() / 1048576.0 - 636.18) < 0.005);
  auto kv = run_cli({"estimate", "--model", "tinyllama-1.1b", "--mode", "infer", "--quantize", "q4_k_m",
                     "--seq", "2048", "--kv-format", "q8_0", "--format", "json"});
  CHECK(kv.code == 0);
}

TEST_CASE("gguf-fit and llama.cpp types: bad input is one line, exit 2", "[cli][gguf-fit][errors]") {
  const std::vector<std::pair<std::vector<std::string>, const char*>> bad = {
      {{"gguf-fit", "--model", "llama-3-8b", "--gpu", "rtx-4090", "--ctx-size", "x"}, "--ctx-size: \"x\""},
      {{"gguf-fit", "--model", "llama-3-8b", "--gpu", "rtx-4090", "--ctx-size", "0"},
       "--ctx-size: \"0\" must be at least 1"},
      {{"gguf-fit", "--model", "llama-3-8b", "--gpu", "rtx-4090", "--ubatch-size", "-1"}, "--ubatch-size"},
      {{"gguf-fit", "--model", "llama-3-8b", "--gpu", "rtx-4090", "--cache-type-k", "q9_0"},
       "--cache-type-k: \"q9_0\" is not a llama.cpp cache type"},
      {{"gguf-fit", "--model", "llama-3-8b", "--gpu", "rtx-4090", "--cache-type-v", "q8_0"},
       "--cache-type-v: a quantised V cache needs --flash-attn"},
      {{"gguf-fit", "--model", "llama-3-8b", "--gpu", "rtx-4090,rtx-3060", "--tensor-split", "1,x"},
       "--tensor-split: \"x\""},
      {{"gguf-fit", "--model", "llama-3-8b", "--gpu", "rtx-4090,rtx-3060", "--tensor-split", "1,1,1"},
       "--tensor-split: \"1,1,1\" has 3 parts for 2 GPUs"},
      {{"gguf-fit", "--model", "llama-3-8b", "--gpu", "rtx-4090", "--tensor-split", "0"},
       "--tensor-split: \"0\" needs a share above 0"},
      {{"gguf-fit", "--model", "llama-3-8b", "--gpu", "rtx-4090", "--n-cpu-moe", "2"},
       "--n-cpu-moe: applies to mixture-of-experts models"},
      {{"gguf-fit", "--model", "llama-3-8b", "--gpu", "rtx-4090", "--n-gpu-layers", "many"},
       "--n-gpu-layers: \"many\""},
      {{"gguf-fit", "--model", "llama-3-8b"}, "--gpu: required"},
      {{"gguf-fit", "--model", "llama-3-8b", "--gpu", "rtx-4090", "--quantize", "nf4"},
       "--quantize: gguf-fit takes a llama.cpp file type"},
      {{"gguf-fit", "--model", "llama-3-8b", "--gpu", "rtx-4090", "--check-log", "/nonexistent/log.txt"},
       "--check-log"},
      {{"gguf-fit", "--model", "llama-3-8b", "--gpu", "rtx-4090", "--check-log",
        k_logs + "phi-4.config.json"},
       "has no llama.cpp buffer lines"},
      {{"gguf-fit", "--model", "llama-3-8b", "--gpu", "rtx-4090", "--mmproj", "/nonexistent/mmproj.gguf"},
       "mmproj"},
      {{"gguf-fit", "--model", "llama-3-8b", "--gpu", "rtx-4090", "--ollama-version", "latest"},
       "--ollama-version: \"latest\" is not a version"},
      {{"gguf-fit", "--model", "llama-3-8b", "--gpu", "rtx-4090", "--ollama-version", "0.1.30"},
       "--ollama-version: \"0.1.30\" is older than 0.2.0"},
      {{"gguf-fit", "--model", "llama-3-8b", "--gpu", "rtx-4090", "--ollama-parallel", "0"},
       "--ollama-parallel: \"0\" must be at least 1"},
      {{"gguf-fit", "--model", "llama-3-8b", "--gpu", "rtx-4090", "--ollama-gpu-overhead", "lots"},
       "--ollama-gpu-overhead"},
      {{"estimate", "--model", "llama-3-8b", "--quantize", "q4_k_m"},
       "--quantize: \"q4_k_m\" is a llama.cpp file type, for inference (--mode infer)"},
      {{"estimate", "--model", "llama-3-8b", "--mode", "infer", "--quantize", "q4_k_x"},
       "--quantize: \"q4_k_x\" is not a number format or llama.cpp file type"},
      {{"estimate", "--params", "7B", "--mode", "infer", "--quantize", "q4_k_m"},
       "--quantize: \"q4_k_m\" needs the model's architecture"},
      {{"estimate", "--model", "llama-3-8b", "--mode", "infer", "--kv-format", "q9_0"},
       "--kv-format: \"q9_0\""},
  };
  for (const auto& [args, fragment] : bad) {
    auto r = run_cli(args);
    INFO(args[0] << " " << args.back() << " -> " << r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(line_count(r.err) == 1);
    CHECK(r.err.find(fragment) != std::string::npos);
  }
}

TEST_CASE("advise --mode infer: Llama-3-70B on an RTX 4090 is offered quantisation and offload",
          "[cli][advise]") {
  auto r = run_cli({"advise", "--model", "llama-3-70b", "--mode", "infer", "--precision", "bf16", "--seq",
                    "4096", "--gpu", "rtx-4090", "--format", "json"});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  std::set<std::string> knobs;
  for (const char* list : {"suggestions", "combinations"})
    for (const auto& s : doc[list])
      for (const auto& k : s["knobs"]) knobs.insert(k.get<std::string>());
  CHECK(knobs.count("quantize"));
  CHECK(knobs.count("layer-offload"));
  CHECK(knobs.count("kv-quantize"));
  CHECK(knobs.count("gpu"));
  // Something that fits on the 4090 itself (not a bigger GPU) involves offload.
  bool fits_with_offload = false;
  for (const char* list : {"suggestions", "combinations"})
    for (const auto& s : doc[list]) {
      bool offload = false;
      for (const auto& k : s["knobs"]) offload = offload || k == "layer-offload";
      fits_with_offload = fits_with_offload || (offload && s["verdict"] != "no" && s["gpu"] == "rtx-4090");
    }
  CHECK(fits_with_offload);
}

TEST_CASE("models --fits lists the presets that fit and the context left", "[cli][models]") {
  auto r =
      run_cli({"models", "--fits", "rtx-4090", "--quantize", "q4_k_m", "--seq", "8192", "--format", "json"});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["schema"] == "memplan.models-fits/1");
  std::map<std::string, nlohmann::json> by_id;
  for (const auto& m : doc["models"]) by_id[m["id"]] = m;
  // 8B in q4_k_m (4.58 GiB of weights) fits a 24 GB card with room for a long context; 70B
  // (~40 GiB in q4_k_m) does not.
  CHECK(by_id.at("llama-3-8b")["fits"] == true);
  CHECK(by_id.at("llama-3-8b")["max_context"].get<uint64_t>() > 8192);
  CHECK(by_id.at("llama-3-70b")["fits"] == false);
  CHECK(by_id.at("llama-3-70b")["max_context"] == 0);
  auto bad = run_cli({"models", "--fits", "rtx-4090", "--seq", "0"});
  CHECK(bad.code == 2);
  CHECK(line_count(bad.err) == 1);
  auto bad_q = run_cli({"models", "--fits", "rtx-4090", "--quantize", "q4_k_x"});
  CHECK(bad_q.code == 2);
  CHECK(bad_q.err.find("--quantize") != std::string::npos);
  auto no_gpu = run_cli({"models", "--seq", "4096"});
  CHECK(no_gpu.code == 2);
  CHECK(no_gpu.err.find("--fits: required") != std::string::npos);
  auto bad_gpu = run_cli({"models", "--fits", "rtx-9999"});
  CHECK(bad_gpu.code == 2);
  CHECK(line_count(bad_gpu.err) == 1);
}

TEST_CASE("gguf-fit reads a GGUF's own tensors and adds the projector of --mmproj", "[cli][gguf-fit]") {
  using namespace memplan::test;
  TempDir dir("gguf_fit");
  GgufBytes kv;
  kv.kv_str("general.architecture", "llama")
      .kv_u32("llama.block_count", 2)
      .kv_u32("llama.embedding_length", 64)
      .kv_u32("llama.attention.head_count", 4)
      .kv_u32("llama.attention.head_count_kv", 2)
      .kv_u32("llama.feed_forward_length", 128)
      .kv_u32("llama.context_length", 256)
      .kv_u32("llama.vocab_size", 256);
  std::vector<GgTensor> t = {
      {"token_embd.weight", {64, 256}, 8}, {"output_norm.weight", {64}, 0}, {"output.weight", {64, 256}, 8}};
  for (int l = 0; l < 2; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    for (const GgTensor& x : std::vector<GgTensor>{{p + "attn_norm.weight", {64}, 0},
                                                   {p + "attn_q.weight", {64, 64}, 8},
                                                   {p + "attn_k.weight", {64, 32}, 8},
                                                   {p + "attn_v.weight", {64, 32}, 8},
                                                   {p + "attn_output.weight", {64, 64}, 8},
                                                   {p + "ffn_norm.weight", {64}, 0},
                                                   {p + "ffn_gate.weight", {64, 128}, 8},
                                                   {p + "ffn_up.weight", {64, 128}, 8},
                                                   {p + "ffn_down.weight", {128, 64}, 8}})
      t.push_back(x);
  }
  uint64_t all = 0;
  for (const GgTensor& x : t) all += gguf_tensor_bytes(x);
  const uint64_t embd = gguf_tensor_bytes(t[0]);
  const std::string model = dir.write("tiny.gguf", gguf_file(kv, 8, t));
  GgufBytes pkv;
  pkv.kv_str("general.architecture", "clip");
  const GgTensor proj{"mm.0.weight", {1024, 64}, 1};
  const std::string mmproj = dir.write("mmproj.gguf", gguf_file(pkv, 1, {proj}));
  auto r = run_cli({"gguf-fit", "--gguf", model, "--mmproj", mmproj, "--gpu", "rtx-4090", "--ctx-size", "256",
                    "--format", "json"});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["n_gpu_layers"] == 3);
  CHECK(j["gpus"][0]["model_bytes"] == all - embd);  // everything but token_embd
  CHECK(j["host"]["model_bytes"] == embd);
  CHECK(j["gpus"][0]["projector_bytes"] == gguf_tensor_bytes(proj));
  // K and V rows of 2 heads x 16 in f16 for 256 cells, per layer.
  CHECK(j["kv_layer_bytes"] == 256ull * 32 * 2 * 2);
  CHECK(j["llama_cpp"].get<std::string>().find("-m " + model) != std::string::npos);
}

TEST_CASE("issue 27: estimate --quantize q4_k_m on Qwen3-30B-A3B is 17.3 GiB, not 131.7",
          "[cli][gguf-fit][moe]") {
  auto r =
      run_cli({"estimate", "--config", std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/Qwen3-30B-A3B.json",
               "--mode", "infer", "--quantize", "q4_k_m", "--format", "json"});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  // 128 experts of 768 (not the dense 6,144) per layer: the byte count is written out element by
  // element in tests/unit/test_gguf_moe.cpp and matches llama.cpp#13729's buffers.
  CHECK(nlohmann::json::parse(r.out)["breakdown"]["parameters"] == 18550716416ull);
}

TEST_CASE("issue 27: gguf-fit puts all 49 layers of Qwen3-30B-A3B Q4_K_M on a 24 GB card",
          "[cli][gguf-fit][moe]") {
  const std::string config = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/Qwen3-30B-A3B.json";
  auto r = run_cli(
      {"gguf-fit", "--config", config, "--quantize", "q4_k_m", "--gpu", "rtx-4090", "--format", "json"});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  // On the GPU: 18,550,716,416 bytes of tensors less token_embd's 2048 x 151936 x 144 / 256 =
  // 175,030,272 (17.11 GiB), KV 48 x 4096 cells x 2 x 512 x 2 bytes = 384 MiB, the compute buffer
  // and the CUDA context: under the 4090's 24 GiB, so -ngl 49 (it was -ngl 8).
  CHECK(j["n_gpu_layers"] == 49);
  CHECK(j["gpus"][0]["model_bytes"] == 18550716416ull - 175030272ull);
  CHECK(j["gpus"][0]["kv_bytes"] == 48ull * 4096 * 2 * 512 * 2);
  auto log = run_cli({"gguf-fit", "--config", config, "--quantize", "q4_k_m", "--gpu", "rtx-4090",
                      "--check-log", k_logs + "llamacpp_13729_qwen3_30b_a3b.log", "--format", "json"});
  INFO(log.out << log.err);
  REQUIRE(log.code == 0);
  const auto c = nlohmann::json::parse(log.out);
  CHECK(c["n_gpu_layers"] == 30);
  CHECK(c["buffers"].size() == 2);  // CUDA0 and CPU_Mapped model
  for (const auto& b : c["buffers"]) CHECK(std::abs(b["error"].get<double>()) < 1e-6);
}

TEST_CASE("issue 27: gguf-fit counts Gemma 3's window layers as llama.cpp's SWA cache does",
          "[cli][gguf-fit]") {
  const std::string config = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/gemma-3-1b-it.json";
  auto r = run_cli({"gguf-fit", "--config", config, "--quantize", "q4_k_m", "--gpu", "h100-80gb",
                    "--ctx-size", "32768", "--parallel", "1", "--kv-unified", "--format", "json"});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  // One sequence: 4 full layers x 32768 cells + 22 window layers x pad(512 + 512, 256) = 1024
  // cells, each cell K and V of 1 x 256 f16 = 1024 bytes: 150 MiB (832 MiB before, every layer at
  // 32768 cells).
  CHECK(j["kv_swa_cells"] == 1024);
  CHECK(j["gpus"][0]["kv_bytes"] == 4ull * 32768 * 1024 + 22ull * 1024 * 1024);
  // llama-server's default, 4 sequences in one unified cache: the window cache holds
  // pad(512 x 4 + 512, 256) = 2560 cells (llama-kv-cache-iswa.cpp: n_swa x n_seq_max + n_ubatch).
  auto d = run_cli({"gguf-fit", "--config", config, "--quantize", "q4_k_m", "--gpu", "h100-80gb",
                    "--ctx-size", "32768", "--format", "json"});
  const auto dj = nlohmann::json::parse(d.out);
  CHECK(dj["n_seq"] == 4);
  CHECK(dj["kv_swa_cells"] == 2560);
  CHECK(dj["gpus"][0]["kv_bytes"] == 4ull * 32768 * 1024 + 22ull * 2560 * 1024);
  // -np 4 without -kvu: a stream of pad(32768 / 4, 256) = 8192 cells per sequence, and a window
  // stream of pad(min(8192, 512 + 512), 256) = 1024 each.
  auto n = run_cli({"gguf-fit", "--config", config, "--quantize", "q4_k_m", "--gpu", "h100-80gb",
                    "--ctx-size", "32768", "--parallel", "4", "--format", "json"});
  const auto nj = nlohmann::json::parse(n.out);
  CHECK(nj["kv_unified"] == false);
  CHECK(nj["kv_cells"] == 32768);
  CHECK(nj["kv_swa_cells"] == 4096);
  CHECK(nj["llama_cpp"].get<std::string>().find(" -np 4") != std::string::npos);
  auto full = run_cli({"gguf-fit", "--config", config, "--quantize", "q4_k_m", "--gpu", "h100-80gb",
                       "--ctx-size", "32768", "--swa-full", "--explain"});
  REQUIRE(full.code == 0);
  CHECK(full.out.find("--swa-full") != std::string::npos);
  CHECK(full.out.find("window layers (22 of 26): 32768 cells") != std::string::npos);
}
