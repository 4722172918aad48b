// Hugging Face's eager attention (the Llama template's eager_attention_forward, which Gemma 2 and
// the other Llama-style families copy) and Gemma 2's soft-capping, against the saved tensors
// bench/accuracy/softcap_saved.py measured with saved_tensors_hooks (torch 1.13 on the CPU; batch 1,
// 4 heads, seq 64, head_dim 16, vocab 1000):
//   bf16, no cap: softmax's fp32 output 65,536 B and the matmul's bf16 copy 32,768 B
//   bf16, cap 50: + tanh's output 32,768 B (bf16)       fp32, cap 50: + 65,536 B (fp32)
//   fp32, no cap: one fp32 copy 65,536 B (.to(float32) returns the same storage)
//   final soft-capping (cap 30): tanh's output 1 x 64 x 1000: 128,000 B bf16, 256,000 B fp32

#include <catch2/catch.hpp>

#include <string>

#include "core/memory/activations.hpp"

using namespace memplan;

namespace {

TransformerArch gemma2_like(const std::string& model_type, double attn_cap, double final_cap) {
  TransformerArch a;
  a.model_type = model_type;
  a.layers = 2;
  a.hidden = 64;
  a.heads = 4;
  a.kv_heads = 4;
  a.head_dim = 16;
  a.intermediate = 128;
  a.vocab = 1000;
  a.gated_mlp = true;
  a.activation = "gelu_pytorch_tanh";
  a.norm = "rmsnorm";
  a.attn_softcap = attn_cap;
  a.final_softcap = final_cap;
  return a;
}

ActivationOptions eager(bool bf16) {
  ActivationOptions o;
  o.batch = 1;
  o.seq = 64;
  o.attention = Attention::eager;
  if (bf16)
    o.act_cost = {2, 1};
  else
    o.act_cost = {4, 1};
  o.act_format = bf16 ? "bf16" : "fp32";
  return o;
}

// Bytes of the ledger's rows (one layer, or outside the layers) whose name starts with `prefix`.
uint64_t bytes_of(const std::vector<SavedTensor>& rows, const std::string& prefix) {
  uint64_t sum = 0;
  for (const SavedTensor& t : rows)
    if (t.name.rfind(prefix, 0) == 0) sum += t.bytes;
  return sum;
}

}  // namespace

TEST_CASE("eager attention of the Llama template: fp32 softmax and its half copy", "[activations][softcap]") {
  const ActivationLedger bf16 = transformer_activations(gemma2_like("llama", 0, 0), eager(true));
  CHECK(bytes_of(bf16.per_layer, "softmax probabilities") == 65536);
  CHECK(bytes_of(bf16.per_layer, "probabilities cast to") == 32768);
  const ActivationLedger fp32 = transformer_activations(gemma2_like("llama", 0, 0), eager(false));
  CHECK(bytes_of(fp32.per_layer, "softmax probabilities") == 65536);
  CHECK(bytes_of(fp32.per_layer, "probabilities cast to") == 0);
  // GPT-2 takes the softmax in the scores' dtype: one half copy.
  const ActivationLedger gpt2 = transformer_activations(gemma2_like("gpt2", 0, 0), eager(true));
  CHECK(bytes_of(gpt2.per_layer, "softmax probabilities") == 32768);
  CHECK(bytes_of(gpt2.per_layer, "probabilities cast to") == 0);
}

TEST_CASE("Gemma 2 soft-capping: tanh keeps the capped scores and logits", "[activations][softcap]") {
  const ActivationLedger bf16 = transformer_activations(gemma2_like("gemma2", 50, 30), eager(true));
  CHECK(bytes_of(bf16.per_layer, "soft-capped scores") == 32768);
  CHECK(bytes_of(bf16.outside_layers, "soft-capped logits") == 128000);
  const ActivationLedger fp32 = transformer_activations(gemma2_like("gemma2", 50, 30), eager(false));
  CHECK(bytes_of(fp32.per_layer, "soft-capped scores") == 65536);
  CHECK(bytes_of(fp32.outside_layers, "soft-capped logits") == 256000);
  // sdpa cannot soft-cap (and keeps no scores); without caps nothing is added.
  ActivationOptions sdpa = eager(true);
  sdpa.attention = Attention::sdpa;
  CHECK(bytes_of(transformer_activations(gemma2_like("gemma2", 50, 30), sdpa).per_layer, "soft-capped") == 0);
  CHECK(bytes_of(transformer_activations(gemma2_like("gemma2", 0, 0), eager(true)).per_layer,
                 "soft-capped") == 0);
}
