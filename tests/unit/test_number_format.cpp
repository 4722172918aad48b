#include <catch2/catch.hpp>

#include <memplan/error.hpp>
#include "core/formats/number_format.hpp"

using namespace memplan;

namespace {

std::string error_of(const char* name) {
  try {
    find_number_format("--to", name);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

// Reference numbers: what torch.finfo(dtype) prints (PyTorch 2.x), written out as literals;
// smallest_subnormal as numpy.finfo reports it (torch.finfo has none): 2^(1 - bias - mantissa).
TEST_CASE("float facts match torch.finfo to the last digit", "[number_format]") {
  struct Want {
    const char* name;
    int bits, exponent_bits, mantissa_bits;
    double max, smallest_normal, smallest_subnormal, eps, resolution;
    bool has_inf;
  };
  const Want want[] = {
      {"fp64", 64, 11, 52, 1.7976931348623157e+308, 2.2250738585072014e-308, 4.9406564584124654e-324,
       2.220446049250313e-16, 1e-15, true},
      {"fp32", 32, 8, 23, 3.4028234663852886e+38, 1.1754943508222875e-38, 1.401298464324817e-45,
       1.1920928955078125e-07, 1e-06, true},
      {"fp16", 16, 5, 10, 65504.0, 6.103515625e-05, 5.9604644775390625e-08, 0.0009765625, 0.001, true},
      {"bf16", 16, 8, 7, 3.3895313892515355e+38, 1.1754943508222875e-38, 9.183549615799121e-41, 0.0078125,
       0.01, true},
      // torch.finfo(torch.float8_e4m3fn): max 448, tiny 0.015625, eps 0.125, resolution 1; no inf.
      {"fp8-e4m3", 8, 4, 3, 448.0, 0.015625, 0.001953125, 0.125, 1.0, false},
      // torch.finfo(torch.float8_e5m2): max 57344, tiny 6.1035e-05, eps 0.25, resolution 1.
      {"fp8-e5m2", 8, 5, 2, 57344.0, 6.103515625e-05, 1.52587890625e-05, 0.25, 1.0, true},
      // TF32: fp32's exponent, fp16's mantissa: (2 - 2^-10) * 2^127, 2^-126, 2^-136, 2^-10.
      {"tf32", 19, 8, 10, 3.4011621342146535e+38, 1.1754943508222875e-38, 1.1479437019748901e-41,
       0.0009765625, 0.001, true},
  };
  for (const Want& w : want) {
    INFO(w.name);
    const NumberFormat& f = find_number_format("test", w.name);
    CHECK(f.kind == FormatKind::floating);
    CHECK(f.bits == w.bits);
    CHECK(f.exponent_bits == w.exponent_bits);
    CHECK(f.mantissa_bits == w.mantissa_bits);
    CHECK(f.max == w.max);
    CHECK(f.min == -w.max);
    CHECK(f.smallest_normal == w.smallest_normal);
    CHECK(f.smallest_subnormal == w.smallest_subnormal);
    CHECK(f.eps == w.eps);
    CHECK(f.resolution == w.resolution);
    CHECK(f.has_inf == w.has_inf);
    CHECK(f.has_nan);
  }
}

TEST_CASE("integer facts match torch.iinfo", "[number_format]") {
  const NumberFormat& i8 = find_number_format("test", "int8");
  CHECK(i8.kind == FormatKind::integer);
  CHECK(i8.bits == 8);
  CHECK(i8.max == 127);
  CHECK(i8.min == -128);
  CHECK_FALSE(i8.has_inf);
  CHECK_FALSE(i8.has_nan);
  const NumberFormat& i4 = find_number_format("test", "int4");
  CHECK(i4.max == 7);
  CHECK(i4.min == -8);
}

TEST_CASE("nf4 has bitsandbytes' 16 codes and its block constant", "[number_format]") {
  const NumberFormat& f = find_number_format("test", "nf4");
  REQUIRE(f.codes.size() == 16);
  CHECK(f.codes.front() == -1.0);
  CHECK(f.codes[7] == 0.0);  // an exact zero
  CHECK(f.codes[8] == 0.07958029955625534);
  CHECK(f.codes.back() == 1.0);
  for (size_t i = 1; i < f.codes.size(); ++i) CHECK(f.codes[i - 1] < f.codes[i]);
  // 4 bits + 32-bit absmax per 64 values = 4.5 bits = 9/16 byte.
  CHECK(f.bytes.bytes() == 0.5625);
  CHECK(k_nf4_block_size == 64);
}

TEST_CASE("bytes come from the storage-format table", "[number_format]") {
  CHECK(find_number_format("t", "fp64").bytes.bytes() == 8);
  CHECK(find_number_format("t", "tf32").bytes.bytes() == 4);  // stored as fp32
  CHECK(find_number_format("t", "bf16").bytes.bytes() == 2);
  CHECK(find_number_format("t", "fp8-e5m2").bytes.bytes() == 1);
  CHECK(find_number_format("t", "int4").bytes.bytes() == 0.5);
  for (const NumberFormat& f : number_formats()) CHECK(f.bytes == find_storage_format("t", f.name).cost);
}

TEST_CASE("the table lists the ten formats in the documented order", "[number_format]") {
  const char* names[] = {"fp64",     "fp32",     "tf32", "fp16", "bf16",
                         "fp8-e4m3", "fp8-e5m2", "int8", "int4", "nf4"};
  REQUIRE(number_formats().size() == 10);
  for (size_t i = 0; i < 10; ++i) CHECK(number_formats()[i].name == names[i]);
}

TEST_CASE("aliases and errors", "[number_format]") {
  CHECK(find_number_format("t", "half").name == "fp16");
  CHECK(find_number_format("t", "BFloat16").name == "bf16");
  CHECK(find_number_format("t", "float8_e4m3fn").name == "fp8-e4m3");
  CHECK(find_number_format("t", "e5m2").name == "fp8-e5m2");
  CHECK(error_of("fp17") ==
        "--to: \"fp17\" is not a number format (expected one of fp64, fp32, tf32, fp16, bf16, fp8-e4m3, "
        "fp8-e5m2, "
        "int8, int4, nf4; did you mean \"fp16\"?)");
  const auto list = parse_format_list("--to", "fp16,bf16, fp8-e4m3");
  REQUIRE(list.size() == 3);
  CHECK(list[2]->name == "fp8-e4m3");
  CHECK_THROWS_WITH(parse_format_list("--to", "fp16,,bf16"),
                    "--to: \"fp16,,bf16\" has an empty format name (expected e.g. fp16,bf16)");
}
