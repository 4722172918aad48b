#pragma once
// The number after a key phrase in a serving engine's log (vLLM, SGLang).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace memplan {

// The number that follows `pos` after spaces, tabs, '=', ':', '(' (thousands commas allowed); none
// when no digit follows or the digits run past 30.
std::optional<double> number_after(std::string_view text, size_t pos);

// A logged figure as a whole count (rounded); none when absent, negative or above 1e18.
inline std::optional<uint64_t> as_count(std::optional<double> v) {
  if (!v || *v < 0 || *v > 1e18) return std::nullopt;
  return static_cast<uint64_t>(*v + 0.5);
}

}  // namespace memplan
