#include <catch2/catch.hpp>

#include <cmath>

#include <memplan/error.hpp>
#include "core/formats/loss_scale.hpp"
#include "core/formats/number_format.hpp"

using namespace memplan;

namespace {
const NumberFormat& scale_format(const char* name) { return find_number_format("test", name); }
// The range is sampled at 4097 points: shares are within a couple of samples of the exact value.
constexpr double k_tol = 2.0 / k_range_samples;
}  // namespace

TEST_CASE("fp16 needs a loss scale for gradients from 1e-9 to 3.5", "[loss_scale]") {
  const LossScalePlan p = plan_loss_scale(scale_format("fp16"), 1e-9, 3.5);
  // Log-uniform: share below t = ln(t / 1e-9) / ln(3.5 / 1e-9); ln(3.5e9) = 21.97612.
  // Flushed to zero without scaling: at or below 2^-25 = 2.9802e-8: ln(29.802) / 21.976 = 0.15447.
  CHECK(p.unscaled.zero == Approx(0.15447).margin(k_tol));
  CHECK(p.unscaled.overflow == 0);
  CHECK(p.needed);
  // Everything kept for 1e-9 * 2^k > 2^-25 (k >= 5) and 3.5 * 2^k < 65520 (k <= 14).
  REQUIRE(p.any_lossless);
  CHECK(p.lossless_lo_log2 == 5);
  CHECK(p.lossless_hi_log2 == 14);
  // The most at full precision among those: 2^14; subnormal below 2^-14 / 2^14 = 3.7253e-9:
  // ln(3.7253) / 21.976 = 0.05984.
  CHECK(p.scale_log2 == 14);
  CHECK(p.scale == 16384);
  CHECK(p.scaled.zero == 0);
  CHECK(p.scaled.overflow == 0);
  CHECK(p.scaled.subnormal == Approx(0.05984).margin(k_tol));
  CHECK(p.scaled.subnormal + p.scaled.normal == Approx(1.0));
}

TEST_CASE("bf16 needs no loss scale and says why", "[loss_scale]") {
  const LossScalePlan p = plan_loss_scale(scale_format("bf16"), 1e-9, 3.5);
  CHECK_FALSE(p.needed);
  CHECK(p.scale == 1);
  CHECK(p.unscaled.normal == 1.0);
  CHECK(p.explanation.find("8 exponent bits") != std::string::npos);
}

TEST_CASE("a range wider than the format: no scale helps", "[loss_scale]") {
  // fp8-e5m2 keeps 2^-17 < |g| < 61440 (about 33 binades); 1e-12..1e6 spans ln(1e18) = 41.447 (59.8 binades).
  // Unscaled: flushed ln(2^-17 / 1e-12) / 41.447 = 15.847 / 41.447 = 0.3823; overflow ln(1e6 / 61440)
  // / 41.447 = 0.0673. Any shift of the window loses as much at one end as it saves at the other.
  const LossScalePlan p = plan_loss_scale(scale_format("fp8-e5m2"), 1e-12, 1e6);
  CHECK(p.unscaled.zero == Approx(0.3823).margin(k_tol));
  CHECK(p.unscaled.overflow == Approx(0.0673).margin(k_tol));
  CHECK_FALSE(p.any_lossless);
  CHECK_FALSE(p.needed);
  CHECK(p.explanation.find("no power of two keeps more than scale 1") != std::string::npos);
}

TEST_CASE("values: the best scale when no scale keeps everything", "[loss_scale]") {
  // |70000| overflows fp16 and 1e-9 flushes; no power of two keeps both (ratio 7e13 > fp16's span).
  const LossScalePlan p =
      plan_loss_scale(scale_format("fp16"), std::vector<double>{1e-9, 0.0, 2.0, -70000.0});
  CHECK(p.count == 3);
  CHECK(p.zeros == 1);
  CHECK(p.unscaled.zero == Approx(1.0 / 3));
  CHECK(p.unscaled.overflow == Approx(1.0 / 3));
  CHECK_FALSE(p.any_lossless);
  // Two of three kept either for k in [5, 14] (1e-9 subnormal) or k in [-15, -1] (70000 and 2 both
  // normal: 2 * 2^-15 = 2^-14 is the smallest normal). The second wins on precision; its middle: -8.
  CHECK(p.scale_log2 == -8);
  CHECK(p.scaled.in_range() == Approx(2.0 / 3));
  CHECK(p.scaled.normal == Approx(2.0 / 3));
}

TEST_CASE("gradient files and bad input", "[loss_scale]") {
  const auto v = parse_gradient_values("g.txt", "1e-3\n# a comment\n\n  -2.5   # trailing\n");
  REQUIRE(v.size() == 2);
  CHECK(v[1] == -2.5);
  CHECK_THROWS_WITH(parse_gradient_values("g.txt", "1\nabc\n"),
                    "g.txt:2: \"abc\" is not a number (expected e.g. 0.1, 1e-8, -3, 0x1.8p3, inf, nan)");
  CHECK_THROWS_WITH(parse_gradient_values("g.txt", "1\ninf\n"),
                    "g.txt:2: \"inf\" is not a finite gradient value");
  CHECK_THROWS_WITH(parse_gradient_values("g.txt", "# nothing\n"),
                    "g.txt: no values (expected one number a line)");
  CHECK_THROWS_WITH(plan_loss_scale(scale_format("fp16"), 3.5, 1e-9),
                    "grad_min: 3.5 is larger than grad_max 1e-09");
  CHECK_THROWS_WITH(plan_loss_scale(scale_format("fp16"), -1.0, 1.0),
                    "grad_min: \"-1\" must be a positive finite magnitude (e.g. 1e-9)");
  CHECK_THROWS_AS(plan_loss_scale(scale_format("int8"), 1e-3, 1.0), Error);
  CHECK_THROWS_WITH(plan_loss_scale(scale_format("fp16"), std::vector<double>{0.0, 0.0}),
                    "values: no non-zero gradient values to scale");
}
