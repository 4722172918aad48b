// The estimate against independently known numbers: the lesson's worked table (README.md,
// "The lesson's table, reproduced"), hand arithmetic for each recipe and optimizer, and the invariants.
#include <catch2/catch.hpp>

#include <memplan/error.hpp>
#include <memplan/estimate.hpp>
#include <memplan/presets.hpp>
#include <memplan/quantity.hpp>

using namespace memplan;

namespace {

EstimateRequest request(uint64_t params, const char* precision, const char* optimizer,
                        Mode mode = Mode::train) {
  EstimateRequest r;
  r.model.id = "custom";
  r.model.parameters = params;
  r.recipe = parse_recipe("--precision", precision);
  r.optimizer = parse_optimizer("--optimizer", optimizer);
  r.mode = mode;
  return r;
}

void check_invariants(const Estimate& e) {
  uint64_t sum = 0;
  for (const Term& t : e.terms)
    if (t.kind != TermKind::overhead && e.has(t.kind)) sum += t.bytes;
  CHECK(e.total_bytes() == sum);
  CHECK(e.required_bytes() == e.total_bytes() + e.bytes(TermKind::overhead));
}

}  // namespace

TEST_CASE("the lesson's worked table reproduces exactly", "[estimate][lesson]") {
  // 7B, fp32, AdamW, full fine-tune: 7e9 x (4 + 4 + 2 x 4) = 112,000,000,000 B = 104.3 GiB.
  Estimate fp32 = estimate(request(7000000000, "fp32", "adamw"));
  CHECK(fp32.total_bytes() == 112000000000ull);
  CHECK(format_bytes(fp32.total_bytes(), Units::gib) == "104.3 GiB");
  check_invariants(fp32);

  // 7B, fp16 everywhere, AdamW: 7e9 x (2 + 2 + 2 x 2) = 56,000,000,000 B = 52.2 GiB.
  Estimate fp16 = estimate(request(7000000000, "fp16", "adamw"));
  CHECK(fp16.total_bytes() == 56000000000ull);
  CHECK(format_bytes(fp16.total_bytes(), Units::gib) == "52.2 GiB");

  // 7B, fp16, inference: 7e9 x 2 = 14,000,000,000 B = 13.0 GiB.
  Estimate infer = estimate(request(7000000000, "fp16", "none", Mode::infer));
  CHECK(infer.total_bytes() == 14000000000ull);
  CHECK(format_bytes(infer.total_bytes(), Units::gib) == "13.0 GiB");
  CHECK(infer.bytes(TermKind::gradients) == 0);
  CHECK(infer.bytes(TermKind::optimizer_state) == 0);

  // 7B, fp16, LoRA 0.2%: 13.0 GiB + 14e6 x (2 + 2 x 2) = 84,000,000 B = 0.078 GiB.
  EstimateRequest lora = request(7000000000, "fp16", "adamw");
  lora.trainable = 0.002;
  Estimate l = estimate(lora);
  CHECK(l.trainable_parameters == 14000000ull);
  CHECK(l.bytes(TermKind::parameters) == 14000000000ull);
  CHECK(l.total_bytes() - l.bytes(TermKind::parameters) == 84000000ull);
}

TEST_CASE("a bare byte count and a bare copy count are the lesson's estimator", "[estimate][lesson]") {
  Estimate e = estimate(request(7000000000, "4", "2"));
  CHECK(e.total_bytes() == 112000000000ull);
  Estimate half = estimate(request(7000000000, "0.5", "0", Mode::train));
  CHECK(half.total_bytes() == 7000000000ull);  // 3.5e9 weights + 3.5e9 gradients, no state
}

TEST_CASE("precision recipes keep each term in its own format", "[estimate][recipe]") {
  const uint64_t p = 1000000000;
  // autocast: fp32 weights, gradients and two fp32 Adam states = 16 B per parameter.
  Estimate amp = estimate(request(p, "amp-bf16", "adam"));
  CHECK(amp.bytes(TermKind::parameters) == 4 * p);
  CHECK(amp.bytes(TermKind::gradients) == 4 * p);
  CHECK(amp.bytes(TermKind::optimizer_state) == 8 * p);
  // master-weight mixed precision: 2 + 2 + (4 master + 4 + 4) = 16 B per parameter (ZeRO's 16P).
  Estimate mixed = estimate(request(p, "mixed-fp16", "adam"));
  CHECK(mixed.bytes(TermKind::parameters) == 2 * p);
  CHECK(mixed.bytes(TermKind::gradients) == 2 * p);
  CHECK(mixed.bytes(TermKind::optimizer_state) == 12 * p);
  CHECK(mixed.total_bytes() == 16 * p);
  // pure bf16 with AdamW: 2 + 2 + 2 x 2 = 8 B per parameter.
  CHECK(estimate(request(p, "bf16", "adamw")).total_bytes() == 8 * p);
}

