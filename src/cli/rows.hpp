#pragma once
// A small table of string cells for the number-format commands (dtype, cast): rendered as an
// aligned text table (numbers right-aligned), a markdown table or CSV.

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/text_table.hpp"

namespace memplan::cli {

struct Rows {
  std::vector<std::string> header;
  std::vector<bool> right;  // right-align this column in the text table
  std::vector<std::vector<std::string>> cells;

  void write(std::ostream& out, Format format) const {
    if (format == Format::csv) {
      write_csv_line(out, header);
      for (const auto& r : cells) write_csv_line(out, r);
      return;
    }
    if (format == Format::markdown) {
      write_md_line(out, header);
      out << "|";
      for (size_t i = 0; i < header.size(); ++i) out << (right[i] ? "---:|" : "---|");
      out << "\n";
      for (const auto& r : cells) write_md_line(out, r);
      return;
    }
    std::vector<size_t> width(header.size());
    for (size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
    for (const auto& r : cells)
      for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
    auto line = [&](const std::vector<std::string>& r) {
      std::string s;
      for (size_t i = 0; i < r.size(); ++i) {
        const std::string pad(width[i] - r[i].size(), ' ');
        const bool last = i + 1 == r.size();
        s += right[i] ? pad + r[i] : (last ? r[i] : r[i] + pad);
        if (!last) s += "  ";
      }
      out << s << "\n";
    };
    line(header);
    for (const auto& r : cells) line(r);
  }

 private:
  static void write_csv_line(std::ostream& out, const std::vector<std::string>& r) {
    for (size_t i = 0; i < r.size(); ++i) out << (i ? "," : "") << csv_field(r[i]);
    out << "\n";
  }
  static void write_md_line(std::ostream& out, const std::vector<std::string>& r) {
    out << "|";
    for (const auto& c : r) out << " " << c << " |";
    out << "\n";
  }
};

}  // namespace memplan::cli
