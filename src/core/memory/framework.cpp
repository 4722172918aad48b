#include <memplan/framework.hpp>

#include <string>
#include <utility>
#include <vector>

#include <memplan/error.hpp>
#include "core/base/did_you_mean.hpp"

namespace memplan {
namespace {

constexpr std::pair<std::string_view, Framework> k_framework_names[] = {
    {"hf", Framework::hf},
    {"trainer", Framework::trainer},
    {"trl", Framework::trl},
    {"axolotl", Framework::axolotl},
    {"llamafactory", Framework::llamafactory},
    {"torchtune", Framework::torchtune},
    {"unsloth", Framework::unsloth},
    {"litgpt", Framework::litgpt},
    // Other spellings users write.
    {"transformers", Framework::hf},
    {"peft", Framework::hf},
    {"hf-trainer", Framework::trainer},
    {"llama-factory", Framework::llamafactory},
    {"lit-gpt", Framework::litgpt},
};

}  // namespace

Framework parse_framework(std::string_view subject, std::string_view text) {
  std::string key(text);
  for (char& c : key) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  for (const auto& [name, f] : k_framework_names)
    if (key == name) return f;
  std::vector<std::string> names;  // the canonical names: the table's first eight
  for (size_t i = 0; i < 8; ++i) names.emplace_back(k_framework_names[i].first);
  throw Error(std::string(subject), "\"" + std::string(text) +
                                        "\" is not a framework (expected hf, trainer, trl, axolotl, "
                                        "llamafactory, torchtune, unsloth or litgpt" +
                                        did_you_mean(text, names) + ")");
}

const char* to_string(Framework f) {
  for (const auto& [name, g] : k_framework_names)
    if (g == f) return name.data();
  return "hf";
}

}  // namespace memplan
