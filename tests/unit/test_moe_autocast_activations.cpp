// Mixture-of-experts layers and encoder heads under CUDA autocast, against the storages
// bench/frameworks/measure_saved.py recorded with saved_tensors_hooks (torch 2.15, transformers
// 5.24.0, CUDA autocast's cast lists applied on the CPU by bench/frameworks/cuda_autocast.py;
// Mixtral with 2 layers, hidden 64, 4 heads of 16, 2 kv heads, 4 experts of width 160, top 2,
// vocabulary 1024, batch 4 x seq 64 = 256 tokens, sdpa):
//   each layer's routed experts (torch._grouped_mm, no autocast kernel) in fp32: the gate/up
//   output 512 x 320 (655,360 B), silu 512 x 160 and the product 512 x 160 (327,680 B each), the
//   gathered input 512 x 64 and the down output 512 x 64 (131,072 B each)
//   one bf16 copy of the MLP norm's output (the router's input, 32,768 B), none for the experts
//   autocast's weight copies: q 8,192 + k 4,096 + v 4,096 + o 8,192 + router 512 B per layer and
//   the LM head 131,072 B: 181,248 B
// BertForMaskedLM (same widths, vocabulary 1024): the cross-entropy keeps the bf16 log-softmax
// (524,288 B) and nll_loss's fp32 copy of it (1,048,576 B); the head's dense (8,192 B) and decoder
// (131,072 B) weight copies. BertForSequenceClassification, fp32, LoRA r=8 on q,v with reentrant
// full checkpointing (enable_input_require_grads): the embedding LayerNorm keeps its input
// (65,536 B) and statistics (2,048 B); without checkpointing it keeps nothing.

#include <catch2/catch.hpp>

#include <string>

#include "core/memory/activations.hpp"

using namespace memplan;

namespace {

TransformerArch tiny_mixtral() {
  TransformerArch a;
  a.model_type = "mixtral";
  a.layers = 2;
  a.hidden = 64;
  a.heads = 4;
  a.kv_heads = 2;
  a.head_dim = 16;
  a.intermediate = 160;
  a.expert_intermediate = 160;
  a.experts = 4;
  a.experts_per_token = 2;
  a.vocab = 1024;
  a.gated_mlp = true;
  a.activation = "silu";
  a.norm = "rmsnorm";
  a.causal = true;
  return a;
}

ActivationOptions opts(bool amp) {
  ActivationOptions o;
  o.batch = 4;
  o.seq = 64;
  o.attention = Attention::sdpa;
  o.act_cost = {2, 1};
  o.act_format = "bf16";
  o.autocast = amp;
  o.fp32_logits = true;
  return o;
}

uint64_t row_bytes(const std::vector<SavedTensor>& rows, const std::string& name, const char* format) {
  for (const SavedTensor& r : rows)
    if (r.name == name) {
      CHECK(r.format == format);
      return r.bytes;
    }
  FAIL("no row " << name);
  return 0;
}

uint64_t rows_containing(const std::vector<SavedTensor>& rows, const std::string& part) {
  uint64_t n = 0;
  for (const SavedTensor& r : rows)
    if (r.name.find(part) != std::string::npos) ++n;
  return n;
}

}  // namespace

