// DeepSpeed's own estimators, against the tables printed in DeepSpeed's docs
// (docs/code-docs/source/memory.rst, "API To Estimate Memory Usage"; t5-3b on 1 node x 8 GPUs),
// and the generic sharding model cross-checked against the same formulas.
#include <catch2/catch.hpp>

#include <memplan/sharding.hpp>
#include "deepspeed_estimators.hpp"

using namespace memplan;

namespace {

std::vector<std::string> rows(const std::vector<DeepSpeedEstimate>& table) {
  std::vector<std::string> out;
  for (const auto& r : table) out.push_back(format_deepspeed_row(r));
  return out;
}

const uint64_t k_t5_3b_cold = 2851000000ull;      // total_params=2851e6 in the docs' "cold" call
const uint64_t k_t5_3b_live = 2851598336ull;      // AutoModel t5-3b, shared params counted once
const uint64_t k_t5_3b_layer_cold = 32000000ull;  // largest_layer_params=32e6
const uint64_t k_t5_3b_layer_live = 32899072ull;  // 32128 x 1024 shared embedding

}  // namespace

TEST_CASE("ZeRO-2 documented table for t5-3b on 8 GPUs (memory.rst, cold)", "[deepspeed]") {
  CHECK(rows(deepspeed_zero2_all_cold(k_t5_3b_cold, 8, 1, DeepSpeedFormula::documented)) ==
        std::vector<std::string>{"  127.45GB |   5.31GB | cpu_offload=1",
                                 "  127.45GB |  15.93GB | cpu_offload=0"});
  // Exact bytes: gpu = 4P + 16P/8 = 11,404,000,000 + 5,702,000,000; cpu = P x max(4 x 8, 16) x 1.5 = 48P.
  const auto row = deepspeed_zero2_estimate(k_t5_3b_cold, 8, 1, false, DeepSpeedFormula::documented);
  CHECK(row.gpu_bytes == 17106000000ull);
  CHECK(row.cpu_bytes == 136848000000ull);
  CHECK(deepspeed_zero2_estimate(k_t5_3b_cold, 8, 1, true, DeepSpeedFormula::documented).gpu_bytes ==
        5702000000ull);
}

TEST_CASE("ZeRO-2 documented table for t5-3b on 8 GPUs (memory.rst, live model)", "[deepspeed]") {
  CHECK(rows(deepspeed_zero2_all_cold(k_t5_3b_live, 8, 1, DeepSpeedFormula::documented)) ==
        std::vector<std::string>{"  127.48GB |   5.31GB | cpu_offload=1",
                                 "  127.48GB |  15.93GB | cpu_offload=0"});
}

TEST_CASE("ZeRO-2 current formula (PR #5099, April 2024): 2P + 18P/N", "[deepspeed]") {
  // 2 x 2,851,000,000 + int(18 x 2,851,000,000 / 8) = 5,702,000,000 + 6,414,750,000
  const auto row = deepspeed_zero2_estimate(k_t5_3b_cold, 8, 1, false, DeepSpeedFormula::current);
  CHECK(row.gpu_bytes == 12116750000ull);
  CHECK(format_deepspeed_row(row) == "  127.45GB |  11.28GB | offload_optimizer=none");
  // Offload rows are the same in both versions.
  CHECK(deepspeed_zero2_estimate(k_t5_3b_cold, 8, 1, true, DeepSpeedFormula::current).gpu_bytes ==
        5702000000ull);
}

TEST_CASE("ZeRO-3 documented table for t5-3b on 8 GPUs (memory.rst, cold)", "[deepspeed]") {
  CHECK(rows(deepspeed_zero3_all_cold(k_t5_3b_cold, k_t5_3b_layer_cold, 8, 1)) ==
        std::vector<std::string>{
            "   71.69GB |   0.12GB | cpu_offload=1, cpu_offload_params=1, zero_init=1",
            "  127.45GB |   0.12GB | cpu_offload=1, cpu_offload_params=1, zero_init=0",
            "   63.72GB |   0.78GB | cpu_offload=1, cpu_offload_params=0, zero_init=1",
            "  127.45GB |   0.78GB | cpu_offload=1, cpu_offload_params=0, zero_init=0",
            "    1.43GB |   6.09GB | cpu_offload=0, cpu_offload_params=0, zero_init=1",
            "  127.45GB |   6.09GB | cpu_offload=0, cpu_offload_params=0, zero_init=0",
        });
  // No offload: 4 x 32e6 + 18 x 2851e6 / 8 = 128,000,000 + 6,414,750,000.
  CHECK(deepspeed_zero3_estimate(k_t5_3b_cold, k_t5_3b_layer_cold, 8, 1, false, false, true).gpu_bytes ==
        6542750000ull);
}

