// memplan serve --engine sglang against SGLang's published start-up figures
// (tests/data/sglang_logs/README.md has each log's URL): weights against "mem usage" within 1%,
// the KV tokens ("#tokens" / max_total_num_tokens) within 5%, and the defaults SGLang printed
// (mem_fraction_static, chunked_prefill_size). The figures come from real logs, never from
// memplan's own output.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "cli_harness.hpp"

using memplan::test::run_cli;

namespace {

const std::string k_sglang_logs = MEMPLAN_SOURCE_DIR "/tests/data/sglang_logs/";
const std::string k_sglang_configs = MEMPLAN_SOURCE_DIR "/tests/data/hf_configs/";

nlohmann::json serve_sglang_json(std::vector<std::string> args) {
  args.insert(args.begin(), {"serve", "--engine", "sglang"});
  args.push_back("--format");
  args.push_back("json");
  const auto r = run_cli(args);
  INFO(r.err);
  REQUIRE((r.code == 0 || r.code == 1));
  return nlohmann::json::parse(r.out);
}

double gib_of(const nlohmann::json& bytes) { return bytes.get<double>() / double(1ull << 30); }

double rel_error(double predicted, double logged) { return std::fabs(predicted - logged) / logged; }

}  // namespace

TEST_CASE("serve --engine sglang: Llama-3.1-8B-Instruct on an 80 GB H100 (sglang PR 4760)",
          "[serve][sglang]") {
  // SGLang of 2025-03-25 (0.4 series). The GPU's total is the h100-80gb preset's (NVML total less
  // the driver's share) and the non-torch memory memplan's 512 MiB default: nothing comes from the
  // log but the figures compared.
  const auto j = serve_sglang_json({"--config", k_sglang_configs + "Llama-3.1-8B-Instruct.json", "--gpu",
                                    "h100-80gb", "--sglang-version", "0.4"});
  CHECK(rel_error(gib_of(j["budget"]["weight_bytes"]), 15.11) < 0.01);       // "mem usage=15.11 GB"
  CHECK(rel_error(j["max_total_num_tokens"].get<double>(), 442750) < 0.05);  // "#tokens: 442750"
  CHECK(rel_error(gib_of(j["kv_bytes"]), 27.02 * 2) < 0.05);  // "K size: 27.02 GB, V size: 27.02 GB"
  CHECK(j["cell_size"] == 32 * 8 * 128 * 2 * 2);              // layers x KV heads x head_dim x (k, v) x bf16
  CHECK(j["settings"]["context_length"] == 131072);
  CHECK(j["budget"]["rounding_bytes"] == 0);  // every Llama-3.1-8B tensor is a whole number of 2 MiB
}

TEST_CASE("serve --engine sglang: the SGLang docs' Llama-3.1-8B start on an 80 GB GPU (2025-01-23)",
          "[serve][sglang]") {
  const auto j = serve_sglang_json({"--config", k_sglang_configs + "Llama-3.1-8B-Instruct.json", "--gpu",
                                    "h100-80gb", "--sglang-version", "0.4"});
  CHECK(j["settings"]["mem_fraction_static"] == 0.88);                          // "mem_fraction_static=0.88"
  CHECK(j["settings"]["chunked_prefill_size"] == 8192);                         // "chunked_prefill_size=8192"
  CHECK(rel_error(gib_of(j["budget"]["weight_bytes"]), 78.81 - 63.72) < 0.01);  // avail mem before - after
  CHECK(rel_error(gib_of(j["budget"]["free_before_weights_bytes"]), 78.81) <
        0.01);                                                               // "Load weight begin. avail mem"
  CHECK(rel_error(j["max_total_num_tokens"].get<double>(), 444500) < 0.05);  // "max_total_num_tokens=444500"
}

