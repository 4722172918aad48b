#pragma once
// A list of module-name patterns (modules_to_not_convert, ignored_layers, llm_int8_skip_modules,
// compressed-tensors' ignore and targets) tested against full module names ("model.layers.3.mlp.
// down_proj", "lm_head"), one layer at a time. Rules, as the quantisers apply them: transformers'
// quantizers test `key in module_name` (substring); compressed-tensors compares whole names (or a
// trailing part after a dot); "re:..." is a Python regular expression applied with re.match (anchored
// at the start); a "*" matches within one name part ("model.layers.*.self_attn"); "Linear" is
// compressed-tensors' class target. "model.language_model." / "language_model.model." prefixes of
// vision-language checkpoints read as "model.".

#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "core/models/quantization_config.hpp"

namespace memplan::detail {

struct NameList {
  std::vector<std::string> text;
  std::vector<std::optional<std::regex>> re;
  bool exact = false;
  bool empty() const { return text.empty(); }
};

// The patterns of one list (`exact`: whole names, compressed-tensors; else substrings); a pattern
// that is no regular expression is an Error naming `subject`.
NameList name_list(const std::string& subject, std::vector<std::string> patterns, bool exact);

// Whether pattern i of `l` matches the full module name `name`.
bool name_matches(const NameList& l, size_t i, const std::string& name);

// Whether any pattern of `l` matches `name`.
bool any_match(const NameList& l, const std::string& name);

// The module name of one of `g`'s matrices in layer `layer` ("lm_head" for the top-level head).
std::string module_name(const LinearGroup& g, uint64_t layer);

}  // namespace memplan::detail
