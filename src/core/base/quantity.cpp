#include <fmt/format.h>

#include <memplan/quantity.hpp>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>

#include <memplan/error.hpp>
#include "core/base/checked.hpp"
#include "core/base/quantity_kinds.hpp"

namespace memplan {
namespace {

std::string quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

// An exact decimal: value = digits x 10^exp10, digits as a string without leading zeros.
struct Decimal {
  std::string digits;  // "674"
  long exp10 = 0;      // -2  -> 6.74
};

// Parses [digits][.digits][e[+-]digits] with '_' separators between digits; returns the
// unparsed rest in `rest`. False when there is no number at the start.
bool parse_decimal(std::string_view text, Decimal& out, std::string_view& rest) {
  size_t i = 0;
  bool any = false, dot = false;
  long frac_digits = 0;
  std::string digits;
  while (i < text.size()) {
    char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits += c;
      any = true;
      if (dot) ++frac_digits;
    } else if (c == '_' && any && i + 1 < text.size() &&
               std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
      // separator
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
    ++i;
  }
  if (!any) return false;
  long exp10 = -frac_digits;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    size_t j = i + 1;
    bool neg = false;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) neg = text[j++] == '-';
    size_t start = j;
    long e = 0;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
      if (e < 100000) e = e * 10 + (text[j] - '0');
      ++j;
    }
    if (j > start) {
      exp10 += neg ? -e : e;
      i = j;
    }
  }
  size_t nz = digits.find_first_not_of('0');
  out.digits = nz == std::string::npos ? "" : digits.substr(nz);
  out.exp10 = exp10;
  rest = text.substr(i);
  return true;
}

enum class Whole { ok, fractional, too_large };

// value x 10^extra as an exact integer.
Whole to_whole(const Decimal& d, long extra, uint64_t& result) {
  result = 0;
  if (d.digits.empty()) return Whole::ok;
  std::string digits = d.digits;
  long e = d.exp10 + extra;
  while (e < 0 && !digits.empty() && digits.back() == '0') {
    digits.pop_back();
    ++e;
  }
  if (e < 0) return Whole::fractional;
  if (static_cast<long>(digits.size()) + e > 20) return Whole::too_large;
  u128 v = 0;
  for (char c : digits) v = v * 10 + static_cast<unsigned>(c - '0');
  for (long k = 0; k < e; ++k) v *= 10;
  if (v > UINT64_MAX) return Whole::too_large;
  result = static_cast<uint64_t>(v);
  return Whole::ok;
}

[[noreturn]] void fail_number(std::string_view subject, std::string_view text, const char* expected) {
  throw Error(std::string(subject), quoted(text) + " is not a number (expected " + expected + ")");
}

constexpr const char* k_count_examples = "e.g. 7e9, 7B, 125M";
constexpr const char* k_size_examples = "e.g. 24GiB, 80GB, 15360MiB";

}  // namespace

uint64_t parse_count(Field field, std::string_view text, uint64_t max) {
  try {
    return parse_count(field_key(field), text, max);
  } catch (const OverflowError& e) {
    throw OverflowError(field, e.message());
  } catch (const Error& e) {
    throw Error(field, e.message());
  }
}

