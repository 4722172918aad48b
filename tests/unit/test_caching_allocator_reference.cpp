// The fast caching-allocator replay (chunked free pools, tables reused between replays, results
// cached by the event list's fingerprint) against the reference it replaced
// (reference_caching_allocator.hpp: one sorted vector per pool, a fresh allocator per replay): every
// statistic after every request, on random request sequences (with and without a capacity,
// expandable segments or not) and on the training steps of real plans, replayed twice. The replay's
// fixed point (step_replay.cpp: a last step that starts from the state the step before started from,
// with the same requests, is not replayed) against replaying every event.

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include <memplan/estimate.hpp>
#include <memplan/optimizer.hpp>
#include <memplan/presets.hpp>
#include <memplan/recipe.hpp>
#include "core/memory/caching_allocator.hpp"
#include "core/memory/step_events.hpp"
#include "core/memory/step_replay.hpp"
#include "reference_caching_allocator.hpp"

using namespace memplan;

namespace {

void require_same_stats(const AllocatorStats& a, const AllocatorStats& b) {
  REQUIRE(a.allocated == b.allocated);
  REQUIRE(a.reserved == b.reserved);
  REQUIRE(a.peak_allocated == b.peak_allocated);
  REQUIRE(a.peak_reserved == b.peak_reserved);
  REQUIRE(a.segments == b.segments);
  REQUIRE(a.peak_segments == b.peak_segments);
  REQUIRE(a.cuda_mallocs == b.cuda_mallocs);
  REQUIRE(a.releases == b.releases);
}

// Replays `events` through both allocators, comparing after each; `fast` is reused (reset) as the
// replay reuses its allocator.
void compare_events(CachingAllocator& fast, const std::vector<StepEvent>& events, AllocatorConfig config) {
  fast.reset(config);
  reference::ReferenceAllocator ref(config);
  for (const StepEvent& ev : events) {
    if (ev.alloc) {
      REQUIRE(fast.malloc(ev.id, ev.bytes) == ref.malloc(ev.id, ev.bytes));
    } else {
      fast.free(ev.id);
      ref.free(ev.id);
    }
    require_same_stats(fast.stats(), ref.stats);
    REQUIRE(fast.largest_free_block() == ref.largest_free_block());
  }
}

// A random mix of small, medium and large requests and frees of live ones.
std::vector<StepEvent> random_events(uint32_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> live;
  std::vector<StepEvent> out;
  uint64_t next = 1;
  const uint64_t sizes[] = {1,       512,      4096,      600'000,  1 << 20, (1 << 20) + 1,
                            5 << 20, 12 << 20, 100 << 20, 700 << 20};
  for (size_t i = 0; i < n; ++i) {
    if (!live.empty() && rng() % 5 < 2) {
      const size_t k = rng() % live.size();
      out.push_back({live[k], 0, false});
      live[k] = live.back();
      live.pop_back();
    } else {
      uint64_t bytes = sizes[rng() % 10];
      if (rng() % 2) bytes += rng() % (bytes + 1);
      out.push_back({next, bytes, true});
      live.push_back(next++);
    }
  }
  return out;
}

EstimateRequest plan(const char* model, const char* recipe, const char* optimizer, uint64_t seq,
                     uint64_t batch) {
  EstimateRequest r;
  r.model = find_model(builtin_presets(), "--model", model).model;
  r.recipe = parse_recipe("--precision", recipe);
  r.optimizer = parse_optimizer("--optimizer", optimizer);
  r.seq = seq;
  r.batch = batch;
  return r;
}

}  // namespace

TEST_CASE("allocator: the fast pools equal the reference on random sequences", "[allocator]") {
  CachingAllocator fast;
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    const std::vector<StepEvent> events = random_events(seed, 3000);
    compare_events(fast, events, AllocatorConfig{false, 0});
    compare_events(fast, events, AllocatorConfig{true, 0});
    compare_events(fast, events, AllocatorConfig{false, 3ull << 30});  // releases and failures
    compare_events(fast, events, AllocatorConfig{true, 2ull << 30});
  }
}

TEST_CASE("allocator: the fast replay equals the reference on real training steps", "[allocator]") {
  struct Case {
    const char* model;
    const char* recipe;
    const char* optimizer;
    uint64_t seq;
    uint64_t batch;
  };
  const Case cases[] = {{"llama-2-7b", "amp-bf16", "adamw", 2048, 4},
                        {"llama-2-7b", "fp32", "adamw", 512, 1},
                        {"gpt2", "amp-fp16", "adamw", 1024, 8},
                        {"gpt2", "fp32", "adafactor", 256, 3},
                        {"llama-2-7b", "bf16", "adamw-8bit", 1024, 2}};
  CachingAllocator fast;
  // The second pass finds every plan in the replay cache (step_events.cpp): the same figures.
  for (int pass = 0; pass < 2; ++pass)
    for (const Case& c : cases) {
      CAPTURE(pass, c.model, c.recipe, c.optimizer, c.seq, c.batch);
      const EstimateRequest r = plan(c.model, c.recipe, c.optimizer, c.seq, c.batch);
      const Estimate e = estimate(r);
      const std::vector<StepEvent> events = step_events(r, e, k_replayed_steps);
      REQUIRE(events.size() > 1000);
      compare_events(fast, events, AllocatorConfig{false, 0});
      compare_events(fast, events, AllocatorConfig{true, 0});
      // The replay estimate() ran (the reused allocator) reports the reference's peak.
      reference::ReferenceAllocator ref;
      for (const StepEvent& ev : events) ev.alloc ? (void)ref.malloc(ev.id, ev.bytes) : ref.free(ev.id);
      REQUIRE(e.timeline.reserved.present);
      CHECK(e.timeline.reserved.reserved_peak == ref.stats.peak_reserved);
      CHECK(e.timeline.reserved.allocated_peak == ref.stats.peak_allocated);
    }
}

