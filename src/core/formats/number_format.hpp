#pragma once
// Number formats as facts: how each spends its bits on range (exponent) and precision (mantissa),
// with the numbers torch.finfo / torch.iinfo report (fp16 max 65504, eps 9.765625e-04, ...).
// Bytes per element come from storage_format.hpp, so the two tables cannot disagree.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <memplan/storage_format.hpp>

namespace memplan {

// What kind of numbers a format holds.
enum class FormatKind {
  floating,  // sign, exponent, mantissa (fp64 ... fp8)
  integer,   // two's complement (int8, int4)
  lookup,    // 16 code values scaled by a block constant (nf4)
};

// What the all-ones exponent field means in a floating format.
enum class Specials {
  ieee,           // exponent all ones: mantissa 0 is inf, anything else NaN (fp16, bf16, fp8-e5m2)
  nan_only_ones,  // no inf; only S.1111.111 is NaN, other all-ones exponents are numbers (fp8-e4m3fn)
  none,           // integers and lookup formats
};

struct NumberFormat {
  std::string name;  // "fp16"
  FormatKind kind = FormatKind::floating;
  Specials specials = Specials::ieee;
  int bits = 0;                   // significant bits: 16 for fp16, 19 for tf32, 4 for nf4
  int storage_bits = 0;           // bits of the container in memory: 32 for tf32, else = bits
  int exponent_bits = 0;          // 0 for integer and lookup formats
  int mantissa_bits = 0;          // stored fraction bits (without the implicit 1)
  int exponent_bias = 0;          // 15 for fp16, 7 for fp8-e4m3
  double max = 0;                 // largest finite value (torch.finfo.max / iinfo.max)
  double min = 0;                 // most negative finite value (finfo.min = -max; iinfo.min)
  double smallest_normal = 0;     // finfo.smallest_normal (= tiny); 0 where it does not apply
  double smallest_subnormal = 0;  // 2^(1 - bias - mantissa_bits); 0 where it does not apply
  double eps = 0;                 // finfo.eps = 2^-mantissa_bits: the gap after 1.0
  double resolution = 0;          // finfo.resolution = 10^-precision, precision = floor(-log10(eps))
  double decimal_digits = 0;      // (mantissa_bits + 1) * log10(2): significant decimal digits
  bool has_inf = false;
  bool has_nan = false;
  ElementCost bytes;          // bytes per element from storage_formats(), block constants included
  std::string torch_name;     // "torch.float16"; "" where torch has no dtype (tf32, nf4)
  std::string note;           // one line: what the format is for
  std::vector<double> codes;  // nf4: the 16 code values (bitsandbytes), ascending; else empty
};

// The ten formats, in the order `memplan dtype` lists them:
// fp64 fp32 tf32 fp16 bf16 fp8-e4m3 fp8-e5m2 int8 int4 nf4.
const std::vector<NumberFormat>& number_formats();

// By name or alias ("half", "float16", "bfloat16", "e4m3", "fp8"), case-insensitive; otherwise an
// Error naming `subject` with the list and "did you mean".
const NumberFormat& find_number_format(std::string_view subject, std::string_view name);

// A comma-separated list of formats ("fp16,bf16,fp8-e4m3"), each looked up as above.
std::vector<const NumberFormat*> parse_format_list(std::string_view subject, std::string_view text);

// nf4's block: 64 values share one fp32 absmax (4.5 bits per value); with double quantisation
// (QLoRA's default) the absmax is 8-bit with one fp32 constant per 256 blocks (4.127 bits).
constexpr int k_nf4_block_size = 64;
constexpr int k_nf4_dq_block_size = 256;

}  // namespace memplan
