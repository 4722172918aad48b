// The activation ledger and the KV cache, checked with hand arithmetic written out in comments.
// (The comparison with bytes measured by PyTorch is in test_torch_reference.cpp.)

#include <catch2/catch.hpp>

#include <memplan/error.hpp>
#include "core/memory/activations.hpp"
#include "core/memory/kv_cache.hpp"
#include "core/models/arch_layout.hpp"

using namespace memplan;

namespace {

// A tiny GPT-2: 2 layers, hidden 64, 4 heads (head_dim 16), MLP 256 (GELU), vocab 100, fused qkv.
TransformerArch tiny_gpt() {
  TransformerArch a;
  a.model_type = "gpt2";
  a.layers = 2;
  a.hidden = 64;
  a.heads = 4;
  a.intermediate = 256;
  a.vocab = 100;
  a.activation = "gelu_new";
  a.norm = "layernorm";
  a.fused_qkv = true;
  a.bias = true;
  a.tied_embeddings = true;
  a.position_embedding = "learned";
  a.max_positions = 16;
  return a;
}

ActivationOptions fp32_opts(uint64_t batch, uint64_t seq, Attention attn) {
  ActivationOptions o;
  o.batch = batch;
  o.seq = seq;
  o.attention = attn;
  return o;
}

ActivationOptions amp_bf16(uint64_t batch, uint64_t seq, Attention attn) {
  ActivationOptions o = fp32_opts(batch, seq, attn);
  o.autocast = true;
  o.act_cost = {2, 1};
  o.act_format = "bf16";
  return o;
}

uint64_t sum_rows(const std::vector<SavedTensor>& rows, Role role) {
  uint64_t s = 0;
  for (const SavedTensor& r : rows)
    if (r.role == role) s += r.bytes;
  return s;
}

}  // namespace

TEST_CASE("MLP: hidden widths in the recipe's format, input copy under autocast", "[activations]") {
  ActivationOptions o;
  o.batch = 64;
  // fp32: ReLU outputs 512 + 256 floats per row = 3072 B; x 64 rows.
  ActivationLedger l = mlp_activations({784, 512, 256, 10}, o);
  CHECK(l.bytes_per_sample == 3072);
  CHECK(l.total_bytes == 64 * 3072);
  CHECK(l.fixed_bytes == 0);
  // amp bf16: the first Linear keeps a bf16 copy of the 784 inputs: (784 + 512 + 256) x 2 = 3104 B.
  o.autocast = true;
  o.act_cost = {2, 1};
  o.act_format = "bf16";
  l = mlp_activations({784, 512, 256, 10}, o);
  CHECK(l.bytes_per_sample == 3104);
  // bf16 copies of the weights after the first: (512 x 256 + 256 x 10) x 2 = 267264 B.
  CHECK(l.fixed_bytes == 267264);
  // Two widths: no hidden layer, nothing kept in fp32.
  CHECK(mlp_activations({10, 1}, ActivationOptions{}).bytes_per_sample == 0);
  CHECK_THROWS_WITH(mlp_activations({10}, o), Catch::Contains("mlp: needs at least two widths"));
  CHECK_THROWS_WITH(mlp_activations({10, 0, 3}, o), Catch::Contains("width is 0"));
}

TEST_CASE("decoder, fp32, eager attention: the GPT-2 ledger", "[activations]") {
  // Per token per layer, in floats: ln_1 input 64 + mean/rstd 2, c_attn input 64, q k v copies
  // 3 x 64, softmax 4 heads x 16 = 64, c_proj input 64, ln_2 input 64 + 2, c_fc input 64,
  // GELU input 256 and output 256 = 16 x 64 + 4 + 64 = 1092 floats = 4368 B.
  ActivationLedger l = transformer_activations(tiny_gpt(), fp32_opts(1, 16, Attention::eager));
  CHECK(l.layer_bytes == 16 * 4368);
  CHECK(l.first_layer_bytes == l.layer_bytes);  // fed by the embeddings: layer 0 is like the rest
  CHECK(sum_rows(l.per_layer, Role::saved) == l.layer_bytes);
  // Outside: ln_f input 64 + 2, lm_head input 64 = 130 floats = 520 B; log-softmax 100 floats
  // = 400 B saved; the logits (100 floats) held.
  CHECK(sum_rows(l.outside_layers, Role::saved) == 16 * (520 + 400));
  CHECK(sum_rows(l.outside_layers, Role::held) == 16 * 400);
  CHECK(l.saved_bytes_per_sample == 16 * (2 * 4368 + 520 + 400));
  CHECK(l.bytes_per_sample == 16 * (2 * 4368 + 520 + 400 + 400));
  CHECK(l.total_bytes == l.bytes_per_sample);
  CHECK(l.fixed_bytes == 0);
  CHECK(l.per_layer.at(0).shape == "1 x 16 x 64");
}

