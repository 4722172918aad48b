// memplan serve with vLLM's V1 engine, the default: the scheduler defaults by GPU and entry point
// (vllm/engine/arg_utils.py _set_default_args_v1, v0.10.1) and the hybrid KV-cache manager for
// sliding-window layers (vllm/v1/core/kv_cache_utils.py, vllm/v1/kv_cache_interface.py). The
// expected numbers are vLLM's rules worked by hand, written out beside each check.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "cli_harness.hpp"

using memplan::test::run_cli;

namespace {

const std::string k_v1_configs = MEMPLAN_SOURCE_DIR "/tests/data/hf_configs/";

nlohmann::json serve_v1_json(std::vector<std::string> args) {
  args.insert(args.begin(), "serve");
  args.push_back("--format");
  args.push_back("json");
  const auto r = run_cli(args);
  INFO(r.err);
  REQUIRE((r.code == 0 || r.code == 1));
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("serve runs vLLM's V1 engine by default, --vllm-version 0.6.4 or v0 selects V0", "[serve][v1]") {
  const auto t = run_cli({"serve", "--model", "llama-3-8b", "--gpu", "h100-80gb"});
  REQUIRE(t.code == 0);
  CHECK(t.out.find("vLLM 0.34.0 (V1 engine) budget") != std::string::npos);  // the newest release read
  const auto old = run_cli({"serve", "--model", "llama-3-8b", "--gpu", "h100-80gb", "--vllm-version", "v1"});
  CHECK(old.out.find("vLLM 0.10.1 (V1 engine) budget") != std::string::npos);  // the former default
  const auto v1 = serve_v1_json({"--model", "llama-3-8b", "--gpu", "h100-80gb", "--vllm-version", "0.10.1"});
  CHECK(v1["engine_version"] == "0.10.1");
  CHECK(v1["settings"]["chunked_prefill"] == true);
  CHECK(v1["budget"]["non_torch_bytes"] == 0);  // the CUDA context predates V1's snapshot
  for (const char* v0 : {"0.6.4", "v0"}) {
    INFO(v0);
    const auto j = serve_v1_json({"--model", "llama-3-8b", "--gpu", "h100-80gb", "--vllm-version", v0});
    CHECK(j["engine_version"] == "0.6.4.post1");
    // V0's figures: max(max_model_len 8,192, 2,048) tokens in one step, 256 sequences, the 400 MiB context.
    CHECK(j["settings"]["max_num_batched_tokens"] == 8192);
    CHECK(j["settings"]["max_num_seqs"] == 256);
    CHECK(j["budget"]["non_torch_bytes"] == 400ull << 20);
  }
  const auto v0t =
      run_cli({"serve", "--model", "llama-3-8b", "--gpu", "h100-80gb", "--vllm-version", "0.6.4"});
  CHECK(v0t.out.find("vLLM 0.6.4.post1 (V0 engine) budget") != std::string::npos);
}

TEST_CASE("serve V1: max_num_batched_tokens and max_num_seqs by GPU and entry point (arg_utils.py)",
          "[serve][v1]") {
  // v0.10.1 _set_default_args_v1: a GPU of >= 70 GiB whose name lacks "a100" gets 8,192 tokens for
  // vllm serve and 16,384 for vllm.LLM, 1,024 sequences; any other GPU 2,048 / 8,192 and 256
  // (the A100 exception: vLLM PR 17885 measured lower throughput with the larger step there).
  struct Case {
    std::vector<std::string> gpu;
    const char* entry;
    uint64_t tokens, seqs;
  };
  const std::vector<Case> cases = {
      {{"h100-80gb"}, "serve", 8192, 1024},
      {{"h100-80gb"}, "llm", 16384, 1024},
      {{"h200"}, "serve", 8192, 1024},
      {{"a100-80gb"}, "serve", 2048, 256},  // 79 GiB, but an A100
      {{"a100-80gb"}, "llm", 8192, 256},
      {{"rtx-4090"}, "serve", 2048, 256},  // 24 GB
      {{"rtx-4090"}, "llm", 8192, 256},
      {{"l40s"}, "serve", 2048, 256},                                // 48 GB
      {{"h100-80gb", "--gpu-memory", "60GiB"}, "serve", 2048, 256},  // below 70 GiB
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"--model", "llama-3-8b", "--max-model-len", "4096", "--gpu"};
    args.insert(args.end(), c.gpu.begin(), c.gpu.end());
    args.push_back("--vllm-entry");
    args.push_back(c.entry);
    INFO(c.gpu[0] << " " << c.entry);
    const auto j = serve_v1_json(args);
    CHECK(j["settings"]["max_num_batched_tokens"] == c.tokens);
    CHECK(j["settings"]["max_num_seqs"] == c.seqs);
    CHECK(j["flags"].get<std::string>().find("--max-num-batched-tokens " + std::to_string(c.tokens)) !=
          std::string::npos);
  }
  // The user's values stay.
  const auto given = serve_v1_json({"--model", "llama-3-8b", "--gpu", "a100-80gb", "--max-num-seqs", "64",
                                    "--max-num-batched-tokens", "4096"});
  CHECK(given["settings"]["max_num_seqs"] == 64);
  CHECK(given["settings"]["max_num_batched_tokens"] == 4096);
  // The default sequences never exceed the step's tokens: min(1,024, 512) on an H100.
  const auto small =
      serve_v1_json({"--model", "llama-3-8b", "--gpu", "h100-80gb", "--max-num-batched-tokens", "512"});
  CHECK(small["settings"]["max_num_seqs"] == 512);
}

TEST_CASE("serve V1: Gemma 2 2B's 13 window layers get a group of their own (hybrid KV-cache manager)",
          "[serve][v1][hybrid]") {
  // gemma-2-2b config.json: 26 layers, layers 0, 2, ... slide over 4,096 tokens (13 window, 13
  // full), 4 KV heads of head_dim 256, bf16, 8,192 positions. One block of one layer (a page) is
  // 16 tokens x 2 (k, v) x 4 x 256 x 2 B = 65,536 B. Two kinds, 13 layers each: groups of
  // min(13, 13) = 13, one full and one window group, no padding. On an A100 vllm serve's step is
  // 2,048 tokens. Per request of 8,192 tokens: the full group ceil(8192 / 16) = 512 blocks, the
  // window group ceil(min(4095 + 2048, 8192) / 16) + 1 = ceil(6143 / 16) + 1 = 385.
  const auto j = serve_v1_json({"--config", k_v1_configs + "gemma-2-2b.json", "--gpu", "a100-80gb"});
  const uint64_t kv = j["budget"]["kv_bytes"];
  REQUIRE(kv > 0);
  const auto& g = j["kv_groups"];
  CHECK(g["full_layers"] == 13);
  CHECK(g["window_layers"] == 13);
  CHECK(g["page_bytes"] == 65536);
  CHECK(g["layers_per_group"] == 13);
  CHECK(g["full_groups"] == 1);
  CHECK(g["window_groups"] == 1);
  CHECK(g["padding_layers"] == 0);
  const uint64_t blocks = kv / 65536 / 13;  // get_num_blocks: each of the 13 pools holds both groups' blocks
  CHECK(j["gpu_blocks"] == blocks);
  CHECK(j["block_bytes"] == 65536 * 13);
  CHECK(j["kv_tokens"] == blocks / 2 * 16);  // "GPU KV cache size": blocks // 2 groups x 16
  CHECK(g["full_blocks_per_request"] == 512);
  CHECK(g["window_blocks_per_request"] == 385);
  CHECK(std::fabs(j["max_concurrency"].get<double>() - double(blocks) / (512 + 385)) < 1e-9);
  // V0 (every layer at full length, one 26-layer block table) on the same GPU: the V1 concurrency
  // is higher by the window's saving, (2 x 512) / 897 as many requests for the same blocks' bytes.
  const auto v0 = serve_v1_json(
      {"--config", k_v1_configs + "gemma-2-2b.json", "--gpu", "a100-80gb", "--vllm-version", "0.6.4"});
  CHECK(v0["kv_groups"].is_null());
  CHECK(v0["block_bytes"] == 16ull * 2 * 26 * 4 * 256 * 2);
  CHECK(j["max_concurrency"].get<double>() > v0["max_concurrency"].get<double>());
}

TEST_CASE("serve V1: Gemma 3 1B's 22 window and 4 full layers make 7 groups of 4 (2 padding layers)",
          "[serve][v1][hybrid]") {
  // gemma-3-1b-it config.json: 26 layers, every 6th full (sliding_window_pattern 6: layers 5, 11,
  // 17, 23), the other 22 slide over 512 tokens; 1 KV head of head_dim 256; 32,768 positions.
  // Page: 16 x 2 x 1 x 256 x 2 B = 16,384 B. Groups of min(4, 22) = 4 layers: 1 full group and
  // ceil(22 / 4) = 6 window groups, the last holding 2 layers and 2 padding. On an H100 vllm
  // serve's step is 8,192 tokens. A 32,768-token request: ceil(32768 / 16) = 2,048 blocks in the
  // full group; each window group ceil(min(511 + 8192, 32768) / 16) + 1 = ceil(8703 / 16) + 1 = 545.
  const auto j = serve_v1_json({"--config", k_v1_configs + "gemma-3-1b-it.json", "--gpu", "h100-80gb"});
  const uint64_t kv = j["budget"]["kv_bytes"];
  REQUIRE(kv > 0);
  const auto& g = j["kv_groups"];
  CHECK(g["full_layers"] == 4);
  CHECK(g["window_layers"] == 22);
  CHECK(g["window"] == 512);
  CHECK(g["page_bytes"] == 16384);
  CHECK(g["layers_per_group"] == 4);
  CHECK(g["full_groups"] == 1);
  CHECK(g["window_groups"] == 6);
  CHECK(g["padding_layers"] == 2);
  const uint64_t blocks = kv / 16384 / 4;
  CHECK(j["gpu_blocks"] == blocks);
  CHECK(j["kv_tokens"] == blocks / 7 * 16);
  CHECK(g["full_blocks_per_request"] == 2048);
  CHECK(g["window_blocks_per_request"] == 545);
  CHECK(g["blocks_per_request"] == 2048 + 6 * 545);
  CHECK(std::fabs(j["max_concurrency"].get<double>() - double(blocks) / 5318) < 1e-9);
  // The start check (check_enough_kv_cache_memory) sums every layer's pages: 16,384 x (4 x
  // ceil(L / 16) + 22 x 545) bytes for L above 8,703 tokens, so the longest max_model_len is 16 x
  // floor((KV / 16,384 - 11,990) / 4).
  CHECK(g["needed_bytes"] == 16384ull * (4 * 2048 + 22 * 545));
  CHECK(j["largest_max_model_len"] == 16 * ((kv / 16384 - 22 * 545) / 4));
  CHECK(j["fits"] == true);
}

TEST_CASE("serve V1: a longest max_model_len that does not fit is refused as vLLM does", "[serve][v1]") {
  // Llama-3.1-8B on a 24 GB card: 14.96 GiB of weights leave a few GiB, fewer than 128K tokens need
  // (32 layers x 8 KV heads x 128 x 2 x 2 B = 128 KiB a token: 16 GiB at 131,072).
  const std::string cfg = k_v1_configs + "Llama-3.1-8B-Instruct.json";  // max_position_embeddings 131,072
  const auto r = run_cli({"serve", "--config", cfg, "--gpu", "rtx-4090", "--vllm-version", "0.10.1"});
  CHECK(r.code == 1);
  CHECK(r.out.find("To serve at least one request with the models's max seq len (131072)") !=
        std::string::npos);
  // 0.34's words (v1/core/kv_cache_planning.py): "the model's", its hint and the docs link.
  const auto now = run_cli({"serve", "--config", cfg, "--gpu", "rtx-4090"});
  CHECK(now.code == 1);
  CHECK(now.out.find("To serve at least one request with the model's max seq len (131072)") !=
        std::string::npos);
  CHECK(now.out.find("Decreasing `max_model_len` also reduces what is needed. See "
                     "https://docs.vllm.ai/en/latest/configuration/conserving_memory/") != std::string::npos);
  const auto j = serve_v1_json({"--config", cfg, "--gpu", "rtx-4090"});
  const uint64_t kv = j["budget"]["kv_bytes"];
  // Full attention only: the longest length is the blocks' tokens, 16 x floor(KV / (32 x 8,192 B pages)).
  CHECK(j["largest_max_model_len"] == 16 * (kv / (32ull * 16 * 2 * 8 * 128 * 2)));
  CHECK(j["kv_groups"]["needed_bytes"] == 131072ull / 16 * 32 * 16 * 2 * 8 * 128 * 2);
}

TEST_CASE("serve: a quantised checkpoint's weights are its stored bytes, not bf16 (gpt-oss-20b)",
          "[serve][v1][dtype]") {
  // openai/gpt-oss-20b's model.safetensors.index.json: "total_size": 13761264768 (MXFP4 experts,
  // bf16 attention and embeddings). Before, serve forced --precision bf16 and counted 21B
  // parameters x 2 B. vLLM loads the checkpoint as stored; its own log reports 13.72 GiB on an H100,
  // 0.9 GiB more than the file (the MXFP4 kernels' layout, not modelled).
  const auto j = serve_v1_json({"--config", k_v1_configs + "gpt-oss-20b.json", "--gpu", "h100-80gb"});
  // (weight_bytes adds the rotary cos/sin cache, 131,072 positions x 64 x 2 B = 16 MiB: 0.1%.)
  const double weights = j["budget"]["weight_bytes"].get<double>();
  CHECK(std::fabs(weights - 13761264768.0) / 13761264768.0 < 0.01);
  // Its 12 window layers (sliding_window 128) and 12 full ones: two groups of 12.
  CHECK(j["kv_groups"]["window_layers"] == 12);
  CHECK(j["kv_groups"]["full_layers"] == 12);
  CHECK(j["kv_groups"]["layers_per_group"] == 12);
  // An explicit --precision still rules (bf16 everywhere: about 2 B per parameter).
  const auto bf16 = serve_v1_json(
      {"--config", k_v1_configs + "gpt-oss-20b.json", "--gpu", "h100-80gb", "--precision", "bf16"});
  CHECK(bf16["budget"]["weight_bytes"].get<double>() > 2.5 * 13761264768.0);
}

TEST_CASE("serve: vLLM-only flags with --engine sglang, and the entry point's values, are refused",
          "[serve][v1][errors]") {
  const std::vector<std::vector<std::string>> bad = {
      {"--engine", "sglang", "--vllm-version", "0.10.1"},
      {"--engine", "sglang", "--vllm-entry", "llm"},
      {"--vllm-entry", "python"},
      {"--vllm-entry", "llm", "--vllm-version", "0.6.4"},
      {"--vllm-version", "0.5.5"},
      {"--vllm-version", "0.x"},
  };
  for (const auto& b : bad) {
    std::vector<std::string> args = {"serve", "--model", "llama-3-8b", "--gpu", "a100-80gb"};
    args.insert(args.end(), b.begin(), b.end());
    const auto r = run_cli(args);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(memplan::test::line_count(r.err) == 1);
  }
  const auto r = run_cli({"serve", "--engine", "sglang", "--model", "llama-3-8b", "--gpu", "a100-80gb",
                          "--vllm-version", "0.10.1"});
  CHECK(r.err ==
        "memplan: error: --vllm-version: \"0.10.1\" is a vLLM flag; with --engine sglang use "
        "--sglang-version\n");
}

TEST_CASE("serve V1: Qwen3-30B-A3B at tp 4 on A10s, the weights per GPU (vllm#17469)", "[serve][v1][moe]") {
  // vLLM 0.8.5 (V1) logged "Model loading took 14.2474 GiB" on each of four A10s. Per GPU, by
  // hand: 48 layers x (q and o 2 x 4,096 x 2,048 / 4 + k and v 2 x 1 KV head x 128 x 2,048 + 128
  // experts x 3 x 2,048 x 768 / 4) = 48 x 155.7M, embedding and lm_head 2 x 151,936 / 4 x 2,048 =
  // 155.6M, the replicated norms and routers about 13M: 7.64B x 2 B = 14.24 GiB. Before the split
  // used each expert's width, it took the dense intermediate_size (6,144) for all 128 experts:
  // 108.7 GiB per GPU.
  const std::string log = MEMPLAN_SOURCE_DIR "/tests/data/vllm_logs/qwen3-30b-a3b_4xa10_tp4_v1_17469.log";
  const auto j = serve_v1_json(
      {"--config", k_v1_configs + "Qwen3-30B-A3B.json", "--gpu", "a10", "--tp", "4", "--check-log", log});
  const double gib = j["budget"]["weight_bytes"].get<double>() / double(1ull << 30);
  CHECK(std::fabs(gib - 14.2474) / 14.2474 < 0.01);
  REQUIRE(j["log_checks"].size() == 1);
  CHECK(j["log_checks"][0]["within"] == true);
}

TEST_CASE("serve V1 by release: the sampler's warm-up over max_num_seqs x vocab logits",
          "[serve][v1][versions]") {
  // Llama 3 8B on an H100: vllm serve's 1,024 sequences (8,192 tokens) x 128,256 vocab. 0.16's
  // PyTorch sort path holds 38 B per logit (vllm/v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p),
  // 0.17's Triton top-k/top-p 14 B; both beside the 8,192 x 4,096 x 2 B hidden states, and both above
  // one layer's forward (8,192 x (3 x 4,096 + 3 x 14,336) x 2 B = 864 MiB).
  const auto a = serve_v1_json({"--model", "llama-3-8b", "--gpu", "h100-80gb", "--vllm-version", "0.16.0"});
  const auto b = serve_v1_json({"--model", "llama-3-8b", "--gpu", "h100-80gb", "--vllm-version", "0.17.0"});
  const uint64_t logits = 1024ull * 128256;
  CHECK(a["budget"]["sampler_requests"] == 1024);
  CHECK(a["budget"]["sampler_bytes"] == logits * 38);
  CHECK(b["budget"]["sampler_bytes"] == logits * 14);
  CHECK(a["budget"]["forward_activation_bytes"] == 8192ull * (3 * 4096 + 3 * 14336) * 2);
  CHECK(a["budget"]["activation_bytes"] == logits * 38 + 8192ull * 4096 * 2);
  CHECK(a["budget"]["kv_bytes"].get<int64_t>() + int64_t(logits * 24) ==
        b["budget"]["kv_bytes"].get<int64_t>());
  // 0.20 subtracts its CUDA-graph estimate before the KV cache: 51 sizes up to 512 (min(2 x 1,024, 512)),
  // the largest capture's one-layer activations (512 x 55,296 elements x 2 B = 54 MiB) + 2 x 50 x 1 MiB.
  const auto c = serve_v1_json({"--model", "llama-3-8b", "--gpu", "h100-80gb", "--vllm-version", "0.20.0"});
  CHECK(c["budget"]["cuda_graph_bytes"] == (54ull << 20) + (100ull << 20));
  CHECK(c["budget"]["kv_bytes"].get<int64_t>() ==
        b["budget"]["kv_bytes"].get<int64_t>() - int64_t(154ull << 20));
  CHECK(b["budget"]["cuda_graph_bytes"] == 0);
  // V0 (0.7) has no sampler term: the forward of max(8,192, 2,048) tokens.
  const auto v0 = serve_v1_json({"--model", "llama-3-8b", "--gpu", "h100-80gb", "--vllm-version", "0.7.3"});
  CHECK(v0["budget"]["sampler_bytes"] == 0);
  CHECK(v0["budget"]["activation_bytes"] == v0["budget"]["forward_activation_bytes"]);
  CHECK(v0["budget"]["non_torch_bytes"] == 0);  // 0.7's increase after the snapshot: no CUDA context
  // 0.8's V1 subtracts the context again (gpu_worker.py: used memory - torch's allocated).
  const auto v08 = serve_v1_json({"--model", "llama-3-8b", "--gpu", "h100-80gb", "--vllm-version", "0.8.5"});
  CHECK(v08["budget"]["non_torch_bytes"] == 400ull << 20);
  CHECK(v08["rules"]["read_in"] == "0.8.5");
}

TEST_CASE("serve V1 0.10: the sampler's warm-up is what refused gpt-oss-120b on one H100 (vllm#23278)",
          "[serve][v1][versions]") {
  // vLLM of August 2025 (0.10.1, pip install: no FlashInfer, the sort path) logged 65.9651 GiB of
  // weights and "Available KV cache memory: -2.14 GiB" at utilization 0.9 of the H100's 79.19 GiB
  // (71.27 GiB): the profile run's peak (and the non-torch increase) took 71.27 - 65.97 + 2.14 =
  // 7.44 GiB. The sampler over 1,024 requests x 201,088 vocab x 38 B and the 8,192 x 2,880 x 2 B
  // hidden states is 7.33 GiB (-1.5%); one layer's forward, memplan's rule before, is under 1 GiB.
  // (The weights are 5 GiB low here: MXFP4 through Marlin on Hopper is not modelled.)
  const std::string log = MEMPLAN_SOURCE_DIR "/tests/data/vllm_logs/gpt-oss-120b_h100_v1_23278.log";
  const auto j = serve_v1_json({"--config", k_v1_configs + "gpt-oss-120b.json", "--gpu", "h100-80gb",
                                "--vllm-version", "0.10.1", "--check-log", log});
  const double gib = double(1ull << 30);
  const double logged_peak = 71.27 - 65.9651 + 2.14;
  const double peak = j["budget"]["activation_bytes"].get<double>() / gib;
  CHECK(std::fabs(peak - logged_peak) / logged_peak < 0.03);
  CHECK(j["budget"]["forward_activation_bytes"].get<double>() / gib < 1.0);
  CHECK(j["budget"]["sampler_bytes"] == 1024ull * 201088 * 38);
  CHECK(std::fabs(j["budget"]["usable_bytes"].get<double>() / gib - 71.27) < 0.01);
  CHECK(j["log_checks"].size() == 2);  // weights and KV memory: both off by the MXFP4 weights
}
