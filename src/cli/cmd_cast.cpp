// memplan cast VALUE... [--to LIST] [--from-bits FORMAT] [--saturate]: what each format stores.
#include <cctype>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include <memplan/error.hpp>
#include "core/formats/cast.hpp"
#include "core/formats/number_format.hpp"

#include "cli/command.hpp"
#include "cli/commands_list.hpp"
#include "cli/options.hpp"
#include "cli/rows.hpp"

namespace memplan::cli {
namespace {

constexpr const char* k_default_targets = "fp32,fp16,bf16,fp8-e4m3,fp8-e5m2";

struct CastArgs {
  std::vector<std::string> values;
  std::string to;
  std::string from_bits;
  bool saturate = false;
  RawOutputOptions raw;
};

struct Row {
  std::string input;  // as typed
  CastResult result;
};

std::string error_cell(double e) {
  if (std::isnan(e)) return "-";
  if (e == 0) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", e);
  return buf;
}

nlohmann::json number_or_null(double e) {
  return std::isfinite(e) ? nlohmann::json(e) : nlohmann::json(nullptr);
}

int run_cast(Io& io, const CastArgs& args) {
  const OutputOptions opts = resolve_output_options(args.raw, io);
  if (args.values.empty())
    throw Error("cast", "no value given (expected e.g. memplan cast 0.1 --to fp16,bf16)");
  const NumberFormat* from =
      args.from_bits.empty() ? nullptr : &find_number_format("--from-bits", args.from_bits);
  const std::string to_text = !args.to.empty() ? args.to : from ? from->name : k_default_targets;
  const std::vector<const NumberFormat*> targets = parse_format_list("--to", to_text);
  const OverflowMode mode = args.saturate ? OverflowMode::saturate : OverflowMode::as_format;

  std::vector<Row> rows;
  for (const std::string& text : args.values) {
    const double x = from ? decode(*from, parse_bit_pattern("--from-bits " + from->name, text, *from))
                          : parse_cast_value("cast", text);
    for (const NumberFormat* f : targets) rows.push_back({text, cast(x, *f, mode)});
  }

  if (opts.format == Format::json) {
    nlohmann::json j;
    j["schema"] = "memplan.cast/1";
    nlohmann::json to = nlohmann::json::array();
    for (const NumberFormat* f : targets) to.push_back(f->name);
    j["inputs"] = {{"values", args.values},
                   {"to", to},
                   {"from_bits", from ? nlohmann::json(from->name) : nlohmann::json(nullptr)},
                   {"overflow", args.saturate ? "saturate" : "format"}};
    j["results"] = nlohmann::json::array();
    for (const Row& r : rows) {
      const CastResult& c = r.result;
      j["results"].push_back({{"input", r.input},
                              {"input_value", shortest_decimal(c.input)},
                              {"format", c.format->name},
                              {"bits_hex", hex_bits(*c.format, c.bits)},
                              {"bits_binary", binary_fields(*c.format, c.bits)},
                              {"value", shortest_decimal(c.value)},
                              {"abs_error", number_or_null(c.abs_error)},
                              {"rel_error", number_or_null(c.rel_error)},
                              {"outcome", outcome_name(c.outcome)},
                              {"subnormal", c.subnormal},
                              {"verdict", with_flags(cast_verdict(c))}});
    }
    io.out << j.dump(2) << "\n";
    return k_ok;
  }

  Rows table;
  table.header = {"input",     "format",    "stored", "bits", "sign exponent mantissa",
                  "abs error", "rel error", "verdict"};
  table.right = {true, false, true, false, false, true, true, false};
  for (const Row& r : rows) {
    const CastResult& c = r.result;
    table.cells.push_back({r.input, c.format->name, shortest_decimal(c.value), hex_bits(*c.format, c.bits),
                           binary_fields(*c.format, c.bits), error_cell(c.abs_error), error_cell(c.rel_error),
                           with_flags(cast_verdict(c))});
  }
  table.write(io.out, opts.format);
  if (opts.quiet || opts.format != Format::table) return k_ok;
  io.out << "\nRound to nearest, ties to even. Overflow: "
         << (args.saturate
                 ? "clamped to +-max (--saturate, OCP satfinite)."
                 : "inf, or NaN for fp8-e4m3 (no inf), as PyTorch's plain cast; --saturate clamps to +-max.")
         << "\n";
  if (opts.explain) {
    for (const Row& r : rows) {
      const CastResult& c = r.result;
      io.out << r.input << " in " << c.format->name << ": input as fp64 " << shortest_decimal(c.input)
             << ", stored " << shortest_decimal(c.value) << " = " << hex_bits(*c.format, c.bits) << " ("
             << binary_fields(*c.format, c.bits) << ")\n";
    }
  }
  return k_ok;
}

}  // namespace

void add_cast(CLI::App& sub, Runner& run) {
  auto args = std::make_shared<CastArgs>();
  sub.add_option(
      "values", args->values,
      "Values: decimal (0.1, 1e-8), hex float (0x1.8p3), inf, nan; with --from-bits, bit patterns (0x3c00)");
  sub.add_option("--to", args->to,
                 std::string("Formats to convert to, comma-separated (default ") + k_default_targets + ")");
  sub.add_option("--from-bits", args->from_bits,
                 "Read the values as bit patterns of this format (0x3c00, 0b0_01111_0000000000)");
  sub.add_flag("--saturate", args->saturate, "Clamp overflow to +-max instead of inf/NaN (OCP satfinite)");
  add_output_options(sub, args->raw);
  // "-inf" and "-nan" look like short options to CLI11: take them from the extras.
  sub.allow_extras();
  CLI::App* app = &sub;
  run = [args, app](Io& io) {
    for (const std::string& extra : app->remaining()) {
      std::string l = extra;
      for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (l != "-inf" && l != "-infinity" && l != "-nan")
        throw Error("", "The following argument was not expected: " + extra);
      args->values.push_back(extra);
    }
    return run_cast(io, *args);
  };
}

}  // namespace memplan::cli
