// Presets with sliding-window attention hold the window their config.json sets (sliding_window and
// window_layers in data/model_presets.json), so a preset's KV cache is the config's: each window
// layer caches at most its window, the others the whole context.

#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using memplan::test::run_cli;

namespace {

uint64_t kv_cache(const std::string& flag, const std::string& model, const std::string& seq) {
  const auto r = run_cli(
      {"estimate", flag, model, "--mode", "infer", "--precision", "bf16", "--seq", seq, "--format", "json"});
  REQUIRE(r.code <= 1);
  return nlohmann::json::parse(r.out).at("breakdown").at("kv_cache").get<uint64_t>();
}

}  // namespace

TEST_CASE("presets with sliding windows cache what their config.json caches", "[cli][presets][attention]") {
  const std::string dir = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/";
  // Mistral 7B v0.1: every one of its 32 layers keeps at most 4,096 tokens of k and v (8 kv heads x
  // 128, bf16): 32 x 4,096 x 2 x 8 x 128 x 2 B at any longer context.
  CHECK(kv_cache("--model", "mistral-7b", "32768") == 32ull * 4096 * 2 * 8 * 128 * 2);
  CHECK(kv_cache("--model", "mistral-7b", "32768") ==
        kv_cache("--config", dir + "Mistral-7B-v0.1.json", "32768"));
  // Gemma 3 1B: 22 of 26 layers slide over 512 tokens (one kv head x 256), 4 hold all 32,768.
  CHECK(kv_cache("--model", "gemma-3-1b", "32768") == (4ull * 32768 + 22ull * 512) * 2 * 256 * 2);
  CHECK(kv_cache("--model", "gemma-3-1b", "32768") ==
        kv_cache("--config", dir + "gemma-3-1b-it.json", "32768"));
  // Phi-3 mini 4k: sliding_window 2047 on all 32 layers (32 kv heads x 96).
  CHECK(kv_cache("--model", "phi-3-mini", "4096") ==
        kv_cache("--config", dir + "Phi-3-mini-4k-instruct.json", "4096"));
  // Gemma 2 9B: every other layer (21 of 42) slides over 4,096 tokens (8 kv heads x 256).
  CHECK(kv_cache("--model", "gemma-2-9b", "8192") == (21ull * 8192 + 21ull * 4096) * 2 * 8 * 256 * 2);
}
