// The web build's one entry point: runs the command line in-process on an argument list, so the
// page shows exactly what the native binary prints.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli.hpp"

// `args_json` is a JSON array of strings (the arguments after "memplan"). Returns a JSON object
// {"code": exit code, "out": stdout, "err": stderr}; the text stays valid until the next call.
extern "C" const char* memplan_run_json(const char* args_json) {
  static std::string result;
  std::vector<std::string> args;
  std::ostringstream out, err;
  int code = 2;
  const nlohmann::json parsed = nlohmann::json::parse(args_json, nullptr, false);
  if (parsed.is_array() &&
      std::all_of(parsed.begin(), parsed.end(), [](const auto& a) { return a.is_string(); })) {
    for (const auto& a : parsed) args.push_back(a.get<std::string>());
    code = memplan::cli::run(args, out, err, false);
  } else {
    err << "memplan: error: the arguments are not a JSON array of strings\n";
  }
  result = nlohmann::json{{"code", code}, {"out", out.str()}, {"err", err.str()}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  return result.c_str();
}