TEST_CASE("decoder, amp bf16 on CUDA: fp32 residual, bf16 matmuls, fp32 softmax", "[activations]") {
  // Per token per layer: fp32 ln inputs 2 x 64 + stats 4 floats = 528 B; bf16 c_attn input copy,
  // q k v, c_proj input, c_fc input copy 6 x 64 + GELU 2 x 256 = 896 el = 1792 B; softmax in
  // fp32 64 x 4 B = 256 B plus its bf16 copy for the PV matmul 128 B. = 2704 B.
  ActivationLedger l = transformer_activations(tiny_gpt(), amp_bf16(1, 16, Attention::eager));
  CHECK(l.layer_bytes == 16 * 2704);
  // ln_f fp32 (64 + 2) x 4 = 264, lm_head input bf16 128; logits bf16 200 held. Cross-entropy
  // on the bf16 logits: log_softmax(x, dim, x.dtype) keeps its bf16 output (200) and nll_loss, on
  // CUDA autocast's fp32 list, an fp32 copy of it (400).
  CHECK(sum_rows(l.outside_layers, Role::saved) == 16 * (264 + 128 + 200 + 400));
  CHECK(sum_rows(l.outside_layers, Role::held) == 16 * 200);
  // Weight copies: per layer 64 x 192 + 64 x 64 + 2 x 64 x 256 = 49152, x 2 layers, + tied head
  // 100 x 64 = 104704 elements x 2 B.
  CHECK(l.fixed_bytes == 2 * (2 * 49152 + 6400));
  // An HF-style fp32 upcast of the logits adds 100 x 4 B held per token.
  ActivationOptions o = amp_bf16(1, 16, Attention::eager);
  o.fp32_logits = true;
  CHECK(sum_rows(transformer_activations(tiny_gpt(), o).outside_layers, Role::held) == 16 * (200 + 400));
}

TEST_CASE("sdpa keeps no s x s matrix: q k v, output and log-sum-exp", "[activations]") {
  // Eager per token per layer 1092 floats; sdpa drops the 64 probabilities and adds a 4-float
  // log-sum-exp (one per head): 1032 floats = 4128 B. GPT-2's q is a view of the c_attn output
  // (q, k, v wide: the same bytes as the three), and k and v are the DynamicCache's copies: 128
  // floats more (test_gpt2_sdpa_activations.cpp), 4640 B.
  ActivationLedger l = transformer_activations(tiny_gpt(), fp32_opts(1, 16, Attention::sdpa));
  CHECK(l.layer_bytes == 16 * 4640);
  // Grouped-query attention: k and v at kv_heads x head_dim = 1 x 16 instead of 64, their cache
  // copies likewise.
  TransformerArch gqa = tiny_gpt();
  gqa.kv_heads = 1;
  ActivationLedger g = transformer_activations(gqa, fp32_opts(1, 16, Attention::sdpa));
  CHECK(g.layer_bytes == 16 * (4128 - 2 * (64 - 16) * 4 + 2 * 16 * 4));
  // On the CPU runtime of torch 1.13 sdpa is the math path: same as eager.
  ActivationOptions cpu = fp32_opts(1, 16, Attention::sdpa);
  cpu.runtime = Runtime::cpu_torch113;
  CHECK(transformer_activations(tiny_gpt(), cpu).layer_bytes == 16 * 4368);
}

