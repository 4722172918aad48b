#pragma once
// The command-line front end. main() calls run(); tests call it in-process with string streams.

#include <iosfwd>
#include <string>
#include <vector>

namespace memplan::cli {

// Runs memplan with `args` (without the program name). Writes results to `out` only when the
// command succeeds, errors as one line on `err`. Returns the exit code.
// A failed write to `out` (a full disk, a closed stdout) is exit 2 with one line on `err`.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool out_is_tty = false);

// Flushes `out` and `err` after a command that returned `code`: when `out` cannot be written, says
// so on `err` and returns 2; when `err` cannot be written, returns 2; otherwise `code`.
int check_written(int code, std::ostream& out, std::ostream& err);

}  // namespace memplan::cli
