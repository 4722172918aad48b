#pragma once
// A small SVG writer for memplan's plots: no dependency, the same code in the native binary and
// the web page. Text is set in a monospace font so a label's box is known from its length
// (0.6 em per character), which is how the plots keep labels apart.

#include <string>
#include <vector>

namespace memplan::cli {

enum class Anchor { start, middle, end };

// Where a text label sits: its box, for overlap checks.
struct TextBox {
  double x0, y0, x1, y1;
  bool overlaps(const TextBox& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

// The box of `text` drawn at (x, y) (the baseline) with `size` px and `anchor`.
TextBox text_box(const std::string& text, double x, double y, double size, Anchor anchor);

// "12.5" with one decimal, "-" for a negative zero.
std::string coord(double v);

// Escapes &, <, >, " for text and attribute values.
std::string xml_escape(const std::string& s);

class Svg {
 public:
  Svg(int width, int height, const std::string& title);
  void rect(double x, double y, double w, double h, const std::string& fill, const std::string& extra = "");
  void line(double x0, double y0, double x1, double y1, const std::string& stroke,
            const std::string& extra = "");
  void polygon(const std::vector<std::pair<double, double>>& points, const std::string& fill,
               const std::string& extra = "");
  void circle(double x, double y, double r, const std::string& fill, const std::string& extra = "");
  void text(double x, double y, const std::string& text, double size = 12, Anchor anchor = Anchor::start,
            const std::string& extra = "");
  // The document, closed.
  std::string str() const;

 private:
  std::string m_body;
  int m_width, m_height;
  std::string m_title;
};

}  // namespace memplan::cli
