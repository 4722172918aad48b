#include "cli/text_wrap.hpp"

namespace memplan::cli {
namespace {

// Display width: UTF-8 continuation bytes take no column.
size_t display_columns(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

std::vector<std::string> wrap_words(const std::string& text, size_t width) {
  std::vector<std::string> lines(1);
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    start = end + 1;
    if (word.empty()) continue;
    std::string& line = lines.back();
    if (line.empty())
      line = word;
    else if (display_columns(line) + 1 + display_columns(word) <= width)
      line += " " + word;
    else
      lines.push_back(word);
  }
  return lines;
}

}  // namespace memplan::cli
