#pragma once
// A small table of string cells for the number-format commands (dtype, cast), written through the
// one table renderer (TextTable: flush left, headers aligned like their columns, no rule), as
// markdown, or as CSV by the one CSV rule (CsvWriter).

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
      CsvWriter csv;
      csv.row(header);
      for (const auto& r : cells) csv.row(r);
      out << csv.str();
      return;
    }
    std::vector<std::pair<std::string, TextTable::Align>> columns;
    for (size_t i = 0; i < header.size(); ++i)
      columns.emplace_back(header[i], right[i] ? TextTable::Align::right : TextTable::Align::left);
    TextTable table(std::move(columns));
    for (const auto& r : cells) table.add_row(r);
    if (format == Format::markdown) {
      out << table.render_markdown();
      return;
    }
    TextTable::Style flush;
    flush.indent = 0;
    flush.rule = false;
    flush.align_headers = true;
    out << table.render(flush);
  }
};

}  // namespace memplan::cli
