#pragma once
// A small HTTP/1.1 server on 127.0.0.1 for the network tests, started and stopped by the test: it
// serves fixed routes with byte-range support (206 + Content-Range), and can misbehave on purpose
// (ignore ranges, send the wrong length, redirect forever, trickle bytes). One connection at a
// time, "Connection: close" on every response.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace memplan::test {

class FixtureHttpServer {
 public:
  // raw: the body is the whole response, sent as it is (hostile headers); redirect: a 302 to the
  // body as Location (another host).
  enum class Behaviour { normal, ignore_range, short_body, redirect_loop, trickle, raw, redirect };
  struct Route {
    Route() = default;
    Route(int s, std::string b, Behaviour how = Behaviour::normal, std::string header = "")
        : status(s), body(std::move(b)), behaviour(how), require_header(std::move(header)) {}
    int status = 200;
    std::string body;
    Behaviour behaviour = Behaviour::normal;
    std::string require_header;  // non-empty: 401 unless the request carries this header line
  };

  FixtureHttpServer() {
    m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(m_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    ::bind(m_fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(m_fd, 8);
    socklen_t len = sizeof a;
    ::getsockname(m_fd, reinterpret_cast<sockaddr*>(&a), &len);
    m_port = ntohs(a.sin_port);
  }
  ~FixtureHttpServer() {
    m_stop = true;
    if (m_thread.joinable()) m_thread.join();
    ::close(m_fd);
  }
  FixtureHttpServer(const FixtureHttpServer&) = delete;
  FixtureHttpServer& operator=(const FixtureHttpServer&) = delete;

  void route(const std::string& path, Route r) { m_routes[path] = std::move(r); }
  void start() {
    m_thread = std::thread([this] { serve(); });
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }
  int requests() const { return m_requests; }
  // Every request received so far (request line and headers), in order.
  std::vector<std::string> seen() const {
    std::lock_guard<std::mutex> lock(m_seen_mutex);
    return m_seen;
  }

 private:
  void send_all(int c, const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      const ssize_t n = ::send(c, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;
      off += static_cast<size_t>(n);
    }
  }

  void answer(int c, const std::string& request) {
    ++m_requests;
    {
      std::lock_guard<std::mutex> lock(m_seen_mutex);
      m_seen.push_back(request);
    }
    const size_t sp1 = request.find(' '), sp2 = request.find(' ', sp1 + 1);
    const std::string path = request.substr(sp1 + 1, sp2 - sp1 - 1);
    const auto it = m_routes.find(path);
    if (it == m_routes.end()) {
      send_all(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    const Route& r = it->second;
    if (!r.require_header.empty() && request.find("\r\n" + r.require_header + "\r\n") == std::string::npos) {
      send_all(c, "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    if (r.behaviour == Behaviour::raw) {
      send_all(c, r.body);
      return;
    }
    if (r.behaviour == Behaviour::redirect) {
      send_all(c, "HTTP/1.1 302 Found\r\nLocation: " + r.body +
                      "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    if (r.behaviour == Behaviour::redirect_loop) {
      send_all(c, "HTTP/1.1 302 Found\r\nLocation: " + path +
                      "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    if (r.status != 200) {
      send_all(
          c, "HTTP/1.1 " + std::to_string(r.status) + " X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    std::string body = r.body, status = "200 OK", range_header;
    const size_t rp = request.find("Range: bytes=");
    if (rp != std::string::npos && r.behaviour != Behaviour::ignore_range) {
      const uint64_t first = std::stoull(request.substr(rp + 13));
      const uint64_t last = std::stoull(request.substr(request.find('-', rp + 13) + 1));
      const uint64_t end = std::min<uint64_t>(last, r.body.size() - 1);
      body = r.body.substr(first, end - first + 1);
      status = "206 Partial Content";
      range_header = "Content-Range: bytes " + std::to_string(first) + "-" + std::to_string(end) + "/" +
                     std::to_string(r.body.size()) + "\r\n";
      if (r.behaviour == Behaviour::short_body) body = body.substr(0, body.size() / 2);
    }
    send_all(c, "HTTP/1.1 " + status + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
                    range_header + "Connection: close\r\n\r\n");
    if (r.behaviour == Behaviour::trickle) {  // one byte every 200 ms, until the client gives up
      for (size_t i = 0; i < body.size() && !m_stop; ++i) {
        if (::send(c, body.data() + i, 1, MSG_NOSIGNAL) <= 0) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
      return;
    }
    send_all(c, body);
  }

  void serve() {
    while (!m_stop) {
      pollfd p{m_fd, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int c = ::accept(m_fd, nullptr, nullptr);
      if (c < 0) continue;
      std::string request;
      char buf[4096];
      while (request.find("\r\n\r\n") == std::string::npos && request.size() < 65536) {
        pollfd q{c, POLLIN, 0};
        if (::poll(&q, 1, 2000) <= 0) break;
        const ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        request.append(buf, static_cast<size_t>(n));
      }
      if (request.rfind("GET ", 0) == 0) answer(c, request);
      ::close(c);
    }
  }

  int m_fd = -1;
  int m_port = 0;
  std::map<std::string, Route> m_routes;
  std::atomic<bool> m_stop{false};
  std::atomic<int> m_requests{0};
  mutable std::mutex m_seen_mutex;
  std::vector<std::string> m_seen;
  std::thread m_thread;
};

}  // namespace memplan::test
