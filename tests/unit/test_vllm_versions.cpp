// vLLM's rules by release (vllm_versions.hpp): which row a release gets, what each row says, the
// engine's own refusal words as each release's source writes them, and the CUDA-graph sizes.
// The expected values are read from the vLLM sdists on PyPI (file named beside each check).
#include <catch2/catch.hpp>

#include <string>

#include "core/serving/vllm_budget.hpp"
#include "core/serving/vllm_versions.hpp"

using namespace memplan;

namespace {

VllmRules rules_of(const char* v) {
  const auto parsed = parse_vllm_version(v);
  REQUIRE(parsed);
  const auto r = vllm_rules_for(*parsed);
  REQUIRE(r);
  return *r;
}

}  // namespace

TEST_CASE("parse_vllm_version: X.Y, X.Y.Z, a fourth part or .postN, a leading v", "[vllm_versions]") {
  const auto a = parse_vllm_version("0.11");
  REQUIRE(a);
  CHECK((a->major == 0 && a->minor == 11 && a->patch == 0));
  const auto b = parse_vllm_version("v0.10.1.1");
  REQUIRE(b);
  CHECK((b->minor == 10 && b->patch == 1));
  const auto c = parse_vllm_version("0.6.4.post1");
  REQUIRE(c);
  CHECK(c->patch == 4);
  for (const char* bad : {"", "0", "0.", "0.x", "1..2", "0.11.0rc1", "0.11.0.", "latest", "0.1234567"}) {
    INFO(bad);
    CHECK_FALSE(parse_vllm_version(bad));
  }
}

TEST_CASE("vllm_rules_for: the newest row at or below the release, none below 0.6", "[vllm_versions]") {
  CHECK_FALSE(vllm_rules_for(*parse_vllm_version("0.5.5")));
  CHECK(std::string(rules_of("0.6.0").label) == "0.6.4.post1");
  CHECK(std::string(rules_of("0.6.6").label) == "0.6.4.post1");
  CHECK(std::string(rules_of("0.7.0").label) == "0.7.3");
  CHECK(std::string(rules_of("0.8.5.post1").label) == "0.8.5");
  CHECK(std::string(rules_of("0.9.2").label) == "0.10.1");
  CHECK(std::string(rules_of("0.10.2").label) == "0.10.1");
  CHECK(std::string(rules_of("0.12.0").label) == "0.11.0");
  CHECK(std::string(rules_of("0.19.1").label) == "0.17.0");
  CHECK(std::string(rules_of("0.29.0").label) == "0.22.0");
  CHECK(std::string(rules_of("1.0").label) == vllm_newest_rules().label);
  CHECK(std::string(vllm_newest_rules().label) == "0.34.0");
  // The table is ordered and every row names its source.
  const auto& t = vllm_rules_table();
  for (size_t i = 1; i < t.size(); ++i) {
    CHECK(t[i - 1].since.key() < t[i].since.key());
    CHECK(std::string(t[i].source).find("vllm/") != std::string::npos);
  }
}

TEST_CASE("vllm rules: engine, non-torch measure, sampler, CUDA graphs and defaults by release",
          "[vllm_versions]") {
  // V0 up to 0.7 (envs.py VLLM_USE_V1 defaults to "1" from 0.8).
  CHECK_FALSE(rules_of("0.6.4").v1);
  CHECK_FALSE(rules_of("0.7.3").v1);
  CHECK(rules_of("0.8.0").v1);
  // The CUDA context: 0.6.4's worker.py measures from an empty device, 0.7's memory_profiling from
  // a snapshot after it; 0.8's V1 gpu_worker.py adds mem_get_info's used - torch's allocated
  // (context in), 0.9's takes a snapshot in init_device (context out).
  CHECK(rules_of("0.6.4").context_in_non_torch);
  CHECK_FALSE(rules_of("0.7.3").context_in_non_torch);
  CHECK(rules_of("0.8.5").context_in_non_torch);
  CHECK_FALSE(rules_of("0.9.2").context_in_non_torch);
  // The custom all-reduce: counted until 0.11 moves the snapshot after NCCL's set-up.
  CHECK(rules_of("0.10.1").comm_in_non_torch);
  CHECK_FALSE(rules_of("0.11.0").comm_in_non_torch);
  // The sampler warm-up: none for V0 here, the sort path 0.8-0.16, the Triton kernel from 0.17.
  CHECK(rules_of("0.7.3").sampler_bytes_per_logit == 0);
  CHECK(rules_of("0.8.5").sampler_bytes_per_logit == 38);
  CHECK(rules_of("0.16.0").sampler_bytes_per_logit == 38);
  CHECK(rules_of("0.17.0").sampler_bytes_per_logit == 14);
  // CUDA graphs before the KV cache: envs.py's VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS "0" in 0.19,
  // "1" in 0.20.
  CHECK_FALSE(rules_of("0.19.1").cuda_graphs_before_kv);
  CHECK(rules_of("0.20.0").cuda_graphs_before_kv);
  // arg_utils.py: 0.8.5 has no A100 exception; 0.30 adds the 160 GiB tier.
  CHECK_FALSE(rules_of("0.8.5").a100_small_defaults);
  CHECK(rules_of("0.9.0").a100_small_defaults);
  CHECK_FALSE(rules_of("0.26.0").tier_160gib);
  CHECK(rules_of("0.30.0").tier_160gib);
}

