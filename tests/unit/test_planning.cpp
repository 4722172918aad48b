#include <catch2/catch.hpp>

#include <memplan/error.hpp>
#include "core/planning/planning.hpp"

using namespace memplan;

namespace {
EstimateRequest base() {
  EstimateRequest r;
  r.model.parameters = 1000000;  // 16 MB with fp32 AdamW
  r.recipe = parse_recipe("--precision", "fp32");
  r.optimizer = parse_optimizer("--optimizer", "adamw");
  r.activation_bytes_per_row = 1000;
  r.overhead_bytes = 0;
  r.overhead_given = true;
  return r;
}
}  // namespace

TEST_CASE("max_batch is exact: micro fits, micro + 1 does not", "[planning]") {
  EstimateRequest r = base();
  // memory = 16,000,000 B model + 1000 B/row x 123 rows + 999 B of slack -> 123.
  BatchPlan p = max_batch(r, 16000000 + 123 * 1000 + 999, 0);
  CHECK(p.micro_batch == 123);
  r.batch = 123;
  CHECK(estimate(r).required_bytes() <= 16000000 + 123 * 1000 + 999);
  r.batch = 124;
  CHECK(estimate(r).required_bytes() > 16000000 + 123 * 1000 + 999);
}

TEST_CASE("accumulation steps give back the effective batch", "[planning]") {
  BatchPlan p = max_batch(base(), 16000000 + 7 * 1000, 32);
  CHECK(p.max_micro_batch == 7);
  CHECK(p.accumulation_steps == 5);  // ceil(32 / 7)
  CHECK(p.micro_batch == 7);         // ceil(32 / 5)
  CHECK(p.effective_batch == 35);
  BatchPlan balanced = max_batch(base(), 16000000 + 104 * 1000, 256);
  CHECK(balanced.max_micro_batch == 104);
  CHECK(balanced.accumulation_steps == 3);  // ceil(256 / 104)
  CHECK(balanced.micro_batch == 86);        // ceil(256 / 3): same steps, less memory
  CHECK(balanced.effective_batch == 258);
  BatchPlan exact = max_batch(base(), 16000000 + 8 * 1000, 32);
  CHECK(exact.accumulation_steps == 4);
  CHECK(exact.effective_batch == 32);
  BatchPlan big = max_batch(base(), 16000000 + 100 * 1000, 32);
  CHECK(big.micro_batch == 32);
  CHECK(big.accumulation_steps == 1);
}

TEST_CASE("not even batch 1 fits: micro 0", "[planning]") {
  CHECK(max_batch(base(), 1000, 0).micro_batch == 0);
}

TEST_CASE("max_batch refuses an estimate that does not grow with the batch", "[planning]") {
  EstimateRequest r = base();
  r.activation_bytes_per_row = 0;
  CHECK_THROWS_AS(max_batch(r, 1ull << 40, 0), Error);
}

TEST_CASE("BatchNorm in an MLP keeps each hidden Linear's output too", "[planning][activations]") {
  EstimateRequest r = base();
  r.activation_bytes_per_row = 0;
  r.model.mlp_widths = {784, 512, 256, 10};
  r.batch = 256;
  const uint64_t plain = estimate(r).bytes(TermKind::activations);
  // fp32: ReLU outputs 512 + 256 numbers per row = 3,072 B (the torch reference's mlp_784_512_256_10).
  CHECK(plain == 256 * 3072);
  r.model.has_batchnorm = true;
  CHECK(estimate(r).bytes(TermKind::activations) == 256 * (3072 + (512 + 256) * 4));
}

TEST_CASE("issue 27: the effective batch is micro-batch x accumulation x data-parallel ranks",
          "[planning][issue27]") {
  // One GPU: 86 rows fit; 512 = ceil(512 / 86) = 6 steps of ceil(512 / 6) = 86 -> 516.
  const BatchPlan one = max_batch(base(), 16000000 + 86 * 1000, 512);
  CHECK(one.data_parallel_ranks == 1);
  CHECK(one.accumulation_steps == 6);
  CHECK(one.effective_batch == 516);
  // Plain DDP over 8 GPUs: each GPU holds the 16,000,000 B model plus DDP's gradient buckets (a second
  // copy of the fp32 gradients, 1,000,000 x 4 B); each rank needs 512 / 8 = 64 rows of the 86 that fit:
  // no accumulation, 64 x 1 x 8 = 512.
  EstimateRequest r = base();
  r.parallel = ParallelLayout{};
  r.parallel->gpus = 8;
  const uint64_t memory = 16000000 + 4000000 + 86 * 1000;
  const BatchPlan ddp = max_batch(r, memory, 512);
  CHECK(ddp.max_micro_batch == 86);
  CHECK(ddp.data_parallel_ranks == 8);
  CHECK(ddp.accumulation_steps == 1);
  CHECK(ddp.micro_batch == 64);
  CHECK(ddp.effective_batch == 512);
  // tp 2 x pp 1 over the 8: 4 ranks, dp from gpus / (tp x pp).
  r.parallel->tp = 2;
  CHECK(data_parallel_ranks(r) == 4);
  r.parallel->dp = 2;
  r.parallel->gpus = 4;
  CHECK(data_parallel_ranks(r) == 2);
}
