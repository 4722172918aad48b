// peft LoRA under CUDA autocast: each adapter keeps a half copy of its input of its own, against
// the storages bench/frameworks/measure_saved.py recorded with saved_tensors_hooks (torch 2.15,
// transformers 5.24.0, peft 0.21.2, CUDA autocast's lists on the CPU; Llama with 2 layers, hidden
// 64, 4 heads of 16, 2 kv heads, intermediate 160, LoRA r=8 on every linear layer, amp-bf16,
// batch 4 x seq 64, sdpa): the o adapter's input is a copy (32,768 B) beside sdpa's own output
// (32,768 B): peft casts the bf16 input to the fp32 adapter (`_cast_input_dtype`) and A's Linear
// casts it back.

#include <catch2/catch.hpp>

#include <string>

#include "core/memory/activations.hpp"

using namespace memplan;

TEST_CASE("peft under autocast: the o adapter copies sdpa's half output", "[activations]") {
  TransformerArch a;
  a.model_type = "llama";
  a.layers = 2;
  a.hidden = 64;
  a.heads = 4;
  a.kv_heads = 2;
  a.head_dim = 16;
  a.intermediate = 160;
  a.vocab = 1024;
  a.gated_mlp = true;
  a.activation = "silu";
  a.norm = "rmsnorm";
  a.causal = true;
  ActivationOptions o;
  o.batch = 4;
  o.seq = 64;
  o.attention = Attention::sdpa;
  o.act_cost = {2, 1};
  o.act_format = "bf16";
  o.autocast = true;
  o.fp32_logits = true;
  LoraTargets t;
  t.rank = 8;
  t.q = t.k = t.v = t.o = t.gate = t.up = t.down = true;
  o.lora = t;
  const ActivationLedger l = transformer_activations(a, o);
  uint64_t out = 0, copy = 0;
  for (const SavedTensor& r : l.per_layer) {
    if (r.name == "attention output") out = r.bytes;
    if (r.name == "attention output: o LoRA input cast to bf16") copy = r.bytes;
  }
  CHECK(out == 32768);
  CHECK(copy == 32768);
}
