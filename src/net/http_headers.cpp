#include "net/http_headers.hpp"

namespace memplan::net {
namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// `line` starts with `prefix` (lower case), compared without case.
bool starts_with_nocase(std::string_view line, std::string_view prefix) {
  if (line.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (lower(line[i]) != prefix[i]) return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

// All of `s` as a decimal number: nullopt when it is empty or not all digits; `too_large` set (and
// nullopt) above k_max_response_size, however many digits.
std::optional<uint64_t> whole_number(std::string_view s, bool& too_large) {
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (k_max_response_size - d) / 10) {
      for (char rest : s)
        if (rest < '0' || rest > '9') return std::nullopt;
      too_large = true;
      return std::nullopt;
    }
    v = v * 10 + d;
  }
  return v;
}

}  // namespace

void read_header_line(std::string_view line, ResponseSizes& s) {
  if (starts_with_nocase(line, "http/")) {
    s = ResponseSizes{};
    return;
  }
  if (starts_with_nocase(line, "content-range:")) {
    // "bytes FIRST-LAST/TOTAL" or "bytes */TOTAL" (RFC 9110 14.4); TOTAL may be "*" (unknown).
    const std::string_view v = trim(line.substr(14));
    if (!starts_with_nocase(v, "bytes ")) return;
    const size_t slash = v.find('/');
    if (slash == std::string_view::npos) return;
    if (auto n = whole_number(trim(v.substr(slash + 1)), s.too_large)) s.total_size = n;
    return;
  }
  if (starts_with_nocase(line, "content-length:"))
    if (auto n = whole_number(trim(line.substr(15)), s.too_large)) s.content_length = n;
}

}  // namespace memplan::net
