// The step's events replayed through torch's caching allocator (step_replay.hpp), with the two
// caches a search relies on: replays by their event list's fingerprint, and event fingerprints by
// request (step_request_key), so a plan met again is neither rebuilt nor replayed.
#include "core/memory/step_replay.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/memory/caching_allocator.hpp"
#include "core/memory/step_events.hpp"
#include "core/memory/step_request_key.hpp"

namespace memplan {
namespace {

// A replayed event list's fingerprint: its length, the segments mode, and two 64-bit hashes of
// every field of every event (a false match needs both to collide: about 2^-128 a pair of lists).
struct ReplayKey {
  uint64_t h1 = 0;
  uint64_t h2 = 0;
  uint64_t events = 0;
  bool expandable = false;
  bool operator==(const ReplayKey& o) const {
    return h1 == o.h1 && h2 == o.h2 && events == o.events && expandable == o.expandable;
  }
};

ReplayKey replay_key(const std::vector<StepEvent>& events, bool expandable) {
  ReplayKey k;
  k.events = events.size();
  k.expandable = expandable;
  uint64_t h1 = 0x9e3779b97f4a7c15ull;
  uint64_t h2 = 0xc2b2ae3d27d4eb4full;
  for (const StepEvent& ev : events) {
    const uint64_t tag = (ev.id << 17) ^ (static_cast<uint64_t>(ev.alloc) << 16) ^
                         (static_cast<uint64_t>(ev.phase) << 8) ^ ev.step;
    h1 = (h1 ^ ev.bytes) * 0x100000001b3ull;
    h1 = (h1 ^ tag) * 0x100000001b3ull;
    h2 = ((h2 << 23) | (h2 >> 41)) ^ (ev.bytes * 0xff51afd7ed558ccdull);
    h2 = ((h2 << 29) | (h2 >> 35)) ^ (tag * 0xc4ceb9fe1a85ec53ull);
  }
  k.h1 = h1;
  k.h2 = h2 ^ (h2 >> 31);
  return k;
}

// The last k_replay_cache_size replays' results by fingerprint: a search meets the same plan
// again (advise's knobs and chains, estimate's fixes for each GPU of the fit table: each GPU's search
// replays the same candidates, since the replay does not depend on the GPU).
constexpr size_t k_replay_cache_size = 512;

// The last k_replay_cache_size requests' event fingerprints, by step_request_key: a hit whose
// fingerprint is still among the cached replays skips building the events (a search's probes, the
// same plan estimated again). The replay cache alone decides what is replayed, as without this.
struct RequestKeyEntry {
  uint64_t hash = 0;
  std::string key;
  ReplayKey events;
};

uint64_t request_key_hash(const std::string& key) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : key) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

// What a replay reuses from one call to the next on a thread: the event list and the allocator's
// tables (a search replays hundreds of plans; none of them allocates once these have grown).
struct ReplayScratch {
  std::vector<StepEvent> events;
  CachingAllocator allocator;
  CachingAllocator snapshot;  // the allocator at the start of the second-last step
  uint64_t fixed_points = 0;  // replays whose last step was found to repeat the one before
  std::vector<std::pair<ReplayKey, ReservedPeak>> cache;  // filled round-robin
  size_t next = 0;
  std::string request_key;
  std::vector<RequestKeyEntry> requests;  // filled round-robin
  size_t next_request = 0;
};

ReplayScratch& replay_scratch() {
  thread_local ReplayScratch scratch;
  return scratch;
}

}  // namespace

