#pragma once
// The batch-size ladder: run the user's command at a batch size, halve on out-of-memory down to a
// minimum, then (optionally) search between the largest batch that ran and the smallest that did
// not. Pure logic driven through ProcessRunner, so tests use a fake.

#include <cstdint>
#include <optional>
#include <vector>

#include "core/trials/trial.hpp"

namespace memplan {

struct LadderSettings {
  uint64_t start = 0;   // first batch tried (>= min)
  uint64_t min = 1;     // the halving stops here
  bool refine = false;  // after halving, bisect between the last OOM and the last success
  uint64_t step = 1;    // refine tries only multiples of step (8: tensor-core friendly sizes)
};

// Why the ladder stopped.
enum class LadderEnd {
  found,        // a batch ran (and refining, if asked, is done)
  none_fit,     // every batch down to min ran out of memory
  failed,       // a trial failed in a way that is not out-of-memory (or hit the timeout)
  interrupted,  // Ctrl-C
};

struct LadderResult {
  std::vector<Trial> tries;              // in the order run
  std::optional<uint64_t> largest_ok;    // the largest batch that ran
  std::optional<uint64_t> smallest_oom;  // the smallest batch that ran out of memory
  LadderEnd end = LadderEnd::none_fit;
};

// The batches halving tries from `start` down to `min`, the last one clamped to `min`:
// (1000, 8) -> 1000 500 250 125 62 31 15 8; (64, 1) -> 64 32 16 8 4 2 1.
std::vector<uint64_t> halving_sequence(uint64_t start, uint64_t min);

// The next batch to refine with, strictly between ok and oom and a multiple of step, nearest the
// middle; nullopt when there is none: (512, 1024, 1) -> 768; (512, 520, 8) -> nullopt.
std::optional<uint64_t> refine_midpoint(uint64_t ok, uint64_t oom, uint64_t step);

// Runs the ladder. Throws Error for bad settings (start 0, start < min, step 0) and when the command
// cannot be started at all.
LadderResult run_ladder(ProcessRunner& runner, const TrialSettings& trial, const LadderSettings& ladder,
                        TrialObserver* observer);

}  // namespace memplan
