// Megatron-style tensor/sequence/pipeline parallelism: the distributed optimizer's bytes table
// (Megatron-LM docs/source/distrib_optimizer.md), Korthikanti et al. 2022 Table 2 (activation
// memory per layer) and Sec. 4.2.3 (pipeline), and Megatron's parameter split.
#include <catch2/catch.hpp>

#include "cli/render_sharding.hpp"

#include <memplan/error.hpp>
#include <memplan/sharding.hpp>
#include "core/parallel/megatron.hpp"

using namespace memplan;

namespace {

// GPT-3 175B as in Korthikanti et al. Table 3: a = 96, h = 12288, L = 96, s = 2048, v = 51200.
TransformerArch gpt3() {
  TransformerArch a;
  a.model_type = "gpt3";
  a.layers = 96;
  a.hidden = 12288;
  a.heads = 96;
  a.intermediate = 4 * 12288;
  a.vocab = 51200;
  a.max_positions = 2048;
  a.tied_embeddings = true;
  return a;
}

TransformerStep gpt3_step() {
  TransformerStep s;
  s.seq = 2048;
  s.micro_batch = 1;
  s.linear_biases = true;
  s.position_rows = 2048;
  return s;
}

const uint64_t k_sbh = 2048ull * 12288;  // s x b x h = 25,165,824

}  // namespace

TEST_CASE("Megatron distributed optimizer bytes per parameter (distrib_optimizer.md)", "[megatron]") {
  // | fp16 param, fp16 grads | 20 | 4 + 16/d |  | bf16 param, fp32 grads | 18 | 6 + 12/d |
  // | fp32 param, fp32 grads | 16 | 8 + 8/d |
  struct Row {
    ModelStateBytes bytes;
    uint64_t plain, unsharded, sharded;
  };
  const Row rows[] = {
      {mixed_precision_state({2, 1}, {8, 1}, GradFormat::half_and_fp32), 20, 4, 16},
      {mixed_precision_state({2, 1}, {8, 1}, GradFormat::fp32), 18, 6, 12},
      {single_format_state({4, 1}, {8, 1}), 16, 8, 8},
  };
  const uint64_t p = 1ull << 30;  // divisible by every d below
  for (const Row& row : rows) {
    for (uint64_t d : {1ull, 2ull, 4ull, 8ull, 16ull, 64ull}) {
      ShardingRequest r;
      r.parameters = r.trainable = p;
      r.bytes = row.bytes;
      r.layout.gpus = d;
      r.layout.nodes = d > 8 ? d / 8 : 1;
      r.layout.sharding = ShardingStrategy::zero0;
      CHECK(estimate_sharded(r).gpu.total == row.plain * p);
      r.layout.sharding = ShardingStrategy::zero1;
      INFO("d = " << d << ", " << row.unsharded << " + " << row.sharded << "/d");
      CHECK(estimate_sharded(r).gpu.total == row.unsharded * p + row.sharded * p / d);
    }
  }
}

TEST_CASE("Korthikanti et al. Table 2: activation bytes per layer, GPT-3 175B, t = 8", "[megatron]") {
  const TransformerArch a = gpt3();
  const TransformerStep s = gpt3_step();
  // 5as/h = 5 x 96 x 2048 / 12288 = 80.
  auto per_layer = [&](uint64_t t, bool sp, Checkpointing rc) {
    return korthikanti_layer_activation(a, s, t, sp, rc).total;
  };
  CHECK(per_layer(1, false, Checkpointing::none) == k_sbh * (34 + 80));           // sbh(34 + 5as/h)
  CHECK(per_layer(8, false, Checkpointing::none) == k_sbh * (10 + 3 + 10));       // sbh(10 + 24/t + 5as/ht)
  CHECK(per_layer(8, true, Checkpointing::none) == k_sbh * 34 / 8 + k_sbh * 10);  // sbh(34/t + 5as/ht)
  CHECK(per_layer(8, false, Checkpointing::selective) == k_sbh * (10 + 3));       // sbh(10 + 24/t)
  CHECK(per_layer(8, true, Checkpointing::selective) == k_sbh * 34 / 8);          // sbh(34/t)
  CHECK(per_layer(8, false, Checkpointing::full) == k_sbh * 2);                   // sbh(2)
  CHECK(per_layer(8, true, Checkpointing::full) == k_sbh * 2 / 8);
  const auto parts = korthikanti_layer_activation(a, s, 1, false, Checkpointing::none);
  CHECK(parts.replicated == 10 * k_sbh);
  CHECK(parts.split == 24 * k_sbh);
  CHECK(parts.scores == 80 * k_sbh);
}

