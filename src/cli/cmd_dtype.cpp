// memplan dtype [FORMAT...]: the facts of each number format, as torch.finfo / torch.iinfo give them.
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/formats/cast.hpp"
#include "core/formats/number_format.hpp"

#include "cli/command.hpp"
#include "cli/commands_list.hpp"
#include "cli/rows.hpp"

namespace memplan::cli {
namespace {

struct DtypeArgs {
  std::vector<std::string> names;
  RawOutputOptions raw;
};

// Table numbers: plain integers up to 1e6; otherwise scientific, exact when that takes at most
// 7 significant digits (eps 9.765625e-04), else 5 (6.1035e-05, 3.3895e+38).
std::string number(double x) {
  if (x == 0) return "0";
  if (x == std::floor(x) && std::fabs(x) < 1e6) return shortest_decimal(x);
  char buf[40];
  for (int digits = 1; digits <= 7; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*e", digits - 1, x);
    if (std::strtod(buf, nullptr) == x) return buf;
  }
  std::snprintf(buf, sizeof buf, "%.4e", x);
  return buf;
}

std::string bits_cell(const NumberFormat& f) {
  if (f.kind != FormatKind::floating) return std::to_string(f.bits);
  std::string s = "1+" + std::to_string(f.exponent_bits) + "+" + std::to_string(f.mantissa_bits);
  if (f.storage_bits != f.bits) s += " (in " + std::to_string(f.storage_bits) + ")";
  return s;
}

std::string digits_cell(double d) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.2f", d);
  return buf;
}

nlohmann::json or_null(bool applies, double v) {
  return applies ? nlohmann::json(v) : nlohmann::json(nullptr);
}

nlohmann::json format_json(const NumberFormat& f) {
  const bool fl = f.kind == FormatKind::floating;
  nlohmann::json j;
  j["name"] = f.name;
  j["bits"] = f.bits;
  j["storage_bits"] = f.storage_bits;
  j["exponent_bits"] = fl ? nlohmann::json(f.exponent_bits) : nlohmann::json(nullptr);
  j["mantissa_bits"] = fl ? nlohmann::json(f.mantissa_bits) : nlohmann::json(nullptr);
  j["exponent_bias"] = fl ? nlohmann::json(f.exponent_bias) : nlohmann::json(nullptr);
  j["bytes"] = f.bytes.bytes();
  if (f.kind == FormatKind::integer) {
    j["max"] = static_cast<int64_t>(f.max);
    j["min"] = static_cast<int64_t>(f.min);
  } else {
    j["max"] = f.max;
    j["min"] = f.min;
  }
  j["smallest_normal"] = or_null(fl, f.smallest_normal);
  j["smallest_subnormal"] = or_null(fl, f.smallest_subnormal);
  j["eps"] = or_null(fl, f.eps);
  j["resolution"] = or_null(fl, f.resolution);
  j["decimal_digits"] = std::round(f.decimal_digits * 100) / 100;
  j["has_inf"] = f.has_inf;
  j["has_nan"] = f.has_nan;
  j["torch_dtype"] = f.torch_name.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.torch_name);
  j["note"] = f.note;
  if (f.kind == FormatKind::lookup) {
    j["codes"] = f.codes;
    j["block_size"] = k_nf4_block_size;
    j["block_constant"] =
        "fp32 absmax per 64 values (4.5 bits a value); double quantisation: 8-bit absmax + "
        "fp32 per 256 blocks (4.127 bits)";
  }
  return j;
}

// --explain: where each fact comes from.
std::string derivation(const NumberFormat& f) {
  if (f.kind == FormatKind::integer)
    return f.name + ": two's complement, -2^" + std::to_string(f.bits - 1) + " .. 2^" +
           std::to_string(f.bits - 1) + " - 1";
  if (f.kind == FormatKind::lookup) {
    std::string s = f.name + " codes (x block absmax):";
    for (double c : f.codes) s += " " + shortest_decimal(c);
    return s;
  }
  const int m = f.mantissa_bits, bias = f.exponent_bias;
  const int ones = (1 << f.exponent_bits) - 1;
  const bool ieee = f.specials == Specials::ieee;
  const int emax = (ieee ? ones - 1 : ones) - bias;
  const std::string top =
      ieee ? "(2 - 2^-" + std::to_string(m) + ")" : "(2 - 2^-" + std::to_string(m - 1) + ")";
  return f.name + ": bias " + std::to_string(bias) + "; max = " + top + " x 2^" + std::to_string(emax) +
         "; smallest normal = 2^" + std::to_string(1 - bias) + "; smallest subnormal = 2^" +
         std::to_string(1 - bias - m) + "; eps = 2^-" + std::to_string(m) +
         (ieee ? "; exponent all ones: inf (mantissa 0) or NaN" : "; no inf, only S.1111.111 is NaN");
}

int run_dtype(Io& io, const DtypeArgs& args) {
  const OutputOptions opts = resolve_output_options(args.raw, io);
  std::vector<const NumberFormat*> formats;
  if (args.names.empty())
    for (const NumberFormat& f : number_formats()) formats.push_back(&f);
  for (const std::string& n : args.names) formats.push_back(&find_number_format("dtype", n));

  if (opts.format == Format::json) {
    nlohmann::json j;
    j["schema"] = "memplan.dtype/1";
    nlohmann::json names = nlohmann::json::array();
    for (const NumberFormat* f : formats) names.push_back(f->name);
    j["inputs"] = {{"formats", names}};
    j["formats"] = nlohmann::json::array();
    for (const NumberFormat* f : formats) j["formats"].push_back(format_json(*f));
    io.out << j.dump(2) << "\n";
    return k_ok;
  }
  const bool raw_numbers = opts.format == Format::csv;
  auto num = [&](double v) { return raw_numbers ? shortest_decimal(v) : number(v); };
  Rows rows;
  rows.header = {"format", "bits",   "bytes", "max", "min", "smallest normal", "smallest subnormal",
                 "eps",    "digits", "inf",   "nan"};
  rows.right = {false, false, true, true, true, true, true, true, true, false, false};
  for (const NumberFormat* f : formats) {
    const bool fl = f->kind == FormatKind::floating;
    rows.cells.push_back(
        {f->name, bits_cell(*f), shortest_decimal(f->bytes.bytes()), num(f->max), num(f->min),
         fl ? num(f->smallest_normal) : "-", fl ? num(f->smallest_subnormal) : "-", fl ? num(f->eps) : "-",
         digits_cell(f->decimal_digits), f->has_inf ? "yes" : "no", f->has_nan ? "yes" : "no"});
  }
  rows.write(io.out, opts.format);
  if (opts.quiet || opts.format != Format::table) return k_ok;
  io.out << "\n";
  for (const NumberFormat* f : formats) io.out << f->name << ": " << f->note << "\n";
  if (opts.explain) {
    io.out << "\n";
    for (const NumberFormat* f : formats) io.out << derivation(*f) << "\n";
    io.out << "digits = (mantissa bits + 1) x log10(2); torch.finfo.resolution = 10^-floor(mantissa bits x "
              "log10(2))\n";
  }
  return k_ok;
}

}  // namespace

void add_dtype(CLI::App& sub, Runner& run) {
  auto args = std::make_shared<DtypeArgs>();
  sub.add_option("formats", args->names,
                 "Formats to show (default: all): fp64 fp32 tf32 fp16 bf16 fp8-e4m3 fp8-e5m2 int8 int4 nf4");
  add_output_options(sub, args->raw);
  run = [args](Io& io) { return run_dtype(io, *args); };
}

}  // namespace memplan::cli
