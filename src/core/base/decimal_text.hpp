#pragma once
// A number as text with a fixed count of decimals, as C's "%.Nf" writes it in the "C" locale:
// for the figures engines print in their own messages ("8192.00 MiB", "28.50 GiB").

#include <string>

namespace memplan {

std::string fixed_decimals(double x, int places);

}  // namespace memplan
