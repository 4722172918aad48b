#include <memplan/framework.hpp>

#include <string>

#include <memplan/error.hpp>
#include "core/base/did_you_mean.hpp"

namespace memplan {

Framework parse_framework(std::string_view subject, std::string_view text) {
  std::string key(text);
  for (char& c : key) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (key == "hf" || key == "transformers" || key == "peft") return Framework::hf;
  if (key == "litgpt" || key == "lit-gpt") return Framework::litgpt;
  throw Error(std::string(subject), "\"" + std::string(text) +
                                        "\" is not a framework (expected hf or litgpt" +
                                        did_you_mean(text, {"hf", "litgpt"}) + ")");
}

const char* to_string(Framework f) { return f == Framework::litgpt ? "litgpt" : "hf"; }

}  // namespace memplan