namespace {

// A count's suffix: the letter and what it multiplies by.
struct Suffix {
  char letter;  // lower case; matched case-insensitively
  uint64_t mult;
};
// parse_count's decimal suffixes: k 1e3, M 1e6, B/G 1e9, T 1e12.
constexpr Suffix k_decimal_suffixes[] = {
    {'k', 1000ull}, {'m', 1000000ull}, {'b', 1000000000ull}, {'g', 1000000000ull}, {'t', 1000000000000ull}};
// parse_tokens' suffixes: context lengths are powers of two (Llama 3's 8,192 is "8k").
constexpr Suffix k_token_suffixes[] = {{'k', 1024ull}, {'m', 1024ull * 1024ull}};

// value x mult as an exact integer (mult <= 1e12). A whole value x mult has at most 12 fraction
// digits (1 / 1024 = 0.0009765625 has 10): more, after trailing zeros, is a fraction.
Whole to_whole_times(const Decimal& d, uint64_t mult, uint64_t& result) {
  result = 0;
  if (d.digits.empty()) return Whole::ok;
  std::string digits = d.digits;
  long e = d.exp10;
  while (e < 0 && !digits.empty() && digits.back() == '0') {
    digits.pop_back();
    ++e;
  }
  if (e < -12) return Whole::fractional;
  if (static_cast<long>(digits.size()) + e > 20) return Whole::too_large;  // above 1e20 before mult
  u128 v = 0;
  for (char c : digits) v = v * 10 + static_cast<unsigned>(c - '0');  // under 1e32
  for (long k = 0; k < e; ++k) v *= 10;                               // under 1e20
  u128 scale = 1;
  for (long k = e; k < 0; ++k) scale *= 10;  // at most 1e12
  // (q x scale + r) x mult / scale = q x mult + r x mult / scale, each product under 2^127.
  const u128 q = v / scale, r = v % scale;
  if ((r * mult) % scale != 0) return Whole::fractional;
  const u128 whole = q * mult + r * mult / scale;
  if (whole > UINT64_MAX) return Whole::too_large;
  result = static_cast<uint64_t>(whole);
  return Whole::ok;
}

// The shared body of parse_count, parse_tokens and parse_batch_size: `suffixes` are those the
// value may carry (none for a batch size); `examples` name the accepted forms in errors.
uint64_t parse_whole(std::string_view subject, std::string_view text, uint64_t max, const Suffix* suffixes,
                     size_t suffix_count, const char* examples, const char* refused_suffix) {
  if (text.empty()) throw Error(std::string(subject), "empty value (expected " + std::string(examples) + ")");
  if (text[0] == '-')
    throw Error(std::string(subject), quoted(text) + " is negative (expected a count, " + examples + ")");
  if (text[0] == '+') text.remove_prefix(1);
  Decimal d;
  std::string_view rest;
  if (!parse_decimal(text, d, rest)) fail_number(subject, text, examples);
  uint64_t mult = 1;
  if (rest.size() == 1) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(rest[0])));
    bool known = false;
    for (size_t i = 0; i < suffix_count; ++i)
      if (suffixes[i].letter == c) {
        mult = suffixes[i].mult;
        known = true;
      }
    if (!known) {
      for (const Suffix& s : k_decimal_suffixes)
        if (s.letter == c && refused_suffix)
          throw Error(std::string(subject),
                      quoted(text) + ": " + refused_suffix + " (expected " + examples + ")");
      fail_number(subject, text, examples);
    }
  } else if (!rest.empty()) {
    fail_number(subject, text, examples);
  }
  uint64_t v = 0;
  const Whole w = to_whole_times(d, mult, v);
  if (w == Whole::fractional)
    throw Error(std::string(subject),
                quoted(text) + " is not a whole number (expected a count, " + examples + ")");
  if (w == Whole::too_large || v > max)
    throw Error(std::string(subject), quoted(text) + " is too large (at most " + group_thousands(max) + ")");
  return v;
}

constexpr const char* k_token_examples = "e.g. 4096, 8k = 8,192, 128k = 131,072";
constexpr const char* k_batch_examples = "e.g. 8, 512, 1024";

}  // namespace

uint64_t parse_count(std::string_view subject, std::string_view text, uint64_t max) {
  return parse_whole(subject, text, max, k_decimal_suffixes, std::size(k_decimal_suffixes), k_count_examples,
                     nullptr);
}

uint64_t parse_tokens(std::string_view subject, std::string_view text, uint64_t max) {
  return parse_whole(subject, text, max, k_token_suffixes, std::size(k_token_suffixes), k_token_examples,
                     "a token count takes k (1,024) or M (1,048,576)");
}

uint64_t parse_batch_size(std::string_view subject, std::string_view text, uint64_t max) {
  return parse_whole(subject, text, max, nullptr, 0, k_batch_examples,
                     "a batch size is written in digits (is 1k 1,000 or 1,024?)");
}

uint64_t parse_size(std::string_view subject, std::string_view text) {
  if (text.empty())
    throw Error(std::string(subject), "empty value (expected " + std::string(k_size_examples) + ")");
  if (text[0] == '-')
    throw Error(std::string(subject),
                quoted(text) + " is negative (expected a size, " + k_size_examples + ")");
  Decimal d;
  std::string_view rest;
  if (!parse_decimal(text, d, rest)) fail_number(subject, text, k_size_examples);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  struct Unit {
    const char* name;
    uint64_t mult;
  };
  static const Unit units[] = {{"", 1},
                               {"b", 1},
                               {"kb", 1000},
                               {"mb", 1000000},
                               {"gb", 1000000000},
                               {"tb", 1000000000000ull},
                               {"kib", 1ull << 10},
                               {"mib", 1ull << 20},
                               {"gib", 1ull << 30},
                               {"tib", 1ull << 40}};
  for (const Unit& u : units) {
    if (!iequals(rest, u.name)) continue;
    // value x mult, rounded to whole bytes: scale the decimal by mult in 128-bit.
    uint64_t scaled = 0;
    if (to_whole(d, 0, scaled) == Whole::ok) {
      u128 p = static_cast<u128>(scaled) * u.mult;
      if (p > UINT64_MAX) throw Error(std::string(subject), quoted(text) + " is too large");
      return static_cast<uint64_t>(p);
    }
    // Fractional: use long double, exact enough for sizes (1.5GiB).
    long double v = std::strtold(std::string(text.substr(0, text.size() - rest.size())).c_str(), nullptr);
    long double bytes = v * static_cast<long double>(u.mult);
    if (!(bytes < 1.8e19L)) throw Error(std::string(subject), quoted(text) + " is too large");
    return static_cast<uint64_t>(std::llround(bytes));
  }
  throw Error(std::string(subject), quoted(text) + " has an unknown unit (expected " + k_size_examples + ")");
}

