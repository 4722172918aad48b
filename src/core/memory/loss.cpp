// The loss variants of compute.hpp: names and parsing.

#include <memplan/compute.hpp>

#include <string>

#include <memplan/error.hpp>
#include "core/base/did_you_mean.hpp"

namespace memplan {

Loss parse_loss(std::string_view subject, std::string_view text) {
  std::string key(text);
  for (char& c : key) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (key == "plain") return Loss::plain;
  if (key == "chunked") return Loss::chunked;
  if (key == "fused") return Loss::fused;
  if (key == "logprob") return Loss::logprob;
  throw Error(std::string(subject), "\"" + std::string(text) +
                                        "\" is not valid (expected plain, chunked, fused or logprob" +
                                        did_you_mean(text, {"plain", "chunked", "fused", "logprob"}) + ")");
}

const char* to_string(Loss l) {
  switch (l) {
    case Loss::plain:
      return "plain";
    case Loss::chunked:
      return "chunked";
    case Loss::fused:
      return "fused";
    case Loss::logprob:
      return "logprob";
  }
  return "plain";
}

}  // namespace memplan
