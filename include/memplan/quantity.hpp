#pragma once
// Parsing and printing quantities: counts (7e9, 7B, 6.74b, 125M, 7_000_000_000),
// sizes (24GiB, 80GB, 15360MiB) and fractions, exactly and without overflow.
// Every parser takes the subject (the option name) so its Error names it.

#include <cstdint>
#include <string>
#include <string_view>

#include <memplan/error.hpp>

namespace memplan {

// A whole count: digits with optional '_' separators, decimal point, exponent and one suffix
// k/K (1e3), M (1e6), B/G (1e9), T (1e12). "6.74b" = 6740000000 exactly. Refuses negatives,
// fractions of one, NaN/inf, trailing junk and anything above `max`.
uint64_t parse_count(std::string_view subject, std::string_view text, uint64_t max = UINT64_MAX);
// The same rule for a field the library parses itself (sweep's rows-per-step expression): the
// Error carries `field`.
uint64_t parse_count(Field field, std::string_view text, uint64_t max = UINT64_MAX);

// A byte size: a count with an optional unit B, KB/MB/GB/TB (powers of 1000) or
// KiB/MiB/GiB/TiB (powers of 1024), case-insensitive ("24GiB", "80GB", "15360MiB", "1.5GiB").
uint64_t parse_size(std::string_view subject, std::string_view text);

// A finite real number (strtod syntax, full match).
double parse_real(std::string_view subject, std::string_view text);

// A fraction in (0, 1], also as a percentage ("0.002", "0.2%").
double parse_fraction(std::string_view subject, std::string_view text);

enum class Units { gib, gb };

// Parses "gib" / "gb".
Units parse_units(std::string_view subject, std::string_view text);

// Human size in the unit family: binary (GiB/MiB/KiB/B) or decimal (GB/MB/kB/B), scaled to the
// largest unit the value reaches, one decimal: 112000000000 -> "104.3 GiB" / "112.0 GB".
std::string format_bytes(uint64_t bytes, Units units);

// Signed variant for spare/shortfall: "-3.2 GiB".
std::string format_signed_bytes(int64_t bytes, Units units);

// 7000000000 -> "7,000,000,000".
std::string group_thousands(uint64_t n);

// 7000000000 -> "7.00B", 124439808 -> "124.4M": a short human count.
std::string format_count(uint64_t n);

}  // namespace memplan
