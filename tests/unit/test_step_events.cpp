// The tensor-level step (step_events.hpp) against the step timeline it refines: the same bytes at a
// finer grain, so its steady-state allocated peak is the timeline's peak, every alloc is freed by
// the end of a step except what must stay (weights, state, workspaces), and the caching allocator's
// replay never reserves less than it allocates.

#include <catch2/catch.hpp>

#include <map>

#include <memplan/estimate.hpp>
#include <memplan/lora.hpp>
#include <memplan/optimizer.hpp>
#include <memplan/presets.hpp>
#include <memplan/recipe.hpp>
#include "core/memory/step_events.hpp"

using namespace memplan;

namespace {

EstimateRequest train(const char* model, const char* precision, uint64_t batch, uint64_t seq) {
  EstimateRequest r;
  r.model = find_model(builtin_presets(), "--model", model).model;
  r.recipe = parse_recipe("--precision", precision);
  r.optimizer = parse_optimizer("--optimizer", "adamw");
  r.batch = batch;
  r.seq = seq;
  return r;
}

}  // namespace

TEST_CASE("step events: the allocated peak is the timeline's peak", "[step_events]") {
  std::vector<EstimateRequest> cases;
  cases.push_back(train("bert-large-uncased", "fp32", 4, 512));
  cases.back().attention = Attention::eager;
  cases.push_back(train("bert-large-uncased", "amp-fp16", 4, 512));
  cases.back().attention = Attention::eager;
  cases.push_back(train("bert-large-uncased", "fp32", 1, 512));
  cases.back().grad_accum = 4;
  cases.back().grads_kept = true;
  cases.back().optimizer_loop = OptimizerLoop::per_tensor;
  cases.push_back(train("gpt2", "bf16", 8, 1024));
  cases.push_back(train("llama-2-7b", "bf16", 2, 2048));
  cases.push_back(train("llama-2-7b", "bf16", 4, 512));
  cases.back().lora = parse_lora_targets("--lora-targets", "q_proj,v_proj", 16);
  // The per-tensor loops of transformers' optimizers (optimizer_loop.hpp), where the optimizer step
  // is the peak: Adafactor with fp32 and with half weights (+ the fp32 copies), AdamW.
  for (const char* precision : {"amp-fp16", "bf16"}) {
    cases.push_back(train("bert-large-uncased", precision, 1, 512));
    cases.back().optimizer = parse_optimizer("--optimizer", "adafactor");
    cases.back().checkpointing = Checkpointing::full;
  }
  cases.push_back(train("bert-large-uncased", "fp32", 1, 128));
  cases.back().optimizer = parse_optimizer("--optimizer", "adamw-hf");
  cases.push_back(train("llama-2-7b", "bf16", 1, 512));
  cases.back().optimizer = parse_optimizer("--optimizer", "adafactor");
  cases.back().lora = parse_lora_targets("--lora-targets", "q_proj,v_proj", 16);
  for (const EstimateRequest& r : cases) {
    const Estimate e = estimate(r);
    REQUIRE(e.timeline.present);
    const std::vector<StepEvent> ev = step_events(r, e, 3);
    INFO(r.model.id << " batch " << r.batch);
    CHECK(requested_peak(ev, 2) == e.timeline.peak_bytes);
    CHECK(e.timeline.reserved.requested_peak == e.timeline.peak_bytes);
    CHECK(e.timeline.reserved.reserved_peak >= e.timeline.reserved.allocated_peak);
    CHECK(e.timeline.reserved.allocated_peak >= e.timeline.peak_bytes);
  }
}

TEST_CASE("step events: each step frees what it makes", "[step_events]") {
  EstimateRequest r = train("gpt2", "bf16", 4, 1024);
  const Estimate e = estimate(r);
  const std::vector<StepEvent> ev = step_events(r, e, 3);
  std::map<uint64_t, uint64_t> live;
  for (const StepEvent& x : ev) {
    if (x.alloc) {
      CHECK(live.count(x.id) == 0);
      live[x.id] = x.bytes;
    } else {
      REQUIRE(live.count(x.id) == 1);
      CHECK(live[x.id] == x.bytes);
      live.erase(x.id);
    }
  }
  uint64_t left = 0;
  for (const auto& kv : live) left += kv.second;
  // After zero_grad(set_to_none=True): weights, optimizer state and the two cuBLAS workspaces.
  CHECK(left == e.bytes(TermKind::parameters) + e.bytes(TermKind::optimizer_state) +
                    k_cublas_workspaces * k_cublas_workspace_bytes);
}

TEST_CASE("step events: full checkpointing rebuilds one layer at a time", "[step_events]") {
  EstimateRequest r = train("llama-2-7b", "bf16", 1, 4096);
  r.checkpointing = Checkpointing::full;
  const Estimate e = estimate(r);
  const std::vector<StepEvent> ev = step_events(r, e, 3);
  // The sequence's peak is the timeline's, or above it by no more than one rebuilt layer: the
  // layer gradients made before the last rebuild are alive with it (the timeline counts the rebuilt
  // layer only at the start of backward).
  const uint64_t peak = requested_peak(ev, 2);
  CHECK(peak >= e.timeline.peak_bytes);
  CHECK(peak <= e.timeline.peak_bytes + e.term(TermKind::activations).bytes);
}

TEST_CASE("step events: expandable segments keep one segment per pool", "[step_events]") {
  EstimateRequest r = train("gpt2", "bf16", 8, 1024);
  r.checkpointing = Checkpointing::full;
  const Estimate plain = estimate(r);
  r.expandable_segments = true;
  const Estimate grown = estimate(r);
  const ReservedPeak& e = grown.timeline.reserved;
  REQUIRE(e.present);
  CHECK(e.expandable_segments);
  CHECK(e.segments <= 2);  // the small pool's and the large pool's (Note [Expandable Segments])
  CHECK(e.reserved_peak >= e.allocated_peak);
  CHECK(plain.timeline.reserved.segments > 2);
  // The same tensors; expandable blocks split whenever 512 B remain (should_split), so none keeps
  // the up-to-1-MiB tail a large block keeps otherwise.
  CHECK(e.requested_peak == plain.timeline.reserved.requested_peak);
  CHECK(e.allocated_peak <= plain.timeline.reserved.allocated_peak);
}

TEST_CASE("step events: no replay on cpu, where there is no caching allocator", "[step_events]") {
  EstimateRequest r = train("gpt2", "bf16", 2, 512);
  r.device = Device::cpu;
  const Estimate e = estimate(r);
  REQUIRE(e.timeline.present);
  CHECK_FALSE(e.timeline.reserved.present);
  CHECK(e.reserved_bytes() == e.peak_bytes());
  CHECK(e.required_bytes() == e.peak_bytes() + e.bytes(TermKind::overhead));
}
