#pragma once
// The sizes in an HTTP response's header lines, read without libcurl (fuzzed: fuzz_hub_response):
// Content-Range's total ("bytes 0-7/5000000") and Content-Length. Issue 32: a size above 2^63 - 1
// (a hostile server's 99999999999999999999) is flagged, never cut to its first 19 digits.

#include <cstdint>
#include <optional>
#include <string_view>

namespace memplan::net {

struct ResponseSizes {
  std::optional<uint64_t> total_size;      // Content-Range: bytes a-b/TOTAL
  std::optional<uint64_t> content_length;  // Content-Length: N
  bool too_large = false;                  // either one above 2^63 - 1
};

// The largest size accepted: curl's and the file system's sizes are signed 64-bit.
constexpr uint64_t k_max_response_size = (1ull << 63) - 1;

// Reads one header line (any case, with or without its CRLF) into `s`. A status line ("HTTP/1.1
// 302 Found") starts a new response of a redirect chain: what the earlier one said is dropped.
// Malformed values are ignored (the caller then finds no total where it needs one).
void read_header_line(std::string_view line, ResponseSizes& s);

}  // namespace memplan::net
