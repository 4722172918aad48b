#include "cli/render_bar.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>

#include "cli/render_terms.hpp"

namespace memplan::cli {
namespace {

constexpr int k_min_width = 40;
constexpr int k_max_width = 1000;
constexpr int k_min_cells = 10;

// The glyph and colour of each term, by TermKind (parameters ... overhead).
struct TermStyle {
  const char* unicode;
  const char* ascii;
  const char* color;  // ANSI SGR
};
constexpr TermStyle k_styles[k_term_kinds] = {
    {"\u2588", "#", "34"},  // parameters: full block, blue
    {"\u2593", "=", "36"},  // gradients: dark shade, cyan
    {"\u2592", "+", "35"},  // optimizer state: medium shade, magenta
    {"\u2591", "*", "33"},  // activations: light shade, yellow
    {"\u259a", "%", "32"},  // KV cache: quadrants, green
    {"\u259e", "&", "37"},  // buffers: quadrants, white
    {"\u2596", "o", "90"},  // overhead: lower-left quadrant, grey
};
// Left eighth-blocks: index k holds k eighths of a cell (1..7).
constexpr const char* k_eighths[8] = {"",       "\u258f", "\u258e", "\u258d",
                                      "\u258c", "\u258b", "\u258a", "\u2589"};

struct Glyphs {
  const char* empty;
  const char* marker;
};

Glyphs glyphs(Charset c) { return c == Charset::ascii ? Glyphs{".", "|"} : Glyphs{" ", "\u2502"}; }

const char* term_glyph(TermKind k, Charset c) {
  const TermStyle& s = k_styles[static_cast<size_t>(k)];
  return c == Charset::ascii ? s.ascii : s.unicode;
}

// Display width of `s`: UTF-8 continuation bytes take no column.
size_t columns(const std::string& s) {
  size_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  return n;
}

std::string painted(const std::string& text, const char* sgr, bool color) {
  if (!color || text.empty()) return text;
  return std::string("\033[") + sgr + "m" + text + "\033[0m";
}

// A segment of the bar: a term and where it ends, in eighths of a cell.
struct Segment {
  TermKind kind;
  double end;
};

// The cells of one bar, each a glyph (already painted), `cells` wide.
std::vector<std::string> fill_cells(const std::vector<Segment>& segments, int cells, Charset charset,
                                    bool color) {
  std::vector<std::string> out(static_cast<size_t>(cells), painted(glyphs(charset).empty, "", false));
  const double fill = segments.empty() ? 0.0 : segments.back().end;
  for (int c = 0; c < cells; ++c) {
    const double from = 8.0 * c;
    if (fill <= from) break;
    // The term under the middle of the filled part of the cell.
    const double middle = from + std::min(8.0, fill - from) / 2;
    TermKind kind = segments.back().kind;
    for (const Segment& s : segments)
      if (middle < s.end) {
        kind = s.kind;
        break;
      }
    const char* sgr = k_styles[static_cast<size_t>(kind)].color;
    const int eighths = static_cast<int>(std::lround(fill - from));
    std::string glyph;
    if (eighths >= 8)
      glyph = term_glyph(kind, charset);
    else if (charset == Charset::unicode)
      glyph = k_eighths[std::max(eighths, 0)];
    else
      glyph = eighths >= 4 ? term_glyph(kind, charset) : glyphs(charset).empty;
    if (glyph.empty()) glyph = glyphs(charset).empty;
    out[static_cast<size_t>(c)] = painted(glyph, sgr, color);
  }
  return out;
}

}  // namespace

bool locale_is_utf8(const std::string& locale) {
  std::string lower;
  for (char ch : locale) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return lower.find("utf-8") != std::string::npos || lower.find("utf8") != std::string::npos;
}

void add_bar_options(CLI::App& sub, RawBarOptions& raw) {
  sub.add_flag("--bar", raw.bar, "Draw the memory bar per GPU even when the output is not a terminal");
  sub.add_flag("--no-bar", raw.no_bar, "No memory bar, even on a terminal");
  sub.add_flag("--ascii", raw.ascii,
               "Draw the bar with ASCII characters (the default when the locale is not UTF-8)");
  sub.add_option("--width", raw.width, "Columns of the bar's lines (default: COLUMNS, else 80)");
}

BarOptions resolve_bar_options(const RawBarOptions& raw, const Io& io, const OutputOptions& out) {
  BarOptions b;
  if (raw.bar && raw.no_bar) throw Error("--bar", "cannot be used with --no-bar");
  b.show = out.format == Format::table && !out.quiet && (raw.bar || (io.tty && !raw.no_bar));
  b.color = out.color;
  const char* locale = nullptr;
  for (const char* name : {"LC_ALL", "LC_CTYPE", "LANG"}) {
    const char* v = std::getenv(name);
    if (v && *v) {
      locale = v;
      break;
    }
  }
  b.charset = raw.ascii || !locale || !locale_is_utf8(locale) ? Charset::ascii : Charset::unicode;
  auto parse_width = [](const std::string& text) -> int {
    if (text.empty() || text.size() > 6 ||
        !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return -1;
    return std::atoi(text.c_str());
  };
  if (!raw.width.empty()) {
    const int w = parse_width(raw.width);
    if (w < k_min_width || w > k_max_width)
      throw Error("--width", "\"" + raw.width + "\" is not a width (expected a number of columns from " +
                                 std::to_string(k_min_width) + " to " + std::to_string(k_max_width) + ")");
    b.width = w;
  } else if (const char* cols = std::getenv("COLUMNS")) {
    const int w = parse_width(cols);  // a COLUMNS that is not a usable number is ignored
    if (w >= k_min_width && w <= k_max_width) b.width = w;
  }
  return b;
}

std::string render_bars(const Estimate& e, const std::vector<FitRow>& fit, Units units,
                        const BarOptions& bar) {
  if (fit.empty()) return "";
  const Glyphs g = glyphs(bar.charset);
  uint64_t required = 0;
  for (const Term& t : e.terms)
    if (e.has(t.kind)) required += t.bytes;
  uint64_t scale = required;
  size_t id_width = 0, size_width = 0;
  std::vector<std::string> sizes;
  for (const FitRow& r : fit) {
    scale = std::max({scale, r.memory_bytes, r.required_bytes});
    id_width = std::max(id_width, r.gpu.id.size());
    sizes.push_back(format_bytes(r.required_bytes, units) + " of " + format_bytes(r.memory_bytes, units));
    size_width = std::max(size_width, sizes.back().size());
  }
  // "  <id> [<cells + marker>] <required> of <memory>"
  const int fixed = static_cast<int>(2 + id_width + 2 + 1 + 2 + size_width);
  const int cells = std::max(k_min_cells, bar.width - fixed);
  const double per_byte = scale ? 8.0 * cells / static_cast<double>(scale) : 0.0;

  std::vector<Segment> segments;  // every term but the overhead, which each GPU has its own of
  uint64_t sum = 0;
  std::string legend = "  ";
  size_t legend_columns = 2;
  std::string text;
  for (const Term& t : e.terms) {
    if (!e.has(t.kind) || !t.bytes) continue;
    if (t.kind != TermKind::overhead) {
      sum += t.bytes;
      segments.push_back({t.kind, static_cast<double>(sum) * per_byte});
    }
    const std::string item = std::string(term_glyph(t.kind, bar.charset)) + " " + term_key(t.kind) + " " +
                             format_bytes(t.bytes, units);
    const size_t w = columns(item) + 2;
    if (legend_columns > 2 && legend_columns + w > static_cast<size_t>(bar.width)) {
      text += legend + "\n";
      legend = "  ";
      legend_columns = 2;
    }
    legend +=
        painted(term_glyph(t.kind, bar.charset), k_styles[static_cast<size_t>(t.kind)].color, bar.color) +
        item.substr(std::string(term_glyph(t.kind, bar.charset)).size()) + "  ";
    legend_columns += w;
  }
  while (!legend.empty() && legend.back() == ' ') legend.pop_back();
  if (legend.size() > 2) text += legend + "\n";
  text += "  " + std::string(id_width, ' ') + "  " + g.marker + " = the memory a process can allocate\n";

  for (size_t i = 0; i < fit.size(); ++i) {
    const FitRow& r = fit[i];
    std::vector<Segment> own = segments;
    if (r.overhead_bytes)
      own.push_back({TermKind::overhead, static_cast<double>(sum + r.overhead_bytes) * per_byte});
    const std::vector<std::string> filled = fill_cells(own, cells, bar.charset, bar.color);
    const auto marker = static_cast<size_t>(
        std::min<long>(cells, std::lround(static_cast<double>(r.memory_bytes) * per_byte / 8.0)));
    std::string line = "  " + r.gpu.id + std::string(id_width - r.gpu.id.size(), ' ') + " [";
    for (size_t c = 0; c <= static_cast<size_t>(cells); ++c) {
      if (c == marker) line += painted(g.marker, r.verdict == Verdict::no ? "1;31" : "1", bar.color);
      if (c < static_cast<size_t>(cells)) line += filled[c];
    }
    line += "] " + sizes[i];
    text += line + "\n";
  }
  return text;
}

}  // namespace memplan::cli
