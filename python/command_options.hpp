#pragma once
// What the Python package needs to know of memplan's commands, in standard types (CLI11 stays in
// command_options.cpp, compiled with the command line's precompiled header).

#include <string>
#include <utility>
#include <vector>

namespace memplan::python {

// ("seq", true), ("keep-logits", false): each long flag of `command` and whether it takes a value
// (false: a switch). Every plan flag is registered, as for the command's --help. An unknown
// command gives an empty list.
std::vector<std::pair<std::string, bool>> command_options(const std::string& command);

// The command names, as `memplan --help` lists them.
std::vector<std::string> command_names();

}  // namespace memplan::python