TEST_CASE("1F1B in flight: the first stage holds pp micro-batches, interleaving adds (p-1)/(pv)",
          "[megatron]") {
  CHECK(pipeline_in_flight(8, 0, 1, 0) == 8);
  CHECK(pipeline_in_flight(8, 7, 1, 0) == 1);
  CHECK(pipeline_in_flight(8, 0, 1, 4) == 4);  // fewer micro-batches than stages
  // v = 2, p = 8: 2(p-1) + (v-1)p + 1 = 23 chunk micro-batches of L/(pv) layers on stage 0,
  // i.e. L/p x p x (1 + (p-1)/(pv)) = 96 x 23/16 layers' worth for L = 96.
  CHECK(pipeline_in_flight(8, 0, 2, 0) == 23);
  ParallelLayout l;
  l.tp = 8;
  l.pp = 8;
  l.sequence_parallel = true;
  l.recompute = Checkpointing::selective;
  const uint64_t layer = k_sbh * 34 / 8;
  // First stage: sbhL(34/t) + embedding dropout mask sbh/t x p micro-batches.
  CHECK(megatron_stage_activation_bytes(gpt3(), gpt3_step(), l, 0) == layer * 96 + k_sbh);
  l.virtual_stages = 2;
  CHECK(megatron_stage_activation_bytes(gpt3(), gpt3_step(), l, 0) == layer * 6 * 23 + k_sbh);
  // Last stage (no interleaving): 1 micro-batch x 12 layers + output layer 4sbh/t (1 + v/h).
  l.virtual_stages = 1;
  CHECK(megatron_stage_activation_bytes(gpt3(), gpt3_step(), l, 7) ==
        layer * 12 + 4 * k_sbh / 8 + 4ull * 2048 * 51200 / 8);
}

TEST_CASE("Megatron parameter split: GPT-3 175B and Llama-2-70B", "[megatron]") {
  const uint64_t h = 12288;
  // 12h^2 + 13h per layer; 96 layers + word (51200 h) and position (2048 h) embeddings + final LN.
  CHECK(megatron_layer_parameters(gpt3(), gpt3_step(), 1) == 12 * h * h + 13 * h);
  const auto one = megatron_stage_parameters(gpt3(), gpt3_step(), 1, 1);
  CHECK(one.at(0) == 96 * (12 * h * h + 13 * h) + 51200 * h + 2048 * h + 2 * h);  // 174,615,846,912
  // tp 8: matrices and column biases (12h^2 + 7h) / 8; layer norms and row biases (6h) replicated.
  CHECK(megatron_layer_parameters(gpt3(), gpt3_step(), 8) == 12 * h * h / 8 + 7 * h / 8 + 6 * h);
  const auto stages = megatron_stage_parameters(gpt3(), gpt3_step(), 8, 8);
  REQUIRE(stages.size() == 8);
  const uint64_t body = 12 * 226576896ull;
  CHECK(stages[0] == body + 51200 * h / 8 + 2048 * h);  // embedding shard + positions
  CHECK(stages[3] == body);
  CHECK(stages[7] == body + 2 * h + 51200 * h / 8);  // final LN + copy of the tied embedding

  // Llama-2-70B: 68,976,648,192 parameters (published), GQA 64/8, SwiGLU, RMSNorm, untied.
  TransformerArch l;
  l.layers = 80;
  l.hidden = 8192;
  l.heads = 64;
  l.kv_heads = 8;
  l.intermediate = 28672;
  l.vocab = 32000;
  l.gated_mlp = true;
  l.norm = "rmsnorm";
  TransformerStep st;
  st.seq = 4096;
  CHECK(megatron_stage_parameters(l, st, 1, 1).at(0) == 68976648192ull);
  CHECK(megatron_padded_vocab(32000, 128, 8) == 32768);
}

