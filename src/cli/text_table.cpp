#include "cli/text_table.hpp"

#include <algorithm>

namespace memplan::cli {
namespace {

// Display width: UTF-8 continuation bytes take no column.
size_t width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;
  return w;
}

std::string pad(const std::string& s, size_t w, TextTable::Align a) {
  const size_t n = width(s);
  if (n >= w) return s;
  return a == TextTable::Align::left ? s + std::string(w - n, ' ') : std::string(w - n, ' ') + s;
}

}  // namespace

TextTable::TextTable(std::vector<std::pair<std::string, Align>> columns) : m_columns(std::move(columns)) {}

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(m_columns.size());
  m_rows.push_back(std::move(cells));
}

std::string TextTable::render(int indent) const {
  Style style;
  style.indent = indent;
  return render(style);
}

std::string TextTable::render(const Style& style) const {
  std::vector<size_t> w(m_columns.size());
  for (size_t c = 0; c < m_columns.size(); ++c) {
    w[c] = width(m_columns[c].first);
    for (const auto& r : m_rows) w[c] = std::max(w[c], width(r[c]));
  }
  auto line = [&](const std::vector<std::string>& cells, bool header) {
    std::string out(static_cast<size_t>(style.indent), ' ');
    for (size_t c = 0; c < cells.size(); ++c) {
      const bool last = c + 1 == cells.size();
      const Align a = header && !style.align_headers ? Align::left : m_columns[c].second;
      std::string cell = (last && a == Align::left) ? cells[c] : pad(cells[c], w[c], a);
      out += cell;
      if (!last) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::vector<std::string> header;
  for (const auto& col : m_columns) header.push_back(col.first);
  std::string out = line(header, true);
  if (style.rule) {
    std::vector<std::string> rule;
    for (size_t c = 0; c < w.size(); ++c) rule.push_back(std::string(w[c], '-'));
    out += line(rule, true);
  }
  for (const auto& r : m_rows) out += line(r, false);
  return out;
}

std::string TextTable::render_markdown() const {
  std::string out = "|";
  for (const auto& col : m_columns) out += " " + col.first + " |";
  out += "\n|";
  for (const auto& col : m_columns) out += col.second == Align::right ? "---:|" : "---|";
  out += "\n";
  for (const auto& r : m_rows) {
    out += "|";
    for (const std::string& cell : r) {
      std::string escaped;
      for (char ch : cell) escaped += ch == '|' ? std::string("\\|") : std::string(1, ch);
      out += " " + escaped + " |";
    }
    out += "\n";
  }
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

void CsvWriter::row(const std::vector<std::string>& cells) {
  for (size_t i = 0; i < cells.size(); ++i) m_out += (i ? "," : "") + csv_field(cells[i]);
  m_out += "\n";
}

}  // namespace memplan::cli
