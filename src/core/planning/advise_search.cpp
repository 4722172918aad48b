// The combination search of advise(): breadth-first over sets of 2-3 knobs from the table, one
// knob per group, keeping the sets that fit and hold no fitting subset, cheapest first.
#include <algorithm>
#include <cstdint>
#include <map>

#include <memplan/error.hpp>

#include "core/planning/advise_knobs.hpp"

namespace memplan::advice {
namespace {

using Mask = uint32_t;

// Every set of `size` indices out of `n`, in lexicographic order.
void subsets(std::size_t n, std::size_t size, std::size_t from, std::vector<std::size_t>& cur,
             std::vector<std::vector<std::size_t>>& out) {
  if (cur.size() == size) {
    out.push_back(cur);
    return;
  }
  for (std::size_t i = from; i < n; ++i) {
    cur.push_back(i);
    subsets(n, size, i + 1, cur, out);
    cur.pop_back();
  }
}

bool cheaper(const Suggestion& a, const Suggestion& b) {
  if (a.cost_rank != b.cost_rank) return a.cost_rank < b.cost_rank;
  return a.required_bytes < b.required_bytes;
}

}  // namespace

std::vector<Candidate> apply_knob(const Knob& k, const Candidate& c, const KnobContext& ctx) {
  try {
    return k.apply(c, ctx);
  } catch (const Error&) {
    return {};
  }
}

Suggestion to_suggestion(const Candidate& c, const KnobContext& ctx, bool exact_above_fit) {
  Suggestion s;
  s.changes = c.changes;
  s.request = c.request;
  EstimateRequest probe = c.request;
  if (!exact_above_fit) probe.replay_below = ctx.memory;
  const Estimate e = estimate(probe);
  s.required_bytes = e.required_bytes();
  s.memory_bytes = ctx.memory;
  s.gpu = ctx.gpu.id;
  s.gpus = c.request.parallel ? c.request.parallel->gpus : 1;
  s.host_bytes = e.sharded ? e.sharded->host_bytes_per_node : 0;
  s.verdict = verdict_for(s.required_bytes, s.memory_bytes);
  s.tier = 0;
  for (const AdviceChange& ch : c.changes) {
    s.tier = std::max(s.tier, ch.tier);
    s.cost_rank += ch.cost_rank;
  }
  return s;
}

namespace {

using Chains = std::map<std::vector<std::size_t>, std::vector<Candidate>>;

// The chains of the single knobs (and the empty chain, {base}) a search starts from.
Chains start_chains(const Candidate& base, const std::vector<std::vector<Candidate>>& singles) {
  Chains chains;
  chains.emplace(std::vector<std::size_t>{}, std::vector<Candidate>{base});
  for (std::size_t k = 0; k < singles.size(); ++k) chains.emplace(std::vector<std::size_t>{k}, singles[k]);
  return chains;
}

// The settings the knobs of `set` (indices, in the order applied) lead to. Sets that share a first knob
// or two after the stage sort share that work: each knob runs once per chain instead of once per set
// (it is a search of its own for the solvers and sharding).
const std::vector<Candidate>& chain_of(const std::vector<std::size_t>& set, const KnobContext& ctx,
                                       Chains& chains) {
  const std::vector<Knob>& table = knob_table();
  std::vector<std::size_t> applied;
  const std::vector<Candidate>* chain = &chains.begin()->second;  // the empty chain: {base}
  for (std::size_t k : set) {
    applied.push_back(k);
    auto [at, added] = chains.try_emplace(applied);
    if (added)
      for (const Candidate& c : *chain)
        for (Candidate& v : apply_knob(table[k], c, ctx)) at->second.push_back(std::move(v));
    chain = &at->second;
    if (chain->empty()) break;
  }
  return *chain;
}

// The sets of `size` knobs the search tries, in its order: one knob per group, transforms first, then
// the solvers (they fit the batch or sequence to what the transforms left), then placement. `mask`
// holds each set's knobs.
std::vector<std::vector<std::size_t>> sets_of(std::size_t size, std::vector<Mask>& masks) {
  const std::vector<Knob>& table = knob_table();
  std::vector<std::vector<std::size_t>> sets;
  std::vector<std::size_t> cur;
  subsets(table.size(), size, 0, cur, sets);
  std::vector<std::vector<std::size_t>> out;
  masks.clear();
  for (std::vector<std::size_t>& set : sets) {
    Mask mask = 0;
    bool clash = false;
    for (std::size_t i : set) {
      for (std::size_t j : set) clash = clash || (i < j && table[i].group == table[j].group);
      mask |= Mask{1} << i;
    }
    if (clash) continue;
    std::stable_sort(set.begin(), set.end(), [&](std::size_t a, std::size_t b) {
      return static_cast<int>(table[a].stage) < static_cast<int>(table[b].stage);
    });
    out.push_back(std::move(set));
    masks.push_back(mask);
  }
  return out;
}

bool has_subset_in(Mask mask, const std::vector<Mask>& fitting) {
  return std::any_of(fitting.begin(), fitting.end(), [&](Mask f) { return (f & mask) == f; });
}

}  // namespace

std::vector<Suggestion> search_combinations(const Candidate& base, const KnobContext& ctx,
                                            const std::vector<std::vector<Candidate>>& singles,
                                            const std::vector<std::size_t>& fitting_singles,
                                            std::size_t& tried, bool& capped) {
  std::vector<Mask> fitting;
  for (std::size_t i : fitting_singles) fitting.push_back(Mask{1} << i);
  std::vector<Suggestion> out;
  tried = 0;
  capped = false;
  Chains chains = start_chains(base, singles);
  for (std::size_t size = 2; size <= ctx.options.max_knobs && !capped; ++size) {
    std::vector<Mask> masks;
    const std::vector<std::vector<std::size_t>> sets = sets_of(size, masks);
    for (std::size_t n = 0; n < sets.size(); ++n) {
      if (has_subset_in(masks[n], fitting)) continue;
      bool found = false;
      Suggestion best;
      for (const Candidate& c : chain_of(sets[n], ctx, chains)) {
        if (tried >= ctx.options.max_candidates) {
          capped = true;
          break;
        }
        ++tried;
        Suggestion s = to_suggestion(c, ctx, false);  // only a fitting one is kept
        if (s.fits() && (!found || cheaper(s, best))) {
          best = std::move(s);
          found = true;
        }
      }
      if (found) {
        out.push_back(std::move(best));
        fitting.push_back(masks[n]);
      }
      if (capped) break;
    }
  }
  std::stable_sort(out.begin(), out.end(), cheaper);
  return out;
}

std::pair<int, int> knob_floor(AdviceKnob k, Mode mode) {
  switch (k) {
    case AdviceKnob::micro_batch:
      return {1, 10};
    case AdviceKnob::autocast:
      return {1, 20};
    case AdviceKnob::sequence:
      return mode == Mode::train ? std::pair{2, 44} : std::pair{1, 30};
    case AdviceKnob::kv_quantize:
      return {1, 34};
    case AdviceKnob::checkpointing:
      return {2, 40};
    case AdviceKnob::optimizer_8bit:
      return {2, 50};
    case AdviceKnob::adafactor:
      return {2, 52};
    case AdviceKnob::quantize:
      return {2, 54};
    case AdviceKnob::lora:
      return {2, 60};
    case AdviceKnob::qlora:
      return {2, 64};
    case AdviceKnob::sharding:
      return {2, 70};
    case AdviceKnob::tensor_parallel:
      return {2, 70};
    case AdviceKnob::offload:
      return {2, 80};
    case AdviceKnob::layer_offload:
      return {2, 84};
    case AdviceKnob::gpu:
      return {3, 0};
  }
  return {3, 0};
}

std::size_t knob_max_settings(AdviceKnob k) {
  switch (k) {
    case AdviceKnob::checkpointing:  // selective, full
    case AdviceKnob::offload:        // optimizer, parameters
    case AdviceKnob::kv_quantize:    // q8_0, q4_0
      return 2;
    case AdviceKnob::quantize:  // the llama.cpp mixes of advise_knobs_infer.cpp
      return 7;
    default:
      return 1;
  }
}

std::optional<Suggestion> cheapest_combination(const Candidate& base, const KnobContext& ctx,
                                               const std::vector<std::vector<Candidate>>& singles,
                                               const std::vector<std::size_t>& fitting_singles) {
  const std::vector<Knob>& table = knob_table();
  const Mode mode = base.request.mode;
  // Whether search_combinations could reach max_candidates: at most the product of its knobs' most
  // settings for each set tried (every set without a clash, counting those it would skip).
  std::size_t most = 0;
  std::vector<Mask> masks;
  for (std::size_t size = 2; size <= ctx.options.max_knobs; ++size)
    for (const std::vector<std::size_t>& set : sets_of(size, masks)) {
      std::size_t product = 1;
      for (std::size_t k : set) product *= knob_max_settings(table[k].knob);
      most += product;
    }
  if (most > ctx.options.max_candidates) {
    std::size_t tried = 0;
    bool capped = false;
    std::vector<Suggestion> all = search_combinations(base, ctx, singles, fitting_singles, tried, capped);
    if (all.empty()) return std::nullopt;
    return all.front();
  }
  // The search's own result is its fitting sets' best candidates, sorted stably by (cost rank,
  // required bytes): its first is the least by (cost rank, required bytes, position in the search).
  // A set's candidates each rank at least the sum of its knobs' floors, so a set whose floor
  // exceeds the best cost rank found cannot be first; nor can any superset of it (its floor is
  // higher), which is why a skipped set missing from `fitting` changes nothing: the sets it would
  // have excluded are skipped for their floor. Sets of one size never contain one another, so within
  // a size any order gives the same sets and results: cheapest floor first, so that the rest can be
  // skipped once the floors pass the best. Sizes still go in increasing order.
  std::vector<Mask> fitting;
  for (std::size_t i : fitting_singles) fitting.push_back(Mask{1} << i);
  Chains chains = start_chains(base, singles);
  std::optional<Suggestion> best;
  std::pair<std::size_t, std::size_t> best_at{0, 0};  // (size, position among the sets of that size)
  for (std::size_t size = 2; size <= ctx.options.max_knobs; ++size) {
    const std::vector<std::vector<std::size_t>> sets = sets_of(size, masks);
    std::vector<int> floor(sets.size(), 0);
    std::vector<std::size_t> order(sets.size());
    for (std::size_t n = 0; n < sets.size(); ++n) {
      order[n] = n;
      for (std::size_t k : sets[n]) floor[n] += knob_floor(table[k].knob, mode).second;
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return floor[a] < floor[b]; });
    for (std::size_t n : order) {
      if (best && floor[n] > best->cost_rank) break;  // so are the rest: their floors are no lower
      if (has_subset_in(masks[n], fitting)) continue;
      bool found = false;
      Suggestion set_best;
      for (const Candidate& c : chain_of(sets[n], ctx, chains)) {
        Suggestion s = to_suggestion(c, ctx, false);  // only a fitting one is kept
        if (s.fits() && (!found || cheaper(s, set_best))) {
          set_best = std::move(s);
          found = true;
        }
      }
      if (!found) continue;
      fitting.push_back(masks[n]);
      const std::pair<std::size_t, std::size_t> at{size, n};
      if (!best || cheaper(set_best, *best) || (!cheaper(*best, set_best) && at < best_at)) {
        best = std::move(set_best);
        best_at = at;
      }
    }
  }
  return best;
}

}  // namespace memplan::advice
