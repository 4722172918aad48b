#include "cli/render_log_checks.hpp"

#include <cstdio>

#include "cli/number_text.hpp"
#include "cli/text_table.hpp"

namespace memplan::cli {
namespace {

// GiB and concurrency to the hundredth, SGLang's fraction as it prints it, counts whole.
int digits_of(const LogCheck& k) {
  if (k.unit == "GiB" || k.unit == "x") return 2;
  return k.figure == "mem_fraction_static" ? 3 : 0;
}

}  // namespace

std::string log_checks_text(const std::vector<LogCheck>& checks, const std::string& path, const char* engine,
                            const OutputOptions& out) {
  using A = TextTable::Align;
  TextTable c({{"log figure", A::left},
               {"log", A::right},
               {"memplan", A::right},
               {"difference", A::right},
               {"within", A::left}});
  for (const LogCheck& k : checks) {
    const int digits = digits_of(k);
    const std::string unit = k.unit.empty() ? "" : " " + k.unit;
    c.add_row({k.figure, fixed(k.logged, digits) + unit, fixed(k.predicted, digits) + unit,
               (k.difference() >= 0 ? "+" : "") + fixed(100.0 * k.difference(), 1) + "%",
               (k.within() ? "yes (" : "no (") + fixed(100.0 * k.tolerance, 0) + "%)"});
  }
  std::string o = "\ncompared with " + path + ":\n";
  if (checks.empty()) return o + "  no " + engine + " memory line found in the log\n";
  return o + (out.format == Format::markdown ? c.render_markdown() : c.render());
}

nlohmann::json log_checks_json(const std::vector<LogCheck>& checks) {
  nlohmann::json a = nlohmann::json::array();
  for (const LogCheck& k : checks)
    a.push_back({{"figure", k.figure},
                 {"log", k.logged},
                 {"predicted", k.predicted},
                 {"difference", k.difference()},
                 {"tolerance", k.tolerance},
                 {"within", k.within()}});
  return a;
}

}  // namespace memplan::cli
