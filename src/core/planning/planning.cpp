#include "core/planning/planning.hpp"

#include <algorithm>
#include <functional>

#include <memplan/error.hpp>
#include "core/base/checked.hpp"
#include "core/models/context_limit.hpp"

namespace memplan {
namespace {

// Largest x in [1, k_max_search] with fits(x), given fits is monotone (true then false);
// 0 when fits(1) is false. Where the caller needs x only within [floor, ceiling), the search stops once
// x is known to lie below floor or at or above ceiling, and returns a value on that side: it probes
// 1, 2, 4, ... then bisects [lo, hi) with fits(lo) and !fits(hi), and its result is the final lo, which
// only grows and stays below hi.
uint64_t largest(const std::function<bool(uint64_t)>& fits, bool& capped, uint64_t floor = 0,
                 uint64_t ceiling = UINT64_MAX) {
  capped = false;
  if (!fits(1)) return 0;
  if (ceiling <= 1) return 1;
  uint64_t lo = 1, hi = 2;
  while (hi <= k_max_search && fits(hi)) {
    lo = hi;
    hi *= 2;
    if (lo >= ceiling) return lo;  // the result is at least lo
  }
  if (hi > k_max_search) {
    capped = true;
    return lo;
  }
  while (hi - lo > 1) {          // fits(lo), !fits(hi)
    if (hi <= floor) return lo;  // the result is below hi
    const uint64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
    if (lo >= ceiling) return lo;
  }
  return lo;
}

uint64_t required_at(EstimateRequest r, uint64_t batch, uint64_t memory = UINT64_MAX) {
  r.batch = batch;
  r.replay_below = memory;
  return estimate(r).required_bytes();
}

}  // namespace

uint64_t data_parallel_ranks(const EstimateRequest& r) {
  if (!r.parallel || r.mode != Mode::train) return 1;
  const ParallelLayout& l = *r.parallel;
  if (l.dp) return l.dp;
  const uint64_t model_parallel = std::max<uint64_t>(l.tp, 1) * std::max<uint64_t>(l.pp, 1);
  return std::max<uint64_t>(l.gpus / model_parallel, 1);
}

BatchPlan max_batch(const EstimateRequest& base, uint64_t memory, uint64_t effective_batch,
                    uint64_t ceiling) {
  // Whether the batch changes anything: the terms' sum (the peak can sit in a batch-independent
  // phase, the optimizer step, at small batches and still grow later).
  EstimateRequest two = base;
  two.batch = 2;
  two.replay_below = 0;
  EstimateRequest one = two;
  one.batch = 1;
  if (estimate(one).total_bytes() == estimate(two).total_bytes())
    throw Error(Field::batch, "the estimate does not grow with the batch: give " +
                                  field_ref(Field::activation_bytes_per_row) + ", " + field_ref(Field::mlp) +
                                  ", or an architecture with " + field_ref(Field::seq));
  BatchPlan p;
  p.micro_batch =
      largest([&](uint64_t b) { return required_at(base, b, memory) <= memory; }, p.capped, 0, ceiling);
  p.max_micro_batch = p.micro_batch;
  if (p.max_micro_batch >= ceiling) return p;
  p.required_bytes = required_at(base, p.micro_batch ? p.micro_batch : 1);
  p.data_parallel_ranks = data_parallel_ranks(base);
  if (effective_batch && p.micro_batch) {
    // Each rank contributes P = E / ranks samples (rounded up). P in one step if it fits; otherwise
    // the largest micro-batch b < P that fits while ceil(P / b) micro-batches accumulate (the
    // gradients stay allocated through the later forwards, request.hpp grad_accum), and then the
    // smallest micro-batch that still needs only that many steps: the effective batch lands as close
    // above E as possible, on less memory.
    const uint64_t ranks = p.data_parallel_ranks;
    const uint64_t per_rank = (effective_batch + ranks - 1) / ranks;
    auto steps_for = [&](uint64_t b) { return (per_rank + b - 1) / b; };
    auto required_with = [&](uint64_t b, uint64_t limit) {
      EstimateRequest r = base;
      r.grad_accum = steps_for(b);
      return required_at(r, b, limit);
    };
    uint64_t micro = 0;
    if (p.micro_batch >= per_rank && required_with(per_rank, memory) <= memory) {
      micro = per_rank;
    } else {
      bool capped = false;
      const uint64_t below = std::min(p.micro_batch, per_rank - 1);  // per_rank >= 2 here
      micro = below ? largest([&](uint64_t b) { return b <= below && required_with(b, memory) <= memory; },
                              capped, 0, below)
                    : 0;
      micro = std::min(micro, below);
    }
    if (micro) {
      p.accumulation_steps = steps_for(micro);
      p.micro_batch = steps_for(p.accumulation_steps);
    } else {  // not even one sample per micro-batch fits once gradients accumulate
      p.accumulation_steps = per_rank;
      p.micro_batch = 0;
    }
    p.effective_batch = checked_mul(checked_mul(p.micro_batch, p.accumulation_steps, "effective batch"),
                                    ranks, "effective batch");
    p.required_bytes = required_with(p.micro_batch ? p.micro_batch : 1, UINT64_MAX);
  }
  return p;
}

uint64_t max_seq(const EstimateRequest& base, uint64_t memory, bool& capped, uint64_t floor,
                 uint64_t ceiling) {
  auto at = [&](uint64_t seq) {
    EstimateRequest r = base;
    r.seq = seq;
    r.replay_below = memory;
    return estimate(r).required_bytes();
  };
  auto total_at = [&](uint64_t seq) {  // the terms' sum: the peak may sit in the optimizer step
    EstimateRequest r = base;
    r.seq = seq;
    r.replay_below = 0;
    return estimate(r).total_bytes();
  };
  if (total_at(1) == total_at(2))
    throw Error(Field::max_seq, "the estimate does not depend on the sequence: give an architecture (" +
                                    field_ref(Field::model) + ", " + field_ref(Field::config) + " or " +
                                    field_ref(Field::layers) + "/" + field_ref(Field::hidden) + "/" +
                                    field_ref(Field::heads) + ")");
  // A learned position table (GPT-2, BERT) has max_positions rows: no longer sequence runs
  // (transformers' nn.Embedding lookup raises IndexError); a rotary model is planned up to 32x its
  // positions (context_limit.hpp): the search stops there, as --seq is refused past it.
  const uint64_t limit = base.model.arch ? context_limit(*base.model.arch).longest : UINT64_MAX;
  return largest([&](uint64_t s) { return s <= limit && at(s) <= memory; }, capped, floor, ceiling);
}

}  // namespace memplan