double parse_real(std::string_view subject, std::string_view text) {
  std::string s(text);
  if (s.empty()) throw Error(std::string(subject), "empty value (expected a number)");
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  const bool out_of_range = errno == ERANGE;
  if (end == s.c_str() || *end != '\0' || std::isspace(static_cast<unsigned char>(s[0])))
    throw Error(std::string(subject), quoted(text) + " is not a number");
  if (!std::isfinite(v)) {
    if (out_of_range)
      throw Error(std::string(subject), quoted(text) + " overflows a double (the largest is about 1.8e308)");
    throw Error(std::string(subject), quoted(text) + " is not a finite number");
  }
  // "1e-400" reads as 0: say so rather than go on with 0 (subnormals such as 1e-310 are kept).
  if (out_of_range && v == 0.0)
    throw Error(std::string(subject),
                quoted(text) + " underflows to 0 in a double (the smallest positive is about 4.9e-324)");
  return v;
}

double parse_fraction(std::string_view subject, std::string_view text) {
  bool percent = !text.empty() && text.back() == '%';
  std::string_view body = percent ? text.substr(0, text.size() - 1) : text;
  double v = 0;
  try {
    v = parse_real(subject, body);
  } catch (const Error&) {
    throw Error(std::string(subject),
                quoted(text) + " is not a fraction (expected a number in (0, 1], e.g. 0.002 or 0.2%)");
  }
  if (percent) v /= 100.0;
  if (!(v > 0.0 && v <= 1.0))
    throw Error(std::string(subject), quoted(text) + " is outside (0, 1] (expected e.g. 0.002 or 0.2%)");
  return v;
}

Units parse_units(std::string_view subject, std::string_view text) {
  if (iequals(text, "gib")) return Units::gib;
  if (iequals(text, "gb")) return Units::gb;
  throw Error(std::string(subject), quoted(text) + " is not a unit (expected gib or gb)");
}

std::string format_bytes(uint64_t bytes, Units units) {
  const bool bin = units == Units::gib;
  const double base = bin ? 1024.0 : 1000.0;
  static const char* bin_names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  static const char* dec_names[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int idx = 0;
  double v = static_cast<double>(bytes);
  // Stay in GiB/GB up to 1000 TiB-ish values only when they reach the next unit.
  while (idx < 5 && v >= base && idx < 3) {
    v /= base;
    ++idx;
  }
  if (idx == 3 && v >= 100000.0) {  // absurd sizes: TiB
    v /= base;
    ++idx;
  }
  if (idx == 0) return fmt::format("{} B", bytes);
  return fmt::format("{:.1f} {}", v, bin ? bin_names[idx] : dec_names[idx]);
}

std::string format_signed_bytes(int64_t bytes, Units units) {
  if (bytes < 0) {
    uint64_t mag = bytes == INT64_MIN ? (1ull << 63) : static_cast<uint64_t>(-bytes);
    return "-" + format_bytes(mag, units);
  }
  return format_bytes(static_cast<uint64_t>(bytes), units);
}

std::string group_thousands(uint64_t n) {
  std::string s = std::to_string(n);
  std::string out;
  int count = 0;
  for (auto it = s.rbegin(); it != s.rend(); ++it) {
    if (count && count % 3 == 0) out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++count;
  }
  return out;
}

std::string format_count(uint64_t n) {
  const double v = static_cast<double>(n);
  if (n >= 1000000000000ull) return fmt::format("{:.2f}T", v / 1e12);
  if (n >= 1000000000ull) return fmt::format("{:.2f}B", v / 1e9);
  if (n >= 1000000ull) return fmt::format("{:.1f}M", v / 1e6);
  if (n >= 1000ull) return fmt::format("{:.1f}K", v / 1e3);
  return std::to_string(n);
}

}  // namespace memplan
