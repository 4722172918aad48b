#include <fmt/format.h>

#include "core/base/text.hpp"
#include "core/formats/cast.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <memplan/error.hpp>

namespace memplan {
namespace {

uint64_t bits_of(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

int bit_length(uint64_t v) {
  int n = 0;
  while (v) {
    ++n;
    v >>= 1;
  }
  return n;
}

// The low 13 bits tf32 drops from its fp32 container.
int container_shift(const NumberFormat& f) { return f.storage_bits - f.bits; }

// The patterns (without sign) that matter in a floating format.
struct Codes {
  uint64_t max_finite, inf, nan;
};

Codes codes_of(const NumberFormat& f) {
  const int m = f.mantissa_bits;
  const uint64_t ones = (uint64_t{1} << f.exponent_bits) - 1;
  const uint64_t man_ones = (uint64_t{1} << m) - 1;
  if (f.specials == Specials::ieee)  // quiet NaN: top mantissa bit set
    return {((ones - 1) << m) | man_ones, ones << m, (ones << m) | (uint64_t{1} << (m - 1))};
  // fp8-e4m3fn: S.1111.111 is NaN, S.1111.110 = 448 is the largest number, no inf.
  return {(ones << m) | (man_ones - 1), (ones << m) | man_ones, (ones << m) | man_ones};
}

struct Encoded {
  uint64_t bits = 0;
  bool overflowed = false;
};

// Round-to-nearest-even of a finite or special fp64 into a floating format (fp64 included).
Encoded encode_floating(const NumberFormat& f, double x, OverflowMode mode) {
  const int m = f.mantissa_bits;
  const uint64_t xb = bits_of(x);
  const uint64_t sign = (xb >> 63) << (f.bits - 1);
  const Codes c = codes_of(f);
  if (std::isnan(x)) return {sign | c.nan, false};
  if (std::isinf(x)) {
    if (mode == OverflowMode::saturate) return {sign | c.max_finite, true};
    return {sign | (f.has_inf ? c.inf : c.nan), !f.has_inf};
  }
  const uint64_t exp_field = (xb >> 52) & 0x7ff;
  const uint64_t frac = xb & ((uint64_t{1} << 52) - 1);
  if (exp_field == 0 && frac == 0) return {sign, false};
  // |x| = sig * 2^e, sig < 2^53 an integer.
  const uint64_t sig = exp_field ? frac | (uint64_t{1} << 52) : frac;
  const int e = exp_field ? static_cast<int>(exp_field) - 1075 : -1074;
  const int lead = e + bit_length(sig) - 1;  // exponent of the leading bit
  const int emin = 1 - f.exponent_bias;
  const int quantum = (lead < emin ? emin : lead) - m;  // weight of the last mantissa bit
  const int shift = quantum - e;
  uint64_t q;  // |x| / 2^quantum, rounded to nearest even
  if (shift <= 0) {
    q = sig << -shift;
  } else if (shift > 54) {
    q = 0;  // below half the smallest step
  } else {
    q = sig >> shift;
    const uint64_t rem = sig & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
  }
  // Subnormal: the field is q itself (q = 2^m carries into the smallest normal). Normal: q in
  // [2^m, 2^(m+1)]; a carry to 2^(m+1) moves into the exponent field by itself.
  const uint64_t mag =
      lead < emin ? q : (static_cast<uint64_t>(lead + f.exponent_bias) << m) + (q - (uint64_t{1} << m));
  if (mag > c.max_finite) {
    if (mode == OverflowMode::saturate) return {sign | c.max_finite, true};
    return {sign | (f.has_inf ? c.inf : c.nan), true};
  }
  return {sign | mag, false};
}

Encoded encode_integer(const NumberFormat& f, double x) {
  const uint64_t mask = (uint64_t{1} << f.bits) - 1;
  if (std::isnan(x)) return {0, false};
  const double r = std::nearbyint(x);  // default rounding mode: nearest, ties to even
  bool over = false;
  double v = r;
  if (r > f.max) v = f.max, over = true;
  if (r < f.min) v = f.min, over = true;
  return {static_cast<uint64_t>(static_cast<int64_t>(v)) & mask, over};
}

Encoded encode_lookup(const NumberFormat& f, double x) {
  const std::vector<double>& codes = f.codes;
  if (std::isnan(x)) return {7, false};  // the zero code
  size_t best = 0;
  for (size_t i = 1; i < codes.size(); ++i) {
    const double d = std::fabs(x - codes[i]), bd = std::fabs(x - codes[best]);
    if (d < bd || (d == bd && i % 2 == 0)) best = i;  // ties to the even code
  }
  return {best, std::fabs(x) > 1.0};
}

Encoded encode_detail(const NumberFormat& f, double x, OverflowMode mode) {
  switch (f.kind) {
    case FormatKind::integer:
      return encode_integer(f, x);
    case FormatKind::lookup:
      return encode_lookup(f, x);
    case FormatKind::floating:
      break;
  }
  Encoded e = encode_floating(f, x, mode);
  e.bits <<= container_shift(f);
  return e;
}

// Significant digits of a shortest decimal ("1" -> 1, "1000" -> 1, "0.0999755859375" -> 12).
int significant_digits(const std::string& s) {
  std::string digits;
  for (char c : s) {
    if (c == 'e' || c == 'E') break;
    if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
  }
  const size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return 1;
  const size_t last = digits.find_last_not_of('0');
  return static_cast<int>(last - first + 1);
}

}  // namespace

double decode(const NumberFormat& f, uint64_t bits) {
  if (f.kind == FormatKind::lookup) return f.codes[bits & 0xf];
  if (f.kind == FormatKind::integer) {
    const uint64_t mask = (uint64_t{1} << f.bits) - 1;
    const uint64_t b = bits & mask;
    const bool negative = (b >> (f.bits - 1)) & 1;
    return negative ? static_cast<double>(static_cast<int64_t>(b) - static_cast<int64_t>(mask + 1))
                    : static_cast<double>(b);
  }
  const uint64_t p = bits >> container_shift(f);
  const int m = f.mantissa_bits;
  const uint64_t ones = (uint64_t{1} << f.exponent_bits) - 1;
  const uint64_t man_ones = (uint64_t{1} << m) - 1;
  const bool negative = (p >> (f.bits - 1)) & 1;
  const uint64_t exp = (p >> m) & ones;
  const uint64_t man = p & man_ones;
  double v;
  if (f.specials == Specials::ieee && exp == ones) {
    v = man ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (f.specials == Specials::nan_only_ones && exp == ones && man == man_ones) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (exp == 0) {
    v = std::ldexp(static_cast<double>(man), 1 - f.exponent_bias - m);
  } else {
    v = std::ldexp(static_cast<double>(man | (uint64_t{1} << m)),
                   static_cast<int>(exp) - f.exponent_bias - m);
  }
  return negative ? -v : v;
}

CastResult cast(double x, const NumberFormat& format, OverflowMode mode) {
  CastResult r;
  r.input = x;
  r.format = &format;
  const Encoded e = encode_detail(format, x, mode);
  r.bits = e.bits;
  r.value = decode(format, e.bits);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (std::isnan(x)) {
    r.outcome = CastOutcome::nan;
    r.abs_error = r.rel_error = nan;
    return r;
  }
  if (e.overflowed) {
    r.outcome = CastOutcome::overflow;
  } else if (r.value == x) {
    r.outcome = CastOutcome::exact;
  } else if (r.value == 0) {
    r.outcome = CastOutcome::underflow;
  } else {
    r.outcome = CastOutcome::rounded;
  }
  if (std::isfinite(r.value) && std::isfinite(x)) {
    r.abs_error = std::fabs(r.value - x);
    r.rel_error = x == 0 ? 0.0 : r.abs_error / std::fabs(x);
  } else if (r.value == x) {
    r.abs_error = r.rel_error = 0;  // inf stored as inf
  } else {
    r.abs_error = r.rel_error = nan;
  }
  r.subnormal = format.kind == FormatKind::floating && r.value != 0 && std::isfinite(r.value) &&
                std::fabs(r.value) < format.smallest_normal;
  return r;
}

const char* outcome_name(CastOutcome outcome) {
  switch (outcome) {
    case CastOutcome::exact:
      return "exact";
    case CastOutcome::rounded:
      return "rounded";
    case CastOutcome::overflow:
      return "overflow";
    case CastOutcome::underflow:
      return "underflow";
    case CastOutcome::nan:
      return "nan";
  }
  return "?";
}

std::string cast_verdict(const CastResult& r) {
  const NumberFormat& f = *r.format;
  const std::string in = shortest_decimal(r.input), out = shortest_decimal(r.value);
  switch (r.outcome) {
    case CastOutcome::exact:
      return r.subnormal ? "exact (subnormal)" : "exact";
    case CastOutcome::nan:
      if (f.kind != FormatKind::floating) return "nan -> " + out + " (" + f.name + " has no NaN)";
      return "nan -> nan";
    case CastOutcome::underflow:
      return "underflow -> " + out;
    case CastOutcome::overflow:
      if (std::isnan(r.value))
        return "overflow -> nan (" + f.name + " has no inf; " + field_ref(Field::saturate) + " gives " +
               shortest_decimal(std::copysign(f.max, r.input)) + ")";
      if (std::isinf(r.value)) return "overflow -> " + out + " (max " + shortest_decimal(f.max) + ")";
      return "overflow -> clamped to " + out;
    case CastOutcome::rounded:
      break;
  }
  const std::string tail = r.subnormal ? " (subnormal: fewer significant bits)" : "";
  // "lost" when the stored value is the input with its trailing digits dropped: 1.0001 -> 1.
  const int kept = significant_digits(out);
  if (kept < significant_digits(in)) {
    const std::string buf = fmt::format("{:.{}e}", r.input, kept - 1);
    if (std::strtod(buf.c_str(), nullptr) == r.value) return "lost: " + in + " stored as " + out + tail;
  }
  return "rounded: " + in + " stored as " + out + tail;
}

std::string shortest_decimal(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
#if defined(__EMSCRIPTEN__)
  // emscripten 3.1.6's libc++ has no std::to_chars(double): the same text from the shortest
  // %.*e that reads back as x, written fixed or scientific, whichever is shorter (fixed on a tie).
  int digits = 1;
  std::string sci = fmt::format("{:.{}e}", x, digits - 1);
  while (digits < 17 && std::strtod(sci.c_str(), nullptr) != x) sci = fmt::format("{:.{}e}", x, digits++);
  const int exponent = std::atoi(sci.c_str() + sci.find('e') + 1);
  const std::string fixed = fmt::format("{:.{}f}", x, std::max(0, digits - 1 - exponent));
  return fixed.size() <= sci.size() ? fixed : sci;
#else
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, res.ptr);
#endif
}

std::string hex_bits(const NumberFormat& format, uint64_t bits) {
  const int digits = (format.storage_bits + 3) / 4;
  return fmt::format("0x{:0{}x}", bits, digits);
}

std::string binary_fields(const NumberFormat& f, uint64_t bits) {
  const uint64_t p = f.kind == FormatKind::floating ? bits >> container_shift(f) : bits;
  std::string s;
  for (int i = f.bits - 1; i >= 0; --i) {
    s += ((p >> i) & 1) ? '1' : '0';
    if (f.kind == FormatKind::floating && (i == f.bits - 1 || i == f.mantissa_bits) && i != 0) s += ' ';
  }
  return s;
}

double parse_cast_value(std::string_view subject, std::string_view text) {
  const std::string subj(subject), t(text);
  const std::string expected = " (expected e.g. 0.1, 1e-8, -3, 0x1.8p3, inf, nan)";
  if (t.empty()) throw Error(subj, "empty value" + expected);
  const std::string l = to_lower(t);
  std::string_view body = l;
  bool negative = false;
  if (body[0] == '+' || body[0] == '-') {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (body == "inf" || body == "infinity") return negative ? -HUGE_VAL : HUGE_VAL;
  if (body == "nan")
    return negative ? -std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::quiet_NaN();
  if (body.substr(0, 2) == "0x" && body.find('p') == std::string_view::npos)
    throw Error(subj, "\"" + t + "\" is a hex integer: to decode a bit pattern use " +
                          field_ref(Field::from_bits) +
                          " FORMAT; a hex float "
                          "needs an exponent, e.g. 0x1.8p3");
  for (char c : body)
    if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'x' || c == 'p' || c == '+' ||
          c == '-'))
      throw Error(subj, "\"" + t + "\" is not a number" + expected);
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || body.empty() || std::isspace(static_cast<unsigned char>(t[0])))
    throw Error(subj, "\"" + t + "\" is not a number" + expected);
  if (errno == ERANGE && std::isinf(v))
    throw Error(subj, "\"" + t + "\" is beyond fp64's range (largest 1.7977e+308)");
  if (errno == ERANGE && v == 0)
    throw Error(subj, "\"" + t + "\" is below fp64's smallest subnormal (4.9407e-324)");
  return v;
}

