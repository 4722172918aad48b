#pragma once
// What the Hub client's tests share (test_hub_download.cpp, test_hub_hostile.cpp): short HTTP
// bounds so that slow cases end within seconds, and an error's text with "" for none (so that
// CHECK_FALSE(e.empty()) fails when nothing was refused).

#include <functional>
#include <string>

#include <memplan/error.hpp>
#include "net/http_client.hpp"

namespace memplan::test {

inline net::HttpLimits quick_http_limits() {
  net::HttpLimits l;
  l.connect_timeout_s = 2;
  l.total_timeout_s = 5;
  l.low_speed_bytes_per_s = 100;
  l.low_speed_time_s = 1;
  return l;
}

// The what() of the memplan::Error `f` throws, or "" when it throws none.
inline std::string error_or_empty(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace memplan::test