TEST_CASE("checkpointing: full keeps one input per layer, selective drops the s x s", "[activations]") {
  ActivationOptions o = fp32_opts(1, 16, Attention::eager);
  o.checkpointing = Checkpointing::full;
  ActivationLedger f = transformer_activations(tiny_gpt(), o);
  CHECK(f.layer_bytes == 16 * 64 * 4);    // the layer's input, fp32
  CHECK(f.recompute_bytes == 16 * 4368);  // one layer rebuilt in backward
  // + GPT-2's eager 4D mask (16 x 16 fp32), which the reentrant checkpoint saves once.
  CHECK(f.bytes_per_sample == 16 * (2 * 256 + 4368 + 520 + 400 + 400) + 16 * 16 * 4);
  CHECK(f.recompute_fraction == Approx(1.0 / 3.0));
  o.checkpointing = Checkpointing::selective;
  ActivationLedger s = transformer_activations(tiny_gpt(), o);
  CHECK(s.layer_bytes == 16 * (4368 - 256));  // softmax 64 floats per token recomputed
  CHECK(s.recompute_bytes == 16 * 256);
  // Attention matmuls 4 x s x qd = 4096 flops/token over 3 x (2 x 49152 + 4096).
  CHECK(s.recompute_fraction == Approx(4096.0 / (3.0 * (2.0 * 49152 + 4096))));
}

TEST_CASE("dropout on CUDA keeps 1-byte masks", "[activations]") {
  TransformerArch a = tiny_gpt();
  a.hidden_dropout = 0.1;
  a.attention_dropout = 0.1;
  ActivationOptions o = fp32_opts(1, 16, Attention::eager);
  o.dropout = true;
  // Per token per layer: attention mask 64 x 1 B + dropped probabilities 64 x 4 B, two residual
  // masks 2 x 64 x 1 B = 448 B more; the embedding dropout mask 64 B outside.
  ActivationLedger l = transformer_activations(a, o);
  CHECK(l.layer_bytes == 16 * (4368 + 448));
  CHECK(sum_rows(l.outside_layers, Role::saved) == 16 * (520 + 400 + 64));
  // Without --dropout (evaluation, or dropout switched off) nothing changes.
  o.dropout = false;
  CHECK(transformer_activations(a, o).layer_bytes == 16 * 4368);
}

TEST_CASE("RMSNorm + SwiGLU in pure bf16 on CUDA", "[activations]") {
  TransformerArch a;
  a.layers = 1;
  a.hidden = 64;
  a.heads = 4;
  a.intermediate = 128;
  a.gated_mlp = true;
  a.activation = "silu";
  a.norm = "rmsnorm";
  ActivationOptions o = fp32_opts(1, 8, Attention::sdpa);
  o.act_cost = {2, 1};
  o.act_format = "bf16";
  // Per token: each RMSNorm keeps x upcast to fp32 (64 x 4) + rsqrt 4 + normalised bf16 64 x 2
  // = 388 B, twice; projection inputs 2 x 64 x 2; q k v out 4 x 64 x 2; lse 4 x 4;
  // SwiGLU gate, silu, up, product 4 x 128 x 2. = 776 + 256 + 512 + 16 + 1024 = 2584 B.
  ActivationLedger l = transformer_activations(a, o);
  CHECK(l.layer_bytes == 8 * 2584);
  // Layer 0 of a stack fed hidden states (no vocabulary): its first norm keeps only the
  // normalised tensor (the input needs no gradient): 388 - 260 B less.
  CHECK(l.first_layer_bytes == 8 * (2584 - 260));
  // Final norm 388 B; no head without a vocabulary.
  CHECK(sum_rows(l.outside_layers, Role::saved) == 8 * 388);
}

TEST_CASE("activations are exactly linear in batch", "[activations]") {
  TransformerArch a = tiny_gpt();
  a.hidden_dropout = 0.1;
  for (Attention attn : {Attention::eager, Attention::sdpa})
    for (Checkpointing c : {Checkpointing::none, Checkpointing::selective, Checkpointing::full})
      for (bool amp : {false, true}) {
        ActivationOptions o = amp ? amp_bf16(1, 16, attn) : fp32_opts(1, 16, attn);
        o.checkpointing = c;
        o.dropout = true;
        ActivationLedger one = transformer_activations(a, o);
        o.batch = 37;
        ActivationLedger many = transformer_activations(a, o);
        CHECK(many.total_bytes == 37 * one.total_bytes);
        CHECK(many.bytes_per_sample == one.bytes_per_sample);
        CHECK(many.fixed_bytes == one.fixed_bytes);
      }
}

