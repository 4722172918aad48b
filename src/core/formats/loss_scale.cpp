#include <fmt/format.h>

#include "core/formats/loss_scale.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <memplan/error.hpp>
#include "core/formats/cast.hpp"

namespace memplan {
namespace {

// A loss scale is itself an fp32 number: 2^-126 .. 2^127.
constexpr int k_lowest_log2 = -126;
constexpr int k_highest_log2 = 127;
// Search range for each value's thresholds (covers fp64 magnitudes against every format).
constexpr int k_search_lo = -1200;
constexpr int k_search_hi = 1200;

std::string g5(double x) { return fmt::format("{:.5g}", x); }

std::string pct(double share) { return fmt::format("{:.4g}%", share * 100); }

// Smallest k in [lo, hi] with pred(k) true for a predicate false..false true..true; hi + 1 if none.
template <class Pred>
int first_true(int lo, int hi, Pred pred) {
  int a = lo, b = hi + 1;
  while (a < b) {
    const int mid = a + (b - a) / 2;
    if (pred(mid))
      b = mid;
    else
      a = mid + 1;
  }
  return a;
}

// Per value, the scale exponents where it changes class as k grows: zero -> subnormal -> normal
// -> overflow. Kept (non-zero, finite) for lo <= k <= hi; normal for normal_lo <= k <= hi.
struct Thresholds {
  std::vector<int> lo, normal_lo, hi;
};

Thresholds thresholds(const NumberFormat& f, const std::vector<double>& magnitudes) {
  Thresholds t;
  for (double g : magnitudes) {
    auto at = [&](int k) { return cast(std::ldexp(g, k), f); };
    t.lo.push_back(first_true(k_search_lo, k_search_hi, [&](int k) { return at(k).value != 0; }));
    t.normal_lo.push_back(first_true(k_search_lo, k_search_hi, [&](int k) {
      const CastResult r = at(k);
      return r.outcome == CastOutcome::overflow || std::fabs(r.value) >= f.smallest_normal;
    }));
    t.hi.push_back(
        first_true(k_search_lo, k_search_hi, [&](int k) { return at(k).outcome == CastOutcome::overflow; }) -
        1);
  }
  std::sort(t.lo.begin(), t.lo.end());
  std::sort(t.normal_lo.begin(), t.normal_lo.end());
  std::sort(t.hi.begin(), t.hi.end());
  return t;
}

size_t count_le(const std::vector<int>& sorted, int k) {
  return static_cast<size_t>(std::upper_bound(sorted.begin(), sorted.end(), k) - sorted.begin());
}

ScaleShares shares_at(const Thresholds& t, int k) {
  const double n = static_cast<double>(t.lo.size());
  const double kept = static_cast<double>(count_le(t.lo, k));  // lo <= k
  const double normal = static_cast<double>(count_le(t.normal_lo, k));
  const double over = static_cast<double>(count_le(t.hi, k - 1));  // hi < k
  ScaleShares s;
  s.zero = (n - kept) / n;
  s.overflow = over / n;
  s.normal = (normal - over) / n;
  s.subnormal = (kept - normal) / n;
  return s;
}

LossScalePlan plan(const NumberFormat& f, std::vector<double> magnitudes, bool from_values, uint64_t zeros) {
  LossScalePlan p;
  p.format = &f;
  p.from_values = from_values;
  p.zeros = zeros;
  p.count = magnitudes.size();
  p.min = *std::min_element(magnitudes.begin(), magnitudes.end());
  p.max = *std::max_element(magnitudes.begin(), magnitudes.end());
  const Thresholds t = thresholds(f, magnitudes);
  p.unscaled = shares_at(t, 0);

  // Best: most kept, then most normal; 0 if it is among the best, else the middle of the best.
  std::vector<int> best;
  ScaleShares top;
  for (int k = k_lowest_log2; k <= k_highest_log2; ++k) {
    const ScaleShares s = shares_at(t, k);
    const bool better =
        s.in_range() > top.in_range() || (s.in_range() == top.in_range() && s.normal > top.normal);
    const bool same = s.in_range() == top.in_range() && s.normal == top.normal;
    if (best.empty() || better) {
      best = {k};
      top = s;
    } else if (same) {
      best.push_back(k);
    }
  }
  p.scale_log2 = std::find(best.begin(), best.end(), 0) != best.end() ? 0 : best[(best.size() - 1) / 2];
  p.scale = std::ldexp(1.0, p.scale_log2);
  p.scaled = shares_at(t, p.scale_log2);
  p.lossless_lo_log2 = t.lo.back();   // the largest lo
  p.lossless_hi_log2 = t.hi.front();  // the smallest hi
  p.any_lossless = p.lossless_lo_log2 <= p.lossless_hi_log2;
  p.needed = p.scaled.in_range() > p.unscaled.in_range();

  const std::string zero_at = g5(f.smallest_subnormal / 2);
  const std::string range = "normal range " + g5(f.smallest_normal) + " to " + g5(f.max);
  const std::string too_wide =
      "These gradients span more binades than " + f.name + " holds: no single scale keeps them all";
  if (p.unscaled.in_range() == 1 && f.exponent_bits >= 8) {
    p.explanation = f.name + " keeps fp32's 8 exponent bits (" + range +
                    "), so gradients of this size need no loss scale; it pays in precision instead (eps " +
                    g5(f.eps) + ").";
  } else if (p.unscaled.in_range() == 1) {
    p.explanation =
        "Every gradient is already representable in " + f.name + " (" + range + "); no loss scale is needed.";
    if (p.scale_log2 != 0)
      p.explanation += " A scale of 2^" + std::to_string(p.scale_log2) + " would keep " +
                       pct(p.scaled.normal - p.unscaled.normal) + " more at full precision.";
  } else if (!p.needed) {
    p.explanation = too_wide + " (" + range +
                    "), and no power of two keeps more than scale 1 does: " + pct(1 - p.scaled.in_range()) +
                    " are lost at any scale.";
  } else {
    p.explanation = f.name + " has " + std::to_string(f.exponent_bits) + " exponent bits (" + range +
                    "): magnitudes at or below " + zero_at +
                    " flush to zero. Multiplying the loss by 2^k multiplies every gradient by 2^k exactly "
                    "(only the exponent moves); divide it out in fp32 before the optimizer step "
                    "(torch.cuda.amp.GradScaler does both and halves the scale when it sees inf).";
    if (!p.any_lossless)
      p.explanation += " " + too_wide + "; the best keeps " + pct(p.scaled.in_range()) + ".";
  }
  return p;
}

}  // namespace

LossScalePlan plan_loss_scale(const NumberFormat& format, double grad_min, double grad_max) {
  if (format.kind != FormatKind::floating)
    throw Error(Field::to, "loss scaling is for floating formats; " + format.name +
                               " is not one (expected fp16, bf16, fp8-e5m2, ...)");
  if (!(std::isfinite(grad_min) && grad_min > 0))
    throw Error(Field::grad_min, "\"" + g5(grad_min) + "\" must be a positive finite magnitude (e.g. 1e-9)");
  if (!(std::isfinite(grad_max) && grad_max > 0))
    throw Error(Field::grad_max, "\"" + g5(grad_max) + "\" must be a positive finite magnitude (e.g. 3.5)");
  if (grad_min > grad_max)
    throw Error(Field::grad_min,
                g5(grad_min) + " is larger than " + field_ref(Field::grad_max) + " " + g5(grad_max));
  std::vector<double> samples;
  const double a = std::log(grad_min), b = std::log(grad_max);
  for (int i = 0; i < k_range_samples; ++i) {
    const double s = std::exp(a + (b - a) * i / (k_range_samples - 1));
    samples.push_back(i == 0 ? grad_min : i == k_range_samples - 1 ? grad_max : s);
  }
  return plan(format, std::move(samples), false, 0);
}

LossScalePlan plan_loss_scale(const NumberFormat& format, const std::vector<double>& values) {
  if (format.kind != FormatKind::floating)
    throw Error(Field::to, "loss scaling is for floating formats; " + format.name +
                               " is not one (expected fp16, bf16, fp8-e5m2, ...)");
  std::vector<double> magnitudes;
  uint64_t zeros = 0;
  for (double v : values) {
    if (!std::isfinite(v))
      throw Error(Field::values, "gradients must be finite (found " + shortest_decimal(v) + ")");
    if (v == 0)
      ++zeros;
    else
      magnitudes.push_back(std::fabs(v));
  }
  if (magnitudes.empty()) throw Error(Field::values, "no non-zero gradient values to scale");
  return plan(format, std::move(magnitudes), true, zeros);
}

std::vector<double> parse_gradient_values(std::string_view file_name, std::string_view text) {
  std::vector<double> out;
  size_t line_no = 0, start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    ++line_no;
    start = end + 1;
    const size_t hash = line.find('#');
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) line.remove_prefix(1);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.remove_suffix(1);
    if (line.empty()) continue;
    const std::string where = std::string(file_name) + ":" + std::to_string(line_no);
    const double v = parse_cast_value(where, line);
    if (!std::isfinite(v)) throw Error(where, "\"" + std::string(line) + "\" is not a finite gradient value");
    out.push_back(v);
  }
  if (out.empty()) throw Error(std::string(file_name), "no values (expected one number a line)");
  return out;
}

}  // namespace memplan
