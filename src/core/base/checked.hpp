#pragma once
// Overflow-checked uint64 arithmetic: every byte count in memplan goes through these.

#include <cstdint>
#include <string>

#include <memplan/error.hpp>

namespace memplan {

// 128-bit intermediate for exact products (GCC/Clang extension).
__extension__ typedef unsigned __int128 u128;

// a * b, or OverflowError naming `what` (e.g. "optimizer state bytes").
inline uint64_t checked_mul(uint64_t a, uint64_t b, const char* what = "bytes") {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw OverflowError(what, "the result exceeds 2^64 bytes (is a count absurdly large?)");
  return r;
}

// a + b, or OverflowError naming `what`.
inline uint64_t checked_add(uint64_t a, uint64_t b, const char* what = "bytes") {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw OverflowError(what, "the result exceeds 2^64 bytes (is a count absurdly large?)");
  return r;
}

// ceil(n * num / den) without intermediate overflow; for fractional bytes per element
// (int4 = 1/2 byte, nf4 with block constants = 9/16 byte).
inline uint64_t checked_mul_ratio(uint64_t n, uint64_t num, uint64_t den, const char* what = "bytes") {
  u128 p = static_cast<u128>(n) * num;
  u128 q = (p + den - 1) / den;
  if (q > UINT64_MAX) throw OverflowError(what, "the result exceeds 2^64 bytes (is a count absurdly large?)");
  return static_cast<uint64_t>(q);
}

// ceil(a / b) for b > 0.
inline uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b ? 1 : 0); }

}  // namespace memplan