namespace {

// Whether the events from `last` to the end (the last step) are those of [second_last, last) (the
// step before) with their ids renamed by f: an id below `ids_before` (a tensor made before the
// step before) kept, any other moved by one constant D >= 0, f being one-to-one. Then, if the
// allocator holds the same state at `last` as it held at `second_last` (every block, pool and
// statistic, and the same block behind every live id: all of them below ids_before), each request
// of the last step meets what the corresponding one of the step before met, by induction: the same
// block is taken, split, merged or freed (a renamed id has the live block its original had, an id
// the step before never named is not live in either), so every statistic follows the same path,
// its peaks included, and the last step ends with the statistics it started with. Replaying it would
// change nothing but the count of tensors.
bool repeats_last_step(const std::vector<StepEvent>& events, size_t second_last, size_t last,
                       uint64_t ids_before) {
  if (events.size() - last != last - second_last) return false;
  const uint8_t step = events[last].step;
  bool shifted = false;
  uint64_t shift = 0;
  for (size_t k = 0; k < last - second_last; ++k) {
    const StepEvent& x = events[second_last + k];
    const StepEvent& y = events[last + k];
    if (x.step + 1 != step || y.step != step || x.bytes != y.bytes || x.alloc != y.alloc ||
        x.phase != y.phase)
      return false;
    if (x.id < ids_before) {
      if (y.id != x.id) return false;
      continue;
    }
    if (!shifted) {
      if (y.id < x.id) return false;
      shift = y.id - x.id;
      shifted = true;
    }
    if (y.id - x.id != shift || y.id < x.id) return false;
  }
  return true;
}

// The replay of `events` (already built into the scratch) under `key`, or its cached result.
ReservedPeak replay_events(ReplayScratch& scratch, const ReplayKey& key, bool expandable_segments,
                           uint64_t stop_above) {
  ReservedPeak out;
  const std::vector<StepEvent>& events = scratch.events;
  for (const auto& [k, peak] : scratch.cache)
    if (k == key) return peak;
  CachingAllocator& a = scratch.allocator;
  a.reset(AllocatorConfig{expandable_segments, 0});
  uint64_t now = 0;
  // The last two steps' bounds, for the fixed point (repeats_last_step); none: no such step.
  const size_t none = events.size() + 1;
  size_t second_last = none;
  size_t last = none;
  for (size_t i = 0; i < events.size(); ++i) {
    if (second_last == none && events[i].step + 1 >= k_replayed_steps) second_last = i;
    if (events[i].step >= k_replayed_steps) {
      last = i;
      break;
    }
  }
  if (k_replayed_steps < 2 || last == none || second_last >= last) second_last = last = none;
  uint64_t ids_before = 0;  // 1 + the largest id of the events before the second-last step
  uint64_t now_at_second_last = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const StepEvent& ev = events[i];
    if (i == second_last) {
      scratch.snapshot.copy_from(a);
      now_at_second_last = now;
    } else if (i == last && now == now_at_second_last && a.same_state(scratch.snapshot) &&
               repeats_last_step(events, second_last, last, ids_before)) {
      // The last step starts where the one before started and makes the same requests: it repeats
      // it, to the same peaks and the same final state (repeats_last_step): only its tensors count.
      for (size_t k = last; k < events.size(); ++k) out.tensors += events[k].alloc ? 1 : 0;
      ++scratch.fixed_points;
      break;
    }
    if (i < second_last) ids_before = std::max(ids_before, ev.id + 1);
    if (ev.alloc) {
      a.malloc(ev.id, ev.bytes);
      now += ev.bytes;
      out.requested_peak = std::max(out.requested_peak, now);
      ++out.tensors;
      if (a.stats().peak_reserved > out.reserved_peak) {
        out.reserved_peak = a.stats().peak_reserved;
        out.reserved_phase = ev.phase;
        out.reserved_step = ev.step;
        if (out.reserved_peak > stop_above) break;
      }
    } else {
      a.free(ev.id);
      now -= ev.bytes;
    }
  }
  out.present = true;
  out.expandable_segments = expandable_segments;
  out.allocated_peak = a.stats().peak_allocated;
  out.segments = a.stats().segments;
  out.steps = k_replayed_steps;
  if (out.reserved_peak > stop_above) return out;  // stopped early: not the whole step's figures
  if (scratch.cache.size() < k_replay_cache_size)
    scratch.cache.emplace_back(key, out);
  else
    scratch.cache[scratch.next] = {key, out};
  scratch.next = (scratch.next + 1) % k_replay_cache_size;
  return out;
}

}  // namespace

ReservedPeak replay_reserved(const EstimateRequest& r, const Estimate& e, bool expandable_segments,
                             uint64_t stop_above) {
  if (!e.timeline.present || r.device != Device::cuda) return ReservedPeak{};
  ReplayScratch& scratch = replay_scratch();
  build_step_events(r, e, k_replayed_steps, scratch.events);
  return replay_events(scratch, replay_key(scratch.events, expandable_segments), expandable_segments,
                       stop_above);
}

uint64_t replay_fixed_points() { return replay_scratch().fixed_points; }

ReservedPeak replay_request(const EstimateRequest& r, const Estimate& e, bool expandable_segments,
                            uint64_t stop_above) {
  if (!e.timeline.present || r.device != Device::cuda) return ReservedPeak{};
  ReplayScratch& scratch = replay_scratch();
  const std::string& rkey = step_request_key(r, expandable_segments, scratch.request_key);
  const uint64_t hash = request_key_hash(rkey);
  for (const RequestKeyEntry& q : scratch.requests) {
    if (q.hash != hash || q.key != rkey) continue;
    for (const auto& [k, peak] : scratch.cache)
      if (k == q.events) return peak;
    break;  // the replay is no longer cached: build the events and replay them
  }
  build_step_events(r, e, k_replayed_steps, scratch.events);
  const ReplayKey key = replay_key(scratch.events, expandable_segments);
  RequestKeyEntry* slot = nullptr;
  for (RequestKeyEntry& q : scratch.requests)
    if (q.hash == hash && q.key == rkey) slot = &q;
  if (!slot) {
    if (scratch.requests.size() < k_replay_cache_size) {
      slot = &scratch.requests.emplace_back();
    } else {
      slot = &scratch.requests[scratch.next_request];
    }
    scratch.next_request = (scratch.next_request + 1) % k_replay_cache_size;
    slot->hash = hash;
    slot->key = rkey;
  }
  slot->events = key;
  return replay_events(scratch, key, expandable_segments, stop_above);
}

}  // namespace memplan
