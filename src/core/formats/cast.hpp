#pragma once
// Exact conversion of a number into each format and back, as the hardware does it: round to
// nearest, ties to even; subnormals; signed zero; overflow to inf (or NaN for fp8-e4m3, which has
// no inf). Pure integer arithmetic on the IEEE bits: no _Float16, no FPU rounding modes.
//
// Overflow: by default a finite value beyond the format's range becomes what a plain PyTorch cast
// gives: inf where the format has one, NaN for fp8-e4m3 (`x.to(torch.float8_e4m3fn)` turns 470
// and 1e6 into NaN). OverflowMode::saturate clamps to +-max instead, as the OCP "satfinite"
// conversions used by scaled-fp8 recipes (Transformer Engine, __nv_cvt_float_to_fp8) do.
//
// Integer formats round to nearest even and clamp to their range (quantisation's
// `round(x).clamp(min, max)`, not C's truncation); nf4 takes the nearest of its 16 codes for a value
// already divided by its block's absmax, clamping outside [-1, 1].

#include <cstdint>
#include <string>
#include <string_view>

#include "core/formats/number_format.hpp"

namespace memplan {

enum class CastOutcome {
  exact,      // stored value equals the input (inf -> inf and nan are not "exact": see nan)
  rounded,    // a nearby value is stored
  overflow,   // beyond the range: inf, NaN (fp8-e4m3) or the clamped max
  underflow,  // a non-zero input stored as zero
  nan,        // the input was NaN
};

enum class OverflowMode {
  as_format,  // inf where the format has it, NaN for fp8-e4m3 (PyTorch's plain cast)
  saturate,   // clamp to +-max (OCP satfinite); inf inputs too
};

struct CastResult {
  double input = 0;  // the number that was converted (as fp64)
  const NumberFormat* format = nullptr;
  uint64_t bits = 0;     // the stored pattern, storage_bits wide (tf32: its fp32 container)
  double value = 0;      // the stored value, exactly (inf, NaN, -0 included)
  double abs_error = 0;  // |value - input|; NaN where undefined (overflow to inf/NaN, NaN input)
  double rel_error = 0;  // abs_error / |input| (0 for an exact 0)
  CastOutcome outcome = CastOutcome::exact;
  bool subnormal = false;  // the stored value is subnormal: fewer significant bits than normal
};

// The exact value of a storage bit pattern (NaN for NaN codes). Bits above storage_bits are ignored.
double decode(const NumberFormat& format, uint64_t bits);

// Converts `x` and says what happened.
CastResult cast(double x, const NumberFormat& format, OverflowMode mode = OverflowMode::as_format);

// "exact", "rounded", "overflow", "underflow", "nan" (the JSON `outcome`).
const char* outcome_name(CastOutcome outcome);

// A plain-words verdict: "exact", "overflow -> inf", "underflow -> 0", "lost: 1.0001 stored as 1",
// "rounded: 0.1 stored as 0.0999755859375", "overflow -> nan (fp8-e4m3 has no inf)".
std::string cast_verdict(const CastResult& result);

// The shortest decimal that reads back as the same fp64: "0.0999755859375", "1e-08", "65504";
// "inf", "-inf", "nan", "-0" for the special values.
std::string shortest_decimal(double x);

// "0x3c00": the pattern in hex, as many digits as the storage needs (nf4 and int4: one).
std::string hex_bits(const NumberFormat& format, uint64_t bits);

// The pattern in binary split into fields: "0 01111 0000000000" (sign, exponent, mantissa);
// tf32 shows its 19 bits; integers and nf4 one group.
std::string binary_fields(const NumberFormat& format, uint64_t bits);

// A value to cast: decimal ("0.1", "1e-8", "-3"), hex float ("0x1.8p3"), "inf", "-inf", "nan".
// A bare hex integer ("0x3c00") is refused: it is almost surely a bit pattern (see --from-bits).
double parse_cast_value(std::string_view subject, std::string_view text);

// A bit pattern for `format`: "0x3c00", "0b0011110000000000", '_' allowed between digits.
// Refuses patterns wider than the format; tf32 takes its fp32 container with the low 13 bits zero.
uint64_t parse_bit_pattern(std::string_view subject, std::string_view text, const NumberFormat& format);

}  // namespace memplan
