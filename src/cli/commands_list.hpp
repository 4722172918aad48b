#pragma once
// Declarations of every command's `add` function (one cmd_<name>.cpp each).

#include "cli/command.hpp"

namespace memplan::cli {

}  // namespace memplan::cli
