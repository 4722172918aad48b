#pragma once
// The command-line front end. main() calls run(); tests call it in-process with string streams.

#include <iosfwd>
#include <string>
#include <vector>

namespace memplan::cli {

// Runs memplan with `args` (without the program name). Writes results to `out` only when the
// command succeeds, errors as one line on `err`. Returns the exit code.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool out_is_tty = false);

}  // namespace memplan::cli
