#pragma once
// The work of the Hub response fuzz target (src/net without the network), shared with the unit
// test that replays its corpus. Needs MEMPLAN_NET (libcurl's build); the parsers never call curl.

#include <cstdlib>
#include <string_view>

#include <memplan/error.hpp>
#include "net/http_headers.hpp"
#include "net/model_info.hpp"

namespace memplan::fuzz {

// A server's response as bytes: header lines up to the first empty line (each through the header
// reader, as libcurl hands them over), the rest the model information body. Contract: no size
// above 2^63 - 1 is ever returned; a commit read is 40 hexadecimal digits.
inline bool run_hub_response(std::string_view in) {
  const size_t blank = in.find("\r\n\r\n");
  const std::string_view head = in.substr(0, blank);
  const std::string_view body = blank == std::string_view::npos ? std::string_view() : in.substr(blank + 4);
  net::ResponseSizes sizes;
  for (size_t start = 0; start < head.size();) {
    size_t end = head.find('\n', start);
    end = end == std::string_view::npos ? head.size() : end + 1;
    net::read_header_line(head.substr(start, end - start), sizes);
    start = end;
  }
  for (const auto& v : {sizes.total_size, sizes.content_length})
    if (v && *v > net::k_max_response_size) std::abort();
  try {
    const net::HubModelInfo info = net::parse_model_info(body, "fuzz", "org/name");
    if (info.commit.size() != 40) std::abort();
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace memplan::fuzz
