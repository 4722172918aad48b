#pragma once
// "did you mean ...?" for typos in names (commands, presets, formats, optimizers).

#include <string>
#include <string_view>
#include <vector>

namespace memplan {

// Edit distance between a and b, case-insensitive.
size_t edit_distance(std::string_view a, std::string_view b);

// "; did you mean \"rtx-4090\"?" when a candidate is close to `word`, else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace memplan
