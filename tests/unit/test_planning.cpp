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
