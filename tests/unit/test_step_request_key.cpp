// The request key that lets a replay skip building its events (step_request_key.hpp): any field the
// events can depend on changes it, the fields read only around the replay do not, and a replay found
// by it equals the replay of freshly built events.

#include <catch2/catch.hpp>

#include <string>

#include <memplan/estimate.hpp>
#include <memplan/optimizer.hpp>
#include <memplan/presets.hpp>
#include <memplan/recipe.hpp>
#include "core/memory/step_events.hpp"
#include "core/memory/step_replay.hpp"
#include "core/memory/step_request_key.hpp"

using namespace memplan;

namespace {

EstimateRequest keyed_request(uint64_t batch, uint64_t seq) {
  EstimateRequest r;
  r.model = find_model(builtin_presets(), "--model", "llama-2-7b").model;
  r.recipe = parse_recipe("--precision", "amp-bf16");
  r.optimizer = parse_optimizer("--optimizer", "adamw");
  r.batch = batch;
  r.seq = seq;
  return r;
}

std::string key_of(const EstimateRequest& r, bool expandable = false) {
  std::string out;
  return step_request_key(r, expandable, out);
}

}  // namespace

TEST_CASE("step request key: what the events depend on changes it", "[step_events]") {
  const EstimateRequest base = keyed_request(4, 2048);
  const std::string k = key_of(base);
  CHECK(key_of(base) == k);
  CHECK(key_of(base, true) != k);

  EstimateRequest r = base;
  r.overhead_bytes += 1;  // read after the replay only
  r.replay_below = 123;   // where the replay may stop
  CHECK(key_of(r) == k);

  r = base;
  r.seq = 2049;
  CHECK(key_of(r) != k);
  r = base;
  r.batch = 5;
  CHECK(key_of(r) != k);
  r = base;
  r.model.arch->activation = "gelu";  // a string inside an optional
  CHECK(key_of(r) != k);
  r = base;
  r.model.arch->hidden_dropout = 0.1;  // a double
  CHECK(key_of(r) != k);
  r = base;
  r.lora = LoraTargets{};  // an optional that appears
  CHECK(key_of(r) != k);
  r = base;
  r.recipe.activations.cost = ElementCost{4, 1};
  CHECK(key_of(r) != k);
  r = base;
  r.model.notes.push_back("");  // an empty string added to a list
  CHECK(key_of(r) != k);
  r = base;
  r.expandable_segments = true;
  CHECK(key_of(r) != k);
  r = base;
  r.torch.minor = 1;
  CHECK(key_of(r) != k);
}

TEST_CASE("step request key: a replay found by the request equals the fresh replay", "[step_events]") {
  const EstimateRequest r = keyed_request(2, 1024);
  const Estimate first = estimate(r);
  REQUIRE(first.timeline.reserved.present);
  // Past both caches (512 plans each): the first plan is replayed again from its events.
  for (uint64_t seq = 1; seq <= 520; ++seq) (void)estimate(keyed_request(1, seq));
  const Estimate again = estimate(r);
  const Estimate hit = estimate(r);
  const ReservedPeak fresh = replay_reserved(r, hit, r.expandable_segments);
  for (const ReservedPeak* p : {&again.timeline.reserved, &hit.timeline.reserved}) {
    CHECK(p->reserved_peak == fresh.reserved_peak);
    CHECK(p->allocated_peak == fresh.allocated_peak);
    CHECK(p->requested_peak == fresh.requested_peak);
    CHECK(p->segments == fresh.segments);
    CHECK(p->tensors == fresh.tensors);
    CHECK(p->reserved_phase == fresh.reserved_phase);
    CHECK(p->reserved_step == fresh.reserved_step);
  }
  CHECK(first.timeline.reserved.reserved_peak == fresh.reserved_peak);
  CHECK(fresh.reserved_peak >= fresh.allocated_peak);
}
