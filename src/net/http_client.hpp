#pragma once
// The network, behind one small interface: an HTTP GET of a URL (or a byte range of it), bounded in
// bytes, time and redirects. The real client is libcurl (curl_client.cpp), loaded with dlopen
// on first use (curl_library.cpp); tests use a fake or a fixture server on 127.0.0.1. Nothing outside
// src/net/ calls curl; builds without libcurl (the WebAssembly one) leave the folder out.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace memplan::net {

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;                    // "Authorization: Bearer ..."
  std::optional<std::pair<uint64_t, uint64_t>> range;  // first and last byte, inclusive
  uint64_t max_bytes = 1u << 20;                       // the most body bytes accepted
};

struct HttpResponse {
  long status = 0;  // 200, 206, 401, 404, ...
  std::string body;
  std::optional<uint64_t> total_size;  // from Content-Range: bytes a-b/TOTAL
};

// The bounds every request runs under.
struct HttpLimits {
  long connect_timeout_s = 10;
  long total_timeout_s = 120;
  long low_speed_bytes_per_s = 1024;  // slower than this ...
  long low_speed_time_s = 15;         // ... for this long: abandoned
  long max_redirects = 5;
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // Throws memplan::Error naming the URL on a transport failure (no connection, timeout, too many
  // redirects, a body over max_bytes); HTTP error statuses are returned, not thrown.
  virtual HttpResponse get(const HttpRequest& request) = 0;
};

// The libcurl client.
std::unique_ptr<HttpClient> make_curl_client(const HttpLimits& limits = {});

}  // namespace memplan::net
