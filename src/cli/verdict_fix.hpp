#pragma once
// The one line that goes with a "no": the cheapest change that makes the run fit that GPU, from the
// same search as `memplan advise` (estimate, fit and max-batch print it; --format json carries it).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memplan/fit.hpp>

#include "cli/plan_options.hpp"

namespace memplan::cli {

struct VerdictFix {
  std::string gpu;                 // the GPU that said no
  std::string change;              // advise's words: "checkpointing full (one input per layer)"
  std::vector<std::string> knobs;  // advise's knob names: "checkpointing"
  uint64_t required_bytes = 0;     // the run with the change, on its GPU
  Verdict verdict = Verdict::no;
  std::string on_gpu;  // the GPU the changed run is judged on (a bigger one for tier 3)
  uint64_t gpus = 1;   // how many of it (sharding)
};

// For each "no" row of `fit`, the cheapest change that fits (advise's singles by tier and cost, then its
// combinations, a bigger GPU last); none when nothing fits or the estimate cannot be searched.
std::vector<std::optional<VerdictFix>> verdict_fixes(const Plan& plan, const std::vector<FitRow>& fit);

// "  no on rtx-4090: cheapest change that fits: checkpointing full (...) -> 15.4 GiB (memplan advise for
// more)"
std::string verdict_fix_lines(const std::vector<FitRow>& fit,
                              const std::vector<std::optional<VerdictFix>>& fixes, Units units,
                              bool markdown);

// {"change", "knobs", "required_bytes", "verdict", "gpu", "gpus"} or null.
nlohmann::json verdict_fix_json(const std::optional<VerdictFix>& fix);

}  // namespace memplan::cli
