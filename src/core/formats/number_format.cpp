#include "core/formats/number_format.hpp"
#include "core/base/text.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include <memplan/error.hpp>
#include "core/base/did_you_mean.hpp"

namespace memplan {
namespace {

// 10^-p as the decimal literal "1e-p" reads (torch computes pow(10, -digits10)).
double ten_to_minus(int p) { return std::strtod(("1e-" + std::to_string(p)).c_str(), nullptr); }

// A floating format from its field widths; every fact follows from them.
NumberFormat floating(std::string name, int exponent_bits, int mantissa_bits, Specials specials,
                      std::string torch_name, std::string note, int storage_bits = 0) {
  NumberFormat f;
  f.name = std::move(name);
  f.kind = FormatKind::floating;
  f.specials = specials;
  f.exponent_bits = exponent_bits;
  f.mantissa_bits = mantissa_bits;
  f.bits = 1 + exponent_bits + mantissa_bits;
  f.storage_bits = storage_bits ? storage_bits : f.bits;
  f.exponent_bias = (1 << (exponent_bits - 1)) - 1;
  const int all_ones = (1 << exponent_bits) - 1;
  if (specials == Specials::ieee) {
    // Largest exponent field is all_ones - 1; the mantissa may be all ones.
    f.max = std::ldexp(2.0 - std::ldexp(1.0, -mantissa_bits), all_ones - 1 - f.exponent_bias);
    f.has_inf = true;
  } else {
    // The all-ones exponent holds numbers; only mantissa all ones is NaN: max mantissa is 1...10.
    f.max = std::ldexp(2.0 - std::ldexp(1.0, 1 - mantissa_bits), all_ones - f.exponent_bias);
    f.has_inf = false;
  }
  f.has_nan = true;
  f.min = -f.max;
  f.smallest_normal = std::ldexp(1.0, 1 - f.exponent_bias);
  f.smallest_subnormal = std::ldexp(1.0, 1 - f.exponent_bias - mantissa_bits);
  f.eps = std::ldexp(1.0, -mantissa_bits);
  // numeric_limits<T>::digits10 = floor((digits - 1) * log10(2)), digits = mantissa_bits + 1.
  const int digits10 = static_cast<int>(std::floor(mantissa_bits * std::log10(2.0)));
  f.resolution = ten_to_minus(digits10);
  f.decimal_digits = (mantissa_bits + 1) * std::log10(2.0);
  f.torch_name = std::move(torch_name);
  f.note = std::move(note);
  return f;
}

NumberFormat integer(std::string name, int bits, std::string torch_name, std::string note) {
  NumberFormat f;
  f.name = std::move(name);
  f.kind = FormatKind::integer;
  f.specials = Specials::none;
  f.bits = f.storage_bits = bits;
  f.max = std::ldexp(1.0, bits - 1) - 1;
  f.min = -std::ldexp(1.0, bits - 1);
  f.decimal_digits = (bits - 1) * std::log10(2.0);
  f.torch_name = std::move(torch_name);
  f.note = std::move(note);
  return f;
}

NumberFormat nf4() {
  NumberFormat f;
  f.name = "nf4";
  f.kind = FormatKind::lookup;
  f.specials = Specials::none;
  f.bits = f.storage_bits = 4;
  // NormalFloat4 (QLoRA, Dettmers et al. 2023; bitsandbytes' table): quantiles of N(0,1)
  // scaled to [-1, 1], with an exact zero; 7 negative and 8 positive codes.
  f.codes = {-1.0,
             -0.6961928009986877,
             -0.5250730514526367,
             -0.39491748809814453,
             -0.28444138169288635,
             -0.18477343022823334,
             -0.09105003625154495,
             0.0,
             0.07958029955625534,
             0.16093020141124725,
             0.24611230194568634,
             0.33791524171829224,
             0.44070982933044434,
             0.5626170039176941,
             0.7229568362236023,
             1.0};
  f.max = 1.0;
  f.min = -1.0;
  f.decimal_digits = 4 * std::log10(2.0);
  f.note = "16 codes times a per-block absmax (64 values, fp32); 4.127 bits with double quantisation";
  return f;
}

}  // namespace

const std::vector<NumberFormat>& number_formats() {
  static const std::vector<NumberFormat> table = [] {
    std::vector<NumberFormat> t = {
        floating("fp64", 11, 52, Specials::ieee, "torch.float64", "IEEE binary64: scientific computing"),
        floating("fp32", 8, 23, Specials::ieee, "torch.float32", "IEEE binary32: the default for training"),
        floating("tf32", 8, 10, Specials::ieee, "",
                 "TensorFloat-32: fp32 range, fp16 precision; a tensor-core matmul mode, stored as fp32", 32),
        floating("fp16", 5, 10, Specials::ieee, "torch.float16",
                 "IEEE binary16: narrow range, needs loss scaling"),
        floating("bf16", 8, 7, Specials::ieee, "torch.bfloat16",
                 "bfloat16: fp32's range in 16 bits, 3 digits"),
        floating("fp8-e4m3", 4, 3, Specials::nan_only_ones, "torch.float8_e4m3fn",
                 "OCP FP8 E4M3 (fn: finite, no inf): weights and activations"),
        floating("fp8-e5m2", 5, 2, Specials::ieee, "torch.float8_e5m2",
                 "OCP FP8 E5M2: gradients (more range)"),
        integer("int8", 8, "torch.int8", "8-bit integer: quantised weights with a scale per row or block"),
        integer("int4", 4, "", "4-bit integer: quantised weights with a scale per group (GPTQ, AWQ)"),
        nf4(),
    };
    for (NumberFormat& f : t) f.bytes = find_storage_format("format", f.name).cost;
    return t;
  }();
  return table;
}

const NumberFormat& find_number_format(std::string_view subject, std::string_view name) {
  std::string key = to_lower(name);
  static const std::pair<const char*, const char*> aliases[] = {
      {"float64", "fp64"},        {"double", "fp64"},
      {"float32", "fp32"},        {"float", "fp32"},
      {"tensorfloat32", "tf32"},  {"float16", "fp16"},
      {"half", "fp16"},           {"bfloat16", "bf16"},
      {"fp8", "fp8-e4m3"},        {"e4m3", "fp8-e4m3"},
      {"e5m2", "fp8-e5m2"},       {"fp8_e4m3", "fp8-e4m3"},
      {"fp8_e5m2", "fp8-e5m2"},   {"float8_e4m3fn", "fp8-e4m3"},
      {"fp8-e4m3fn", "fp8-e4m3"}, {"float8_e5m2", "fp8-e5m2"},
      {"e4m3fn", "fp8-e4m3"}};
  for (const auto& [from, to] : aliases)
    if (key == from) key = to;
  std::vector<std::string> names;
  for (const NumberFormat& f : number_formats()) {
    if (f.name == key) return f;
    names.push_back(f.name);
  }
  std::string list;
  for (size_t i = 0; i < names.size(); ++i) list += (i ? ", " : "") + names[i];
  throw Error(std::string(subject), "\"" + std::string(name) + "\" is not a number format (expected one of " +
                                        list + did_you_mean(name, names) + ")");
}

std::vector<const NumberFormat*> parse_format_list(std::string_view subject, std::string_view text) {
  std::vector<const NumberFormat*> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    std::string_view item = text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty())
      throw Error(std::string(subject),
                  "\"" + std::string(text) + "\" has an empty format name (expected e.g. fp16,bf16)");
    out.push_back(&find_number_format(subject, item));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace memplan
