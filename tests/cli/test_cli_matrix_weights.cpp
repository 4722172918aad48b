// The consistency matrix, weights and KV cache: every model the repository ships x every weight format
// x both modes, each number checked against arithmetic done here from the published counts and the
// architecture in data/model_presets.json, never against memplan's own output.

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "matrix_harness.hpp"

using memplan::test::hf_config;
using memplan::test::json_of;
using memplan::test::preset_facts;
using memplan::test::term;

namespace {

uint64_t dtype_bytes(const std::string& torch_dtype) {
  if (torch_dtype == "float16" || torch_dtype == "bfloat16") return 2;
  return 4;  // float32, and presets without a checkpoint (the lesson's fp32)
}

// A weight format's bits per weight: the format's own rate (published: llama.cpp's ggml-common.h block
// sizes, bitsandbytes' 64-weight absmax blocks) is a floor on the whole model, and no format stores any
// weight in more than 16 bits (what stays unquantised stays in the checkpoint's half format).
struct FormatRate {
  const char* name;
  double floor_bits;
};
const FormatRate k_formats[] = {
    {"int8", 8.0},      {"fp8", 8.0},      {"int4", 4.0},      {"nf4", 4.5},     {"nf4-dq", 4.127},
    {"gptq-4bit", 4.0}, {"awq-4bit", 4.0}, {"q8_0", 8.5},      {"q6_k", 6.5625}, {"q5_k_m", 5.5},
    {"q4_k_m", 4.5},    {"q4_0", 4.5},     {"q3_k_m", 3.4375}, {"q2_k", 2.625},
};

std::vector<std::string> infer(const std::string& flag, const std::string& model) {
  return {"estimate", flag, model, "--mode", "infer", "--gpu", "h200"};
}

}  // namespace

TEST_CASE("matrix: every preset's weights are its published count x the bytes of the format",
          "[cli][matrix]") {
  for (const auto& p : preset_facts()) {
    INFO(p.id);
    // The default is the checkpoint's torch_dtype (issue 27: a preset counted fp32 weights where the
    // checkpoint and its config.json are bf16).
    CHECK(term(json_of(infer("--model", p.id)), "parameters") == p.parameters * dtype_bytes(p.torch_dtype));
    for (const auto& [precision, bytes] : std::map<std::string, uint64_t>{{"fp32", 4}, {"bf16", 2}}) {
      auto args = infer("--model", p.id);
      args.insert(args.end(), {"--precision", precision});
      CHECK(term(json_of(args), "parameters") == p.parameters * bytes);
    }
  }
}

TEST_CASE("matrix: quantised weights lie between the format's rate and 16 bits, in the order of the bits",
          "[cli][matrix][many-runs]") {
  // Presets and the MoE test configs (issue 27: a llama.cpp type on a fine-grained MoE counted every expert
  // at the dense width, Qwen3-30B-A3B 131.7 GiB).
  std::vector<std::pair<std::string, std::string>> models;
  for (const auto& p : preset_facts())
    if (!p.arch.is_null() && p.arch.value("causal", true)) models.emplace_back("--model", p.id);
  for (const char* c : {"Qwen3-30B-A3B.json", "Mixtral-8x7B-v0.1.json", "Qwen1.5-MoE-A2.7B.json",
                        "OLMoE-1B-7B-0125-Instruct.json", "Qwen2-57B-A14B.json", "DeepSeek-V2.5.json"})
    models.emplace_back("--config", hf_config(c));
  for (const auto& [flag, model] : models) {
    INFO(model);
    auto fp32 = infer(flag, model);
    fp32.insert(fp32.end(), {"--precision", "fp32"});
    const auto base = json_of(fp32);
    const uint64_t params = base.at("model").at("parameters").get<uint64_t>();
    REQUIRE(term(base, "parameters") == params * 4);
    for (const FormatRate& f : k_formats) {
      INFO(f.name);
      auto args = infer(flag, model);
      args.insert(args.end(), {"--quantize", f.name});
      const uint64_t bytes = term(json_of(args), "parameters");
      CHECK(static_cast<double>(bytes) >= static_cast<double>(params) * f.floor_bits / 8 * 0.99);
      CHECK(bytes <= params * 2 + params / 100);
    }
    // More bits never fewer bytes: q2_k <= q3_k_m <= q4_k_m <= q5_k_m <= q6_k <= q8_0 <= bf16.
    uint64_t last = 0;
    for (const char* name : {"q2_k", "q3_k_m", "q4_k_m", "q5_k_m", "q6_k", "q8_0"}) {
      INFO(name);
      auto args = infer(flag, model);
      args.insert(args.end(), {"--quantize", name});
      const uint64_t bytes = term(json_of(args), "parameters");
      CHECK(bytes >= last);
      last = bytes;
    }
    CHECK(last <= params * 2);
  }
}

TEST_CASE("matrix: every causal preset's KV cache is 2 x layers x kv heads x head_dim x tokens x bytes",
          "[cli][matrix]") {
  for (const auto& p : preset_facts()) {
    if (p.arch.is_null() || !p.arch.value("causal", true)) continue;
    INFO(p.id);
    const auto& a = p.arch;
    const uint64_t layers = a.at("layers"), kv_heads = a.at("kv_heads"), head_dim = a.at("head_dim");
    const uint64_t seq = std::min<uint64_t>(2048, a.at("max_positions").get<uint64_t>()), batch = 2;
    // Sliding-window layers (window_layers of them) cache at most their window.
    const uint64_t window = a.value("sliding_window", uint64_t{0});
    const uint64_t windowed = window ? a.value("window_layers", layers) : 0;
    const uint64_t tokens = (layers - windowed) * seq + windowed * std::min(seq, window);
    for (const auto& [kv, bytes] : std::map<std::string, uint64_t>{{"bf16", 2}, {"fp8", 1}}) {
      INFO(kv);
      auto args = infer("--model", p.id);
      args.insert(args.end(),
                  {"--precision", "bf16", "--kv-format", kv, "--seq", std::to_string(seq), "--batch", "2"});
      CHECK(term(json_of(args), "kv_cache") == 2 * tokens * kv_heads * head_dim * batch * bytes);
    }
  }
}
