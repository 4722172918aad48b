#pragma once
// The work each fuzz target does with one input, shared with the unit test that replays the
// seed corpus. An input may be refused with memplan::Error; anything else escaping is a bug.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <memplan/error.hpp>
#include <memplan/presets.hpp>
#include "core/formats/loss_scale.hpp"
#include "core/formats/number_format.hpp"
#include "core/models/gguf.hpp"
#include "core/models/hf_cache.hpp"
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

// A presets file (--presets, MEMPLAN_DATA_DIR): the same text as GPUs and as models, as
// load_presets_override reads a file that holds both.
inline bool run_presets(std::string_view in) {
  bool ok = false;  // parsed as GPUs or as models
  try {
    parse_presets(in, "", "fuzz/gpus.json");
    ok = true;
  } catch (const Error&) {
  }
  try {
    parse_presets("", in, "fuzz/model_presets.json");
    ok = true;
  } catch (const Error&) {
  }
  return ok;
}

// `scale --values FILE`: the values, then the loss scale for fp16 and bf16.
inline bool run_gradient_values(std::string_view in) {
  try {
    const std::vector<double> values = parse_gradient_values("fuzz/values.txt", in);
    for (const char* f : {"fp16", "bf16"}) plan_loss_scale(find_number_format("--to", f), values);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// A Hugging Face cache refs file (refs/<revision>: a commit hash), and the same bytes as a model id
// (org/name@revision). Contract: an id that parses holds nothing that walks out of a path or URL.
inline bool run_hf_refs(std::string_view in) {
  bool ok = false;
  try {
    const std::string commit = parse_ref_file(in, "fuzz/refs/main");
    if (commit.size() != 40) std::abort();
    ok = true;
  } catch (const Error&) {
  }
  if (const auto id = parse_hub_model_id(in)) {
    for (const std::string* part : {&id->org, &id->name, &id->revision})
      if (part->empty() || part->find("..") != std::string::npos || part->front() == '/' ||
          part->front() == '.' || part->find('%') != std::string::npos ||
          part->find('\\') != std::string::npos || part->find('\0') != std::string::npos)
        std::abort();
    if (id->org.find('/') != std::string::npos || id->name.find('/') != std::string::npos) std::abort();
    ok = true;
  }
  return ok;
}

}  // namespace memplan::fuzz