TEST_CASE("ZeRO-3 documented table for t5-3b on 8 GPUs (memory.rst, live model)", "[deepspeed]") {
  CHECK(rows(deepspeed_zero3_all_cold(k_t5_3b_live, k_t5_3b_layer_live, 8, 1)) ==
        std::vector<std::string>{
            "   71.71GB |   0.12GB | cpu_offload=1, cpu_offload_params=1, zero_init=1",
            "  127.48GB |   0.12GB | cpu_offload=1, cpu_offload_params=1, zero_init=0",
            "   63.74GB |   0.79GB | cpu_offload=1, cpu_offload_params=0, zero_init=1",
            "  127.48GB |   0.79GB | cpu_offload=1, cpu_offload_params=0, zero_init=0",
            "    1.47GB |   6.10GB | cpu_offload=0, cpu_offload_params=0, zero_init=1",
            "  127.48GB |   6.10GB | cpu_offload=0, cpu_offload_params=0, zero_init=0",
        });
}

TEST_CASE("ZeRO-3 t5-large worked example in memory.rst (4 GPUs, MB = bytes >> 20)", "[deepspeed]") {
  // The docs print total params 737.67M, largest layer 32.90M, case1 3291MB, case2 125MB, case3 477MB.
  const uint64_t p = 737668096ull, layer = 32899072ull;
  CHECK((deepspeed_zero3_estimate(p, layer, 4, 1, false, false, true).gpu_bytes >> 20) == 3291);
  CHECK((deepspeed_zero3_estimate(p, layer, 4, 1, true, true, true).gpu_bytes >> 20) == 125);
  CHECK((deepspeed_zero3_estimate(p, layer, 4, 1, true, false, true).gpu_bytes >> 20) == 477);
}

TEST_CASE("multi-node: gpus_factor = 1 / nodes and total GPUs in the partition", "[deepspeed]") {
  // 2 nodes x 8: offload params + zero_init: cpu = P x 18 / 2 x 1.5 = 13.5 P per node.
  const auto row = deepspeed_zero3_estimate(1000000000ull, 10000000ull, 8, 2, true, true, true);
  CHECK(row.cpu_bytes == 13500000000ull);
  // ZeRO-2 offload: max(4 x 16, 16) x 1.5 = 96 P.
  CHECK(deepspeed_zero2_estimate(1000000000ull, 8, 2, true, DeepSpeedFormula::current).cpu_bytes ==
        96000000000ull);
}

TEST_CASE("the generic sharding model reproduces each DeepSpeed formula", "[deepspeed][sharding]") {
  const uint64_t p = k_t5_3b_live, layer = k_t5_3b_layer_live;
  ShardingRequest r;
  r.parameters = p;
  r.trainable = p;
  r.largest_layer_parameters = layer;
  r.layout.gpus = 8;
  r.layout.prefetch_layers = 0;  // DeepSpeed's estimator counts the largest layer once
  const ElementCost half{2, 1}, adam{8, 1};

  SECTION("ZeRO-3 (18 B sharded = fp16 params + fp32 grads + fp32 master + Adam)") {
    r.bytes = mixed_precision_state(half, adam, GradFormat::fp32);
    r.layout.sharding = ShardingStrategy::zero3;
    const auto ds = deepspeed_zero3_estimate(p, layer, 8, 1, false, false, true);
    const auto ours = estimate_sharded(r).gpu.total;
    // We round each shard up (ceil(P/8) elements); DeepSpeed rounds the sum down: within 18 bytes.
    CHECK(ours >= ds.gpu_bytes);
    CHECK(ours - ds.gpu_bytes <= 18);

    r.layout.offload = Offload::optimizer;  // GPU keeps 2P/N fp16 params + the layer; host 16P/N per rank
    auto res = estimate_sharded(r);
    CHECK(res.gpu.total == deepspeed_zero3_estimate(p, layer, 8, 1, true, false, true).gpu_bytes);
    CHECK(res.host_bytes_per_node == 8 * (p / 8) * 16);        // p divisible by 8; DeepSpeed adds x1.5 on top
    CHECK(res.host_pinned_bytes_per_node == 8 * (p / 8) * 4);  // docs: 4 B fp32 gradients pinned

    r.layout.offload = Offload::parameters;
    res = estimate_sharded(r);
    CHECK(res.gpu.total == 4 * layer);
    CHECK(res.host_bytes_per_node == 8 * (p / 8) * 18);
    CHECK(res.host_pinned_bytes_per_node == 8 * (p / 8) * 6);  // docs: 2 B fp16 params + 4 B fp32 grads
  }
  SECTION("ZeRO-2 current (2P + 18P/N = half grads + fp32 copy, sharded)") {
    r.bytes = mixed_precision_state(half, adam, GradFormat::half_and_fp32);
    r.layout.sharding = ShardingStrategy::zero2;
    CHECK(estimate_sharded(r).gpu.total ==
          deepspeed_zero2_estimate(p, 8, 1, false, DeepSpeedFormula::current).gpu_bytes);
    r.layout.offload = Offload::optimizer;
    CHECK(estimate_sharded(r).gpu.total == 2 * p);
  }
  SECTION("ZeRO-2 documented (4P + 16P/N: fp16 grads not partitioned, i.e. stage-1 sharding)") {
    r.bytes = mixed_precision_state(half, adam, GradFormat::half_and_fp32);
    r.layout.sharding = ShardingStrategy::zero1;
    CHECK(estimate_sharded(r).gpu.total ==
          deepspeed_zero2_estimate(p, 8, 1, false, DeepSpeedFormula::documented).gpu_bytes);
  }
}
