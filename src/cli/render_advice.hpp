#pragma once
// The words of `memplan advise`: advise() returns codes and numbers (AdviceChange, AdviceNote);
// these functions word them for every output format.

#include <string>
#include <vector>

#include <memplan/gpu.hpp>
#include "core/planning/advise.hpp"

namespace memplan::cli {

// Tier 0 of the playbook: free fixes no estimate can see, one line each.
const std::vector<std::string>& tier0_checklist();

// What a change does: "micro-batch 4 x 4 accumulation steps (effective batch 16)".
std::string change_text(const AdviceChange& c);

// What it costs: "x4 accumulation steps: same effective batch, more steps".
std::string cost_text(const AdviceChange& c);

// A note that goes with a change; `presets` give a unified-memory GPU's budget note.
std::string note_text(const AdviceNote& n, const std::vector<GpuSpec>& presets);

// A suggestion's changes joined with " + ", their costs with "; ", their notes in order.
std::string suggestion_change(const Suggestion& s);
std::string suggestion_cost(const Suggestion& s);
std::vector<std::string> suggestion_notes(const Suggestion& s, const std::vector<GpuSpec>& presets);

}  // namespace memplan::cli