namespace {

// Every event replayed, as replay_reserved did before the fixed point.
ReservedPeak fixed_point_full_replay(const std::vector<StepEvent>& events, bool expandable) {
  reference::ReferenceAllocator a(AllocatorConfig{expandable, 0});
  ReservedPeak out;
  uint64_t now = 0;
  for (const StepEvent& ev : events) {
    if (ev.alloc) {
      a.malloc(ev.id, ev.bytes);
      now += ev.bytes;
      out.requested_peak = std::max(out.requested_peak, now);
      ++out.tensors;
      if (a.stats.peak_reserved > out.reserved_peak) {
        out.reserved_peak = a.stats.peak_reserved;
        out.reserved_phase = ev.phase;
        out.reserved_step = ev.step;
      }
    } else {
      a.free(ev.id);
      now -= ev.bytes;
    }
  }
  out.allocated_peak = a.stats.peak_allocated;
  out.segments = a.stats.segments;
  return out;
}

EstimateRequest fixed_point_plan(const char* model, const char* recipe, const char* optimizer, uint64_t seq,
                                 uint64_t batch) {
  EstimateRequest r;
  r.model = find_model(builtin_presets(), "--model", model).model;
  r.recipe = parse_recipe("--precision", recipe);
  r.optimizer = parse_optimizer("--optimizer", optimizer);
  r.seq = seq;
  r.batch = batch;
  return r;
}

}  // namespace

TEST_CASE("replay fixed point: the figures of a full replay", "[allocator]") {
  std::vector<EstimateRequest> plans;
  plans.push_back(fixed_point_plan("llama-2-7b", "amp-bf16", "adamw", 2048, 4));
  plans.push_back(fixed_point_plan("llama-2-7b", "fp32", "adamw", 2048, 16));
  plans.push_back(fixed_point_plan("llama-2-7b", "fp32", "adamw", 512, 1));
  plans.push_back(fixed_point_plan("gpt2", "amp-fp16", "adamw", 1024, 8));
  plans.push_back(fixed_point_plan("gpt2", "fp32", "adafactor", 256, 3));
  plans.push_back(fixed_point_plan("llama-2-7b", "bf16", "adamw-8bit", 1024, 2));
  EstimateRequest accum = fixed_point_plan("gpt2", "amp-bf16", "adamw", 512, 4);
  accum.grad_accum = 3;
  plans.push_back(accum);
  EstimateRequest kept = fixed_point_plan("gpt2", "amp-bf16", "adamw", 512, 4);
  kept.grads_kept = true;
  plans.push_back(kept);
  EstimateRequest full = fixed_point_plan("llama-2-7b", "amp-bf16", "adamw", 2048, 2);
  full.checkpointing = Checkpointing::full;
  plans.push_back(full);
  EstimateRequest eager = fixed_point_plan("gpt2", "amp-fp16", "adamw", 1024, 2);
  eager.attention = Attention::eager;
  plans.push_back(eager);
  const size_t n = plans.size();
  for (size_t i = 0; i < n; ++i) {
    EstimateRequest x = plans[i];
    x.expandable_segments = true;
    plans.push_back(x);
  }
  const uint64_t before = replay_fixed_points();
  for (const EstimateRequest& r : plans) {
    CAPTURE(r.model.parameters, r.seq, r.batch, r.grad_accum, r.grads_kept, r.expandable_segments);
    const Estimate e = estimate(r);
    REQUIRE(e.timeline.reserved.present);
    const std::vector<StepEvent> events = step_events(r, e, k_replayed_steps);
    const ReservedPeak want = fixed_point_full_replay(events, r.expandable_segments);
    const ReservedPeak& got = e.timeline.reserved;
    CHECK(got.requested_peak == want.requested_peak);
    CHECK(got.allocated_peak == want.allocated_peak);
    CHECK(got.reserved_peak == want.reserved_peak);
    CHECK(got.segments == want.segments);
    CHECK(got.tensors == want.tensors);
    CHECK(got.reserved_phase == want.reserved_phase);
    CHECK(got.reserved_step == want.reserved_step);
  }
  // Some of these plans reach the fixed point (the shortcut is exercised, not only skipped).
  CHECK(replay_fixed_points() > before);
}

TEST_CASE("replay fixed point: the allocator state compared", "[allocator]") {
  CachingAllocator a;
  a.malloc(1, 4096);
  a.malloc(2, 30 << 20);
  a.free(1);
  CachingAllocator b;
  b.copy_from(a);
  CHECK(b.same_state(a));
  b.malloc(3, 4096);  // takes the cached block: the statistics agree, the blocks and live ids do not
  CHECK_FALSE(b.same_state(a));
  b.free(3);
  CHECK(b.same_state(a));  // merged back: the same blocks, pools and statistics
  CachingAllocator c;
  c.copy_from(a);
  c.free(2);
  CHECK_FALSE(c.same_state(a));
}
