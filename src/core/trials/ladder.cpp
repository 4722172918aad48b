#include "core/trials/ladder.hpp"

#include <memplan/error.hpp>

namespace memplan {

std::vector<uint64_t> halving_sequence(uint64_t start, uint64_t min) {
  std::vector<uint64_t> out;
  if (start == 0 || min == 0 || start < min) return out;
  for (uint64_t b = start;; b = b / 2 < min ? min : b / 2) {
    out.push_back(b);
    if (b == min) break;
  }
  return out;
}

std::optional<uint64_t> refine_midpoint(uint64_t ok, uint64_t oom, uint64_t step) {
  if (step == 0 || oom <= ok + 1) return std::nullopt;
  const uint64_t first = (ok / step + 1) * step;    // smallest multiple of step above ok
  const uint64_t last = ((oom - 1) / step) * step;  // largest multiple of step below oom
  if (first < ok || first > last) return std::nullopt;
  return first + ((last - first) / step / 2) * step;
}

namespace {

// Records a trial; returns false when the ladder must stop (failure or Ctrl-C).
bool record(LadderResult& result, const Trial& t) {
  result.tries.push_back(t);
  switch (t.outcome) {
    case TrialOutcome::ok:
      if (!result.largest_ok || t.batch > *result.largest_ok) result.largest_ok = t.batch;
      return true;
    case TrialOutcome::oom:
      if (!result.smallest_oom || t.batch < *result.smallest_oom) result.smallest_oom = t.batch;
      return true;
    case TrialOutcome::failed:
    case TrialOutcome::timed_out:
      result.end = LadderEnd::failed;
      return false;
    case TrialOutcome::interrupted:
      result.end = LadderEnd::interrupted;
      return false;
  }
  return false;
}

}  // namespace

LadderResult run_ladder(ProcessRunner& runner, const TrialSettings& trial, const LadderSettings& ladder,
                        TrialObserver* observer) {
  if (ladder.min == 0) throw Error(Field::min, "must be at least 1");
  if (ladder.start == 0) throw Error(Field::start, "must be at least 1");
  if (ladder.start < ladder.min)
    throw Error(Field::start, std::to_string(ladder.start) + " is below " + field_ref(Field::min) + " " +
                                  std::to_string(ladder.min));
  if (ladder.step == 0) throw Error(Field::step, "must be at least 1");

  LadderResult result;
  for (uint64_t batch : halving_sequence(ladder.start, ladder.min)) {
    if (!record(result, run_trial(runner, trial, batch, observer))) return result;
    if (result.tries.back().outcome == TrialOutcome::ok) break;
  }
  if (!result.largest_ok) {
    result.end = LadderEnd::none_fit;
    return result;
  }
  if (ladder.refine && result.smallest_oom) {
    while (auto mid = refine_midpoint(*result.largest_ok, *result.smallest_oom, ladder.step))
      if (!record(result, run_trial(runner, trial, *mid, observer))) return result;
  }
  result.end = LadderEnd::found;
  return result;
}

}  // namespace memplan
