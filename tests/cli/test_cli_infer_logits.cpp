// --logits all: a plain transformers forward returns every position's logits (the H200 rows
// measured by this project, bench/accuracy/results/h200-2026-12-01/hf_train.json: transformers
// 5.17.0, torch 2.11.0, bf16, sdpa, model(input_ids) under torch.inference_mode()).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "cli_harness.hpp"
#include "matrix_harness.hpp"

using memplan::test::run_cli;

namespace {

nlohmann::json logits_estimate(const std::string& config, const std::string& batch,
                               const std::string& logits) {
  const auto r = run_cli({"estimate", "--config", memplan::test::hf_config(config), "--mode", "infer",
                          "--precision", "bf16", "--attention", "sdpa", "--seq", "1024", "--batch", batch,
                          "--logits", logits, "--gpu", "h200", "--format", "json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out);
}

uint64_t above_weights(const nlohmann::json& j) {
  return j.at("breakdown").at("activations").get<uint64_t>() +
         j.at("breakdown").at("kv_cache").get<uint64_t>();
}

}  // namespace

TEST_CASE("logits all: the forward's peak above the weights matches the H200's", "[cli][infer][logits]") {
  // max_memory_allocated() during the forward less memory_allocated() after loading, as measured.
  struct Row {
    const char* config;
    const char* batch;
    uint64_t measured;
  };
  const std::vector<Row> rows = {
      {"TinyLlama-1.1B-Chat-v1.0.json", "1", 2362110976ull - 2269312000ull},
      {"TinyLlama-1.1B-Chat-v1.0.json", "4", 2640532480ull - 2269336576ull},
      {"Qwen3-1.7B.json", "1", 3941606400ull - 3508806656ull},
      {"Qwen3-1.7B.json", "4", 5241078784ull - 3508831232ull},
      {"gpt2.json", "1", 467295232ull - 324523008ull},
      {"gpt2.json", "8", 1463333888ull - 324580352ull},
      // the peak in the last layer's MLP: 14,336-wide, beside four hidden-sized tensors
      {"Mistral-7B-v0.1.json", "1", 14809080832ull - 14552679424ull},
      {"Mistral-7B-v0.1.json", "4", 15576663040ull - 14552704000ull},
  };
  for (const Row& row : rows) {
    INFO(row.config << " batch " << row.batch);
    const auto all = logits_estimate(row.config, row.batch, "all");
    const double error = (static_cast<double>(above_weights(all)) - static_cast<double>(row.measured)) /
                         static_cast<double>(row.measured);
    CHECK(error > -0.01);
    CHECK(error < 0.01);
    // generation's last position alone is far below what the forward holds
    const auto last = logits_estimate(row.config, row.batch, "last");
    CHECK(above_weights(last) < above_weights(all));
    CHECK(all.at("inputs").at("logits") == "all");
    CHECK(last.at("inputs").at("logits") == "last");
  }
}

TEST_CASE("logits all: every token's logits in the model's format and the final norm's output",
          "[cli][infer][logits]") {
  // Qwen3-1.7B, batch 4 x 1,024 in one pass: 4,096 x 151,936 x 2 B + 4,096 x 2,048 x 2 B.
  const auto j = logits_estimate("Qwen3-1.7B.json", "4", "all");
  CHECK(j.at("breakdown").at("activations") == 4096ull * 151936 * 2 + 4096ull * 2048 * 2);
  const auto text = run_cli({"estimate", "--config", memplan::test::hf_config("Qwen3-1.7B.json"), "--mode",
                             "infer", "--batch", "4", "--seq", "1024", "--logits", "all", "--explain"});
  CHECK(text.out.find("every position's logits (batch x seq x vocab, --logits all)") != std::string::npos);
}

TEST_CASE("logits: bad values and training runs are refused in one line", "[cli][infer][logits][errors]") {
  const auto bad = run_cli({"estimate", "--model", "llama-2-7b", "--mode", "infer", "--logits", "every"});
  CHECK(bad.code == 2);
  CHECK(bad.err == "memplan: error: --logits: \"every\" is not valid (expected last or all)\n");
  const auto train = run_cli({"estimate", "--model", "llama-2-7b", "--logits", "all"});
  CHECK(train.code == 2);
  CHECK(train.err.find("--logits: applies to inference (--mode infer)") != std::string::npos);
}
