#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using memplan::test::line_count;
using memplan::test::run_cli;

// Golden output. The numbers were checked by hand before they were frozen here:
// fp16 max (2 - 2^-10) * 2^15 = 65504, smallest normal 2^-14 = 6.1035e-05, subnormal 2^-24 = 5.9605e-08,
// eps 2^-10; bf16 max (2 - 2^-7) * 2^127 = 3.3895e+38, smallest normal 2^-126, subnormal 2^-133 = 9.1835e-41,
// eps 2^-7; digits 11 * log10(2) = 3.31 and 8 * log10(2) = 2.41.
TEST_CASE("dtype fp16 bf16: golden table", "[cli][dtype]") {
  const auto r = run_cli({"dtype", "fp16", "bf16"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  // clang-format off
  CHECK(r.out ==
      "format  bits    bytes         max          min  smallest normal  smallest subnormal           eps  digits  inf  nan\n"
      "fp16    1+5+10      2       65504       -65504       6.1035e-05          5.9605e-08  9.765625e-04    3.31  yes  yes\n"
      "bf16    1+8+7       2  3.3895e+38  -3.3895e+38       1.1755e-38          9.1835e-41    7.8125e-03    2.41  yes  yes\n"
      "\n"
      "fp16: IEEE binary16: narrow range, needs loss scaling\n"
      "bf16: bfloat16: fp32's range in 16 bits, 3 digits\n");
  // clang-format on
}

// clang-format off
// Checked by hand: 70000 > fp16's 65519.99 -> inf (0x7c00); bf16: 70000 = 1.0681 * 2^16, step 2^9 = 512,
// 70000 / 512 = 136.7 -> 137 * 512 = 70144 = 0 10001111 0001001 = 0x4789; fp8-e4m3 has no inf and PyTorch's cast
// gives NaN (0x7f). 1e-8 < 2^-25 (half fp16's smallest subnormal) -> 0; bf16 1e-8 = 1.3422 * 2^-27 ->
// mantissa round(0.3422 * 128) = 44 -> 1.34375 * 2^-27 = 1.0011717677116394e-08 = 0x322c. 1.0001 -> 1 in all three
// (steps at 1: 2^-10, 2^-7, 2^-3). 0.1: numpy float16(0.1) = 0.0999755859375 = 0x2e66; bf16 0x3dcd = 0.10009765625;
// e4m3 1.6 * 2^-4 -> mantissa round(0.6 * 8) = 5 -> 1.625 / 16 = 0.1015625 = 0 0011 101 = 0x1d.
TEST_CASE("cast 70000 1e-8 1.0001 0.1 --to fp16,bf16,fp8-e4m3: golden JSON", "[cli][cast]") {
  const auto r = run_cli({"cast", "70000", "1e-8", "1.0001", "0.1", "--to", "fp16,bf16,fp8-e4m3", "--format", "json"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out == R"json({
  "inputs": {
    "from_bits": null,
    "overflow": "format",
    "to": [
      "fp16",
      "bf16",
      "fp8-e4m3"
    ],
    "values": [
      "70000",
      "1e-8",
      "1.0001",
      "0.1"
    ]
  },
  "results": [
    {
      "abs_error": null,
      "bits_binary": "0 11111 0000000000",
      "bits_hex": "0x7c00",
      "format": "fp16",
      "input": "70000",
      "input_value": "70000",
      "outcome": "overflow",
      "rel_error": null,
      "subnormal": false,
      "value": "inf",
      "verdict": "overflow -> inf (max 65504)"
    },
    {
      "abs_error": 144.0,
      "bits_binary": "0 10001111 0001001",
      "bits_hex": "0x4789",
      "format": "bf16",
      "input": "70000",
      "input_value": "70000",
      "outcome": "rounded",
      "rel_error": 0.002057142857142857,
      "subnormal": false,
      "value": "70144",
      "verdict": "rounded: 70000 stored as 70144"
    },
    {
      "abs_error": null,
      "bits_binary": "0 1111 111",
      "bits_hex": "0x7f",
      "format": "fp8-e4m3",
      "input": "70000",
      "input_value": "70000",
      "outcome": "overflow",
      "rel_error": null,
      "subnormal": false,
      "value": "nan",
      "verdict": "overflow -> nan (fp8-e4m3 has no inf; --saturate gives 448)"
    },
    {
      "abs_error": 1e-08,
      "bits_binary": "0 00000 0000000000",
      "bits_hex": "0x0000",
      "format": "fp16",
      "input": "1e-8",
      "input_value": "1e-08",
      "outcome": "underflow",
      "rel_error": 1.0,
      "subnormal": false,
      "value": "0",
      "verdict": "underflow -> 0"
    },
    {
      "abs_error": 1.1717677116393834e-11,
      "bits_binary": "0 01100100 0101100",
      "bits_hex": "0x322c",
      "format": "bf16",
      "input": "1e-8",
      "input_value": "1e-08",
      "outcome": "rounded",
      "rel_error": 0.0011717677116393833,
      "subnormal": false,
      "value": "1.0011717677116394e-08",
      "verdict": "rounded: 1e-08 stored as 1.0011717677116394e-08"
    },
    {
      "abs_error": 1e-08,
      "bits_binary": "0 0000 000",
      "bits_hex": "0x00",
      "format": "fp8-e4m3",
      "input": "1e-8",
      "input_value": "1e-08",
      "outcome": "underflow",
      "rel_error": 1.0,
      "subnormal": false,
      "value": "0",
      "verdict": "underflow -> 0"
    },
    {
      "abs_error": 9.999999999998899e-05,
      "bits_binary": "0 01111 0000000000",
      "bits_hex": "0x3c00",
      "format": "fp16",
      "input": "1.0001",
      "input_value": "1.0001",
      "outcome": "rounded",
      "rel_error": 9.9990000999889e-05,
      "subnormal": false,
      "value": "1",
      "verdict": "lost: 1.0001 stored as 1"
    },
    {
      "abs_error": 9.999999999998899e-05,
      "bits_binary": "0 01111111 0000000",
      "bits_hex": "0x3f80",
      "format": "bf16",
      "input": "1.0001",
      "input_value": "1.0001",
      "outcome": "rounded",
      "rel_error": 9.9990000999889e-05,
      "subnormal": false,
      "value": "1",
      "verdict": "lost: 1.0001 stored as 1"
    },
    {
      "abs_error": 9.999999999998899e-05,
      "bits_binary": "0 0111 000",
      "bits_hex": "0x38",
      "format": "fp8-e4m3",
      "input": "1.0001",
      "input_value": "1.0001",
      "outcome": "rounded",
      "rel_error": 9.9990000999889e-05,
      "subnormal": false,
      "value": "1",
      "verdict": "lost: 1.0001 stored as 1"
    },
    {
      "abs_error": 2.441406250000555e-05,
      "bits_binary": "0 01011 1001100110",
      "bits_hex": "0x2e66",
      "format": "fp16",
      "input": "0.1",
      "input_value": "0.1",
      "outcome": "rounded",
      "rel_error": 0.0002441406250000555,
      "subnormal": false,
      "value": "0.0999755859375",
      "verdict": "rounded: 0.1 stored as 0.0999755859375"
    },
    {
      "abs_error": 9.765624999999445e-05,
      "bits_binary": "0 01111011 1001101",
      "bits_hex": "0x3dcd",
      "format": "bf16",
      "input": "0.1",
      "input_value": "0.1",
      "outcome": "rounded",
      "rel_error": 0.0009765624999999445,
      "subnormal": false,
      "value": "0.10009765625",
      "verdict": "rounded: 0.1 stored as 0.10009765625"
    },
    {
      "abs_error": 0.0015624999999999944,
      "bits_binary": "0 0011 101",
      "bits_hex": "0x1d",
      "format": "fp8-e4m3",
      "input": "0.1",
      "input_value": "0.1",
      "outcome": "rounded",
      "rel_error": 0.015624999999999944,
      "subnormal": false,
      "value": "0.1015625",
      "verdict": "rounded: 0.1 stored as 0.1015625"
    }
  ],
  "schema": "memplan.cast/1"
}
)json");
}
// clang-format on

TEST_CASE("dtype: every format by default, JSON names and nulls", "[cli][dtype]") {
  const auto all = run_cli({"dtype", "--format", "json"});
  REQUIRE(all.code == 0);
  const auto j = nlohmann::json::parse(all.out);
  CHECK(j["schema"] == "memplan.dtype/1");
  REQUIRE(j["formats"].size() == 10);
  const auto& e4 = j["formats"][5];
  CHECK(e4["name"] == "fp8-e4m3");
  CHECK(e4["max"] == 448.0);
  CHECK(e4["eps"] == 0.125);
  CHECK(e4["smallest_normal"] == 0.015625);
  CHECK(e4["smallest_subnormal"] == 0.001953125);
  CHECK(e4["has_inf"] == false);
  CHECK(e4["has_nan"] == true);
  const auto& i8 = j["formats"][7];
  CHECK(i8["name"] == "int8");
  CHECK(i8["min"] == -128);
  CHECK(i8["max"] == 127);
  CHECK(i8["exponent_bits"].is_null());
  CHECK(i8["eps"].is_null());
  const auto& nf4 = j["formats"][9];
  CHECK(nf4["codes"].size() == 16);
  CHECK(nf4["bytes"] == 0.5625);
  CHECK(nf4["block_size"] == 64);
  const auto table = run_cli({"dtype"});
  CHECK(line_count(table.out) == 1 + 10 + 1 + 10);  // header, rows, blank, notes
}

TEST_CASE("dtype csv and markdown", "[cli][dtype]") {
  const auto csv = run_cli({"dtype", "fp8-e5m2", "--format", "csv"});
  CHECK(csv.out ==
        "format,bits,bytes,max,min,smallest normal,smallest subnormal,eps,digits,inf,nan\n"
        "fp8-e5m2,1+5+2,1,57344,-57344,6.103515625e-05,1.52587890625e-05,0.25,0.90,yes,yes\n");
  const auto md = run_cli({"dtype", "int8", "--format", "markdown"});
  CHECK(md.out.rfind("| format | bits |", 0) == 0);
  CHECK(md.out.find("| int8 | 8 | 1 | 127 | -128 |") != std::string::npos);
}

TEST_CASE("cast decodes a bit pattern", "[cli][cast]") {
  const auto r = run_cli({"cast", "0x3c00", "--from-bits", "fp16", "--format", "json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["results"].size() == 1);
  CHECK(j["results"][0]["value"] == "1");
  CHECK(j["results"][0]["bits_binary"] == "0 01111 0000000000");
  CHECK(j["results"][0]["outcome"] == "exact");
  // fp8-e4m3's largest number and its NaN; into fp16 as well.
  const auto e4 = run_cli(
      {"cast", "0x7e", "0x7f", "--from-bits", "fp8-e4m3", "--to", "fp8-e4m3,fp16", "--format", "json"});
  const auto k = nlohmann::json::parse(e4.out);
  CHECK(k["results"][0]["value"] == "448");
  CHECK(k["results"][1]["value"] == "448");
  CHECK(k["results"][1]["bits_hex"] == "0x5f00");  // 448 = 1.75 * 2^8: 0 10111 1100000000
  CHECK(k["results"][2]["value"] == "nan");
  CHECK(k["results"][2]["outcome"] == "nan");
}

TEST_CASE("cast: table verdicts, negative values, saturation", "[cli][cast]") {
  const auto r = run_cli({"cast", "-70000", "-inf", "--to", "fp16,fp8-e4m3", "--quiet"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("overflow -> -inf (max 65504)") != std::string::npos);
  CHECK(r.out.find("overflow -> nan (fp8-e4m3 has no inf; --saturate gives -448)") != std::string::npos);
  const auto s = run_cli({"cast", "1e6", "--to", "fp8-e4m3", "--saturate", "--format", "json"});
  const auto j = nlohmann::json::parse(s.out);
  CHECK(j["results"][0]["value"] == "448");
  CHECK(j["results"][0]["outcome"] == "overflow");
  CHECK(j["inputs"]["overflow"] == "saturate");
}

TEST_CASE("scale: fp16 needs 2^14 for 1e-9..3.5, bf16 none", "[cli][scale]") {
  const auto r =
      run_cli({"scale", "--grad-min", "1e-9", "--grad-max", "3.5", "--to", "fp16", "--format", "json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["schema"] == "memplan.scale/1");
  CHECK(j["scale"] == 16384.0);
  CHECK(j["needed"] == true);
  CHECK(j["lossless_scale_log2"] == nlohmann::json({5, 14}));
  const auto b = run_cli({"scale", "--grad-min", "1e-9", "--grad-max", "3.5", "--to", "bf16"});
  CHECK(b.out.find("loss scale:   2^0 = 1 (none needed)") != std::string::npos);
  CHECK(b.out.find("bf16 keeps fp32's 8 exponent bits") != std::string::npos);
  CHECK(run_cli({"scale", "--grad-min", "1e-9", "--grad-max", "3.5", "-q"}).out == "16384\n");
}

TEST_CASE("scale reads a file of gradient values", "[cli][scale]") {
  const std::string path = "test_cli_scale_values.txt";
  {
    std::ofstream f(path);
    f << "# gradients\n1e-9\n0\n2.0\n-70000\n";
  }
  const auto r = run_cli({"scale", "--values", path, "--format", "json"});
  std::remove(path.c_str());
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["count"] == 3);
  CHECK(j["zeros"] == 1);
  CHECK(j["scale_log2"] == -8);
  CHECK(j["lossless_scale_log2"].is_null());
}

TEST_CASE("bad input: one line on stderr, exit 2, nothing on stdout", "[cli][dtype][cast][scale]") {
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const Case cases[] = {
      {{"dtype", "fp17"},
       "dtype: \"fp17\" is not a number format (expected one of fp64, fp32, tf32, fp16, bf16, fp8-e4m3, "
       "fp8-e5m2, "
       "int8, int4, nf4; did you mean \"fp16\"?)"},
      {{"dtype", "--format", "json", "bf17"},
       "dtype: \"bf17\" is not a number format (expected one of fp64, fp32, tf32, fp16, bf16, fp8-e4m3, "
       "fp8-e5m2, "
       "int8, int4, nf4; did you mean \"bf16\"?)"},
      {{"cast", "abc"}, "cast: \"abc\" is not a number (expected e.g. 0.1, 1e-8, -3, 0x1.8p3, inf, nan)"},
      {{"cast", "1.2.3"}, "cast: \"1.2.3\" is not a number (expected e.g. 0.1, 1e-8, -3, 0x1.8p3, inf, nan)"},
      {{"cast", "0x3c00"},
       "cast: \"0x3c00\" is a hex integer: to decode a bit pattern use --from-bits FORMAT; a hex float needs "
       "an "
       "exponent, e.g. 0x1.8p3"},
      {{"cast", "1e400"}, "cast: \"1e400\" is beyond fp64's range (largest 1.7977e+308)"},
      {{"cast"}, "cast: no value given (expected e.g. memplan cast 0.1 --to fp16,bf16)"},
      {{"cast", "1", "--to", "fp16,bf61"},
       "--to: \"bf61\" is not a number format (expected one of fp64, fp32, tf32, fp16, bf16, fp8-e4m3, "
       "fp8-e5m2, "
       "int8, int4, nf4; did you mean \"bf16\"?)"},
      {{"cast", "0x13c00", "--from-bits", "fp16"},
       "--from-bits fp16: \"0x13c00\" is wider than fp16's 16 bits"},
      {{"cast", "0x100", "--from-bits", "fp8-e5m2"},
       "--from-bits fp8-e5m2: \"0x100\" is wider than fp8-e5m2's 8 bits"},
      {{"cast", "0b11111", "--from-bits", "int4"},
       "--from-bits int4: \"0b11111\" is wider than int4's 4 bits"},
      {{"cast", "3c00", "--from-bits", "fp16"},
       "--from-bits fp16: \"3c00\" is not a bit pattern (expected hex like 0x3c00 or binary like "
       "0b0011110000000000)"},
      {{"cast", "0x3g00", "--from-bits", "fp16"},
       "--from-bits fp16: \"0x3g00\" is not a bit pattern (expected hex like 0x3c00 or binary like "
       "0b0011110000000000)"},
      {{"cast", "1", "--from-bits", "fp61"},
       "--from-bits: \"fp61\" is not a number format (expected one of fp64, fp32, tf32, fp16, bf16, "
       "fp8-e4m3, "
       "fp8-e5m2, int8, int4, nf4; did you mean \"fp64\"?)"},
      {{"cast", "1", "--tp", "fp16"}, "The following argument was not expected: --tp"},
      {{"cast", "1", "--format", "yaml"},
       "--format: \"yaml\" is not a format (expected table, json, markdown or csv)"},
      {{"scale", "--grad-min", "1e-9"},
       "--grad-max: missing (expected --grad-min and --grad-max, e.g. --grad-min 1e-9 --grad-max 3.5, or "
       "--values FILE)"},
      {{"scale", "--grad-min", "3.5", "--grad-max", "1e-9"},
       "--grad-min: 3.5 is larger than --grad-max 1e-09"},
      {{"scale", "--grad-min", "0", "--grad-max", "1"},
       "--grad-min: \"0\" must be a positive finite magnitude (e.g. 1e-9)"},
      {{"scale", "--grad-min", "1", "--grad-max", "2", "--to", "int8"},
       "--to: loss scaling is for floating formats; int8 is not one (expected fp16, bf16, fp8-e5m2, ...)"},
      {{"scale", "--grad-min", "1", "--grad-max", "2", "--to", "fp15"},
       "--to: \"fp15\" is not a number format (expected one of fp64, fp32, tf32, fp16, bf16, fp8-e4m3, "
       "fp8-e5m2, "
       "int8, int4, nf4; did you mean \"fp16\"?)"},
      {{"scale", "--values", "/nonexistent/grads.txt"},
       "--values: cannot read \"/nonexistent/grads.txt\": no such file"},
  };
  for (const Case& c : cases) {
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    INFO(joined);
    const auto r = run_cli(c.args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(line_count(r.err) == 1);
    CHECK(r.err == "memplan: error: " + c.err + "\n");
  }
}
