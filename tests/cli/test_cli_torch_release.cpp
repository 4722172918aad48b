// --torch: the rules that changed between PyTorch releases (include/memplan/torch_release.hpp), each
// checked against the arithmetic by hand, and autocast's weight cache under full checkpointing
// (every release; measured on CPU in tests/data/torch_cpu_step_peak.json, gpt2_style_L8_ckpt_zeros).

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memplan/error.hpp>
#include <memplan/torch_release.hpp>

#include "cli_harness.hpp"

using memplan::test::run_cli;
using nlohmann::json;

namespace {

json estimate(std::vector<std::string> args) {
  args.insert(args.begin(), "estimate");
  args.insert(args.end(), {"--format", "json"});
  const auto r = run_cli(args);
  REQUIRE(r.code <= 1);
  return json::parse(r.out);
}

uint64_t activations(const std::vector<std::string>& args) {
  return estimate(args).at("breakdown").at("activations").get<uint64_t>();
}

std::vector<std::string> with_more(std::vector<std::string> a, const std::vector<std::string>& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

// The defaults an older --torch changes, pinned, so that only the rule under test differs.
const std::vector<std::string> k_pinned = {"--attention",      "eager",  "--zero-grad", "none",
                                           "--optimizer-loop", "foreach"};

const std::vector<std::string> k_bert =
    with_more({"--model", "bert-large-uncased", "--seq", "512", "--batch", "1"}, k_pinned);

// A config.json of tests/data/hf_configs with the pinned defaults and `more`.
std::vector<std::string> config_run(const std::string& file, const std::vector<std::string>& more) {
  return with_more(
      with_more({"--config", std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/" + file}, k_pinned), more);
}

}  // namespace

TEST_CASE("torch release: the flag parses releases, anything else is refused", "[cli][torch]") {
  CHECK(memplan::to_string(memplan::parse_torch_release("--torch", "1.10")) == "1.10");
  CHECK(memplan::to_string(memplan::parse_torch_release("--torch", "2.5.1+cu121")) == "2.5");
  CHECK(memplan::to_string(memplan::parse_torch_release("--torch", "1.13.1")) == "1.13");
  CHECK(memplan::parse_torch_release("--torch", "1.10").softmax_keeps_input());
  CHECK_FALSE(memplan::parse_torch_release("--torch", "1.11").softmax_keeps_input());
  for (const char* bad : {"1.1", "3.0", "1", "1.x", "", "0.4", "2.100", "1.10.", "+cu121"}) {
    INFO(bad);
    CHECK_THROWS_AS(memplan::parse_torch_release("--torch", bad), memplan::Error);
  }
}

TEST_CASE("torch release before 1.11: softmax keeps its input, heads x s x s per layer", "[cli][torch]") {
  // BERT-large, 24 layers of 16 heads at 512 tokens: the masked scores, fp32, 4 B each.
  const uint64_t fp32 = 24ull * 16 * 512 * 512 * 4;
  CHECK(activations(with_more(k_bert, {"--precision", "fp32", "--torch", "1.10"})) -
            activations(with_more(k_bert, {"--precision", "fp32"})) ==
        fp32);
  // Autocast runs softmax in fp32: its input is autocast's fp32 copy of the half scores.
  CHECK(activations(with_more(k_bert, {"--precision", "amp-fp16", "--torch", "1.10"})) -
            activations(with_more(k_bert, {"--precision", "amp-fp16"})) ==
        fp32);
  CHECK(activations(with_more(k_bert, {"--precision", "fp32", "--torch", "1.11"})) ==
        activations(with_more(k_bert, {"--precision", "fp32"})));
  // A Llama-template model in half precision: softmax(dtype=float32) reads fp16 scores as they are
  // (2 B) and converts bf16 ones first (4 B). TinyLlama: 22 layers of 32 heads, 256 tokens.
  const std::vector<std::string> tiny = config_run("TinyLlama-1.1B-Chat-v1.0.json", {"--seq", "256"});
  for (const auto& [precision, bytes] :
       std::vector<std::pair<std::string, uint64_t>>{{"fp16", 2}, {"bf16", 4}}) {
    INFO(precision);
    CHECK(activations(with_more(tiny, {"--precision", precision, "--torch", "1.10"})) -
              activations(with_more(tiny, {"--precision", precision})) ==
          22ull * 32 * 256 * 256 * bytes);
  }
}

TEST_CASE("torch release before 2.0: zero_grad keeps the gradients unless --zero-grad says otherwise",
          "[cli][torch]") {
  const std::vector<std::string> bert = {"--model", "bert-large-uncased", "--seq",
                                         "512",     "--precision",        "fp32"};
  const json old = estimate(with_more(bert, {"--torch", "1.13"}));
  CHECK(old.at("inputs").at("zero_grad") == "zeros");
  CHECK(old.at("inputs").at("torch") == "1.13");
  // The gradients are alive when the weights are (from the step before): 4 B x 335,141,888.
  CHECK(old.at("timeline").at(0).at("gradients").get<uint64_t>() == 4ull * 335141888);
  CHECK(estimate(with_more(bert, {"--torch", "1.13", "--zero-grad", "none"})).at("inputs").at("zero_grad") ==
        "none");
  const json now = estimate(bert);
  CHECK(now.at("inputs").at("zero_grad") == "none");
  CHECK(now.at("inputs").at("torch") == "2.11");
  CHECK(now.at("timeline").at(0).at("gradients").get<uint64_t>() == 0);
}

TEST_CASE("autocast under full checkpointing caches every layer's half weights until the loss",
          "[cli][torch][timeline]") {
  // BERT-large: 24 layers of q, k, v, o (1024 x 1024) and the MLP (2 x 1024 x 4096), fp16.
  const uint64_t cache = 24ull * (4 * 1024 * 1024 + 2 * 1024 * 4096) * 2;
  const json j = estimate(with_more(k_bert, {"--precision", "amp-fp16", "--checkpointing", "full"}));
  const json& tl = j.at("timeline");
  CHECK(tl.at(1).at("phase") == "forward");
  CHECK(tl.at(1).at("transient").get<uint64_t>() == cache);
  CHECK(tl.at(2).at("phase") == "loss");
  CHECK(tl.at(2).at("transient").get<uint64_t>() == cache);
  // None without checkpointing (each copy is saved for backward, and counted there), nor in fp32.
  const json none = estimate(with_more(k_bert, {"--precision", "amp-fp16"}));
  CHECK(none.at("timeline").at(1).at("transient").get<uint64_t>() == 0);
  const json fp32 = estimate(with_more(k_bert, {"--precision", "fp32", "--checkpointing", "full"}));
  CHECK(fp32.at("timeline").at(1).at("transient").get<uint64_t>() == 0);
}

TEST_CASE("torch release before 1.11: log-softmax keeps its input until the loss's backward",
          "[cli][torch]") {
  const std::vector<std::string> gpt2 =
      config_run("gpt2.json", {"--seq", "1024", "--batch", "8", "--precision", "amp-bf16"});
  const json now = estimate(gpt2);
  const json old = estimate(with_more(gpt2, {"--torch", "1.10"}));
  // Beside the attention's softmax inputs (the activations' difference), the logits' fp32 upcast,
  // 8 x 1024 x 50,257 x 4 B, is still alive when cross-entropy's backward makes its two gradients.
  CHECK(now.at("peak_phase") == "backward");
  const uint64_t softmax_inputs = old.at("breakdown").at("activations").get<uint64_t>() -
                                  now.at("breakdown").at("activations").get<uint64_t>();
  CHECK(softmax_inputs == 12ull * 12 * 1024 * 1024 * 4 * 8);
  CHECK(old.at("timeline").at(3).at("bytes").get<uint64_t>() -
            now.at("timeline").at(3).at("bytes").get<uint64_t>() ==
        softmax_inputs + 8ull * 1024 * 50257 * 4);
  bool named = false;
  for (const json& row : old.at("layer_ledger"))
    named = named || row.at("name") ==
                         "[outside layers] logits upcast to fp32 (kept by torch < 1.11's log-softmax "
                         "backward)";
  CHECK(named);
}

TEST_CASE(
    "torch release before 2.0: eager attention, and before 1.13 its wheels' CUDA with kernels loaded eagerly",
    "[cli][torch]") {
  const std::vector<std::string> bert = {"--model", "bert-large-uncased", "--seq",
                                         "512",     "--precision",        "fp32"};
  const json old = estimate(with_more(bert, {"--torch", "1.13"}));
  CHECK(old.at("inputs").at("attention") == "eager");
  CHECK(old.at("inputs").at("cuda") == "13.0");
  CHECK(old.at("inputs").at("cuda_module_loading") == "lazy");
  CHECK(estimate(bert).at("inputs").at("attention") == "sdpa");
  const json v110 = estimate(with_more(bert, {"--torch", "1.10"}));
  CHECK(v110.at("inputs").at("cuda") == "11.3");
  CHECK(v110.at("inputs").at("cuda_module_loading") == "eager");
  CHECK(estimate(with_more(bert, {"--torch", "1.9"})).at("inputs").at("cuda") == "11.1");
  // A CUDA of 11.7 or later: lazy only where PyTorch (1.13 on) or CUDA itself (12.2 on) sets it.
  CHECK(estimate(with_more(bert, {"--torch", "1.12", "--cuda", "11.8"}))
            .at("inputs")
            .at("cuda_module_loading") == "eager");
  CHECK(estimate(with_more(bert, {"--torch", "1.12", "--cuda", "12.2"}))
            .at("inputs")
            .at("cuda_module_loading") == "lazy");
  CHECK(estimate(with_more(bert, {"--torch", "1.13", "--cuda", "11.8"}))
            .at("inputs")
            .at("cuda_module_loading") == "lazy");
  // The eagerly loaded kernels are in each GPU's context: more than under 2.11's lazy loading.
  CHECK(v110.at("fit").at(0).at("cuda_context").at("bytes").get<uint64_t>() >
        estimate(bert).at("fit").at(0).at("cuda_context").at("bytes").get<uint64_t>());
}
