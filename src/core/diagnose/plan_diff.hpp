#pragma once
// Two runs compared: which memory terms and which GPUs' verdicts changed between an old and a new
// estimate (for a code review: "does this change still fit?"). The inputs are plain numbers; the
// CLI reads them from `--format json` outputs or computes them from plan files.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <memplan/fit.hpp>

namespace memplan {

// One side of a comparison: an estimate's terms (empty for a fit-only output), totals and GPUs.
struct DiffSide {
  struct Term {
    std::string name;  // "parameters", "activations", ... as in the JSON breakdown
    uint64_t bytes = 0;
  };
  struct Gpu {
    std::string id;
    uint64_t memory_bytes = 0;
    uint64_t required_bytes = 0;
    int64_t spare_bytes = 0;
    Verdict verdict = Verdict::no;
  };
  std::vector<Term> terms;
  uint64_t total_bytes = 0;
  uint64_t required_bytes = 0;
  std::vector<Gpu> gpus;
};

// A number on both sides (absent on a side that does not have it) and the change new - old.
struct BytesChange {
  std::string name;
  std::optional<uint64_t> old_bytes;
  std::optional<uint64_t> new_bytes;
  int64_t change_bytes() const;  // missing sides count as 0
  bool changed() const { return old_bytes != new_bytes; }
};

// A GPU on both sides (matched by id).
struct GpuChange {
  std::string id;
  std::optional<DiffSide::Gpu> old_gpu;
  std::optional<DiffSide::Gpu> new_gpu;
  // It fitted (fits or tight) before and does not now: what makes `diff` exit 1.
  bool became_no_fit() const;
  bool verdict_changed() const;
};

struct PlanDiff {
  std::vector<BytesChange> terms;  // old's order, then terms only new has
  BytesChange total;
  BytesChange required;
  std::vector<GpuChange> gpus;  // old's order, then GPUs only new has
  bool any_became_no_fit() const;
};

// Compares two sides. Terms are compared only when both sides list them (a fit-only output has
// none): then a term missing on one side counts as absent there.
PlanDiff diff_plans(const DiffSide& old_side, const DiffSide& new_side);

}  // namespace memplan
