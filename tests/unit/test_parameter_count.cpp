// The one parameter counter (core/models/parameter_count): per-part counts worked out by hand,
// every model preset's architecture against its published count, and overflow instead of wrapping.
#include <catch2/catch.hpp>

#include <cstdint>

#include <memplan/error.hpp>
#include <memplan/presets.hpp>
#include <memplan/request.hpp>
#include "core/models/arch_layout.hpp"
#include "core/models/parameter_count.hpp"
#include "core/parallel/sharded_estimate.hpp"

#include "error_of.hpp"

using namespace memplan;
using memplan::test::error_of;

namespace {

TransformerArch llama2_7b_arch() {
  TransformerArch a;
  a.model_type = "llama";
  a.layers = 32;
  a.hidden = 4096;
  a.heads = 32;
  a.kv_heads = 32;
  a.intermediate = 11008;
  a.vocab = 32000;
  a.gated_mlp = true;
  a.norm = "rmsnorm";
  apply_layout_defaults(a);
  return a;
}

// An architecture whose single layer does not fit in 2^64 parameters: hidden 2^32 makes one
// q projection 2^64 elements on its own.
TransformerArch absurd() {
  TransformerArch a;
  a.model_type = "llama";
  a.layers = 1;
  a.hidden = 1ull << 32;
  a.heads = 1;
  a.intermediate = 1ull << 32;
  a.vocab = 1;
  return a;
}

}  // namespace

TEST_CASE("llama-2-7b by parts: embedding, one block, final norm and head", "[parameter_count]") {
  const ParameterCount c = count_parameters(llama2_7b_arch());
  // Hand arithmetic (h = 4096, I = 11008, V = 32000, no biases, RMSNorm weight only):
  CHECK(c.embedding == 32000ull * 4096);           // 131,072,000
  CHECK(c.layer.attention == 4ull * 4096 * 4096);  // q, k, v, o: 67,108,864
  CHECK(c.layer.mlp == 3ull * 4096 * 11008);       // gate, up, down: 135,266,304
  CHECK(c.layer.norms == 2ull * 4096);             // two RMSNorms
  CHECK(c.layer.column_biases + c.layer.row_biases + c.layer.router == 0);
  CHECK(c.layer.total() == 202383360ull);
  CHECK(c.final == 4096ull + 32000ull * 4096);  // final norm + untied lm_head
  CHECK(c.total == 6738415616ull);              // keras-hub llama2_7b_en
  CHECK(c.active == c.total);
  CHECK(c.tensors == 291);  // 32 x 9 + embed, norm, lm_head
  // ZeRO-3 gathers one block's matrices (67,108,864 + 135,266,304) rather than the embedding.
  CHECK(largest_layer_parameters(llama2_7b_arch()) == 202375168ull);
}

TEST_CASE("bert-base by parts: token types, embedding norm and pooler", "[parameter_count]") {
  TransformerArch a;
  a.model_type = "bert";
  a.causal = false;
  a.layers = 12;
  a.hidden = 768;
  a.heads = 12;
  a.intermediate = 3072;
  a.vocab = 30522;
  a.max_positions = 512;
  a.tied_embeddings = true;
  apply_layout_defaults(a);
  const ParameterCount c = count_parameters(a);
  // (30522 + 512 + 2) x 768 + LayerNorm 2 x 768
  CHECK(c.embedding == 23837184ull);
  // 4 x (768^2 + 768) + 2 x (768 x 3072) + 3072 + 768 + 2 LayerNorms (4 x 768)
  CHECK(c.layer.total() == 7087872ull);
  CHECK(c.final == 768ull * 768 + 768);  // pooler, no final norm, no head
  CHECK(c.total == 109482240ull);        // keras-hub bert_base_en_uncased
  CHECK(c.tensors == 199);
}

TEST_CASE("every model preset's architecture counts to its published parameters and tensors",
          "[parameter_count][presets]") {
  int checked = 0;
  for (const ModelPreset& p : builtin_presets().models) {
    if (!p.model.arch) continue;
    INFO(p.model.id);
    TransformerArch a = *p.model.arch;
    apply_layout_defaults(a);
    const ParameterCount c = count_parameters(a);
    CHECK(c.total == p.model.parameters);
    if (p.model.tensors) CHECK(c.tensors == p.model.tensors);
    if (p.model.active_parameters) CHECK(c.active == p.model.active_parameters);
    ++checked;
  }
  CHECK(checked >= 17);
}

TEST_CASE("an absurd architecture overflows with an error instead of wrapping", "[parameter_count][errors]") {
  // Named bug (issue 11): largest_layer_parameters multiplied without overflow checks, so
  // hidden = intermediate = 2^32 wrapped to a small count that ZeRO-3 then used.
  const TransformerArch a = absurd();
  CHECK_THROWS_AS(largest_layer_parameters(a), OverflowError);
  CHECK_THROWS_AS(count_parameters(a), OverflowError);
  EstimateRequest r;
  r.model.parameters = 7000000000ull;
  r.model.arch = a;
  CHECK_THROWS_AS(largest_layer_parameters(r), OverflowError);
  CHECK(error_of([&] { largest_layer_parameters(r); }).find("exceeds 2^64") != std::string::npos);
  // Many layers of a sane block overflow the total, not just one layer.
  TransformerArch deep = llama2_7b_arch();
  deep.layers = 1ull << 40;
  CHECK_THROWS_AS(count_parameters(deep), OverflowError);
}

TEST_CASE("a plain MLP: weights and biases per Linear, overflow refused", "[parameter_count][mlp]") {
  // 784 x 512 + 512 + 512 x 10 + 10 = 407,050 (the classic MNIST MLP), 4 tensors.
  const MlpParameters m = count_mlp_parameters({784, 512, 10});
  CHECK(m.parameters == 407050);
  CHECK(m.tensors == 4);
  // 2^32 x 2^32 wrapped to 2^32 parameters before (memplan estimate --mlp 4294967296,4294967296).
  CHECK_THROWS_AS(count_mlp_parameters({1ull << 32, 1ull << 32}), OverflowError);
}

TEST_CASE("a layer without layers, hidden size or heads is an error", "[parameter_count][errors]") {
  TransformerArch a = llama2_7b_arch();
  a.heads = 0;
  CHECK(error_of([&] { count_parameters(a); }) ==
        "architecture: layers, hidden size and heads are needed to count parameters");
}
