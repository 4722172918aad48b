#include <memplan/transformers_release.hpp>

#include <cctype>
#include <string>

#include <memplan/error.hpp>

#include "text.hpp"

namespace memplan {

TransformersRelease parse_transformers_release(std::string_view subject, std::string_view text) {
  const auto dot = text.find('.');
  TransformersRelease r;
  bool ok = dot != std::string_view::npos && small_decimal(text.substr(0, dot), 3, r.major);
  if (ok) {
    std::string_view rest = text.substr(dot + 1);
    size_t n = 0;
    while (n < rest.size() && std::isdigit(static_cast<unsigned char>(rest[n]))) ++n;
    // After MAJOR.MINOR only ".PATCH..." or a pre-release tag ("rc1", ".dev0") may follow.
    ok = small_decimal(rest.substr(0, n), 3, r.minor) &&
         (n == rest.size() || rest[n] == '.' || std::isalpha(static_cast<unsigned char>(rest[n])));
  }
  if (!ok || r.major < 4 || r.major > 5)
    throw Error(std::string(subject), "\"" + std::string(text) +
                                          "\" is not a transformers release memplan models (expected "
                                          "MAJOR.MINOR from 4.0 to 5.999, e.g. 4.36 or 5.24; quote it in "
                                          "plan files: the JSON number 4.40 reads as 4.4)");
  return r;
}

std::string to_string(TransformersRelease t) {
  return std::to_string(t.major) + "." + std::to_string(t.minor);
}

}  // namespace memplan
