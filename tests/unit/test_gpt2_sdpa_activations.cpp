// GPT-2's fused c_attn under sdpa and its eager mask under reentrant checkpointing, against the
// storages bench/frameworks/measure_saved.py recorded with saved_tensors_hooks (torch 2.15,
// transformers 5.24.0 on CPU; 2 layers, hidden 64, 4 heads, intermediate 256, vocabulary 1024,
// batch 4 x seq 64, fp32):
//   sdpa keeps q, a view of the c_attn output 4 x 64 x 192 (196,608 B: all of it stays), and k and
//   v as the DynamicCache's torch.cat copies (65,536 B each)
//   eager attention with full checkpointing: the 4D mask 4 x 1 x 64 x 64 (65,536 B), saved once
//   by the reentrant checkpoint with each block's input

#include <catch2/catch.hpp>

#include <string>

#include "core/memory/activations.hpp"

using namespace memplan;

namespace {

TransformerArch gpt2_fused() {
  TransformerArch a;
  a.model_type = "gpt2";
  a.layers = 2;
  a.hidden = 64;
  a.heads = 4;
  a.intermediate = 256;
  a.vocab = 1024;
  a.activation = "gelu_new";
  a.python_gelu = true;
  a.norm = "layernorm";
  a.fused_qkv = true;
  a.bias = true;
  a.causal = true;
  a.tied_embeddings = true;
  a.position_embedding = "learned";
  a.max_positions = 1024;
  return a;
}

ActivationOptions gpt2_opts(Attention attn) {
  ActivationOptions o;
  o.batch = 4;
  o.seq = 64;
  o.attention = attn;
  return o;
}

uint64_t gpt2_row(const std::vector<SavedTensor>& rows, const std::string& name) {
  for (const SavedTensor& r : rows)
    if (r.name == name) return r.bytes;
  return 0;
}

}  // namespace

TEST_CASE("gpt-2 sdpa: q is a view of c_attn's output, k and v the cache's copies", "[activations]") {
  const ActivationLedger l = transformer_activations(gpt2_fused(), gpt2_opts(Attention::sdpa));
  CHECK(gpt2_row(l.per_layer, "c_attn output (q is a view of it: sdpa keeps all of it)") == 196608);
  CHECK(gpt2_row(l.per_layer, "k (the DynamicCache's cat copy)") == 65536);
  CHECK(gpt2_row(l.per_layer, "v (the DynamicCache's cat copy)") == 65536);
  CHECK(gpt2_row(l.per_layer, "q") == 0);
  // transformers before 5.0: q, k and v as sdpa's three inputs of their own widths.
  ActivationOptions old = gpt2_opts(Attention::sdpa);
  old.transformers = TransformersRelease{4, 48};
  CHECK(gpt2_row(transformer_activations(gpt2_fused(), old).per_layer, "q") == 65536);
}

TEST_CASE("gpt-2 eager with full checkpointing keeps the 4D mask once", "[activations]") {
  ActivationOptions o = gpt2_opts(Attention::eager);
  o.checkpointing = Checkpointing::full;
  const ActivationLedger l = transformer_activations(gpt2_fused(), o);
  CHECK(gpt2_row(l.outside_layers, "eager attention's 4D mask (kept by the reentrant checkpoint)") == 65536);
  CHECK(gpt2_row(transformer_activations(gpt2_fused(), gpt2_opts(Attention::eager)).outside_layers,
                 "eager attention's 4D mask (kept by the reentrant checkpoint)") == 0);
}
