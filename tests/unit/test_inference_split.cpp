// Tensor-parallel inference splits as vLLM shards a model: KV heads per GPU = max(1, kv_heads / tp),
// replicated when tp > kv_heads; attention, MLP and vocabulary split; norms replicated.
// Architectures are the models' published config.json values.
#include <catch2/catch.hpp>

#include <memplan/error.hpp>
#include "core/parallel/inference_split.hpp"

using namespace memplan;

namespace {

// meta-llama/Meta-Llama-3-70B config.json; 70,553,706,496 parameters (its safetensors index).
ModelSpec llama3_70b() {
  ModelSpec m;
  m.parameters = 70553706496ull;
  TransformerArch a;
  a.model_type = "llama";
  a.layers = 80;
  a.hidden = 8192;
  a.heads = 64;
  a.kv_heads = 8;
  a.head_dim = 128;
  a.intermediate = 28672;
  a.vocab = 128256;
  a.gated_mlp = true;
  a.norm = "rmsnorm";
  m.arch = a;
  return m;
}

// TinyLlama/TinyLlama-1.1B-Chat-v1.0 config.json: 4 KV heads; 1,100,048,384 parameters.
ModelSpec tinyllama() {
  ModelSpec m;
  m.parameters = 1100048384ull;
  TransformerArch a;
  a.model_type = "llama";
  a.layers = 22;
  a.hidden = 2048;
  a.heads = 32;
  a.kv_heads = 4;
  a.head_dim = 64;
  a.intermediate = 5632;
  a.vocab = 32000;
  a.gated_mlp = true;
  m.arch = a;
  return m;
}

}  // namespace

TEST_CASE("inference split: KV heads of a GQA model at tp 2, 4, 8, 16", "[inference_split]") {
  const ModelSpec m = llama3_70b();
  struct Row {
    uint64_t tp, kv_per_gpu, replicas;
  };
  for (const Row& r : {Row{1, 8, 1}, Row{2, 4, 1}, Row{4, 2, 1}, Row{8, 1, 1}, Row{16, 1, 2}}) {
    const InferenceSplit s = inference_split(m, r.tp, 1);
    INFO("tp " << r.tp);
    CHECK(s.kv_heads_per_gpu == r.kv_per_gpu);
    CHECK(s.kv_replicas == r.replicas);
    CHECK(s.heads_per_gpu == 64 / r.tp);
    CHECK(s.intermediate_per_gpu == 28672 / r.tp);
  }
  // 4 KV heads: replication starts above tp 4.
  const ModelSpec t = tinyllama();
  CHECK(inference_split(t, 2, 1).kv_heads_per_gpu == 2);
  CHECK(inference_split(t, 4, 1).kv_heads_per_gpu == 1);
  CHECK(inference_split(t, 8, 1).kv_heads_per_gpu == 1);
  CHECK(inference_split(t, 8, 1).kv_replicas == 2);
}

TEST_CASE("inference split: weights per GPU", "[inference_split]") {
  const ModelSpec m = llama3_70b();
  // Norms replicated: 80 layers x 2 x 8192 + the final 8192.
  const uint64_t norms = 80ull * 2 * 8192 + 8192;
  CHECK(inference_split(m, 1, 1).parameters_per_gpu == m.parameters);
  CHECK(inference_split(m, 1, 1).replicated_parameters == norms);
  const InferenceSplit s2 = inference_split(m, 2, 1);
  CHECK(s2.parameters_per_gpu == (m.parameters - norms) / 2 + norms);
  // At tp 16 each GPU holds one whole KV head (k and v of 128 x 8192 per layer), not half of one:
  // the k/v share is 2 x 80 x 128 x 8192 where an even split would give 8/16 of that.
  const InferenceSplit s16 = inference_split(m, 16, 1);
  const uint64_t kv_gpu = 2ull * 80 * 128 * 8192;
  const uint64_t kv_even = 2ull * 80 * 8 * 128 * 8192 / 16;
  CHECK(s16.parameters_per_gpu == (m.parameters - norms - 2ull * 80 * 8 * 128 * 8192) / 16 + kv_gpu + norms);
  CHECK(kv_gpu == 2 * kv_even);
  // Pipeline stages: 80 layers over 4 stages, 20 each; the embedding or the lm_head per end stage.
  const InferenceSplit p4 = inference_split(m, 1, 4);
  CHECK(p4.layers_per_gpu == 20);
  CHECK(p4.parameters_per_gpu < m.parameters / 4 + 128256ull * 8192);
}

TEST_CASE("inference split: sizes vLLM refuses", "[inference_split]") {
  const ModelSpec m = llama3_70b();
  CHECK_THROWS_AS(inference_split(m, 3, 1), Error);  // 64 heads / 3
  CHECK_THROWS_AS(inference_split(m, 0, 1), Error);
  CHECK_THROWS_AS(inference_split(m, 1, 81), Error);  // more stages than layers
  ModelSpec bare;
  bare.parameters = 7000000000ull;
  CHECK_THROWS_AS(inference_split(bare, 2, 1), Error);  // no architecture
}
