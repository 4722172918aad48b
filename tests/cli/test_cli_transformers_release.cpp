// --transformers: what Hugging Face's modelling code kept, by family and release
// (src/core/memory/hf_release_rules.hpp), against the arithmetic of the tensors each release's code
// makes (read off modeling_opt.py, modeling_gpt_neox.py, modeling_llama.py and loss/loss_utils.py of
// 4.30.2, 4.36.2, 4.40.2, 4.46.3, 4.49.0; measured with bench/frameworks/measure_saved.py on 4.36.2,
// 4.46.3 and 4.48.3, docs/accuracy.md).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memplan/error.hpp>
#include <memplan/transformers_release.hpp>

#include "cli_harness.hpp"

using memplan::test::run_cli;
using nlohmann::json;

namespace {

json hf_estimate(const std::string& config, const std::vector<std::string>& more) {
  std::vector<std::string> args = {
      "estimate", "--config",    std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/" + config,
      "--seq",    "256",         "--batch",
      "1",        "--optimizer", "adamw",
      "--format", "json"};
  args.insert(args.end(), more.begin(), more.end());
  const auto r = run_cli(args);
  REQUIRE(r.code <= 1);
  return json::parse(r.out);
}

int64_t acts(const std::string& config, const std::vector<std::string>& more) {
  return hf_estimate(config, more).at("breakdown").at("activations").get<int64_t>();
}

// Release `old` minus the default (5.24), the same run otherwise.
int64_t delta(const std::string& config, const std::string& precision, const std::string& old) {
  const std::vector<std::string> run = {"--precision", precision, "--attention", "eager"};
  std::vector<std::string> with_old = run;
  with_old.insert(with_old.end(), {"--transformers", old});
  return acts(config, with_old) - acts(config, run);
}

// 5.24's loss at seq 256: the half logits (held), their fp32 upcast (held), the fp32 log-softmax
// over every position (ForCausalLMLoss pads the labels) and 256 int64 shifted labels.
int64_t loss_524(int64_t vocab) { return 256 * vocab * 2 + 256 * vocab * 4 + 256 * vocab * 4 + 256 * 8; }

// Before 4.49 without an upcast: the half logits (held), the half copy of logits[..., :-1, :]
// (held), the half log-softmax over 255 positions and 255 shifted labels.
int64_t loss_no_upcast(int64_t vocab) {
  return 256 * vocab * 2 + 255 * vocab * 2 + 255 * vocab * 2 + 255 * 8;
}

}  // namespace

TEST_CASE("transformers release: releases parse, others are refused", "[transformers_release]") {
  CHECK(memplan::to_string(memplan::parse_transformers_release("--transformers", "4.36.2")) == "4.36");
  CHECK(memplan::to_string(memplan::parse_transformers_release("--transformers", "5.0.0rc1")) == "5.0");
  CHECK(memplan::parse_transformers_release("--transformers", "4.9").before(4, 10));
  for (const char* bad : {"4", "3.36", "6.0", "4.x", "4.36-", "", ".36", "4.1000"})
    CHECK_THROWS_AS(memplan::parse_transformers_release("--transformers", bad), memplan::Error);
}

TEST_CASE("transformers release: OPT before 4.49 keeps torch.max's scores and its loss in fp16",
          "[transformers_release]") {
  // OPT-1.3b: 24 layers, 32 heads, vocabulary 50,272. fp16: the softmax is fp32 either way; 4.36 adds
  // torch.max's input (32 x 256 x 256 fp16 a layer) and reads the loss without an upcast.
  const int64_t scores = 24LL * 32 * 256 * 256 * 2;  // 100,663,296 B
  CHECK(delta("opt-1.3b.json", "fp16", "4.36") == scores + loss_no_upcast(50272) - loss_524(50272));
  // bf16: 4.36 takes the softmax in bf16 (fp32 + bf16 copy in 5.24): 4 B less an element, the max's
  // input 2 B more.
  CHECK(delta("opt-1.3b.json", "bf16", "4.36") == -scores + loss_no_upcast(50272) - loss_524(50272));
  // 4.48: OPT calls ForCausalLMLoss (an upcast and the shifted fp32 copy) but keeps its old attention.
  CHECK(delta("opt-1.3b.json", "bf16", "4.48") ==
        -scores + (256LL * 50272 * (2 + 4) + 255LL * 50272 * (4 + 4) + 255 * 8) - loss_524(50272));
}

TEST_CASE("transformers release: GPT-NeoX before 4.49 takes its softmax in the scores' format",
          "[transformers_release]") {
  // Pythia-410m: 24 layers, 16 heads, vocabulary 50,304; 5.24 keeps an fp32 softmax and its bf16 copy.
  const int64_t softmax = 24LL * 16 * 256 * 256 * 4;  // 4 B an element less
  CHECK(delta("pythia-410m.json", "bf16", "4.36") == -softmax + loss_no_upcast(50304) - loss_524(50304));
}

TEST_CASE("transformers release: the Llama family's logits upcast by release", "[transformers_release]") {
  const int64_t v = 32000;  // TinyLlama
  // 4.30: no logits.float() at all.
  CHECK(delta("TinyLlama-1.1B-Chat-v1.0.json", "fp16", "4.30") == loss_no_upcast(v) - loss_524(v));
  // 4.40: logits.float() in the forward drops the half logits; the loss reads an fp32 copy of 255
  // positions.
  CHECK(delta("TinyLlama-1.1B-Chat-v1.0.json", "fp16", "4.40") ==
        (256 * v * 4 + 255 * v * 4 + 255 * v * 4 + 255 * 8) - loss_524(v));
  // 4.46: ForCausalLMLoss upcasts while the caller still holds the half logits, then copies.
  CHECK(delta("TinyLlama-1.1B-Chat-v1.0.json", "fp16", "4.46") ==
        (256 * v * 2 + 256 * v * 4 + 255 * v * 4 + 255 * v * 4 + 255 * 8) - loss_524(v));
  // 4.49 on: the labels are padded instead: the default's figures.
  CHECK(delta("TinyLlama-1.1B-Chat-v1.0.json", "fp16", "4.49") == 0);
}

TEST_CASE("transformers release: eager where the family had no sdpa yet", "[transformers_release]") {
  const auto attention = [](const std::string& release) {
    const auto r = run_cli(
        {"estimate", "--model", "gpt2", "--seq", "128", "--transformers", release, "--format", "json"});
    REQUIRE(r.code <= 1);
    return json::parse(r.out).at("inputs").at("attention").get<std::string>();
  };
  CHECK(attention("4.41") == "eager");
  CHECK(attention("4.42") == "sdpa");
  const json j = hf_estimate("opt-1.3b.json", {"--transformers", "4.36"});
  CHECK(j.at("inputs").at("transformers") == "4.36");
  CHECK(j.at("inputs").at("attention") == "eager");
}
