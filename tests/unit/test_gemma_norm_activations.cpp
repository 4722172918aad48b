// Gemma's RMSNorm and Gemma 2's four norms a layer, against the storages
// bench/frameworks/measure_saved.py recorded with saved_tensors_hooks (torch 2.15, transformers
// 5.24.0 on CPU; 2 layers, hidden 64, 4 heads of 16, 2 kv heads, intermediate 160, vocabulary 1024,
// batch 4 x seq 64, eager attention, bf16):
//   each of input_layernorm, post_attention_layernorm, pre_feedforward_layernorm and
//   post_feedforward_layernorm keeps x.float() (65,536 B), rsqrt (1,024 B) and the normalised
//   tensor in fp32 (65,536 B: GemmaRMSNorm multiplies by 1 + weight before casting back)
//   with LoRA r=8 on q,v in fp32, tanh(scores / 50) keeps its output, 4 x 4 x 64 x 64 (262,144 B)

#include <catch2/catch.hpp>

#include <string>

#include "core/memory/activations.hpp"

using namespace memplan;

namespace {

TransformerArch tiny_gemma2() {
  TransformerArch a;
  a.model_type = "gemma2";
  a.layers = 2;
  a.hidden = 64;
  a.heads = 4;
  a.kv_heads = 2;
  a.head_dim = 16;
  a.intermediate = 160;
  a.vocab = 1024;
  a.gated_mlp = true;
  a.activation = "gelu_pytorch_tanh";
  a.norm = "rmsnorm";
  a.causal = true;
  a.attn_softcap = 50.0;
  a.final_softcap = 30.0;
  return a;
}

ActivationOptions gemma_opts(const char* format, uint32_t bytes) {
  ActivationOptions o;
  o.batch = 4;
  o.seq = 64;
  o.attention = Attention::eager;
  o.act_cost = {bytes, 1};
  o.act_format = format;
  o.fp32_logits = true;
  return o;
}

const SavedTensor* gemma_row(const std::vector<SavedTensor>& rows, const std::string& name) {
  for (const SavedTensor& r : rows)
    if (r.name == name) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("gemma 2: four RMSNorms a layer, each multiplying in fp32", "[activations]") {
  const ActivationLedger l = transformer_activations(tiny_gemma2(), gemma_opts("bf16", 2));
  for (const char* norm : {"attention norm", "post-attention norm (attention output)", "MLP norm",
                           "post-feedforward norm (MLP output)"}) {
    INFO(norm);
    const SavedTensor* in = gemma_row(l.per_layer, std::string(norm) + " input upcast to fp32");
    const SavedTensor* rsqrt = gemma_row(l.per_layer, std::string(norm) + " rsqrt");
    const SavedTensor* out =
        gemma_row(l.per_layer, std::string(norm) + " normalised (weight-multiply input)");
    REQUIRE(in);
    REQUIRE(rsqrt);
    REQUIRE(out);
    CHECK(in->bytes == 65536);
    CHECK(rsqrt->bytes == 1024);
    CHECK(out->bytes == 65536);
    CHECK(out->format == "fp32");
  }
  // Llama's RMSNorm casts back first: its normalised tensor is bf16, and it has two norms a layer.
  TransformerArch llama = tiny_gemma2();
  llama.model_type = "llama";
  const ActivationLedger m = transformer_activations(llama, gemma_opts("bf16", 2));
  const SavedTensor* out = gemma_row(m.per_layer, "attention norm normalised (weight-multiply input)");
  REQUIRE(out);
  CHECK(out->format == "bf16");
  CHECK_FALSE(gemma_row(m.per_layer, "post-attention norm (attention output) rsqrt"));
}

TEST_CASE("gemma 2 with LoRA: the soft-capped scores stay for q's gradient", "[activations]") {
  ActivationOptions o = gemma_opts("fp32", 4);
  LoraTargets t;
  t.rank = 8;
  t.q = t.v = true;
  o.lora = t;
  const ActivationLedger l = transformer_activations(tiny_gemma2(), o);
  const SavedTensor* tanh = gemma_row(l.per_layer, "soft-capped scores (tanh output, kept by tanh)");
  REQUIRE(tanh);
  CHECK(tanh->bytes == 262144);
}
