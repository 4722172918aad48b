#pragma once
// The stacked memory bar of `estimate` and `fit`: one bar per GPU, the terms as segments (what
// each GPU holds), the GPU's usable memory marked. Unicode blocks (eighth-blocks at the end of
// the fill) or ASCII; colour only when the output options allow it.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <memplan/estimate.hpp>
#include <memplan/fit.hpp>

#include "cli/command.hpp"

namespace memplan::cli {

enum class Charset { unicode, ascii };

// How to draw the bars, resolved from the flags, the terminal and the environment.
struct BarOptions {
  bool show = false;  // --bar, or a terminal without --no-bar
  Charset charset = Charset::unicode;
  bool color = false;
  int width = 80;  // columns of the whole line: --width, else COLUMNS, else 80
};

// The flags as given.
struct RawBarOptions {
  bool bar = false;
  bool no_bar = false;
  bool ascii = false;
  std::string width;
};

// Adds --bar, --no-bar, --ascii and --width to `sub`.
void add_bar_options(CLI::App& sub, RawBarOptions& raw);

// Checks the flags; the charset is ASCII with --ascii or when the locale (LC_ALL, LC_CTYPE, LANG:
// the first one set) is not UTF-8.
BarOptions resolve_bar_options(const RawBarOptions& raw, const Io& io, const OutputOptions& out);

// True when `locale` (a value of LANG, "en_US.UTF-8") names the UTF-8 encoding.
bool locale_is_utf8(const std::string& locale);

// The legend (each shown term with its size) and one bar per fit row, all on one scale: the
// largest of the required bytes and the GPUs' memory fills the bar.
std::string render_bars(const Estimate& e, const std::vector<FitRow>& fit, Units units,
                        const BarOptions& bar);

}  // namespace memplan::cli
