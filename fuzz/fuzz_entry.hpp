#pragma once
// The work each fuzz target does with one input, shared with the unit test that replays the
// seed corpus. An input may be refused with memplan::Error; anything else escaping is a bug.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <memplan/error.hpp>
#include "core/models/gguf.hpp"
#include "core/models/hf_config.hpp"
#include "core/models/safetensors.hpp"

namespace memplan::fuzz {

// Returns true when the input parsed, false when it was refused with an Error.
inline bool run_hf_config(std::string_view in) {
  try {
    ModelSpec m = parse_hf_config_detail(in, "fuzz/config.json").model;
    return m.arch.has_value();
  } catch (const Error&) {
    return false;
  }
}

inline bool run_safetensors(std::string_view in) {
  bool ok = false;
  try {
    SafetensorsHeader h = parse_safetensors_header(in, in.size(), "fuzz.safetensors");
    ok = h.data_bytes + 8 + h.header_length == in.size();
  } catch (const Error&) {
  }
  try {  // the same bytes as an index file
    parse_safetensors_index(in, "fuzz.index.json");
  } catch (const Error&) {
  }
  return ok;
}

inline bool run_gguf(std::string_view in) {
  try {
    GgufFile g = parse_gguf(in, in.size(), "fuzz.gguf");
    ModelSpec m = model_spec_of(g);
    return m.tensors == g.tensors.size();
  } catch (const Error&) {
    return false;
  }
}

}  // namespace memplan::fuzz
