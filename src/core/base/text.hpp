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

// `s` as a number of 1 to `max_digits` decimal digits; false when it is empty, longer, or not all
// digits. The release parsers (torch, transformers) read their MAJOR and MINOR with it.
inline bool small_decimal(std::string_view s, size_t max_digits, uint32_t& out) {
  if (s.empty() || s.size() > max_digits) return false;
  out = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    out = out * 10 + static_cast<uint32_t>(c - '0');
  }
  return true;
}

// A count as decimal digits, for messages and notes.
inline std::string to_s(uint64_t n) { return std::to_string(n); }

}  // namespace memplan
