#pragma once
// Declarations of every command's `add` function (one cmd_<name>.cpp each).

#include "cli/command.hpp"

namespace memplan::cli {

void add_inspect(CLI::App& sub, Runner& run);

}  // namespace memplan::cli
