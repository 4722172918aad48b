#pragma once
// The number after a key phrase in a serving engine's log (vLLM, SGLang).
#include <cstddef>
#include <optional>
#include <string_view>

namespace memplan {

// The number that follows `pos` after spaces, tabs, '=', ':', '(' (thousands commas allowed); none
// when no digit follows or the digits run past 30.
std::optional<double> number_after(std::string_view text, size_t pos);

}  // namespace memplan
