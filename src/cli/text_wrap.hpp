#pragma once
// Word wrapping for the text tables that must fit a terminal (advise's changes and costs).

#include <string>
#include <vector>

namespace memplan::cli {

// `text` split at spaces into lines of at most `width` columns (a word longer than `width` gets a
// line of its own); at least one line, empty for empty text.
std::vector<std::string> wrap_words(const std::string& text, size_t width);

}  // namespace memplan::cli
