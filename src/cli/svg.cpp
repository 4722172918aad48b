#include "cli/svg.hpp"

#include <fmt/format.h>

namespace memplan::cli {

TextBox text_box(const std::string& text, double x, double y, double size, Anchor anchor) {
  size_t chars = 0;
  for (unsigned char c : text) chars += (c & 0xC0) != 0x80;
  const double w = 0.6 * size * static_cast<double>(chars);
  const double x0 = anchor == Anchor::start ? x : anchor == Anchor::middle ? x - w / 2 : x - w;
  return {x0, y - 0.8 * size, x0 + w, y + 0.2 * size};
}

std::string coord(double v) {
  std::string s = fmt::format("{:.1f}", v);
  if (s == "-0.0") s = "0.0";
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

Svg::Svg(int width, int height, const std::string& title)
    : m_width(width), m_height(height), m_title(title) {}

void Svg::rect(double x, double y, double w, double h, const std::string& fill, const std::string& extra) {
  m_body += "<rect x=\"" + coord(x) + "\" y=\"" + coord(y) + "\" width=\"" + coord(w) + "\" height=\"" +
            coord(h) + "\" fill=\"" + fill + "\"" + (extra.empty() ? "" : " " + extra) + "/>\n";
}

void Svg::line(double x0, double y0, double x1, double y1, const std::string& stroke,
               const std::string& extra) {
  m_body += "<line x1=\"" + coord(x0) + "\" y1=\"" + coord(y0) + "\" x2=\"" + coord(x1) + "\" y2=\"" +
            coord(y1) + "\" stroke=\"" + stroke + "\"" + (extra.empty() ? "" : " " + extra) + "/>\n";
}

void Svg::polygon(const std::vector<std::pair<double, double>>& points, const std::string& fill,
                  const std::string& extra) {
  std::string p;
  for (const auto& [x, y] : points) p += (p.empty() ? "" : " ") + coord(x) + "," + coord(y);
  m_body +=
      "<polygon points=\"" + p + "\" fill=\"" + fill + "\"" + (extra.empty() ? "" : " " + extra) + "/>\n";
}

void Svg::circle(double x, double y, double r, const std::string& fill, const std::string& extra) {
  m_body += "<circle cx=\"" + coord(x) + "\" cy=\"" + coord(y) + "\" r=\"" + coord(r) + "\" fill=\"" + fill +
            "\"" + (extra.empty() ? "" : " " + extra) + "/>\n";
}

void Svg::text(double x, double y, const std::string& t, double size, Anchor anchor,
               const std::string& extra) {
  const char* a = anchor == Anchor::start ? "start" : anchor == Anchor::middle ? "middle" : "end";
  m_body += "<text x=\"" + coord(x) + "\" y=\"" + coord(y) + "\" font-size=\"" + coord(size) +
            "\" text-anchor=\"" + a + "\"" + (extra.empty() ? "" : " " + extra) + ">" + xml_escape(t) +
            "</text>\n";
}

std::string Svg::str() const {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(m_width) + "\" height=\"" +
         std::to_string(m_height) + "\" viewBox=\"0 0 " + std::to_string(m_width) + " " +
         std::to_string(m_height) + "\" font-family=\"DejaVu Sans Mono, monospace\">\n<title>" +
         xml_escape(m_title) + "</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" + m_body +
         "</svg>\n";
}

}  // namespace memplan::cli
