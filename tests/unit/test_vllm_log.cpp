// read_vllm_log: the figures of vLLM's V1 start-up lines, as published or as the engine's format
// strings print them.
#include <catch2/catch.hpp>

#include "core/serving/vllm_log.hpp"

using memplan::read_vllm_log;

TEST_CASE("read_vllm_log: V1's lines, a negative KV memory and the DEBUG Requested memory line",
          "[vllm_log]") {
  // The INFO lines as vllm#23278 published them (vLLM of August 2025, gpt-oss-120b on an H100,
  // which did not fit). That log ran at INFO level: the DEBUG line between them is written here in
  // gpu_worker.py determine_available_memory's format ("Initial free memory: %.2f GiB; Requested
  // memory: %.2f (util), %.2f GiB", v0.10.1), its figures made up for the parser.
  const auto f = read_vllm_log(
      "(EngineCore_0 pid=5839) INFO 08-20 18:04:10 [gpu_model_runner.py:2007] Model loading took 65.9651 GiB "
      "and 12.799889 seconds\n"
      "(EngineCore_0 pid=5839) DEBUG 08-20 18:04:22 [gpu_worker.py:262] Initial free memory: 78.68 GiB; "
      "Requested memory: 0.90 (util), 71.27 GiB\n"
      "(EngineCore_0 pid=5839) INFO 08-20 18:04:22 [gpu_worker.py:276] Available KV cache memory: -2.14 "
      "GiB\n");
  CHECK(*f.weights_gib == Approx(65.9651));
  CHECK(*f.kv_gib == Approx(-2.14));
  CHECK(*f.requested_util == Approx(0.90));
  CHECK(*f.requested_gib == Approx(71.27));
  CHECK_FALSE(f.kv_tokens);
}

TEST_CASE("read_vllm_log: V1's KV tokens and concurrency with thousands commas", "[vllm_log]") {
  // vllm PR 24577 (tests/data/vllm_logs/qwen3-0.6b_a100_v1_pr24577.log).
  const auto f = read_vllm_log(
      "INFO 09-10 13:29:24 [gpu_worker.py:276] Available KV cache memory: 69.66 GiB\n"
      "INFO 09-10 13:29:25 [kv_cache_utils.py:864] GPU KV cache size: 652,144 tokens\n"
      "INFO 09-10 13:29:25 [kv_cache_utils.py:868] Maximum concurrency for 4,096 tokens per request: "
      "159.21x\n");
  CHECK(*f.kv_gib == Approx(69.66));
  CHECK(*f.kv_tokens == 652144);
  CHECK(*f.concurrency_tokens == 4096);
  CHECK(*f.max_concurrency == Approx(159.21));
  CHECK_FALSE(f.requested_gib);
}
