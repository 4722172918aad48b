#pragma once
// Cuts a byte stream into lines for a LineSink: "\n", "\r" and "\r\n" each end one line (progress
// bars redraw with "\r"); a line longer than k_max_line is passed on in pieces.

#include <string>
#include <string_view>

#include "exec/process.hpp"

namespace memplan {

class LineSplitter {
 public:
  static constexpr size_t k_max_line = 64 * 1024;

  explicit LineSplitter(Stream stream) : m_stream(stream) {}

  // Passes every complete line in `data` to `deliver(stream, line)`; keeps the unfinished rest.
  template <class Deliver>
  void feed(std::string_view data, Deliver&& deliver) {
    for (char c : data) {
      if (c == '\n' && m_after_cr) {  // the "\n" of "\r\n": the line already ended
        m_after_cr = false;
        continue;
      }
      m_after_cr = c == '\r';
      if (c == '\n' || c == '\r') {
        deliver(m_stream, std::string_view(m_line));
        m_line.clear();
        continue;
      }
      m_line.push_back(c);
      if (m_line.size() >= k_max_line) {
        deliver(m_stream, std::string_view(m_line));
        m_line.clear();
      }
    }
  }

  // At end of stream: passes on a last line that had no line break.
  template <class Deliver>
  void finish(Deliver&& deliver) {
    if (!m_line.empty()) deliver(m_stream, std::string_view(m_line));
    m_line.clear();
    m_after_cr = false;
  }

 private:
  Stream m_stream;
  std::string m_line;
  bool m_after_cr = false;
};

}  // namespace memplan
