#include "core/serving/log_number.hpp"

#include <cctype>
#include <cstdlib>
#include <string>

namespace memplan {

std::optional<double> number_after(std::string_view text, size_t pos) {
  while (pos < text.size() &&
         (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '=' || text[pos] == ':' || text[pos] == '('))
    ++pos;
  std::string digits;
  while (pos < text.size() && (std::isdigit(static_cast<unsigned char>(text[pos])) || text[pos] == '.' ||
                               (text[pos] == ',' && !digits.empty() && pos + 1 < text.size() &&
                                std::isdigit(static_cast<unsigned char>(text[pos + 1]))))) {
    if (text[pos] != ',') digits += text[pos];
    ++pos;
    if (digits.size() > 30) return std::nullopt;
  }
  if (digits.empty() || digits == ".") return std::nullopt;
  return std::strtod(digits.c_str(), nullptr);
}

}  // namespace memplan
