#pragma once
// The step timeline in words: the phase table of --explain, the JSON "timeline", and the
// sentences behind each transient.

#include <string>

#include <nlohmann/json.hpp>

#include <memplan/estimate.hpp>

#include "cli/command.hpp"

namespace memplan::cli {

// "backward (the start of backward: ...)": where the peak is, for the breakdown's Peak row.
std::string peak_detail(const StepTimeline& t);

// The phase table and the arithmetic of the transients (--explain), or "" without a timeline.
std::string timeline_text(const Estimate& e, const OutputOptions& o);

// [{"phase", "weights", "optimizer_state", "gradients", "activations", "transient", "bytes"}, ...]
nlohmann::json timeline_json(const StepTimeline& t);

// The caching allocator's reserved peak in one --explain line ("" without a replay).
std::string reserved_text(const StepTimeline& t, const OutputOptions& o);

// The caching allocator's reserved peak as JSON (null without a replay).
nlohmann::json reserved_json(const StepTimeline& t);

}  // namespace memplan::cli
