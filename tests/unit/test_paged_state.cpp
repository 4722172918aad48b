// bitsandbytes' paged optimizers: the state of every tensor of 100,000 numbers or more lives in
// CUDA unified memory (bitsandbytes/optim/optimizer.py, Optimizer8bit.get_state_buffer: tensors with
// `p.numel() < 1e5` get torch.zeros_like, the others F.get_paged = cudaMallocManaged), so the GPU
// term keeps only the small tensors' state. Expected values come from the checkpoints' tensor lists.
#include <catch2/catch.hpp>

#include <memplan/estimate.hpp>
#include <memplan/presets.hpp>

#include "core/memory/paged_state.hpp"

using namespace memplan;

namespace {

EstimateRequest llama2_7b(const char* optimizer) {
  EstimateRequest r;
  r.model = find_model(builtin_presets(), "--model", "llama-2-7b").model;
  r.recipe = parse_recipe("--precision", "bf16");
  r.optimizer = parse_optimizer("--optimizer", optimizer);
  r.seq = 1024;
  r.batch = 1;
  return r;
}

}  // namespace

TEST_CASE("paged state: Llama-2-7B's 291 tensors, 226 of them matrices of 1e5+ numbers", "[paged]") {
  // model.safetensors.index.json of meta-llama/Llama-2-7b-hf: per layer q,k,v,o,gate,up,down
  // (7 matrices) and 2 RMSNorm weights of 4096; embed_tokens, lm_head and the final norm.
  const ModelSpec m = find_model(builtin_presets(), "--model", "llama-2-7b").model;
  const PagedShare s = paged_share(m, std::nullopt, m.parameters);
  REQUIRE(s.known);
  CHECK(s.tensors == 32 * 7 + 2);
  CHECK(s.elements == 6'738'415'616ull - (32 * 2 + 1) * 4096);
}

TEST_CASE("paged state: LoRA r=8 on q,v stays on the GPU, r=64 is paged", "[paged]") {
  const ModelSpec m = find_model(builtin_presets(), "--model", "llama-2-7b").model;
  // r=8: A is 8 x 4096 = 32,768 numbers, B 4096 x 8: both under 1e5.
  const LoraAdapters r8 = lora_adapters(m, parse_lora_targets("--lora-targets", "q,v", 8));
  CHECK(paged_share(m, r8, r8.parameters).elements == 0);
  // r=64: 262,144 numbers each: all 32 x 2 x 2 = 128 tensors.
  const LoraAdapters r64 = lora_adapters(m, parse_lora_targets("--lora-targets", "q,v", 64));
  const PagedShare s = paged_share(m, r64, r64.parameters);
  CHECK(s.tensors == 128);
  CHECK(s.elements == r64.parameters);
}

TEST_CASE("paged state: the optimizer term keeps only the GPU share", "[paged]") {
  // paged-adamw: float32 exp_avg and exp_avg_sq for the 65 norm weights only (bitsandbytes keeps
  // its step as a Python int: no step tensor).
  const Estimate e = estimate(llama2_7b("paged-adamw"));
  CHECK(e.bytes(TermKind::optimizer_state) == 65ull * 4096 * 2 * 4);
  // paged-adamw-8bit: the same norms at 1 B per state + 4 B absmax per 256-element block.
  const Estimate e8 = estimate(llama2_7b("paged-adamw-8bit"));
  CHECK(e8.bytes(TermKind::optimizer_state) == 65ull * 4096 * 2 * 260 / 256);
  // QLoRA with Lit-GPT's PagedAdamW, r=8 on q,v: every adapter is small, so all of the state is
  // on the GPU, in float32 whatever the adapters' format: 4,194,304 x 2 x 4 B.
  EstimateRequest q = llama2_7b("paged-adamw");
  q.lora = parse_lora_targets("--lora-targets", "q,v", 8);
  q.lora->fp32_adapters = false;
  CHECK(estimate(q).bytes(TermKind::optimizer_state) == 4'194'304ull * 2 * 4);
}

TEST_CASE("paged state: shapes unknown keep all state on the GPU", "[paged]") {
  ModelSpec m;
  m.parameters = 1'000'000'000;
  CHECK_FALSE(paged_share(m, std::nullopt, m.parameters).known);
}
