#pragma once
// Declarations of every command's `add` function (one cmd_<name>.cpp each).

#include "cli/command.hpp"

namespace memplan::cli {

void add_estimate(CLI::App& sub, Runner& run);
void add_fit(CLI::App& sub, Runner& run);
void add_max_batch(CLI::App& sub, Runner& run);
void add_gpus(CLI::App& sub, Runner& run);
void add_models(CLI::App& sub, Runner& run);

}  // namespace memplan::cli
