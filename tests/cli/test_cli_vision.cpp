// --images on a vision-language config: the image tokens join the sequence, so the KV cache holds
// them; a text-only model refuses the flag.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using memplan::test::run_cli;

namespace {

const std::string k_llava = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/llava-1.5-7b-hf.json";

}  // namespace

TEST_CASE("estimate --images 2 on LLaVA-1.5-7B: 2 x 576 image tokens in the KV cache", "[cli][vision]") {
  // The language model is Llama-2-7B: 32 layers x 32 kv heads x 128 head_dim x 2 (K and V) x 2 B
  // (fp16) = 524,288 bytes per token. 100 text tokens + 2 x 576 image tokens = 1,252 tokens.
  const auto r = run_cli({"estimate", "--config", k_llava, "--mode", "infer", "--precision", "fp16", "--seq",
                          "100", "--images", "2", "--format", "json"});
  REQUIRE(r.err.empty());
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["breakdown"]["kv_cache"] == 524288ull * 1252);
  CHECK(j["inputs"]["seq"] == 100);  // as given: the plan reads back to the same estimate
  CHECK(j["inputs"]["images"] == 2);
}

TEST_CASE("a text-only model refuses --images, naming the flag", "[cli][vision]") {
  const auto r =
      run_cli({"estimate", "--model", "llama-2-7b", "--mode", "infer", "--seq", "100", "--images", "1"});
  CHECK(r.code == 2);
  CHECK(r.err.find("memplan: error: --images: applies to vision-language models") == 0);
}
