#pragma once
// Loss scaling: which share of the gradients a half format flushes to zero or overflows, and the
// power-of-two loss scale that keeps the most of them in range. fp16 has 5 exponent bits (values
// below 2^-25 become 0, above 65519 inf); bf16 has fp32's 8 and needs no scaling.
//
// Scaling by S = 2^k multiplies every gradient exactly (only the exponent moves), so each value is
// classified exactly with cast(): flushed to zero, subnormal (kept with fewer bits), normal, or
// overflow. The best k keeps the most values non-zero and finite; among those, the most at full
// (normal) precision; among those, k = 0 when it qualifies, else the middle of the best run.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/formats/number_format.hpp"

namespace memplan {

// Shares (0..1) of the non-zero gradient magnitudes, after scaling.
struct ScaleShares {
  double zero = 0;       // flushed to zero: underflow
  double subnormal = 0;  // kept, but subnormal (reduced precision)
  double normal = 0;     // kept at full precision
  double overflow = 0;   // inf (or NaN / clamped max for fp8-e4m3)

  double in_range() const { return subnormal + normal; }
};

struct LossScalePlan {
  const NumberFormat* format = nullptr;
  bool from_values = false;  // true: a list of values; false: a min..max range
  uint64_t count = 0;        // values considered (non-zero magnitudes, or range samples)
  uint64_t zeros = 0;        // exact zeros in the values (stay zero at any scale; not counted)
  double min = 0, max = 0;   // smallest and largest magnitude
  ScaleShares unscaled;      // at scale 1
  int scale_log2 = 0;        // the recommended scale is 2^scale_log2
  double scale = 1;
  ScaleShares scaled;         // at the recommended scale
  bool any_lossless = false;  // some power of two keeps every value non-zero and finite
  int lossless_lo_log2 = 0;   // ... from 2^lo to 2^hi (when any_lossless)
  int lossless_hi_log2 = 0;
  bool needed = false;      // scale 1 loses something that a scale saves
  std::string explanation;  // plain words: why (or why not), incl. why bf16 needs none
};

// Samples in the range model: magnitudes evenly spaced on a log scale from min to max.
constexpr int k_range_samples = 4097;

// Plan for gradient magnitudes spread evenly on a log scale between grad_min and grad_max
// (0 < grad_min <= grad_max, finite). Errors name --grad-min / --grad-max.
LossScalePlan plan_loss_scale(const NumberFormat& format, double grad_min, double grad_max);

// Plan for measured gradient values (signs ignored; zeros counted apart). At least one non-zero.
LossScalePlan plan_loss_scale(const NumberFormat& format, const std::vector<double>& values);

// Values one a line (blank lines and '#' comments skipped) from a file's text; errors name
// "<file>:<line>".
std::vector<double> parse_gradient_values(std::string_view file_name, std::string_view text);

}  // namespace memplan
