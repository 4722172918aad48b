#include <memplan/torch_release.hpp>

#include <cctype>
#include <string>

#include <memplan/error.hpp>

#include "text.hpp"

namespace memplan {

TorchRelease parse_torch_release(std::string_view subject, std::string_view text) {
  std::string_view t = text.substr(0, text.find('+'));  // "2.5.1+cu121": the local part names the build
  const auto dot = t.find('.');
  const auto second = dot == std::string_view::npos ? std::string_view::npos : t.find('.', dot + 1);
  TorchRelease r;
  uint32_t patch = 0;
  const bool ok = dot != std::string_view::npos && small_decimal(t.substr(0, dot), 2, r.major) &&
                  small_decimal(t.substr(dot + 1, second == std::string_view::npos ? std::string_view::npos
                                                                                   : second - dot - 1),
                                2, r.minor) &&
                  (second == std::string_view::npos || small_decimal(t.substr(second + 1), 2, patch));
  if (!ok || r.major < 1 || r.major > 2 || (r.major == 1 && r.minor < 8))
    throw Error(std::string(subject), "\"" + std::string(text) +
                                          "\" is not a PyTorch release memplan models (expected MAJOR.MINOR "
                                          "from 1.8 to 2.99, e.g. 1.10 or 2.5; quote it in plan files: the "
                                          "JSON number 1.10 reads as 1.1)");
  return r;
}

std::string to_string(TorchRelease t) { return std::to_string(t.major) + "." + std::to_string(t.minor); }

}  // namespace memplan
