// A number with a fixed count of decimals (see decimal_text.hpp).
#include "core/base/decimal_text.hpp"

#include <locale>
#include <sstream>

namespace memplan {

std::string fixed_decimals(double x, int places) {
  std::ostringstream o;
  o.imbue(std::locale::classic());
  o.setf(std::ios::fixed);
  o.precision(places);
  o << x;
  return o.str();
}

}  // namespace memplan
