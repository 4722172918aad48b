#include "core/base/json_text.hpp"

#include <set>

#include <memplan/error.hpp>

namespace memplan::detail {

namespace {

// Longest nesting of [ and { outside strings; stops counting at the limit.
int max_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char ch : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (ch == '\\')
        escaped = true;
      else if (ch == '"')
        in_string = false;
      continue;
    }
    if (ch == '"')
      in_string = true;
    else if (ch == '[' || ch == '{') {
      if (++depth > deepest) deepest = depth;
      if (deepest > k_max_json_depth) return deepest;
    } else if (ch == ']' || ch == '}')
      --depth;
  }
  return deepest;
}

}  // namespace

nlohmann::json parse_json_text(std::string_view text, const std::string& file, const char* what,
                               bool unique_top_keys) {
  if (max_depth(text) > k_max_json_depth)
    throw Error(file,
                std::string(what) + " nests deeper than " + std::to_string(k_max_json_depth) + " levels");
  std::set<std::string> seen;
  auto check_keys = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if (unique_top_keys && depth == 1 && event == nlohmann::json::parse_event_t::key && parsed.is_string() &&
        !seen.insert(parsed.get<std::string>()).second)
      throw Error(file, std::string(what) + " has the key \"" + parsed.get<std::string>() + "\" twice");
    return true;
  };
  try {
    return nlohmann::json::parse(text.begin(), text.end(), check_keys);
  } catch (const nlohmann::json::exception& e) {
    std::string msg = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: ..." -> after "] ".
    size_t cut = msg.find("] ");
    if (cut != std::string::npos) msg = msg.substr(cut + 2);
    throw Error(file, std::string(what) + " is not valid JSON (" + msg + ")");
  }
}

std::string json_brief(const nlohmann::json& v) {
  std::string s = v.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

}  // namespace memplan::detail