TEST_CASE("optimizer state copies follow the lesson", "[estimate][optimizer]") {
  const uint64_t p = 1000;
  CHECK(estimate(request(p, "fp32", "sgd")).bytes(TermKind::optimizer_state) == 0);
  CHECK(estimate(request(p, "fp32", "sgd-momentum")).bytes(TermKind::optimizer_state) == 4 * p);
  CHECK(estimate(request(p, "fp32", "adamw")).bytes(TermKind::optimizer_state) == 8 * p);
  CHECK(estimate(request(p, "fp32", "adagrad")).bytes(TermKind::optimizer_state) == 4 * p);
  CHECK(estimate(request(p, "fp32", "rmsprop")).bytes(TermKind::optimizer_state) == 4 * p);
  CHECK(estimate(request(p, "fp32", "rmsprop-momentum")).bytes(TermKind::optimizer_state) == 8 * p);
  CHECK(estimate(request(p, "fp32", "lion")).bytes(TermKind::optimizer_state) == 4 * p);
  // bitsandbytes 8-bit: 2 x (1 B + 4 B / 256) per parameter: 1024 params -> 2 x (1024 + 16).
  CHECK(estimate(request(1024, "fp32", "adamw-8bit")).bytes(TermKind::optimizer_state) == 2080);
}

TEST_CASE("Adam's step counters count 4 B per parameter tensor when the tensors are known",
          "[estimate][optimizer]") {
  const ModelPreset& llama = find_model(builtin_presets(), "--model", "llama-2-7b");
  // Llama-2-7B: 32 layers x 9 tensors + embeddings + final norm + lm_head = 291 tensors.
  CHECK(llama.model.tensors == 291);
  EstimateRequest r = request(1, "fp32", "adamw");
  r.model = llama.model;
  Estimate e = estimate(r);
  CHECK(e.bytes(TermKind::optimizer_state) == 8ull * 6738415616ull + 4 * 291);
  // SGD-momentum keeps no step counter.
  r.optimizer = parse_optimizer("--optimizer", "sgd-momentum");
  CHECK(estimate(r).bytes(TermKind::optimizer_state) == 4ull * 6738415616ull);
}

TEST_CASE("quantised frozen weights (QLoRA) cost their block constants", "[estimate][quantize]") {
  EstimateRequest r = request(7000000000, "bf16", "adamw");
  r.trainable = 0.002;
  r.quantize = StorageFormatId::nf4;
  Estimate e = estimate(r);
  // frozen 6,986,000,000 x 4.5 bits = 3,929,625,000 B; trainable 14e6 x 2 B = 28e6 B.
  CHECK(e.bytes(TermKind::parameters) == 3929625000ull + 28000000ull);
  EstimateRequest inf = request(7000000000, "fp16", "none", Mode::infer);
  inf.quantize = StorageFormatId::int4;
  CHECK(estimate(inf).bytes(TermKind::parameters) == 3500000000ull);
}

TEST_CASE("activations are linear in batch", "[estimate][activations]") {
  EstimateRequest r = request(1000000, "fp32", "adamw");
  r.activation_bytes_per_row = 12345;
  r.batch = 1;
  const uint64_t one = estimate(r).bytes(TermKind::activations);
  r.batch = 256;
  CHECK(estimate(r).bytes(TermKind::activations) == 256 * one);
  check_invariants(estimate(r));
}

TEST_CASE("absurd inputs overflow into an error, never a wrong number", "[estimate][overflow]") {
  EstimateRequest r = request(1000000000000000ull, "fp32", "adamw");
  r.activation_bytes_per_row = 1ull << 50;
  r.batch = 1ull << 40;
  CHECK_THROWS_AS(estimate(r), OverflowError);
}
