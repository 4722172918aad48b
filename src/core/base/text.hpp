#pragma once
// Small text helpers shared by the name lookups (formats, presets, recipes).

#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>

namespace memplan {

// ASCII lower case: "BF16" -> "bf16".
inline std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Whether `s` ends with `suffix` (an empty suffix always matches).
inline bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// A count as decimal digits, for messages and notes.
inline std::string to_s(uint64_t n) { return std::to_string(n); }

}  // namespace memplan