TEST_CASE("moe under autocast: grouped_mm experts in fp32, no input or weight copies", "[activations]") {
  const ActivationLedger l = transformer_activations(tiny_mixtral(), opts(true));
  const auto& r = l.per_layer;
  CHECK(row_bytes(r, "gate projection output", "fp32") + row_bytes(r, "up projection output", "fp32") ==
        655360);
  CHECK(row_bytes(r, "silu(gate)", "fp32") == 327680);
  CHECK(row_bytes(r, "silu(gate) x up (down projection input)", "fp32") == 327680);
  CHECK(row_bytes(r, "routed tokens' inputs (gathered copy, the experts' input)", "fp32") == 131072);
  CHECK(row_bytes(r, "experts' down output (kept by the routing-weight multiply)", "fp32") == 131072);
  CHECK(rows_containing(r, "MLP norm output (MLP input) cast to bf16") == 1);
  CHECK(l.fixed_bytes == 181248);

  // Pure bf16 (no autocast): the experts compute in bf16, the same shapes at half the bytes.
  const ActivationLedger b = transformer_activations(tiny_mixtral(), opts(false));
  CHECK(row_bytes(b.per_layer, "silu(gate)", "bf16") == 163840);
  CHECK(row_bytes(b.per_layer, "routed tokens' inputs (gathered copy, the experts' input)", "bf16") == 65536);
  CHECK(b.fixed_bytes == 0);
}

TEST_CASE("moe under autocast: Qwen2-MoE's shared expert stays bf16", "[activations]") {
  TransformerArch a = tiny_mixtral();
  a.model_type = "qwen2_moe";
  a.expert_intermediate = 64;
  a.shared_intermediate = 160;
  a.shared_experts = 1;
  const ActivationLedger l = transformer_activations(a, opts(true));
  // Routed: 512 x 64 fp32 per tensor (131,072 B); shared: 256 x 160 bf16 (81,920 B).
  CHECK(row_bytes(l.per_layer, "silu(gate) (routed experts)", "fp32") == 131072);
  CHECK(row_bytes(l.per_layer, "silu(gate) (shared expert)", "bf16") == 81920);
  // The router, the shared expert's gate and up projections and its sigmoid gate: 4 input copies.
  CHECK(rows_containing(l.per_layer, "MLP norm output (MLP input) cast to bf16") == 4);
}

namespace {

TransformerArch tiny_bert(const char* head) {
  TransformerArch a;
  a.model_type = "bert";
  a.layers = 2;
  a.hidden = 64;
  a.heads = 4;
  a.intermediate = 256;
  a.vocab = 1024;
  a.activation = "gelu";
  a.norm = "layernorm";
  a.norm_first = false;
  a.causal = false;
  a.bias = true;
  a.encoder_head = head;
  return a;
}

}  // namespace

TEST_CASE("mlm head under autocast: bf16 log-softmax and nll_loss's fp32 copy", "[activations]") {
  const TransformerArch a = tiny_bert("mlm");
  ActivationOptions o = opts(true);
  o.fp32_logits = false;
  const ActivationLedger l = transformer_activations(a, o);
  CHECK(row_bytes(l.outside_layers, "log-softmax of logits (bf16, kept by log_softmax)", "bf16") == 524288);
  CHECK(row_bytes(l.outside_layers, "log-softmax cast to fp32 by autocast (kept by nll_loss)", "fp32") ==
        1048576);
  // Weight copies: each layer's q, k, v, o (4 x 64 x 64) and MLP (2 x 64 x 256) = 49,152 elements,
  // x 2 layers, + the head's dense 4,096 and decoder 65,536: 167,936 elements x 2 B.
  CHECK(l.fixed_bytes == 2 * (2 * 49152 + 4096 + 65536));
}

TEST_CASE("lora with reentrant full checkpointing: the embedding norm's input needs a gradient",
          "[activations]") {
  TransformerArch a = tiny_bert("classification");
  a.labels = 3;
  ActivationOptions o = opts(false);
  o.act_cost = {4, 1};
  o.act_format = "fp32";
  o.fp32_logits = false;
  LoraTargets t;
  t.rank = 8;
  t.q = t.v = true;
  o.lora = t;
  CHECK(rows_containing(transformer_activations(a, o).outside_layers, "embedding norm") == 0);
  o.checkpointing = Checkpointing::full;
  const ActivationLedger l = transformer_activations(a, o);
  CHECK(row_bytes(l.outside_layers, "embedding norm input", "fp32") == 65536);
  CHECK(row_bytes(l.outside_layers, "embedding norm mean and rstd", "fp32") == 2048);
}
