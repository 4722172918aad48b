#include "cli/svg_plot.hpp"

#include <algorithm>
#include <cmath>

#include "cli/svg.hpp"

namespace memplan::cli {
namespace {

constexpr int k_width = 760, k_height = 470;
constexpr double k_left = 80, k_right = 590, k_top = 44, k_bottom = 360;
constexpr double k_font = 11, k_line = 14;

// The fill of each term, by TermKind (the bar's hues).
constexpr const char* k_fills[k_term_kinds] = {"#4e79a7", "#76b7b2", "#b07aa1", "#edc948",
                                               "#59a14f", "#bab0ac", "#9c9c9c"};

const char* fill_of(TermKind k) { return k_fills[static_cast<size_t>(k)]; }

double unit_bytes(Units u) { return u == Units::gib ? 1073741824.0 : 1e9; }
const char* unit_name(Units u) { return u == Units::gib ? "GiB" : "GB"; }

// A step of 1, 2, 2.5 or 5 x 10^k near `raw`, at least `raw`.
double nice_step(double raw) {
  if (raw <= 0) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

std::string tick_text(double v) {
  std::string s = coord(v);
  return s;
}

// Labels placed so that none overlaps another: each takes the first candidate position whose box
// is free.
class Labels {
 public:
  explicit Labels(Svg& svg) : m_svg(svg) {}
  // Places `text` at the first free (x, y) of `candidates`; false when none was free (not drawn).
  bool place(const std::string& text, const std::vector<std::pair<double, double>>& candidates, Anchor anchor,
             double size = k_font, const std::string& extra = "") {
    for (const auto& [x, y] : candidates) {
      const TextBox b = text_box(text, x, y, size, anchor);
      if (b.x0 < 0 || b.x1 > k_width || b.y0 < 0 || b.y1 > k_height) continue;
      if (std::any_of(m_boxes.begin(), m_boxes.end(), [&](const TextBox& o) { return o.overlaps(b); }))
        continue;
      m_boxes.push_back(b);
      m_svg.text(x, y, text, size, anchor, extra);
      return true;
    }
    return false;
  }

 private:
  Svg& m_svg;
  std::vector<TextBox> m_boxes;
};

// Candidates around (x, y): the spot itself, then alternately lower and higher in line steps.
std::vector<std::pair<double, double>> around(double x, double y, int steps = 12) {
  std::vector<std::pair<double, double>> c = {{x, y}};
  for (int i = 1; i <= steps; ++i) {
    c.push_back({x, y + i * k_line});
    c.push_back({x, y - i * k_line});
  }
  return c;
}

struct YAxis {
  double max_bytes;
  Units units;
  double y(double bytes) const { return k_bottom - (k_bottom - k_top) * bytes / max_bytes; }
};

// Title, y grid with its labels, capacity lines with labels at the right, the legend.
YAxis frame(Svg& svg, Labels& labels, const std::string& title, double top_bytes,
            const std::vector<PlotCapacity>& caps, const std::vector<PlotTerm>& terms, Units units) {
  for (const PlotCapacity& c : caps) top_bytes = std::max(top_bytes, static_cast<double>(c.bytes));
  const double u = unit_bytes(units);
  const double step = nice_step(top_bytes * 1.05 / u / 6);
  const double max_bytes = std::ceil(top_bytes * 1.05 / u / step) * step * u;
  const YAxis axis{max_bytes > 0 ? max_bytes : u, units};
  labels.place(title, {{k_left, 24}}, Anchor::start, 13, "font-weight=\"bold\"");
  for (double v = 0; v <= axis.max_bytes / u + 1e-9; v += step) {
    const double y = axis.y(v * u);
    svg.line(k_left, y, k_right, y, "#e4e4e4");
    labels.place(tick_text(v) + " " + unit_name(units), {{k_left - 6, y + 4}}, Anchor::end);
  }
  svg.line(k_left, k_top, k_left, k_bottom, "#444");
  svg.line(k_left, k_bottom, k_right, k_bottom, "#444");
  // Capacity lines, labels in the right margin from the top down, each below the last if need be.
  std::vector<PlotCapacity> sorted = caps;
  std::sort(sorted.begin(), sorted.end(), [](const PlotCapacity& a, const PlotCapacity& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.gpu < b.gpu;
  });
  for (const PlotCapacity& c : sorted) {
    const double y = axis.y(static_cast<double>(c.bytes));
    svg.line(k_left, y, k_right, y, "#c0392b",
             "stroke-dasharray=\"6 4\" data-gpu=\"" + xml_escape(c.gpu) + "\" data-bytes=\"" +
                 std::to_string(c.bytes) + "\"");
    labels.place(c.gpu + " " + format_bytes(c.bytes, units), around(k_right + 6, y + 4, 30), Anchor::start,
                 k_font, "fill=\"#c0392b\"");
  }
  // The legend: a swatch and the term's key, in rows along the bottom.
  double x = k_left, y = k_height - 34;
  for (const PlotTerm& t : terms) {
    const std::string name = term_key(t.kind);
    const double w = 14 + text_box(name, 0, 0, k_font, Anchor::start).x1 + 18;
    if (x + w > k_width - 10) {
      x = k_left;
      y += k_line + 4;
    }
    svg.rect(x, y - 9, 10, 10, fill_of(t.kind));
    labels.place(name, {{x + 14, y}}, Anchor::start);  // rows below the x axis: always free
    x += w;
  }
  return axis;
}

}  // namespace

std::string area_chart_svg(const AreaChart& c) {
  Svg svg(k_width, k_height, c.title);
  Labels labels(svg);
  std::vector<double> top(c.xs.size(), 0.0);
  for (const PlotTerm& t : c.terms)
    for (size_t i = 0; i < c.xs.size(); ++i) top[i] += static_cast<double>(t.bytes[i]);
  double top_bytes = 0;
  for (double v : top) top_bytes = std::max(top_bytes, v);
  const YAxis axis = frame(svg, labels, c.title, top_bytes, c.capacities, c.terms, c.units);
  const double x_lo = c.xs.empty() ? 0 : static_cast<double>(c.xs.front());
  const double x_hi = c.xs.empty() ? 1 : std::max(x_lo + 1, static_cast<double>(c.xs.back()));
  auto px = [&](double x) { return k_left + (k_right - k_left) * (x - x_lo) / (x_hi - x_lo); };

  std::vector<double> below(c.xs.size(), 0.0);
  for (const PlotTerm& t : c.terms) {
    std::vector<std::pair<double, double>> pts;
    std::vector<double> above = below;
    for (size_t i = 0; i < c.xs.size(); ++i) {
      above[i] += static_cast<double>(t.bytes[i]);
      pts.push_back({px(static_cast<double>(c.xs[i])), axis.y(above[i])});
    }
    for (size_t i = c.xs.size(); i-- > 0;)
      pts.push_back({px(static_cast<double>(c.xs[i])), axis.y(below[i])});
    svg.polygon(pts, fill_of(t.kind), "data-term=\"" + std::string(term_key(t.kind)) + "\"");
    below = above;
  }
  // x ticks: a nice step whose labels have room.
  double step = nice_step((x_hi - x_lo) / 8);
  const double label_w =
      text_box(std::to_string(static_cast<uint64_t>(x_hi)), 0, 0, k_font, Anchor::start).x1;
  while (px(x_lo + step) - px(x_lo) < label_w + 10) step = nice_step(step * 1.5);
  for (double v = std::ceil(x_lo / step) * step; v <= x_hi + 1e-9; v += step) {
    svg.line(px(v), k_bottom, px(v), k_bottom + 4, "#444");
    labels.place(std::to_string(static_cast<uint64_t>(std::llround(v))), {{px(v), k_bottom + 17}},
                 Anchor::middle);
  }
  labels.place(c.x_name, {{(k_left + k_right) / 2, k_bottom + 36}}, Anchor::middle);
  for (const PlotMark& m : c.marks) {
    const double x = px(static_cast<double>(m.x)), y = axis.y(static_cast<double>(m.bytes));
    svg.circle(x, y, 4, "#c0392b",
               "stroke=\"white\" data-gpu=\"" + xml_escape(m.gpu) + "\" data-x=\"" + std::to_string(m.x) +
                   "\" data-bytes=\"" + std::to_string(m.bytes) + "\"");
    const std::string text = m.gpu + ": " + std::to_string(m.x);
    std::vector<std::pair<double, double>> spots;
    for (const auto& [cx, cy] : around(x - 8, y - 8, 10)) spots.push_back({cx, cy});
    const bool left = text_box(text, x - 8, y, k_font, Anchor::end).x0 > k_left;
    labels.place(text, spots, left ? Anchor::end : Anchor::start, k_font, "fill=\"#c0392b\"") ||
        labels.place(text, around(x + 8, y - 8, 10), Anchor::start, k_font, "fill=\"#c0392b\"");
  }
  return svg.str();
}

std::string bar_chart_svg(const BarChart& c) {
  Svg svg(k_width, k_height, c.title);
  Labels labels(svg);
  std::vector<uint64_t> top(c.names.size(), 0);
  for (const PlotTerm& t : c.terms)
    for (size_t i = 0; i < c.names.size(); ++i) top[i] += t.bytes[i];
  double top_bytes = 0;
  for (uint64_t v : top) top_bytes = std::max(top_bytes, static_cast<double>(v));
  const YAxis axis = frame(svg, labels, c.title, top_bytes, c.capacities, c.terms, c.units);
  const double slot = (k_right - k_left) / static_cast<double>(std::max<size_t>(1, c.names.size()));
  const double bar_w = slot * 0.6;
  for (size_t i = 0; i < c.names.size(); ++i) {
    const double x = k_left + slot * static_cast<double>(i) + (slot - bar_w) / 2;
    double below = 0;
    for (const PlotTerm& t : c.terms) {
      const double b = static_cast<double>(t.bytes[i]);
      if (b <= 0) continue;
      svg.rect(x, axis.y(below + b), bar_w, axis.y(below) - axis.y(below + b), fill_of(t.kind),
               "data-bar=\"" + xml_escape(c.names[i]) + "\" data-term=\"" + term_key(t.kind) +
                   "\" data-bytes=\"" + std::to_string(t.bytes[i]) + "\"");
      below += b;
    }
    const double cx = x + bar_w / 2;
    labels.place(c.names[i], {{cx, k_bottom + 17}, {cx, k_bottom + 31}}, Anchor::middle, 10);
    labels.place(format_bytes(top[i], c.units), around(cx, axis.y(below) - 5, 6), Anchor::middle, 10);
  }
  return svg.str();
}

}  // namespace memplan::cli
