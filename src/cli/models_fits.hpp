#pragma once
// memplan models --fits GPU: which model presets fit one GPU for a mode, a weight format and a
// context length, and how much context is left.

#include <string>

#include <memplan/presets.hpp>

#include "cli/command.hpp"

namespace memplan::cli {

struct FitsOptions {
  std::string gpu;        // --fits
  std::string mode;       // "" = infer
  std::string quantize;   // "" = the preset's precision
  std::string precision;  // "" = the checkpoint's torch_dtype (as estimate resolves it)
  std::string seq;        // "" = 4096
};

int list_fits(const Presets& presets, const FitsOptions& options, const OutputOptions& out, Io& io);

}  // namespace memplan::cli