TEST_CASE("vllm_v1_defaults by release: A100s in 0.8, the 160 GiB tier from 0.30", "[vllm_versions]") {
  const uint64_t a100 = 79ull << 30, b200 = 178ull << 30;
  const auto r08 = rules_of("0.8.5"), r10 = rules_of("0.10.1"), r30 = rules_of("0.30.0");
  auto d = [](uint64_t total, const char* name, const VllmRules& r) {
    return vllm_v1_defaults(total, name, VllmEntry::serve, {r.a100_small_defaults, r.tier_160gib});
  };
  CHECK(d(a100, "NVIDIA A100-SXM4-80GB", r08).max_num_batched_tokens == 8192);
  CHECK(d(a100, "NVIDIA A100-SXM4-80GB", r08).max_num_seqs == 1024);
  CHECK(d(a100, "NVIDIA A100-SXM4-80GB", r10).max_num_batched_tokens == 2048);
  CHECK(d(b200, "NVIDIA B200", r10).max_num_batched_tokens == 8192);
  CHECK(d(b200, "NVIDIA B200", r30).max_num_batched_tokens == 16384);
  CHECK(d(b200, "NVIDIA B200", r30).max_num_seqs == 1024);
}

TEST_CASE("vllm_cuda_graphs: capture sizes [1, 2, 4] + 8..248 by 8 + 256.. by 16 up to min(2 x seqs, 512)",
          "[vllm_versions]") {
  // vllm/config/vllm.py and compilation.py (0.22.0).
  const auto big = vllm_cuda_graphs(1024, 8192);
  CHECK(big.largest == 512);
  CHECK(big.sizes == 3 + 31 + 17);
  const auto small = vllm_cuda_graphs(8, 2048);  // cap 16: 1, 2, 4, 8, 16
  CHECK(small.sizes == 5);
  CHECK(small.largest == 16);
  const auto mid = vllm_cuda_graphs(100, 8192);  // cap 200: 1, 2, 4, 8 .. 200
  CHECK(mid.sizes == 3 + 25);
  CHECK(mid.largest == 200);
  const auto tokens = vllm_cuda_graphs(256, 100);  // also capped at the step's tokens: .. 96
  CHECK(tokens.largest == 96);
}

TEST_CASE("vllm_start_refusal: each release's words (kv_cache_utils.py, kv_cache_planning.py, worker.py)",
          "[vllm_versions]") {
  VllmRefusal r;
  r.max_model_len = 131072;
  r.needed_gib = 16.0;
  r.available_gib = 5.5;
  r.estimated_len = 45056;
  // 0.10.1.1 v1/core/kv_cache_utils.py check_enough_kv_cache_memory (%.2f).
  CHECK(
      vllm_start_refusal(rules_of("0.10.1"), r) ==
      "To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, "
      "which is larger than the available KV cache memory (5.50 GiB). Based on the available memory, the "
      "estimated maximum model length is 45056. Try increasing `gpu_memory_utilization` or decreasing "
      "`max_model_len` when initializing the engine.");
  // 0.8.5: the estimate's second line is a separate statement, so only its first words print.
  CHECK(
      vllm_start_refusal(rules_of("0.8.5"), r) ==
      "To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, "
      "which is larger than the available KV cache memory (5.50 GiB). Based on the available memory,  Try "
      "increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.");
  // 0.19.0: format_gib is Python's round(x, 2), and the docs link.
  CHECK(vllm_start_refusal(rules_of("0.19.0"), r) ==
        "To serve at least one request with the models's max seq len (131072), (16.0 GiB KV cache is needed, "
        "which is larger than the available KV cache memory (5.5 GiB). Based on the available memory, the "
        "estimated maximum model length is 45056. Try increasing `gpu_memory_utilization` or decreasing "
        "`max_model_len` when initializing the engine. See "
        "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.");
  // 0.34.0 v1/core/kv_cache_planning.py with the default hint.
  CHECK(vllm_start_refusal(rules_of("0.34.0"), r) ==
        "To serve at least one request with the model's max seq len (131072), (16.0 GiB KV cache is needed, "
        "which is larger than the available KV cache memory (5.5 GiB). Based on the available memory, the "
        "estimated maximum model length is 45056. Try increasing `gpu_memory_utilization` when initializing "
        "the engine (this flag also controls CPU memory reservation on the CPU backend, despite its name). "
        "Decreasing `max_model_len` also reduces what is needed. See "
        "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.");
  VllmRefusal none;
  none.no_memory = true;
  CHECK(vllm_start_refusal(rules_of("0.6.4"), none) ==
        "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
        "the engine.");
  CHECK(vllm_start_refusal(rules_of("0.13.0"), none) ==
        "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
        "the engine. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.");
  CHECK(
      vllm_start_refusal(rules_of("0.22.0"), none) ==
      "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
      "the engine (this flag also controls CPU memory reservation on the CPU backend, despite its name). See "
      "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.");
  VllmRefusal v0;
  v0.max_model_len = 29000;
  v0.kv_tokens = 27920;
  CHECK(
      vllm_start_refusal(rules_of("0.6.4"), v0) ==
      "The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV "
      "cache (27920). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
      "initializing the engine.");
}