TEST_CASE("GPT-3 175B on tp 8 x pp 8 x dp 16 with the distributed optimizer", "[megatron][sharding]") {
  ShardingRequest r;
  r.arch = gpt3();
  r.step = gpt3_step();
  r.parameters = r.trainable = 174615846912ull;
  r.bytes = mixed_precision_state({2, 1}, {8, 1}, GradFormat::fp32);  // 6 + 12/d
  r.layout.gpus = 1024;
  r.layout.nodes = 128;
  r.layout.tp = 8;
  r.layout.pp = 8;
  r.layout.sharding = ShardingStrategy::zero1;
  r.layout.sequence_parallel = true;
  r.layout.recompute = Checkpointing::selective;
  const auto res = estimate_sharded(r);
  CHECK(res.layout.dp == 16);
  REQUIRE(res.ranks.size() == 3);
  CHECK(res.heaviest().kind == RankKind::first_stage);
  CHECK(memplan::cli::rank_kind_text(res.heaviest(), res.layout) == "pipeline stage 0 (first)");
  // Stage 0 slice 2,822,731,776 parameters: 2 + 4 B unsharded, 12 B / 16.
  CHECK(res.gpu.parameters == 2ull * 2822731776);
  CHECK(res.gpu.gradients == 4ull * 2822731776);
  CHECK(res.gpu.optimizer_state == 12ull * 2822731776 / 16);
  CHECK(res.gpu.activations == 10292822016ull);
  CHECK(res.gpu.total == 19053439488ull + 10292822016ull);
  CHECK(res.ranks[1].count == 8 * 16 * 6);
  CHECK(res.host_bytes_per_node == 0);
  // Explain lines name each formula's source.
  auto mentions = [&](const std::string& word) {
    for (const auto& line : memplan::cli::sharding_explain(res))
      if (line.find(word) != std::string::npos) return true;
    return false;
  };
  CHECK(mentions("Megatron-LM distributed optimizer"));
  CHECK(mentions("6 + 12/d"));
  CHECK(mentions("Korthikanti et al. 2022"));
}

TEST_CASE("Megatron layout errors", "[megatron][errors]") {
  ShardingRequest r;
  r.arch = gpt3();
  r.step = gpt3_step();
  r.parameters = r.trainable = 174615846912ull;
  r.layout.gpus = 56;
  r.layout.nodes = 7;
  r.layout.pp = 7;
  auto error = [&]() -> std::string {
    try {
      estimate_sharded(r);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK(error() ==
        "pp: 96 layers do not divide into pp x virtual stages = 7 equal chunks "
        "(Megatron requires layers % (pp x v) == 0)");
  r.layout.pp = 8;
  r.layout.nodes = 8;
  r.layout.gpus = 64 * 5;
  r.layout.nodes = 40;
  r.layout.tp = 5;
  CHECK(error() == "tp: 96 attention heads do not divide over tp 5");
  r.layout.tp = 8;
  r.layout.gpus = 64;
  r.layout.nodes = 8;
  r.layout.sharding = ShardingStrategy::zero3;
  CHECK(error() ==
        "zero: ZeRO stage 3 does not combine with pipeline parallelism (pp 8); "
        "DeepSpeed's pipeline engine supports stages 0 and 1");
  r.layout.sharding = ShardingStrategy::zero1;
  r.layout.tp = 1;
  r.layout.pp = 64;
  r.layout.sequence_parallel = true;
  CHECK(error() == "sequence_parallel: needs tensor parallelism (tp > 1)");
}
