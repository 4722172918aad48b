#pragma once
// A small table for terminal and markdown output: text left-aligned, numbers right-aligned.

#include <string>
#include <vector>

namespace memplan::cli {

class TextTable {
 public:
  enum class Align { left, right };

  // Column headers with their alignment.
  explicit TextTable(std::vector<std::pair<std::string, Align>> columns);

  void add_row(std::vector<std::string> cells);

  // Space-separated columns, indented by `indent` spaces, header underlined with dashes.
  std::string render(int indent = 2) const;
  // GitHub-flavoured markdown table.
  std::string render_markdown() const;

 private:
  std::vector<std::pair<std::string, Align>> m_columns;
  std::vector<std::vector<std::string>> m_rows;
};

// CSV field quoting (RFC 4180): quotes a field holding a comma, quote or newline.
std::string csv_field(const std::string& s);

}  // namespace memplan::cli
