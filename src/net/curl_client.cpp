#include <memplan/error.hpp>

#include "net/curl_library.hpp"
#include "net/http_client.hpp"
#include "net/http_headers.hpp"

namespace memplan::net {
namespace {

struct Sink {
  std::string body;
  uint64_t max_bytes = 0;
  bool over = false;
  ResponseSizes sizes;
};

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* s = static_cast<Sink*>(user);
  const size_t n = size * count;
  if (s->sizes.too_large) return 0;  // a size above 2^63 - 1 was announced: nothing is read
  if (s->body.size() + n > s->max_bytes) {
    s->over = true;
    return 0;  // aborts the transfer: CURLE_WRITE_ERROR
  }
  s->body.append(data, n);
  return n;
}

// Each header line of each response of a redirect chain (the last response's sizes win).
size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* s = static_cast<Sink*>(user);
  const size_t n = size * count;
  read_header_line(std::string_view(data, n), s->sizes);
  return n;
}

class CurlClient : public HttpClient {
 public:
  // Loads libcurl on the first client (throws memplan::Error when it cannot be loaded).
  explicit CurlClient(const HttpLimits& limits) : m_curl(curl_library()), m_limits(limits) {}

  HttpResponse get(const HttpRequest& r) override {
    CURL* curl = m_curl.easy_init();
    if (!curl) throw Error("network", "libcurl could not start");
    Sink sink;
    sink.max_bytes = r.max_bytes;
    curl_slist* headers = nullptr;
    for (const std::string& h : r.headers) headers = m_curl.slist_append(headers, h.c_str());
    const std::string range =
        r.range ? std::to_string(r.range->first) + "-" + std::to_string(r.range->second) : std::string();
    m_curl.easy_setopt(curl, CURLOPT_URL, r.url.c_str());
    m_curl.easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    if (r.range) m_curl.easy_setopt(curl, CURLOPT_RANGE, range.c_str());
    m_curl.easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    m_curl.easy_setopt(curl, CURLOPT_MAXREDIRS, m_limits.max_redirects);
    m_curl.easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    m_curl.easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    m_curl.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, m_limits.connect_timeout_s);
    m_curl.easy_setopt(curl, CURLOPT_TIMEOUT, m_limits.total_timeout_s);
    m_curl.easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, m_limits.low_speed_bytes_per_s);
    m_curl.easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, m_limits.low_speed_time_s);
    m_curl.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    m_curl.easy_setopt(curl, CURLOPT_USERAGENT, "memplan");
    m_curl.easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    m_curl.easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
    m_curl.easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    m_curl.easy_setopt(curl, CURLOPT_HEADERDATA, &sink);
    const CURLcode rc = m_curl.easy_perform(curl);
    long status = 0;
    m_curl.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    m_curl.slist_free_all(headers);
    m_curl.easy_cleanup(curl);
    if (sink.sizes.too_large)
      throw Error(r.url,
                  "the server sent a Content-Range or Content-Length above 2^63 - 1 bytes "
                  "(no file is that large; a broken or hostile server?)");
    if (sink.over)
      throw Error(r.url,
                  "the response is larger than " + std::to_string(r.max_bytes) +
                      " bytes (the most memplan reads for it" +
                      (r.range ? std::string("; the server ignored the range request?)") : std::string(")")));
    if (rc == CURLE_TOO_MANY_REDIRECTS)
      throw Error(r.url,
                  "more than " + std::to_string(m_limits.max_redirects) + " redirects (a redirect loop?)");
    if (rc == CURLE_OPERATION_TIMEDOUT)
      throw Error(r.url, "timed out (connect " + std::to_string(m_limits.connect_timeout_s) + " s, total " +
                             std::to_string(m_limits.total_timeout_s) + " s, or under " +
                             std::to_string(m_limits.low_speed_bytes_per_s) + " B/s for " +
                             std::to_string(m_limits.low_speed_time_s) + " s)");
    if (rc != CURLE_OK) throw Error(r.url, std::string(m_curl.easy_strerror(rc)));
    return {status, std::move(sink.body), sink.sizes.total_size};
  }

 private:
  const CurlApi& m_curl;
  HttpLimits m_limits;
};

}  // namespace

std::unique_ptr<HttpClient> make_curl_client(const HttpLimits& limits) {
  return std::make_unique<CurlClient>(limits);
}

}  // namespace memplan::net