TEST_CASE("serve --engine sglang: Llama-3.1-8B-Instruct on a 24 GB GPU (MaxUhl98/Thesis, 2025-07-14)",
          "[serve][sglang]") {
  // A 24 GB card under Docker Desktop: 7.37 + 15.02 = 22.39 GiB free before the weights, 1.25 GiB
  // under an RTX 4090's total (the desktop holds the rest, which memplan cannot know): the total
  // is given as that free memory, with no non-torch memory on top.
  const auto j =
      serve_sglang_json({"--config", k_sglang_configs + "Llama-3.1-8B-Instruct.json", "--gpu", "rtx-4090",
                         "--gpu-memory", "22.39GiB", "--overhead", "0", "--sglang-version", "0.4"});
  CHECK(rel_error(gib_of(j["budget"]["weight_bytes"]), 15.02) < 0.01);      // "mem usage=15.02 GB"
  CHECK(rel_error(j["max_total_num_tokens"].get<double>(), 38141) < 0.05);  // "#tokens: 38141"
  CHECK(j["settings"]["chunked_prefill_size"] == 2048);                     // "chunked_prefill_size=2048"
  CHECK(j["fits"] == false);                                                // 38,141 < context_len 131,072
}

TEST_CASE(
    "serve --engine sglang: QwQ-32B on 4 x L4 at tp 4 (didier-durand/llms-in-clouds, SGLang 0.4.3.post4)",
    "[serve][sglang]") {
  // The log's own free memory before the weights (21.63 GiB: SGLang's total_gpu_memory) stands
  // in for the L4's total, whose driver share the preset does not know. The weights are a quarter
  // of QwQ's 32.76B parameters (15.26 GiB) plus the rotary cache plus the caching allocator's
  // rounding of each per-GPU tensor to 2 MiB (64 layers x 3.5 MiB): without that 0.22 GiB the
  // weights were 1.8% under "mem usage" and the tokens 10% over.
  const auto j = serve_sglang_json({"--config", k_sglang_configs + "QwQ-32B-Preview.json", "--gpu", "l4",
                                    "--tp", "4", "--context-length", "131072", "--gpu-memory", "21.63GiB",
                                    "--overhead", "0", "--sglang-version", "0.4"});
  CHECK(j["settings"]["mem_fraction_static"] == 0.85);                  // "mem_fraction_static=0.85" (tp 4)
  CHECK(j["settings"]["chunked_prefill_size"] == 2048);                 // "chunked_prefill_size=2048"
  CHECK(j["settings"]["cuda_graph_max_bs"] == 80);                      // "cuda_graph_max_bs=80"
  CHECK(rel_error(gib_of(j["budget"]["weight_bytes"]), 15.54) < 0.01);  // "mem usage=15.54 GB"
  CHECK(rel_error(j["max_total_num_tokens"].get<double>(), 46611) < 0.05);  // "#tokens: 46611"
  CHECK(j["cell_size"] == 64 * 2 * 128 * 2 * 2);                            // 8 KV heads / tp 4 = 2 per GPU
  CHECK(j["budget"]["rounding_bytes"] == 64 * 3.5 * (1 << 20) + 2 * 0.75 * (1 << 20));
}

