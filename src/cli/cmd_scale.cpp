// memplan scale --grad-min A --grad-max B | --values FILE [--to fp16]: the loss scale that keeps
// gradients in range, and the share lost without it.
#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/file_reader.hpp"
#include "core/formats/loss_scale.hpp"
#include "core/formats/number_format.hpp"

#include "cli/command.hpp"
#include "cli/commands_list.hpp"

namespace memplan::cli {
namespace {

struct ScaleArgs {
  std::string grad_min, grad_max, values, to = "fp16";
  RawOutputOptions raw;
};

std::string pct(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", share * 100);
  return buf;
}

std::string g5(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.5g", x);
  return buf;
}

nlohmann::json shares_json(const ScaleShares& s) {
  return {{"zero", s.zero},
          {"subnormal", s.subnormal},
          {"normal", s.normal},
          {"overflow", s.overflow},
          {"in_range", s.in_range()}};
}

std::string shares_line(const ScaleShares& s) {
  return pct(s.zero) + " flushed to zero, " + pct(s.overflow) + " overflow, " + pct(s.subnormal) +
         " subnormal (fewer bits), " + pct(s.normal) + " full precision";
}

int run_scale(Io& io, const ScaleArgs& args) {
  const OutputOptions opts = resolve_output_options(args.raw, io);
  const NumberFormat& f = find_number_format("--to", args.to);
  const bool have_range = !args.grad_min.empty() || !args.grad_max.empty();
  if (have_range && !args.values.empty())
    throw Error("--values", "give either --values FILE or --grad-min/--grad-max, not both");
  LossScalePlan p;
  if (!args.values.empty()) {
    p = plan_loss_scale(
        f, parse_gradient_values(args.values,
                                 read_small_file(args.values, read_limit::k_gradient_values, "--values")));
  } else {
    if (args.grad_min.empty() || args.grad_max.empty())
      throw Error(args.grad_min.empty() ? "--grad-min" : "--grad-max",
                  "missing (expected --grad-min and --grad-max, e.g. --grad-min 1e-9 --grad-max 3.5, or "
                  "--values FILE)");
    p = plan_loss_scale(f, parse_real("--grad-min", args.grad_min), parse_real("--grad-max", args.grad_max));
  }

  if (opts.format == Format::json) {
    nlohmann::json j;
    j["schema"] = "memplan.scale/1";
    j["inputs"] = {
        {"to", f.name},
        {"grad_min", args.values.empty() ? nlohmann::json(p.min) : nlohmann::json(nullptr)},
        {"grad_max", args.values.empty() ? nlohmann::json(p.max) : nlohmann::json(nullptr)},
        {"values_file", args.values.empty() ? nlohmann::json(nullptr) : nlohmann::json(args.values)}};
    j["model"] = p.from_values ? "values" : "log-uniform";
    j["count"] = p.count;
    j["zeros"] = p.zeros;
    j["min"] = p.min;
    j["max"] = p.max;
    j["unscaled"] = shares_json(p.unscaled);
    j["scale"] = p.scale;
    j["scale_log2"] = p.scale_log2;
    j["scaled"] = shares_json(p.scaled);
    j["lossless_scale_log2"] =
        p.any_lossless ? nlohmann::json({p.lossless_lo_log2, p.lossless_hi_log2}) : nlohmann::json(nullptr);
    j["needed"] = p.needed;
    j["explanation"] = p.explanation;
    io.out << j.dump(2) << "\n";
    return k_ok;
  }
  if (opts.quiet) {
    io.out << g5(p.scale) << "\n";
    return k_ok;
  }
  io.out << "format:       " << f.name << "\n";
  io.out << "gradients:    "
         << (p.from_values ? std::to_string(p.count) + " non-zero values" : std::string("range"))
         << ", magnitudes " << g5(p.min) << " .. " << g5(p.max)
         << (p.from_values ? (p.zeros ? " (" + std::to_string(p.zeros) + " zeros ignored)" : std::string())
                           : std::string(" (assumed spread evenly on a log scale)"))
         << "\n";
  io.out << "unscaled:     " << shares_line(p.unscaled) << "\n";
  io.out << "loss scale:   2^" << p.scale_log2 << " = " << g5(p.scale)
         << (p.needed                    ? ""
             : p.unscaled.in_range() < 1 ? " (no scale helps)"
                                         : " (none needed)")
         << "\n";
  io.out << "scaled:       " << shares_line(p.scaled) << "\n";
  if (p.any_lossless)
    io.out << "safe scales:  2^" << p.lossless_lo_log2 << " .. 2^" << p.lossless_hi_log2
           << " keep every value non-zero and finite\n";
  else
    io.out << "safe scales:  none keeps every value (the range is wider than " << f.name << "'s)\n";
  io.out << "\n" << p.explanation << "\n";
  return k_ok;
}

}  // namespace

void add_scale(CLI::App& sub, Runner& run) {
  auto args = std::make_shared<ScaleArgs>();
  sub.add_option("--grad-min", args->grad_min, "Smallest gradient magnitude, e.g. 1e-9");
  sub.add_option("--grad-max", args->grad_max, "Largest gradient magnitude, e.g. 3.5");
  sub.add_option("--values", args->values, "A file of gradient values, one a line (instead of a range)");
  sub.add_option("--to", args->to, "Target format (default fp16)");
  add_output_options(sub, args->raw);
  run = [args](Io& io) { return run_scale(io, *args); };
}

}  // namespace memplan::cli
