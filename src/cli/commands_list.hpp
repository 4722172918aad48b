#pragma once
// Declarations of every command's `add` function (one cmd_<name>.cpp each).

#include "cli/command.hpp"

namespace memplan::cli {

void add_probe(CLI::App& sub, Runner& run);  // cmd_probe.cpp

}  // namespace memplan::cli