TEST_CASE("activation errors name the input", "[activations]") {
  TransformerArch a = tiny_gpt();
  CHECK_THROWS_WITH(transformer_activations(a, fp32_opts(1, 0, Attention::eager)),
                    "seq: the sequence length is 0 (expected tokens per sample, e.g. 2048)");
  a.heads = 0;
  CHECK_THROWS_AS(transformer_activations(a, fp32_opts(1, 8, Attention::eager)), Error);
  CHECK(parse_attention("--attention", "flash") == Attention::sdpa);
  CHECK(parse_checkpointing("--checkpointing", "Full") == Checkpointing::full);
  CHECK_THROWS_WITH(parse_attention("--attention", "eagr"),
                    "--attention: \"eagr\" is not valid (expected eager or sdpa; did you mean \"eager\"?)");
  CHECK_THROWS_WITH(parse_checkpointing("--checkpointing", "ful"), Catch::Contains("did you mean \"full\""));
  // Absurd sizes overflow into an Error, never wrap.
  TransformerArch huge = tiny_gpt();
  huge.hidden = uint64_t{1} << 40;
  huge.intermediate = uint64_t{1} << 42;
  ActivationOptions o = fp32_opts(uint64_t{1} << 30, uint64_t{1} << 30, Attention::eager);
  CHECK_THROWS_AS(transformer_activations(huge, o), OverflowError);
}

TEST_CASE("KV cache: 2 x layers x kv_heads x head_dim x seq x batch x bytes", "[kv_cache]") {
  // LLaMA-2-7B: 32 layers, 32 heads of 128, fp16: 2 x 32 x 32 x 128 x 2 B = 512 KiB per token;
  // 4096 tokens = 2 GiB per sequence.
  TransformerArch l2;
  l2.layers = 32;
  l2.hidden = 4096;
  l2.heads = 32;
  l2.intermediate = 11008;
  l2.gated_mlp = true;
  l2.vocab = 32000;
  InferenceOptions o;
  o.seq = 4096;
  KvCache kv = inference_memory(l2, o);
  CHECK(kv.bytes == 2147483648ull);
  // Batch 8: 16 GiB, exactly linear.
  o.batch = 8;
  CHECK(inference_memory(l2, o).bytes == 8 * 2147483648ull);
  // LLaMA-3-8B style grouped-query attention (8 kv heads): a quarter; int8 cache: half again.
  l2.kv_heads = 8;
  o.kv_cost = {1, 1};
  o.kv_format = "int8";
  CHECK(inference_memory(l2, o).bytes == 8 * 2147483648ull / 8);
  CHECK_THROWS_WITH(inference_memory(l2, InferenceOptions{}),
                    Catch::Contains("seq: the sequence length is 0"));
}

TEST_CASE("KV cache working buffer: largest transient of the prefill", "[kv_cache]") {
  TransformerArch a = tiny_gpt();  // 4 heads, hidden 64, MLP 256, vocab 100
  InferenceOptions o;
  o.seq = 16;
  // sdpa: MLP intermediate 2 x 16 x 256 x 2 B = 16384 beats the last position's logits 200 B;
  // plus the hidden states 2 x 16 x 64 x 2 B = 4096.
  KvCache kv = inference_memory(a, o);
  CHECK(kv.working_buffer == KvBuffer::mlp_intermediate);
  CHECK(kv.working_buffer_per_sample == 16384 + 4096);
  // eager: scores and probabilities 2 x 4 x 16 x 16 x 2 B = 4096 (< 16384: MLP still largest).
  o.attention = Attention::eager;
  o.seq = 128;  // now 2 x 4 x 128 x 128 x 2 = 262144 > MLP 2 x 128 x 256 x 2 = 131072
  kv = inference_memory(a, o);
  CHECK(kv.working_buffer == KvBuffer::attention_scores);
  CHECK(kv.working_buffer_per_sample == 262144 + 2 * 128 * 64 * 2);
  o.batch = 3;
  CHECK(inference_memory(a, o).working_buffer_bytes == 3 * kv.working_buffer_per_sample);
}

TEST_CASE("layout defaults by model family", "[activations]") {
  TransformerArch a;
  a.model_type = "bert";
  CHECK(apply_layout_defaults(a));
  CHECK_FALSE(a.norm_first);  // BERT is post-LN with an embedding LayerNorm and no final norm
  CHECK_FALSE(a.final_norm);
  CHECK(a.position_embedding == "learned");
  a.model_type = "gpt_neox";
  CHECK(apply_layout_defaults(a));
  CHECK(a.parallel_attention);
  CHECK(a.fused_qkv);
  TransformerArch unknown;
  unknown.model_type = "no-such-family";
  CHECK_FALSE(apply_layout_defaults(unknown));
  CHECK(unknown.norm_first);
}