uint64_t parse_bit_pattern(std::string_view subject, std::string_view text, const NumberFormat& format) {
  const std::string subj(subject), t(text);
  const std::string expected = " (expected hex like 0x3c00 or binary like 0b0011110000000000)";
  const std::string l = to_lower(t);
  int base = 0;
  if (l.rfind("0x", 0) == 0) base = 16;
  if (l.rfind("0b", 0) == 0) base = 2;
  if (base == 0) throw Error(subj, "\"" + t + "\" is not a bit pattern" + expected);
  uint64_t v = 0;
  int digits = 0;
  bool wide = false;
  for (size_t i = 2; i < l.size(); ++i) {
    const char c = l[i];
    if (c == '_' && digits > 0 && i + 1 < l.size() && l[i + 1] != '_') continue;
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    if (d < 0 || d >= base) throw Error(subj, "\"" + t + "\" is not a bit pattern" + expected);
    const uint64_t b = static_cast<uint64_t>(base), dd = static_cast<uint64_t>(d);
    if (v > (UINT64_MAX - dd) / b) wide = true;  // more than 64 bits: certainly too wide
    v = v * b + dd;
    ++digits;
  }
  if (digits == 0) throw Error(subj, "\"" + t + "\" is not a bit pattern" + expected);
  if (wide || bit_length(v) > format.storage_bits)
    throw Error(subj, "\"" + t + "\" is wider than " + format.name + "'s " +
                          std::to_string(format.storage_bits) + " bits");
  const int drop = format.kind == FormatKind::floating ? container_shift(format) : 0;
  if (drop && (v & ((uint64_t{1} << drop) - 1)))
    throw Error(subj, "\"" + t + "\" sets bits " + format.name + " does not keep (the low " +
                          std::to_string(drop) + " bits of its fp32 container must be 0)");
  return v;
}

}  // namespace memplan
