#pragma once
// Numbers as the serving renderers print them: fixed decimals, GiB, and signed byte differences.

#include <cstdint>
#include <cstdio>
#include <string>

#include <memplan/quantity.hpp>

namespace memplan::cli {

// `v` with `digits` decimals ("%.*f").
inline std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

inline double gib(uint64_t bytes) { return static_cast<double>(bytes) / static_cast<double>(1ull << 30); }

// A byte difference with its sign: "-1.2 GiB".
inline std::string signed_bytes(int64_t b, Units u) {
  return b < 0 ? "-" + format_bytes(static_cast<uint64_t>(-b), u) : format_bytes(static_cast<uint64_t>(b), u);
}

}  // namespace memplan::cli
