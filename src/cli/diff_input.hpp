#pragma once
// What `memplan diff` compares: a `--format json` output of estimate or fit, or a plan file (then
// the estimate is computed), read into the plain numbers of a DiffSide.

#include <string>
#include <string_view>

#include "core/diagnose/plan_diff.hpp"

namespace memplan::cli {

struct DiffInput {
  std::string path;
  std::string kind;  // "memplan.estimate/1", "memplan.fit/1" or "plan"
  DiffSide side;
};

// Reads `path` (through the one file reader, at most read_limit::k_diff_input bytes). Throws Error
// naming `subject` (OLD or NEW) and the file when it is none of the three.
DiffInput read_diff_input(const std::string& path, const std::string& subject);

// The same for its text, already read (the fuzz target's entry): without `resolve_plans` a plan
// file (no "schema") is only recognised, its side left empty.
DiffInput parse_diff_input(std::string_view text, const std::string& path, const std::string& subject,
                           bool resolve_plans);

}  // namespace memplan::cli
