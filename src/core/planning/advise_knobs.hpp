#pragma once
// The knob table behind advise(): each knob maps a run to its settings, mildest first. Data,
// not if-chains: advise_search.cpp walks the table for single changes and combines its rows
// breadth-first for combinations.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <memplan/estimate.hpp>
#include <memplan/gpu.hpp>
#include "core/planning/advise.hpp"

namespace memplan::advice {

// A run part-way along a chain of knobs: the request (placement in request.parallel) and what
// was changed to get it.
struct Candidate {
  EstimateRequest request;
  std::vector<AdviceChange> changes;
};

// `c` with `r` as its request and `change` appended to its chain.
inline Candidate with(const Candidate& c, EstimateRequest r, AdviceChange change) {
  Candidate out = c;
  out.request = std::move(r);
  out.changes.push_back(std::move(change));
  return out;
}

struct KnobContext {
  const GpuSpec& gpu;
  uint64_t memory = 0;  // usable bytes of the GPU
  const AdviceOptions& options;
};

// When a knob runs in a chain: transforms change the request; solvers find the largest batch or
// sequence that fits what the chain has made so far; placements spread the result over GPUs.
enum class Stage { transform = 0, solve = 1, place = 2 };

// A combination holds at most one knob of a group.
enum class KnobGroup { batch, precision, sequence, checkpointing, optimizer, adapters, placement, kv_cache };

struct Knob {
  AdviceKnob knob;
  KnobGroup group;
  int tier;
  Stage stage;
  // The knob's settings for `c`, mildest first; empty when it does not apply or changes nothing.
  std::vector<Candidate> (*apply)(const Candidate& c, const KnobContext& ctx);
};

// Every knob, in the playbook's order (tier, then cost within the tier).
const std::vector<Knob>& knob_table();

// Required bytes of a candidate on its most-loaded GPU (overhead included).
uint64_t required_bytes(const Candidate& c);

// The settings of knob `k` for `c`; none when the knob cannot apply to it (an Error).
std::vector<Candidate> apply_knob(const Knob& k, const Candidate& c, const KnobContext& ctx);

// A candidate as a suggestion judged against the context's GPU.
// `exact_above_fit`: false replays the caching allocator only where the allocated peak + overhead
// fits (EstimateRequest::replay_below): a suggestion that does not fit then carries that lower
// bound, which is enough for a caller that keeps only fitting ones.
Suggestion to_suggestion(const Candidate& c, const KnobContext& ctx, bool exact_above_fit = true);

// Combinations of 2..options.max_knobs knobs (one per group) that fit and hold no fitting subset,
// cheapest first. `singles`: apply_knob of each knob_table() row on `base`, by index;
// `fitting_singles`: indices into knob_table() of knobs that fit alone.
// Breadth-first by size; stops after options.max_candidates chains (`capped`).
std::vector<Suggestion> search_combinations(const Candidate& base, const KnobContext& ctx,
                                            const std::vector<std::vector<Candidate>>& singles,
                                            const std::vector<std::size_t>& fitting_singles,
                                            std::size_t& tried, bool& capped);

// The cheapest (tier, cost rank) any setting of knob `k` can have (the ranks advise_knobs*.cpp give):
// every change the knob makes ranks at least this.
std::pair<int, int> knob_floor(AdviceKnob k, Mode mode);

// The most settings knob `k`'s apply function returns for one candidate (advise_knobs*.cpp; a unit
// test holds each knob to it): what bounds the candidates a combination search can try.
std::size_t knob_max_settings(AdviceKnob k);

// search_combinations(...).front() (the cheapest combination by cost rank, then required bytes, then
// the search's order), without evaluating the sets that cannot beat it: a set whose knobs' cost floors
// already exceed the cheapest fitting combination found is skipped (so are its supersets: their floors
// are higher still), and the sets of a size are tried cheapest floor first. Exact where
// search_combinations cannot reach max_candidates (else it runs search_combinations itself).
std::optional<Suggestion> cheapest_combination(const Candidate& base, const KnobContext& ctx,
                                               const std::vector<std::vector<Candidate>>& singles,
                                               const std::vector<std::size_t>& fitting_singles);

}  // namespace memplan::advice
