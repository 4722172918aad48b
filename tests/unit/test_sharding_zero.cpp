// Data-parallel sharding against the ZeRO paper (Rajbhandari et al., "ZeRO: Memory Optimizations
// Toward Training Trillion Parameter Models", SC'20, arXiv:1910.02054): Figure 1 and Table 1.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include <memplan/error.hpp>
#include <memplan/sharding.hpp>

using namespace memplan;

namespace {

ShardingRequest paper_request(uint64_t params, uint64_t gpus, ShardingStrategy s) {
  ShardingRequest r;
  r.parameters = params;
  r.trainable = params;
  r.bytes = mixed_precision_state({2, 1}, {8, 1}, GradFormat::half);  // 2 + 2 + K, K = 12
  r.layout.gpus = gpus;
  r.layout.nodes = gpus > 8 ? gpus / 8 : 1;
  r.layout.sharding = s;
  return r;
}

uint64_t per_device(uint64_t params, uint64_t gpus, ShardingStrategy s) {
  return estimate_sharded(paper_request(params, gpus, s)).gpu.total;
}

std::string error_of(const ShardingRequest& r) {
  try {
    estimate_sharded(r);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("ZeRO paper Figure 1: 7.5B parameters, Nd = 64, K = 12", "[sharding][zero]") {
  const uint64_t psi = 7500000000ull;
  // Baseline (2+2+K)Psi = 120 GB; Pos 4Psi + K Psi/Nd = 31.4 GB; Pos+g 2Psi + 14Psi/Nd = 16.6 GB;
  // Pos+g+p 16Psi/Nd = 1.9 GB (GB = 1e9 bytes in the paper).
  CHECK(per_device(psi, 64, ShardingStrategy::zero0) == 120000000000ull);
  CHECK(per_device(psi, 64, ShardingStrategy::zero1) == 30000000000ull + 1406250000ull);
  CHECK(per_device(psi, 64, ShardingStrategy::zero2) == 15000000000ull + 1640625000ull);
  CHECK(per_device(psi, 64, ShardingStrategy::zero3) == 1875000000ull);
  CHECK(std::round(static_cast<double>(per_device(psi, 64, ShardingStrategy::zero1)) / 1e8) / 10 == 31.4);
  CHECK(std::round(static_cast<double>(per_device(psi, 64, ShardingStrategy::zero2)) / 1e8) / 10 == 16.6);
  CHECK(std::round(static_cast<double>(per_device(psi, 64, ShardingStrategy::zero3)) / 1e8) / 10 == 1.9);
}

TEST_CASE("ZeRO paper Table 1: per-device model states (GB) for 7.5B, 128B, 1T at DP 1..1024",
          "[sharding][zero]") {
  struct Row {
    uint64_t dp;
    double m7[3], m128[3], m1t[3];  // Pos, Pos+g, Pos+g+p as printed
  };
  // The 7.5B column is printed to 3 significant digits; the 128B and 1T columns are truncated
  // to whole GB (e.g. 4,187 for 4187.5, 2,218 for 2218.75, 15.6 and 62.5 shown exactly).
  const Row table[] = {
      {1, {120, 120, 120}, {2048, 2048, 2048}, {16000, 16000, 16000}},
      {4, {52.5, 41.3, 30}, {896, 704, 512}, {7000, 5500, 4000}},
      {16, {35.6, 21.6, 7.5}, {608, 368, 128}, {4750, 2875, 1000}},
      {64, {31.4, 16.6, 1.88}, {536, 284, 32}, {4187, 2218, 250}},
      {256, {30.4, 15.4, 0.47}, {518, 263, 8}, {4046, 2054, 62.5}},
      {1024, {30.1, 15.1, 0.12}, {513, 257, 2}, {4011, 2013, 15.6}},
  };
  const ShardingStrategy stages[3] = {ShardingStrategy::zero1, ShardingStrategy::zero2,
                                      ShardingStrategy::zero3};
  for (const Row& row : table) {
    for (int i = 0; i < 3; ++i) {
      INFO("DP " << row.dp << " stage " << (i + 1));
      const double g7 = static_cast<double>(per_device(7500000000ull, row.dp, stages[i])) / 1e9;
      const double g128 = static_cast<double>(per_device(128000000000ull, row.dp, stages[i])) / 1e9;
      const double g1t = static_cast<double>(per_device(1000000000000ull, row.dp, stages[i])) / 1e9;
      // 3 significant digits: within half a unit of the last printed digit.
      const double unit7 = row.m7[i] >= 10 ? 0.1 : 0.01;
      CHECK(std::fabs(g7 - row.m7[i]) <= unit7 / 2 + 1e-9);
      const double unit_big = 1.0;
      CHECK(g128 - row.m128[i] >= -1e-9);
      CHECK(g128 - row.m128[i] < unit_big);
      CHECK(g1t - row.m1t[i] >= -1e-9);
      CHECK(g1t - row.m1t[i] < (row.m1t[i] < 100 ? 0.1 : unit_big));
    }
  }
}

TEST_CASE("breakdown terms sum to the total and shrink with more ranks", "[sharding][zero]") {
  for (auto s :
       {ShardingStrategy::zero0, ShardingStrategy::zero1, ShardingStrategy::zero2, ShardingStrategy::zero3,
        ShardingStrategy::fsdp_full_shard, ShardingStrategy::fsdp_shard_grad_op}) {
    ShardingRequest r = paper_request(7000000000ull, 8, s);
    r.largest_layer_parameters = 500000000ull;
    r.activation_bytes = 3000000000ull;
    const auto a = estimate_sharded(r);
    CHECK(a.gpu.total ==
          a.gpu.parameters + a.gpu.gradients + a.gpu.optimizer_state + a.gpu.activations + a.gpu.buffers);
    CHECK(a.gpu.activations == 3000000000ull);
    r.layout.gpus = 16;
    r.layout.nodes = 2;
    CHECK(estimate_sharded(r).gpu.total <= a.gpu.total);
  }
}

TEST_CASE("ZeRO-3 gathers the largest layer (+ prefetch) in the compute format", "[sharding][zero]") {
  ShardingRequest r = paper_request(8000000000ull, 8, ShardingStrategy::zero3);
  r.largest_layer_parameters = 100000000ull;
  // 16 B x 1e9 per rank + (1 + 1 prefetched) x 1e8 x (2 + 2) B
  CHECK(estimate_sharded(r).gpu.buffers == 800000000ull);
  CHECK(estimate_sharded(r).gpu.total == 16000000000ull + 800000000ull);
  r.layout.prefetch_layers = 0;
  CHECK(estimate_sharded(r).gpu.buffers == 400000000ull);
}

TEST_CASE("FSDP keeps fp32 shards and gathers units in the half format", "[sharding][fsdp]") {
  ShardingRequest r = paper_request(8000000000ull, 16, ShardingStrategy::fsdp_full_shard);
  r.layout.nodes = 2;
  r.bytes = fsdp_mixed_precision_state({2, 1}, {8, 1});
  r.largest_layer_parameters = 200000000ull;
  r.layout.prefetch_layers = 1;
  auto res = estimate_sharded(r);
  // (4 + 4 + 8) B x 8e9 / 16 = 8e9; units: 2 x 2e8 x (2 + 2) B = 1.6e9
  CHECK(res.gpu.parameters + res.gpu.gradients + res.gpu.optimizer_state == 8000000000ull);
  CHECK(res.gpu.buffers == 1600000000ull);
  CHECK(res.shard_group == 16);

  r.layout.sharding = ShardingStrategy::fsdp_hybrid_shard;  // shards inside one node of 8
  res = estimate_sharded(r);
  CHECK(res.shard_group == 8);
  CHECK(res.gpu.parameters + res.gpu.gradients + res.gpu.optimizer_state == 16000000000ull);

  r.layout.sharding = ShardingStrategy::fsdp_shard_grad_op;  // fp32 shards + whole bf16 model kept
  res = estimate_sharded(r);
  CHECK(res.gpu.parameters == 2000000000ull);               // 4 B x 8e9 / 16
  CHECK(res.gpu.buffers == 16000000000ull + 400000000ull);  // 2 B x 8e9 + one unit's 2 B gradient
}

TEST_CASE("offload moves optimizer (and parameter) shards to host memory", "[sharding][offload]") {
  ShardingRequest r = paper_request(7000000000ull, 16, ShardingStrategy::zero2);
  r.layout.offload = Offload::optimizer;
  auto res = estimate_sharded(r);
  // GPU keeps the fp16 weights (2 B x 7e9); host per rank (2 + 4 + 8) B x 7e9 / 16, 8 ranks a node.
  CHECK(res.gpu.total == 14000000000ull);
  CHECK(res.ranks.at(0).host_bytes == 6125000000ull);
  CHECK(res.host_bytes_per_node == 49000000000ull);
  CHECK(res.host_pinned_bytes_per_node == 8 * 875000000ull);  // the 2 B gradient shards
}

TEST_CASE("layout errors name the option", "[sharding][errors]") {
  ShardingRequest r = paper_request(7000000000ull, 16, ShardingStrategy::zero2);
  r.layout.nodes = 3;
  CHECK(error_of(r) == "nodes: 16 GPUs do not split evenly over 3 nodes");
  r = paper_request(7000000000ull, 16, ShardingStrategy::zero2);
  r.layout.dp = 4;
  CHECK(error_of(r) == "dp: tp x pp x dp = 1 x 1 x 4 = 4, but gpus is 16");
  r = paper_request(7000000000ull, 16, ShardingStrategy::zero0);
  r.layout.offload = Offload::optimizer;
  CHECK(error_of(r) == "offload: offloading needs ZeRO stage 1-3 (zero) or FSDP (fsdp)");
  r.layout.sharding = ShardingStrategy::zero2;
  r.layout.offload = Offload::parameters;
  CHECK(error_of(r) ==
        "offload: offloading parameters needs ZeRO stage 3 (DeepSpeed offload_param); "
        "stages 1-2 offload the optimizer only");
  r.layout.sharding = ShardingStrategy::fsdp_full_shard;
  r.layout.offload = Offload::optimizer;
  CHECK(error_of(r) ==
        "offload: FSDP offloads parameters, gradients and optimizer state together "
        "(CPUOffload(offload_params=True)); use offload parameters");
  r = paper_request(7000000000ull, 16, ShardingStrategy::zero0);
  r.layout.tp = 2;
  CHECK(error_of(r) ==
        "tp: tensor and pipeline parallelism need the model's architecture (model, config, "
        "or layers/hidden/heads)");
  r = paper_request(7000000000ull, 12, ShardingStrategy::zero0);
  r.layout.nodes = 1;
  r.layout.tp = 8;
  CHECK(error_of(r) == "gpus: 12 GPUs are not a multiple of tp x pp = 8 x 1 = 8");
  r = paper_request(7000000000ull, 0, ShardingStrategy::zero0);
  CHECK(error_of(r) == "gpus: must be at least 1");
}

TEST_CASE("names parse with did-you-mean", "[sharding][names]") {
  CHECK(parse_zero_stage("--zero", "3") == ShardingStrategy::zero3);
  CHECK_THROWS_WITH(parse_zero_stage("--zero", "4"),
                    "--zero: \"4\" is not a ZeRO stage (expected 0, 1, 2 or 3)");
  CHECK(parse_fsdp_strategy("--fsdp", "FULL_SHARD") == ShardingStrategy::fsdp_full_shard);
  CHECK(parse_fsdp_strategy("--fsdp", "hybrid-shard") == ShardingStrategy::fsdp_hybrid_shard);
  CHECK_THROWS_WITH(
      parse_fsdp_strategy("--fsdp", "full-shrad"),
      "--fsdp: \"full-shrad\" is not an FSDP sharding strategy (expected no-shard, shard-grad-op, "
      "full-shard or hybrid-shard); did you mean \"full-shard\"?");
  CHECK(parse_offload("--offload", "optimizer") == Offload::optimizer);
  CHECK(parse_checkpointing("--checkpointing", "selective") == Checkpointing::selective);
  CHECK(parse_grad_format("--grad-format", "half+fp32") == GradFormat::half_and_fp32);
  CHECK(sharding_name(ShardingStrategy::fsdp_shard_grad_op) == "fsdp-shard-grad-op");
}

TEST_CASE("search_layout: the smallest GPU count, then the lowest ZeRO stage", "[sharding][search]") {
  ShardingRequest r = paper_request(7500000000ull, 1, ShardingStrategy::zero3);
  LayoutSearch s;  // 8 GPUs a node
  // 20e9 B per GPU: stage 3 needs 120e9/N <= 20e9 -> N = 6; stages 1-2 need more than a node.
  auto found = search_layout(r, s, 20000000000ull);
  REQUIRE(found.found);
  CHECK(found.result.layout.gpus == 6);
  CHECK(found.result.layout.sharding == ShardingStrategy::zero3);
  // 120e9 B fits one GPU at stage 0: the lowest stage wins at the same count.
  found = search_layout(r, s, 120000000000ull);
  CHECK(found.result.layout.gpus == 1);
  CHECK(found.result.layout.sharding == ShardingStrategy::zero0);
  // 40e9 B: stage 3 at N = 3 (40e9), before stage 2 at N = 5.
  found = search_layout(r, s, 40000000000ull);
  CHECK(found.result.layout.gpus == 3);
  CHECK(found.result.layout.sharding == ShardingStrategy::zero3);
  // Past one node only whole nodes: stage 1 alone (no vary) at 31e9 needs 90e9/N <= 1e9 -> N >= 90 -> 96.
  s.vary_sharding = false;
  r.layout.sharding = ShardingStrategy::zero1;
  found = search_layout(r, s, 31000000000ull);
  CHECK(found.result.layout.gpus == 96);
  CHECK(found.result.layout.nodes == 12);
  // Never fits: activations alone exceed the budget.
  r.activation_bytes = 50000000000ull;
  CHECK_FALSE(search_layout(r, s, 40000000000ull).found);
}

TEST_CASE("absurd sizes overflow cleanly, trainable parts shard like the paper", "[sharding][zero]") {
  ShardingRequest r =
      paper_request(2000000000000000000ull, 1, ShardingStrategy::zero0);  // 2e18 x 16 B > 2^64
  CHECK_THROWS_AS(estimate_sharded(r), OverflowError);
  // LoRA-like: 0.2% of 7e9 trainable = 14e6; ZeRO-2 on 8 ranks: 2 B x 7e9 weights whole,
  // (2 + 4 + 8) B x 14e6 / 8 = 24.5e6 B of gradient and optimizer shards.
  r = paper_request(7000000000ull, 8, ShardingStrategy::zero2);
  r.trainable = 14000000ull;
  const auto res = estimate_sharded(r);
  CHECK(res.gpu.parameters == 14000000000ull);
  CHECK(res.gpu.gradients + res.gpu.optimizer_state == 24500000ull);
  r.trainable = r.parameters + 1;
  CHECK(error_of(r) == "trainable: more trainable parameters than parameters");
}
