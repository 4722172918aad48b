#pragma once
// Runs the memplan CLI in-process and captures what it printed.

#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.hpp"

namespace memplan::test {

struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
};

inline CliResult run_cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  CliResult r;
  r.code = memplan::cli::run(args, out, err, false);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// Number of lines in s (a trailing newline does not start a new line).
inline size_t line_count(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  if (!s.empty() && s.back() != '\n') ++n;
  return n;
}

}  // namespace memplan::test