TEST_CASE("serve --engine sglang --check-log reads each log and agrees within the tolerances",
          "[serve][sglang]") {
  struct Case {
    std::vector<std::string> args;
    std::string log;
    size_t figures;
    std::string version;  // the release the log came from (README.md)
  };
  const std::string llama = k_sglang_configs + "Llama-3.1-8B-Instruct.json";
  const std::vector<Case> cases = {
      {{"--config", llama, "--gpu", "h100-80gb"}, "llama-3.1-8b-instruct_h100_pr4760.log", 4, "0.4.4"},
      {{"--config", llama, "--gpu", "h100-80gb"},
       "meta-llama-3.1-8b-instruct_80gb_docs_2025-01-23.log",
       6,  // free before, after, tokens, pool, mem_fraction_static, context_len
       "0.4.1"},
      {{"--config", llama, "--gpu", "rtx-4090", "--gpu-memory", "22.39GiB", "--overhead", "0"},
       "llama-3.1-8b-instruct_24gb_thesis.log",
       5,
       "0.4.9"},
      {{"--config", k_sglang_configs + "QwQ-32B-Preview.json", "--gpu", "l4", "--tp", "4", "--context-length",
        "131072", "--gpu-memory", "21.63GiB", "--overhead", "0"},
       "qwq-32b_4xl4_tp4_aws.log",
       7,
       "0.4.3.post4"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--sglang-version", c.version, "--check-log", k_sglang_logs + c.log});
    const auto j = serve_sglang_json(args);
    INFO(c.log << "\n" << j["log_checks"].dump(1));
    CHECK(j["log_checks"].size() == c.figures);
    for (const auto& k : j["log_checks"]) CHECK(k["within"] == true);
  }
  // A log that disagrees (another fraction) gives exit code 1, and the table names each figure.
  const auto off = run_cli({"serve", "--engine", "sglang", "--config", llama, "--gpu", "h100-80gb",
                            "--mem-fraction-static", "0.5", "--check-log",
                            k_sglang_logs + "llama-3.1-8b-instruct_h100_pr4760.log"});
  CHECK(off.code == 1);
  CHECK(off.out.find("KV tokens (max_total_num_tokens)") != std::string::npos);
}

TEST_CASE("serve --engine sglang: 0.5.3's mem_fraction_static by GPU size (server_args.py after PR 10975)",
          "[serve][sglang]") {
  // H100 80GB (81,559 MiB): chunked prefill 8192, CUDA graphs to bs 256; reserved 512 + 8192 x 1.5
  // + 256 x 2 + 1/8 x 1024 = 13,440 MiB (above the 10 GiB floor); (81,559 - 13,440) / 81,559 = 0.835.
  const auto h100 =
      serve_sglang_json({"--model", "llama-3-8b", "--gpu", "h100-80gb", "--sglang-version", "0.5.4"});
  CHECK(h100["settings"]["chunked_prefill_size"] == 8192);
  CHECK(h100["settings"]["cuda_graph_max_bs"] == 256);
  CHECK(h100["settings"]["mem_fraction_static"] == 0.835);
  // RTX 4090 (24,564 MiB): 2048, bs 24: reserved 512 + 3072 + 48 + 128 = 3,760 MiB: 0.847.
  const auto rtx =
      serve_sglang_json({"--model", "llama-3-8b", "--gpu", "rtx-4090", "--sglang-version", "0.5.4"});
  CHECK(rtx["settings"]["chunked_prefill_size"] == 2048);
  CHECK(rtx["settings"]["mem_fraction_static"] == 0.847);
  // A given --chunked-prefill-size enters the reserve: 16,384 x 1.5 = 24,576 MiB.
  const auto big = serve_sglang_json({"--model", "llama-3-8b", "--gpu", "h100-80gb", "--chunked-prefill-size",
                                      "16384", "--sglang-version", "0.5.3"});
  CHECK(big["settings"]["mem_fraction_static"] == 0.685);  // (81,559 - 25,728) / 81,559
}

TEST_CASE("serve --engine sglang: MLA caches one latent per token, the same on every tp rank",
          "[serve][sglang]") {
  // DeepSeek-V2.5's config: kv_lora_rank 512 + qk_rope_head_dim 64 over 60 layers, bf16.
  const auto one =
      serve_sglang_json({"--config", k_sglang_configs + "DeepSeek-V2.5.json", "--gpu", "h200", "--tp", "8"});
  CHECK(one["mla"] == true);
  CHECK(one["cell_size"] == (512 + 64) * 60 * 2);
  const auto fp8 = serve_sglang_json({"--config", k_sglang_configs + "DeepSeek-V2.5.json", "--gpu", "h200",
                                      "--tp", "8", "--kv-cache-dtype", "fp8_e4m3"});
  CHECK(fp8["cell_size"] == (512 + 64) * 60 * 1);
  CHECK(fp8["flags"].get<std::string>().find("--kv-cache-dtype fp8_e4m3") != std::string::npos);
}

TEST_CASE("serve --engine sglang: --max-total-tokens caps the pool and --context-length sets the length",
          "[serve][sglang]") {
  const auto j = serve_sglang_json({"--model", "llama-3-8b", "--gpu", "h100-80gb", "--max-total-tokens",
                                    "100000", "--context-length", "4096"});
  CHECK(j["max_total_num_tokens"] == 100000);
  CHECK(std::fabs(j["max_concurrency"].get<double>() - 100000.0 / 4096) < 1e-9);
  CHECK(j["flags"].get<std::string>().find("--max-total-tokens 100000") != std::string::npos);
}

TEST_CASE("serve --engine sglang prints SGLang's own lines, the flags and every term under --explain",
          "[serve][sglang]") {
  const auto r =
      run_cli({"serve", "--engine", "sglang", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--explain"});
  REQUIRE(r.code == 0);
  for (const char* s :
       {"KV Cache is allocated. #tokens: ", "max_total_num_tokens=", "maximum concurrency at 8,192 tokens",
        "python -m sglang.launch_server --model-path meta-llama/Meta-Llama-3-8B", "--mem-fraction-static 0.",
        "SGLang 0.5", "reserved = 512 (metadata)",
        "non-torch memory = ", "total_gpu_memory = ", "allocator rounding",
        "cell_size = 8 KV heads x 128 head_dim x 32 layers x 2 (k, v) x 2 B = 131,072 B",
        "max_total_num_tokens = floor(pool / cell_size)"})
    CHECK(r.out.find(s) != std::string::npos);
}

TEST_CASE("serve --engine sglang --gpus auto picks the smallest tp whose pool holds a request",
          "[serve][sglang]") {
  // Llama-3-70B in bf16: 65.7 GiB per GPU at tp 2, and 0.5's rule keeps at least 10 GiB of an
  // 80 GB GPU out of the pool (mem_fraction_static 0.834): nothing is left, so tp 4. (vLLM's
  // budget fits it on two: see test_cli_serve.cpp.)
  const auto j = serve_sglang_json({"--model", "llama-3-70b", "--gpu", "a100-80gb", "--gpus", "auto"});
  CHECK(j["settings"]["tp"] == 4);
  CHECK(j["fits"] == true);
  const auto two = serve_sglang_json({"--model", "llama-3-70b", "--gpu", "a100-80gb", "--tp", "2"});
  CHECK(two["max_total_num_tokens"] == 0);
  CHECK(two["budget"]["pool_bytes"].get<int64_t>() < 0);
}

TEST_CASE("serve: each engine's flags with the other engine, and bad SGLang values, get one line and exit 2",
          "[serve][sglang][errors]") {
  const std::vector<std::vector<std::string>> bad = {
      {"--engine", "sglang", "--mem-fraction-static", "1.5"},
      {"--engine", "sglang", "--mem-fraction-static", "x"},
      {"--engine", "sglang", "--max-total-tokens", "0"},
      {"--engine", "sglang", "--chunked-prefill-size", "-1"},
      {"--engine", "sglang", "--context-length", "0"},
      {"--engine", "sglang", "--kv-cache-dtype", "int3"},
      {"--engine", "sglang", "--cuda-graph-max-bs", "0"},
      {"--engine", "sglang", "--sglang-version", "0.2.15"},
      {"--engine", "sglang", "--sglang-version", "latest"},
      {"--engine", "sglang", "--max-model-len", "4096"},
      {"--engine", "sglang", "--gpu-memory-utilization", "0.9"},
      {"--engine", "sglang", "--kv-cache-dtype", "fp8_e4m3", "--kv-format", "fp8"},
      {"--mem-fraction-static", "0.8"},
      {"--context-length", "4096"},
      {"--sglang-version", "0.4"},
  };
  for (const auto& b : bad) {
    std::vector<std::string> args = {"serve", "--model", "llama-3-8b", "--gpu", "a100-80gb"};
    args.insert(args.end(), b.begin(), b.end());
    const auto r = run_cli(args);
    INFO(b.back() << ": " << r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(memplan::test::line_count(r.err) == 1);
    CHECK(r.err.rfind("memplan: error: ", 0) == 0);
  }
}
