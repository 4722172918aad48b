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

  // How the text form looks: the estimate-style table is indented with its header left-aligned
  // and underlined with dashes; the number-format commands' (dtype, cast) is flush left, its
  // headers aligned like their columns, with no rule.
  struct Style {
    int indent = 2;
    bool rule = true;
    bool align_headers = false;
  };

  // Space-separated columns, indented by `indent` spaces, header underlined with dashes.
  std::string render(int indent = 2) const;
  std::string render(const Style& style) const;
  // GitHub-flavoured markdown table.
  std::string render_markdown() const;

 private:
  std::vector<std::pair<std::string, Align>> m_columns;
  std::vector<std::vector<std::string>> m_rows;
};

// CSV field quoting (RFC 4180), the one rule of every command's CSV: quotes a field holding a
// comma, quote, carriage return or newline, doubling its quotes.
std::string csv_field(const std::string& s);

// CSV lines of quoted fields.
class CsvWriter {
 public:
  void row(const std::vector<std::string>& cells);
  const std::string& str() const { return m_out; }

 private:
  std::string m_out;
};

}  // namespace memplan::cli
