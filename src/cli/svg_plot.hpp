#pragma once
// memplan's two charts as SVG (svg.hpp): memory against a swept input (micro-batch or sequence) as
// stacked areas per term, and the breakdown of several precision recipes as stacked bars; each
// GPU's usable memory a labelled line, the largest value that fits marked. Every label is placed
// where it overlaps no other.

#include <cstdint>
#include <string>
#include <vector>

#include <memplan/estimate.hpp>
#include <memplan/quantity.hpp>

namespace memplan::cli {

// One term's bytes at each x (area chart) or for each bar (bar chart).
struct PlotTerm {
  TermKind kind;
  std::vector<uint64_t> bytes;
};

// A GPU's usable memory.
struct PlotCapacity {
  std::string gpu;
  uint64_t bytes = 0;
};

// The largest x that fits `gpu` and the bytes required there.
struct PlotMark {
  std::string gpu;
  uint64_t x = 0;
  uint64_t bytes = 0;
};

struct AreaChart {
  std::string title;
  std::string x_name;  // "micro-batch", "sequence length"
  std::vector<uint64_t> xs;
  std::vector<PlotTerm> terms;
  std::vector<PlotCapacity> capacities;
  std::vector<PlotMark> marks;
  Units units = Units::gib;
};

struct BarChart {
  std::string title;
  std::vector<std::string> names;  // one per bar
  std::vector<PlotTerm> terms;
  std::vector<PlotCapacity> capacities;
  Units units = Units::gib;
};

std::string area_chart_svg(const AreaChart& chart);
std::string bar_chart_svg(const BarChart& chart);

}  // namespace memplan::cli
