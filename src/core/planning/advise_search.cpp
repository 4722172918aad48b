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

std::vector<Suggestion> search_combinations(const Candidate& base, const KnobContext& ctx,
                                            const std::vector<std::vector<Candidate>>& singles,
                                            const std::vector<std::size_t>& fitting_singles,
                                            std::size_t& tried, bool& capped) {
  const std::vector<Knob>& table = knob_table();
  std::vector<Mask> fitting;
  for (std::size_t i : fitting_singles) fitting.push_back(Mask{1} << i);
  std::vector<Suggestion> out;
  tried = 0;
  capped = false;
  // The settings each chain of knobs (indices in the order applied) leads to. Sets that share a
  // first knob or two after the stage sort share that work: each knob runs once per chain
  // instead of once per set (it is a search of its own for the solvers and sharding).
  std::map<std::vector<std::size_t>, std::vector<Candidate>> chains;
  chains.emplace(std::vector<std::size_t>{}, std::vector<Candidate>{base});
  for (std::size_t k = 0; k < singles.size(); ++k) chains.emplace(std::vector<std::size_t>{k}, singles[k]);
  for (std::size_t size = 2; size <= ctx.options.max_knobs && !capped; ++size) {
    std::vector<std::vector<std::size_t>> sets;
    std::vector<std::size_t> cur;
    subsets(table.size(), size, 0, cur, sets);
    for (std::vector<std::size_t>& set : sets) {
      Mask mask = 0;
      bool clash = false;
      for (std::size_t i : set) {
        for (std::size_t j : set) clash = clash || (i < j && table[i].group == table[j].group);
        mask |= Mask{1} << i;
      }
      const bool has_fitting_subset =
          std::any_of(fitting.begin(), fitting.end(), [&](Mask f) { return (f & mask) == f; });
      if (clash || has_fitting_subset) continue;
      // Transforms first, then the solvers (they fit the batch or sequence to what the
      // transforms left), then placement.
      std::stable_sort(set.begin(), set.end(), [&](std::size_t a, std::size_t b) {
        return static_cast<int>(table[a].stage) < static_cast<int>(table[b].stage);
      });
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
      bool found = false;
      Suggestion best;
      for (const Candidate& c : *chain) {
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
        fitting.push_back(mask);
      }
      if (capped) break;
    }
  }
  std::stable_sort(out.begin(), out.end(), cheaper);
  return out;
}

}  // namespace memplan::advice
