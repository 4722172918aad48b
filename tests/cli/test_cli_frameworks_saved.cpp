// The ledger against bench/frameworks/measure_saved.py's CPU measurements of real Hugging Face
// models (transformers 5.24.0, peft 0.21.2, torch 2.15.0; bench/frameworks/results/
// saved-cpu-2026-12-03.jsonl): the bytes autograd saved in forward and loss at batch 4, seq 64,
// for three of the rules that measurement changed (eager fp32 softmax under LoRA and the shifted
// labels, the MoE router and dispatch, the MLM head and its loss). memplan's activations term is
// what it says is saved plus the logits held for the loss (not saved by autograd), taken off here.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using memplan::test::run_cli;

namespace {

double frameworks_saved_error(std::vector<std::string> args, double held, double measured) {
  args.insert(args.begin(), "estimate");
  args.insert(args.end(), {"--seq", "64", "--batch", "4", "--optimizer", "adamw", "--format", "json"});
  const std::filesystem::path previous = std::filesystem::current_path();
  std::filesystem::current_path(MEMPLAN_SOURCE_DIR);
  const auto r = run_cli(args);
  std::filesystem::current_path(previous);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const double saved = j.at("breakdown").at("activations").get<double>() - held;
  return (saved - measured) / measured;
}

}  // namespace

TEST_CASE("frameworks: the ledger within 1% of what transformers saves on CPU", "[cli][frameworks]") {
  // Llama bf16, eager, peft LoRA r=8 on q,v: measured 3,057,664 B; held: bf16 logits and their
  // fp32 upcast, 4 x 64 x 1024 x (2 + 4) B. Before the LoRA fp32-softmax rule: -17.3%.
  CHECK(std::fabs(
            frameworks_saved_error({"--config", "tests/data/frameworks/llama_tiny.json", "--precision",
                                    "bf16", "--attention", "eager", "--lora", "8", "--lora-targets", "q,v"},
                                   4.0 * 64 * 1024 * 6, 3057664.0)) <= 0.01);
  // Mixtral fp32, sdpa, 4 experts, top 2: measured 5,645,344 B; held: fp32 logits. Before the
  // router and dispatch rule: -7.4%.
  CHECK(std::fabs(frameworks_saved_error({"--config", "tests/data/frameworks/mixtral_tiny.json",
                                          "--precision", "fp32", "--attention", "sdpa"},
                                         4.0 * 64 * 1024 * 4, 5645344.0)) <= 0.01);
  // BertForMaskedLM fp32, sdpa: measured 3,496,448 B; held: fp32 logits. Before the MLM head: -37.6%.
  CHECK(std::fabs(frameworks_saved_error({"--config", "tests/data/frameworks/bert_mlm_tiny.json",
                                          "--precision", "fp32", "--attention", "sdpa"},
                                         4.0 * 64 * 1024 * 4, 3496448.0)) <= 0.01);
}
