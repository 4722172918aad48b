#pragma once
// A serving engine's start-up log beside memplan's prediction (serve --check-log, vLLM and SGLang):
// the comparison table and its JSON.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/command.hpp"

namespace memplan::cli {

// One figure of a start-up log beside memplan's prediction.
struct LogCheck {
  std::string figure;  // "weights", "GPU blocks", ...
  double logged = 0;
  double predicted = 0;
  double tolerance = 0;  // relative: 0.01 = 1%
  std::string unit;      // "GiB", "" for counts, "x"
  double difference() const { return logged != 0 ? (predicted - logged) / logged : 0.0; }
  bool within() const { return difference() <= tolerance && difference() >= -tolerance; }
};

// "\ncompared with PATH:\n" and the table (or markdown) of the checks; "no ENGINE memory line
// found in the log" when there are none.
std::string log_checks_text(const std::vector<LogCheck>& checks, const std::string& path, const char* engine,
                            const OutputOptions& out);
// [{"figure", "log", "predicted", "difference", "tolerance", "within"}, ...]
nlohmann::json log_checks_json(const std::vector<LogCheck>& checks);

}  // namespace memplan::cli
