#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include <memplan/error.hpp>
#include "core/formats/cast.hpp"
#include "core/formats/number_format.hpp"

#include "error_of.hpp"

using namespace memplan;
using memplan::test::error_of;

namespace {

const NumberFormat& format_named(const char* name) { return find_number_format("test", name); }

float float_from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// An fp16 pattern's value by the IEEE 754 binary16 definition, written independently of decode():
// (-1)^s * 2^(e-15) * (1 + m/1024), subnormal 2^-14 * (m/1024).
double fp16_by_definition(uint32_t h) {
  const int s = (h >> 15) & 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v;
  if (e == 31)
    v = m ? NAN : INFINITY;
  else if (e == 0)
    v = std::pow(2.0, -14) * (m / 1024.0);
  else
    v = std::pow(2.0, e - 15) * (1.0 + m / 1024.0);
  return s ? -v : v;
}

// The bit pattern cast() stores for x.
uint64_t stored_bits(const NumberFormat& f, double x, OverflowMode mode = OverflowMode::as_format) {
  return cast(x, f, mode).bits;
}

}  // namespace

TEST_CASE("every fp16 pattern decodes as IEEE defines it and round-trips through fp32", "[cast]") {
  const NumberFormat& f16 = format_named("fp16");
  const NumberFormat& f32 = format_named("fp32");
  int mismatches = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    const double v = decode(f16, h);
    const double want = fp16_by_definition(h);
    if (std::isnan(want)) {
      mismatches += !std::isnan(v);
      mismatches += !std::isnan(decode(f16, stored_bits(f16, static_cast<float>(v))));
      continue;
    }
    mismatches += v != want || std::signbit(v) != std::signbit(want);
    // Through fp32: the fp32 pattern of the value, decoded, then back to fp16.
    const uint64_t b32 = stored_bits(f32, v);
    mismatches += stored_bits(f16, decode(f32, b32)) != h;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("every bf16 pattern is the top half of an fp32 and round-trips", "[cast]") {
  const NumberFormat& bf = format_named("bf16");
  int mismatches = 0;
  for (uint32_t b = 0; b < 65536; ++b) {
    const float as_fp32 = float_from_bits(b << 16);  // bf16 is fp32 with the low 16 bits dropped
    const double v = decode(bf, b);
    if (std::isnan(as_fp32)) {
      mismatches += !std::isnan(v) || !std::isnan(decode(bf, stored_bits(bf, v)));
      continue;
    }
    mismatches += v != static_cast<double>(as_fp32) || std::signbit(v) != std::signbit(as_fp32);
    mismatches += stored_bits(bf, as_fp32) != b;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("ties go to even at every fp16 and bf16 boundary", "[cast]") {
  for (const char* name : {"fp16", "bf16"}) {
    INFO(name);
    const NumberFormat& f = format_named(name);
    const uint32_t last_finite = name[0] == 'f' ? 0x7bff : 0x7f7f;
    int bad = 0;
    for (uint32_t h = 0; h < last_finite; ++h) {
      const double lo = decode(f, h), hi = decode(f, h + 1);
      const double mid = (lo + hi) / 2;  // exact in fp64
      bad += stored_bits(f, mid) != ((h & 1) ? h + 1 : h);
      bad += stored_bits(f, std::nextafter(mid, lo)) != h;
      bad += stored_bits(f, std::nextafter(mid, hi)) != h + 1;
      bad += stored_bits(f, -mid) != (((h & 1) ? h + 1 : h) | 0x8000);
    }
    CHECK(bad == 0);
    // Above the largest finite: the midpoint to the next binade overflows (max's mantissa is odd).
    const double max = decode(f, last_finite);
    const double half_ulp = (max - decode(f, last_finite - 1)) / 2;
    const uint64_t inf = name[0] == 'f' ? 0x7c00 : 0x7f80;
    CHECK(stored_bits(f, max + half_ulp) == inf);
    CHECK(stored_bits(f, std::nextafter(max + half_ulp, 0.0)) == last_finite);
  }
}

TEST_CASE("fp32 values round as numpy float16 and the documented bf16 rounding say", "[cast]") {
  std::ifstream in(MEMPLAN_TEST_DATA_DIR "/cast_reference/fp32_to_half.csv");
  REQUIRE(in);
  std::string line;
  std::getline(in, line);
  REQUIRE(line == "fp32_bits,fp16_bits,bf16_bits");
  const NumberFormat& f16 = format_named("fp16");
  const NumberFormat& bf = format_named("bf16");
  int rows = 0, bad = 0;
  while (std::getline(in, line)) {
    const uint32_t x = static_cast<uint32_t>(std::stoul(line.substr(0, 10), nullptr, 16));
    const uint32_t want16 = static_cast<uint32_t>(std::stoul(line.substr(11, 6), nullptr, 16));
    const uint32_t want_bf = static_cast<uint32_t>(std::stoul(line.substr(18, 6), nullptr, 16));
    const float v = float_from_bits(x);
    ++rows;
    if (std::isnan(v)) {
      bad += !std::isnan(decode(f16, stored_bits(f16, v))) || !std::isnan(decode(bf, stored_bits(bf, v)));
      continue;
    }
    if (stored_bits(f16, v) != want16 || stored_bits(bf, v) != want_bf) {
      ++bad;
      UNSCOPED_INFO("mismatch for fp32 " << line);
    }
  }
  CHECK(rows > 2000);
  CHECK(bad == 0);
}

TEST_CASE("fp8 patterns: OCP E4M3 (fn) and E5M2", "[cast]") {
  const NumberFormat& e4 = format_named("fp8-e4m3");
  const NumberFormat& e5 = format_named("fp8-e5m2");
  // E4M3: 0x7e = 1.110b * 2^8 = 448; only S.1111.111 is NaN; no inf; 0x01 = 2^-9; 0x08 = 2^-6.
  CHECK(decode(e4, 0x7e) == 448);
  CHECK(std::isnan(decode(e4, 0x7f)));
  CHECK(std::isnan(decode(e4, 0xff)));
  CHECK(decode(e4, 0x78) == 256);  // exponent all ones is a number here
  CHECK(decode(e4, 0x01) == 0.001953125);
  CHECK(decode(e4, 0x08) == 0.015625);
  CHECK(decode(e4, 0x38) == 1.0);
  // E5M2: 0x7b = 1.11b * 2^15 = 57344, 0x7c inf, 0x7d..0x7f NaN, 0x01 = 2^-16.
  CHECK(decode(e5, 0x7b) == 57344);
  CHECK(decode(e5, 0x7c) == INFINITY);
  CHECK(decode(e5, 0xfc) == -INFINITY);
  CHECK(std::isnan(decode(e5, 0x7d)));
  CHECK(decode(e5, 0x01) == 1.52587890625e-05);
  int e4_nans = 0, e5_nans = 0, bad = 0;
  for (uint32_t b = 0; b < 256; ++b) {
    const double v4 = decode(e4, b), v5 = decode(e5, b);
    e4_nans += std::isnan(v4);
    e5_nans += std::isnan(v5);
    if (!std::isnan(v4)) bad += stored_bits(e4, v4) != b;
    if (!std::isnan(v5)) bad += stored_bits(e5, v5) != b;
  }
  CHECK(e4_nans == 2);
  CHECK(e5_nans == 6);
  CHECK(bad == 0);
}

TEST_CASE("the lesson's cases and overflow rules", "[cast]") {
  const NumberFormat& f16 = format_named("fp16");
  const NumberFormat& bf = format_named("bf16");
  const NumberFormat& e4 = format_named("fp8-e4m3");
  const NumberFormat& e5 = format_named("fp8-e5m2");
  CastResult r = cast(70000, f16);
  CHECK(r.value == INFINITY);
  CHECK(r.outcome == CastOutcome::overflow);
  CHECK(hex_bits(f16, r.bits) == "0x7c00");
  r = cast(1e-8, f16);  // below 2^-25 = 2.98e-8: flushed to +0
  CHECK(r.value == 0);
  CHECK_FALSE(std::signbit(r.value));
  CHECK(r.outcome == CastOutcome::underflow);
  CHECK(r.rel_error == 1);
  r = cast(1.0001, bf);  // bf16's step at 1 is 2^-7 = 0.0078125
  CHECK(r.value == 1);
  CHECK(r.outcome == CastOutcome::rounded);
  CHECK(cast_verdict(r) == "lost: 1.0001 stored as 1");
  r = cast(0.1, f16);  // numpy: float16(0.1) == 0.0999755859375
  CHECK(r.value == 0.0999755859375);
  CHECK(r.abs_error == Approx(2.44140625e-05));
  CHECK(r.rel_error == Approx(2.44140625e-04));
  CHECK(cast_verdict(r) == "rounded: 0.1 stored as 0.0999755859375");
  // fp8-e4m3: 464 is the tie between 448 (mantissa 110, even) and 480 (not representable): 448.
  CHECK(cast(464, e4).value == 448);
  CHECK(cast(464, e4).outcome == CastOutcome::rounded);
  CHECK(std::isnan(cast(465, e4).value));  // PyTorch's cast: NaN
  CHECK(cast(465, e4).outcome == CastOutcome::overflow);
  CHECK(cast(-1e6, e4).bits == 0xff);
  CHECK(cast(1e6, e4, OverflowMode::saturate).value == 448);
  CHECK(cast(-INFINITY, e4, OverflowMode::saturate).value == -448);
  CHECK(cast(61440, e5).value == INFINITY);  // tie between 57344 (odd) and 65536: up, overflow
  CHECK(cast(61439, e5).value == 57344);
  CHECK(cast(65520, f16, OverflowMode::saturate).value == 65504);
  CHECK(cast(-0.0, f16).bits == 0x8000);
  CHECK(cast(-0.0, f16).outcome == CastOutcome::exact);
  CHECK(cast(INFINITY, f16).outcome == CastOutcome::exact);
  CHECK(cast(NAN, f16).outcome == CastOutcome::nan);
  CHECK(cast(NAN, bf).bits == 0x7fc0);
  // 2^-24 is fp16's smallest subnormal: exact, and subnormal.
  r = cast(std::ldexp(1.0, -24), f16);
  CHECK(r.bits == 0x0001);
  CHECK(r.subnormal);
}

TEST_CASE("tf32 keeps 10 mantissa bits inside an fp32 container", "[cast]") {
  const NumberFormat& tf = format_named("tf32");
  CHECK(hex_bits(tf, cast(1.0, tf).bits) == "0x3f800000");
  // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: to even (1).
  CHECK(cast(1.0 + std::ldexp(1.0, -11), tf).value == 1.0);
  CHECK(cast(1.0 + 3 * std::ldexp(1.0, -11), tf).value == 1.0 + std::ldexp(1.0, -9));
  CHECK(binary_fields(tf, 0x3f800000) == "0 01111111 0000000000");
}

TEST_CASE("integer and nf4 quantisation", "[cast]") {
  const NumberFormat& i8 = format_named("int8");
  const NumberFormat& nf = format_named("nf4");
  CHECK(cast(2.5, i8).value == 2);  // ties to even
  CHECK(cast(3.5, i8).value == 4);
  CHECK(cast(-200, i8).value == -128);
  CHECK(cast(-200, i8).outcome == CastOutcome::overflow);
  CHECK(hex_bits(i8, cast(-1, i8).bits) == "0xff");
  CHECK(cast(0.4, i8).outcome == CastOutcome::underflow);
  CHECK(cast(0.5, nf).value == 0.44070982933044434);  // nearest code (0.5626 is 0.0626 away)
  CHECK(cast(0.5, nf).bits == 12);
  CHECK(cast(-0.6, nf).value == -0.5250730514526367);
  CHECK(cast(3, nf).value == 1.0);
  CHECK(cast(3, nf).outcome == CastOutcome::overflow);
  CHECK(hex_bits(nf, 7) == "0x7");
}

TEST_CASE("text: shortest decimals, hex and binary fields", "[cast]") {
  CHECK(shortest_decimal(65504) == "65504");
  CHECK(shortest_decimal(1e-8) == "1e-08");
  CHECK(shortest_decimal(-0.0) == "-0");
  CHECK(shortest_decimal(-INFINITY) == "-inf");
  CHECK(shortest_decimal(NAN) == "nan");
  CHECK(shortest_decimal(3.3895313892515355e+38) == "3.3895313892515355e+38");
  CHECK(hex_bits(format_named("fp8-e4m3"), 0x7e) == "0x7e");
  CHECK(binary_fields(format_named("fp16"), 0x3c00) == "0 01111 0000000000");
  CHECK(binary_fields(format_named("bf16"), 0x3f80) == "0 01111111 0000000");
  CHECK(binary_fields(format_named("int8"), 0x80) == "10000000");
}

TEST_CASE("parsing values and bit patterns", "[cast]") {
  CHECK(parse_cast_value("cast", "0.1") == 0.1);
  CHECK(parse_cast_value("cast", "-3") == -3);
  CHECK(parse_cast_value("cast", "0x1.8p3") == 12);
  CHECK(parse_cast_value("cast", "-inf") == -INFINITY);
  CHECK(parse_cast_value("cast", "Infinity") == INFINITY);
  CHECK(std::isnan(parse_cast_value("cast", "nan")));
  CHECK(parse_bit_pattern("b", "0x3c00", format_named("fp16")) == 0x3c00);
  CHECK(parse_bit_pattern("b", "0b0_01111_0000000000", format_named("fp16")) == 0x3c00);
  CHECK(parse_bit_pattern("b", "0x0000ff", format_named("int8")) == 0xff);
  CHECK(parse_bit_pattern("b", "0x3f800000", format_named("tf32")) == 0x3f800000);
  CHECK(error_of([] { parse_cast_value("cast", "1.2.3"); }) ==
        "cast: \"1.2.3\" is not a number (expected e.g. 0.1, 1e-8, -3, 0x1.8p3, inf, nan)");
  CHECK(error_of([] { parse_cast_value("cast", "0x3c00"); }) ==
        "cast: \"0x3c00\" is a hex integer: to decode a bit pattern use from_bits FORMAT; a hex float "
        "needs an "
        "exponent, e.g. 0x1.8p3");
  CHECK(error_of([] { parse_cast_value("cast", "1e999"); }) ==
        "cast: \"1e999\" is beyond fp64's range (largest 1.7977e+308)");
  CHECK(error_of([] { parse_cast_value("cast", " 1"); }) ==
        "cast: \" 1\" is not a number (expected e.g. 0.1, 1e-8, -3, 0x1.8p3, inf, nan)");
  CHECK(error_of([] { parse_bit_pattern("b", "0x13c00", find_number_format("t", "fp16")); }) ==
        "b: \"0x13c00\" is wider than fp16's 16 bits");
  CHECK(error_of([] { parse_bit_pattern("b", "0x100", find_number_format("t", "fp8-e4m3")); }) ==
        "b: \"0x100\" is wider than fp8-e4m3's 8 bits");
  CHECK(error_of([] { parse_bit_pattern("b", "3c00", find_number_format("t", "fp16")); }) ==
        "b: \"3c00\" is not a bit pattern (expected hex like 0x3c00 or binary like 0b0011110000000000)");
  CHECK(error_of([] { parse_bit_pattern("b", "0x3f800001", find_number_format("t", "tf32")); }) ==
        "b: \"0x3f800001\" sets bits tf32 does not keep (the low 13 bits of its fp32 container must be 0)");
  CHECK(error_of([] { parse_bit_pattern("b", "0x1ffffffffffffffff", find_number_format("t", "fp64")); }) ==
        "b: \"0x1ffffffffffffffff\" is wider than fp64's 64 bits");
}
