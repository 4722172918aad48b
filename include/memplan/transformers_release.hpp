#pragma once
// The Hugging Face transformers release whose modelling code runs the step (--transformers). What
// a model keeps for its eager attention and its loss changed between releases; the rules, by
// family and release, are in core/memory/hf_release_rules.hpp. The default, 5.24, is the release
// bench/frameworks measured (transformers 5.24.0).

#include <cstdint>
#include <string>
#include <string_view>

namespace memplan {

struct TransformersRelease {
  uint32_t major = 5;
  uint32_t minor = 24;
  uint32_t value() const { return major * 1000 + minor; }  // 4.36 -> 4036
  bool before(uint32_t ma, uint32_t mi) const { return value() < ma * 1000 + mi; }
  bool operator==(const TransformersRelease& o) const { return major == o.major && minor == o.minor; }
};

// "4.36", "4.36.2", "5.0.0rc1" (the patch and anything after it are ignored); 4.0 to 5.999.
// Else an Error naming `subject`.
TransformersRelease parse_transformers_release(std::string_view subject, std::string_view text);
std::string to_string(TransformersRelease t);  // "4.36"

}  // namespace memplan
