#pragma once
// Does a GPU run a number format (or a precision recipe) natively? By compute capability:
// bf16 and tf32 need 8.0 (Ampere), fp8 needs 8.9 (Ada) or 9.0 (Hopper), fp16 tensor cores 7.0.
// What to use instead when it does not: bf16 on a T4 (7.5) -> amp-fp16 with a GradScaler.

#include <string>
#include <string_view>

#include <memplan/fit.hpp>

namespace memplan {

// A compute capability, "8.0" -> {8, 0}; ordered.
struct ComputeCapability {
  int major = 0;
  int minor = 0;

  int value() const { return major * 10 + minor; }
  std::string str() const { return std::to_string(major) + "." + std::to_string(minor); }
  bool operator<(const ComputeCapability& o) const { return value() < o.value(); }
  bool operator>=(const ComputeCapability& o) const { return value() >= o.value(); }
  bool operator==(const ComputeCapability& o) const { return value() == o.value(); }
};

// "8.0", "7.5", "9.0", "12.0", also "sm_80" / "sm80" / "80"; else an Error naming `subject`.
ComputeCapability parse_compute_capability(std::string_view subject, std::string_view text);

// A remark on a format a card runs natively.
enum class Remark {
  none,
  fp16_no_tensor_cores,      // below 7.0: fp16 halves memory but is barely faster
  weight_only_fp16_compute,  // below 8.0: use an fp16 compute dtype for 4-bit weights
};

struct HardwareSupport {
  bool native = true;       // the card has the arithmetic for it
  ComputeCapability needs;  // the least compute capability that runs it natively
  FormatFamily family = FormatFamily::plain;
  Remark remark = Remark::none;       // worth saying even when native
  Substitute use = Substitute::none;  // what to use instead when !native
};

// For a format name (fp32, tf32, fp16, bf16, fp8, fp8-e4m3, fp8-e5m2, int8, int4, nf4, nf4-dq,
// fp64) or a precision recipe (amp-bf16, amp-fp16, mixed-bf16, mixed-fp16) on a card of compute
// capability `cc`. A bare byte count ("2") names no format: native, with no remark.
// Unknown names are an Error naming `subject` with "did you mean".
HardwareSupport hardware_support(std::string_view subject, std::string_view format_or_recipe,
                                 ComputeCapability cc);

// The same with the capability as text ("8.0").
HardwareSupport hardware_support(std::string_view subject, std::string_view format_or_recipe,
                                 std::string_view compute_capability);

}  // namespace memplan
