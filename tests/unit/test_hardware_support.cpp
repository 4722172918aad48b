#include <catch2/catch.hpp>

#include <memplan/error.hpp>
#include "core/formats/hardware_support.hpp"

using namespace memplan;

// Compute capabilities: T4 7.5, V100 7.0, A100 8.0, RTX 3090 8.6, RTX 4090 / L4 8.9, H100 9.0.
TEST_CASE("bf16 needs Ampere, a T4 gets amp-fp16 with a GradScaler", "[hardware_support]") {
  const HardwareSupport t4 = hardware_support("--precision", "bf16", "7.5");
  CHECK_FALSE(t4.native);
  CHECK(t4.needs == ComputeCapability{8, 0});
  CHECK(t4.use == Substitute::amp_fp16_scaler);
  CHECK(t4.family == FormatFamily::bf16);
  CHECK_FALSE(hardware_support("--precision", "amp-bf16", "7.0").native);
  CHECK(hardware_support("--precision", "mixed-bf16", "7.5").use == Substitute::mixed_fp16_scaler);
  CHECK(hardware_support("--precision", "bf16", "8.0").native);
  CHECK(hardware_support("--precision", "bfloat16", "8.6").native);
  CHECK(hardware_support("--precision", "amp-bf16", "9.0").use == Substitute::none);
}

TEST_CASE("fp8 needs 8.9 or newer", "[hardware_support]") {
  CHECK_FALSE(hardware_support("--quantize", "fp8", "8.0").native);
  CHECK(hardware_support("--quantize", "fp8", "8.0").use == Substitute::amp_bf16_or_int8);
  CHECK(hardware_support("--quantize", "fp8-e4m3", "7.5").use == Substitute::amp_fp16_scaler_or_int8);
  CHECK_FALSE(hardware_support("--quantize", "fp8-e5m2", "8.6").native);
  CHECK(hardware_support("--quantize", "fp8", "8.9").native);
  CHECK(hardware_support("--quantize", "e4m3", "9.0").native);
  CHECK(hardware_support("--quantize", "fp8", "12.0").native);
}

TEST_CASE("other formats", "[hardware_support]") {
  CHECK(hardware_support("--precision", "fp16", "7.5").native);
  CHECK(hardware_support("--precision", "amp-fp16", "7.5").remark == Remark::none);
  CHECK(hardware_support("--precision", "fp16", "6.0").remark == Remark::fp16_no_tensor_cores);
  CHECK(hardware_support("--precision", "fp32", "3.5").native);
  CHECK_FALSE(hardware_support("--precision", "tf32", "7.5").native);
  CHECK(hardware_support("--quantize", "nf4", "7.5").native);
  CHECK(hardware_support("--quantize", "nf4", "7.5").remark == Remark::weight_only_fp16_compute);
  CHECK(hardware_support("--quantize", "nf4", "8.0").remark == Remark::none);
  CHECK(hardware_support("--precision", "tf32", "7.5").use == Substitute::fp32_same_memory);
  CHECK(hardware_support("--precision", "fp16", "5.0").use == Substitute::fp32);
  CHECK(hardware_support("--quantize", "int8", "7.0").use == Substitute::int8_weights_or_fp16);
  CHECK(hardware_support("--quantize", "int8", "7.5").native);
  CHECK_FALSE(hardware_support("--quantize", "int8", "7.0").native);
  CHECK(hardware_support("--precision", "2", "7.5").native);  // a byte count names no format
}

TEST_CASE("compute capabilities and errors", "[hardware_support]") {
  CHECK(parse_compute_capability("cc", "8.9") == ComputeCapability{8, 9});
  CHECK(parse_compute_capability("cc", "sm_80") == ComputeCapability{8, 0});
  CHECK(parse_compute_capability("cc", "75") == ComputeCapability{7, 5});
  CHECK(parse_compute_capability("cc", "12.0").major == 12);
  CHECK(ComputeCapability{7, 5} < ComputeCapability{8, 0});
  CHECK_THROWS_WITH(parse_compute_capability("cc", "eight"),
                    "cc: \"eight\" is not a compute capability (expected e.g. 7.5, 8.0, 8.9, 9.0)");
  CHECK_THROWS_WITH(parse_compute_capability("cc", "8."),
                    "cc: \"8.\" is not a compute capability (expected e.g. 7.5, 8.0, 8.9, 9.0)");
  CHECK_THROWS_WITH(
      hardware_support("--precision", "bf61", "8.0"),
      "--precision: \"bf61\" is not a format or precision recipe (expected one of fp64, fp32, tf32, "
      "fp16, amp-fp16, mixed-fp16, bf16, amp-bf16, mixed-bf16, fp8, fp8-e4m3, fp8-e5m2, int8, int4, "
      "nf4, nf4-dq; did you mean \"bf16\"?)");
}
