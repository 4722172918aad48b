#include <memplan/bitsandbytes_release.hpp>

#include <cctype>
#include <string>

#include <memplan/error.hpp>

#include "text.hpp"

namespace memplan {

namespace {

// The leading digits of `rest` as a number of at most 3 digits, moving `rest` past them.
bool bnb_release_part(std::string_view& rest, uint32_t& out) {
  size_t n = 0;
  while (n < rest.size() && std::isdigit(static_cast<unsigned char>(rest[n]))) ++n;
  const bool ok = small_decimal(rest.substr(0, n), 3, out);
  rest.remove_prefix(n);
  return ok;
}

}  // namespace

BitsandbytesRelease parse_bitsandbytes_release(std::string_view subject, std::string_view text) {
  BitsandbytesRelease b;
  b.patch = 0;
  std::string_view rest = text;
  bool ok = bnb_release_part(rest, b.major) && !rest.empty() && rest.front() == '.';
  if (ok) {
    rest.remove_prefix(1);
    ok = bnb_release_part(rest, b.minor);
  }
  if (ok && rest.size() > 1 && rest.front() == '.' && std::isdigit(static_cast<unsigned char>(rest[1]))) {
    rest.remove_prefix(1);
    ok = bnb_release_part(rest, b.patch);
  }
  // After the release only ".dev0", "rc1", "+local" and the like may follow.
  ok = ok && (rest.empty() || rest.front() == '.' || rest.front() == '+' ||
              std::isalpha(static_cast<unsigned char>(rest.front())));
  if (!ok || b.major > 9 || b.before(0, 39, 0))
    throw Error(std::string(subject), "\"" + std::string(text) +
                                          "\" is not a bitsandbytes release with 4-bit layers (expected "
                                          "MAJOR.MINOR[.PATCH] from 0.39, e.g. 0.41.1 or 0.50.2; quote it "
                                          "in plan files)");
  return b;
}

std::string to_string(BitsandbytesRelease b) {
  return std::to_string(b.major) + "." + std::to_string(b.minor) + "." + std::to_string(b.patch);
}

}  // namespace memplan
