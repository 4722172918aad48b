// The training replay's parameter tensors of MoE models (parameter_tensors.hpp): transformers v5's
// fused experts (gate_up_proj [E, 2I, H], down_proj [E, H, I]) at moe_intermediate_size, shared
// experts, routers, dense first layers and latent attention. Expected numbers worked out by hand.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "../cli/cli_harness.hpp"
#include "core/memory/parameter_tensors.hpp"
#include "core/models/hf_config.hpp"
#include "core/models/parameter_count.hpp"

using namespace memplan;

namespace {

const std::string k_moe_tensors_dir = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/";

struct Sum {
  uint64_t elements = 0;
  uint64_t tensors = 0;
};

Sum replayed(const ModelSpec& m) {
  Sum s;
  for (const TensorShape& t : parameter_shapes(m).in_order()) {
    s.elements += t.elements();
    ++s.tensors;
  }
  return s;
}

}  // namespace

TEST_CASE("issue 27: the training replay's parameter tensors add up to the MoE model's count",
          "[step_events][moe][issue27]") {
  SECTION("Qwen3-30B-A3B, every tensor by hand") {
    // hidden 2048, 48 layers, 32 heads and 4 KV heads of 128, 128 experts of 768, vocab 151936.
    // Per layer: q 4096x2048 = 8,388,608; k, v 512x2048 = 1,048,576 each; o 8,388,608;
    // q_norm, k_norm 128 each; gate_up_proj 128x1536x2048 = 402,653,184; down_proj
    // 128x2048x768 = 201,326,592; router 128x2048 = 262,144; two norms 2,048 each:
    // 18,874,368 + 256 + 603,979,776 + 262,144 + 4,096 = 623,120,640 in 11 tensors.
    // 48 layers: 29,909,790,720; embedding and untied head 151936x2048 = 311,164,928 each; final
    // norm 2,048: 30,532,122,624 in 48 x 11 + 3 = 531 tensors.
    const ModelSpec m = read_hf_config(k_moe_tensors_dir + "Qwen3-30B-A3B.json");
    const Sum s = replayed(m);
    CHECK(s.elements == 30532122624ull);
    CHECK(m.parameters == 30532122624ull);
    CHECK(s.tensors == 531);
    // The checkpoint stores each expert's three matrices apart (the counter's tensor count, the
    // safetensors index's 18,867): 48 x (128 x 3 + 1 + 4 + 2 + 2) + 3.
    CHECK(count_parameters(*m.arch).tensors == 18867);
    const ParameterShapes p = parameter_shapes(m);
    REQUIRE(p.layer.size() == 11);
    CHECK(p.layer[6].elements() == 402653184ull);  // gate_up_proj, after q, k, v, o, q_norm, k_norm
    CHECK(p.layer[7].elements() == 201326592ull);  // down_proj
    CHECK(p.layer[8].elements() == 262144ull);     // Qwen3MoeSparseMoeBlock: experts, then gate
  }
  struct Case {
    const char* file;
    uint64_t tensors;  // transformers v5's parameters
  };
  // Qwen1.5-MoE-A2.7B, 24 layers: q, k, v with biases and o (7), gate (1), experts (2),
  // shared_expert (3), shared_expert_gate (1), 2 norms = 16; + embedding, norm, head: 387.
  // OLMoE, 16 layers: 4 + q_norm, k_norm (2) + gate (1) + experts (2) + 2 norms = 11: 179.
  // Mixtral-8x7B, 32 layers: 4 + 1 + 2 + 2 = 9: 291.
  // DeepSeek-V2.5, 60 layers, the first dense: attention q_a, q_a_layernorm, q_b, kv_a,
  // kv_a_layernorm, kv_b, o (7); the dense layer 7 + 3 + 2 = 12, each MoE layer 7 + experts (2) +
  // gate (1) + shared_experts (3) + 2 = 15: 12 + 59 x 15 + 3 = 900.
  for (const Case& c : {Case{"Qwen1.5-MoE-A2.7B", 387}, Case{"OLMoE-1B-7B-0125-Instruct", 179},
                        Case{"Mixtral-8x7B-v0.1", 291}, Case{"DeepSeek-V2.5", 900}}) {
    INFO(c.file);
    const ModelSpec m = read_hf_config(k_moe_tensors_dir + c.file + ".json");
    const Sum s = replayed(m);
    CHECK(s.elements == m.parameters);
    CHECK(s.tensors == c.tensors);
  }
  SECTION("Qwen1.5-MoE-A2.7B matches its published total") {
    // 14,315,784,192: keras-hub qwen_moe_presets.py (see test_families_real.cpp).
    CHECK(replayed(read_hf_config(k_moe_tensors_dir + "Qwen1.5-MoE-A2.7B.json")).elements == 14315784192ull);
  }
  SECTION("the CLI's peak holds the parameters term") {
    const auto r = memplan::test::run_cli({"estimate", "--config", k_moe_tensors_dir + "Qwen3-30B-A3B.json",
                                           "--precision", "bf16", "--optimizer", "adamw", "--lora", "16",
                                           "--seq", "512", "--format", "json"});
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    // bf16 weights: 2 B x 30,532,122,624 = 61,064,245,248 B of base weights at least.
    CHECK(j["breakdown"]["parameters"].get<uint64_t>() >= 61064245248ull);
    CHECK(j["peak_bytes"].get<uint64_t>() >= j["breakdown"]["parameters"].get<uint64_t>());
    CHECK(j["reserved_bytes"].get<uint64_t>() >= j["peak_bytes"].get<uint64_t>());
  }
}
