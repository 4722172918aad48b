#include "core/base/json_text.hpp"

#include <unordered_set>

#include <memplan/error.hpp>
#include "core/base/file_reader.hpp"

namespace memplan::detail {

namespace {

// Longest nesting of [ and { outside strings; stops counting at the limit.
int max_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char ch : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (ch == '\\')
        escaped = true;
      else if (ch == '"')
        in_string = false;
      continue;
    }
    if (ch == '"')
      in_string = true;
    else if (ch == '[' || ch == '{') {
      if (++depth > deepest) deepest = depth;
      if (deepest > k_max_json_depth) return deepest;
    } else if (ch == ']' || ch == '}')
      --depth;
  }
  return deepest;
}

// The DOM parser, plus a check that no key repeats in any object (issue 32: nlohmann keeps the last
// value of a repeated key silently). Linear: one hash set per open object, dropped when it closes;
// nlohmann's callback mode rescans the parent object each time a child closes (quadratic).
class UniqueKeys : public nlohmann::detail::json_sax_dom_parser<nlohmann::json> {
 public:
  using Base = nlohmann::detail::json_sax_dom_parser<nlohmann::json>;
  UniqueKeys(nlohmann::json& result, const std::string& file, const char* what)
      : Base(result, true), m_file(file), m_what(what) {}

  bool null() { return element() && Base::null(); }
  bool boolean(bool v) { return element() && Base::boolean(v); }
  bool number_integer(number_integer_t v) { return element() && Base::number_integer(v); }
  bool number_unsigned(number_unsigned_t v) { return element() && Base::number_unsigned(v); }
  bool number_float(number_float_t v, const string_t& s) { return element() && Base::number_float(v, s); }
  bool string(string_t& v) { return element() && Base::string(v); }
  bool binary(binary_t& v) { return element() && Base::binary(v); }
  bool start_object(std::size_t n) {
    element();
    m_frames.push_back({true, {}, {}, 0});
    return Base::start_object(n);
  }
  bool end_object() {
    m_frames.pop_back();
    return Base::end_object();
  }
  bool start_array(std::size_t n) {
    element();
    m_frames.push_back({false, {}, {}, 0});
    return Base::start_array(n);
  }
  bool end_array() {
    m_frames.pop_back();
    return Base::end_array();
  }
  bool key(string_t& k) {
    Frame& f = m_frames.back();
    if (!f.keys.insert(k).second) {
      const std::string at = path();
      throw Error(m_file, std::string(m_what) + " has the key \"" + printable(k, 100) + "\" twice" +
                              (at.empty() ? "" : " (in " + at + ")"));
    }
    f.key = k;
    return Base::key(k);
  }

 private:
  struct Frame {
    bool object;
    std::unordered_set<std::string> keys;
    std::string key;  // the object's current key
    size_t count;     // the array's elements so far
  };
  // A value starts: the enclosing array counts it.
  bool element() {
    if (!m_frames.empty() && !m_frames.back().object) ++m_frames.back().count;
    return true;
  }
  // Where the innermost object sits: a.b[2].c (bounded: each key at most 40 characters).
  std::string path() const {
    std::string p;
    for (size_t i = 0; i + 1 < m_frames.size(); ++i) {
      const Frame& f = m_frames[i];
      if (f.object)
        p += (p.empty() ? "" : ".") + printable(f.key, 40);
      else
        p += "[" + std::to_string(f.count - 1) + "]";
    }
    return p;
  }

  const std::string& m_file;
  const char* m_what;
  std::vector<Frame> m_frames;
};

// Line and column (from 1) of byte `at` in `text`.
std::string line_and_column(std::string_view text, size_t at) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

}  // namespace

std::string printable(std::string_view text, size_t max_chars) {
  static const char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char ch : text) {
    if (out.size() >= max_chars) {
      out += "...";
      break;
    }
    if (ch >= 0x20 && ch < 0x7f) {
      out += static_cast<char>(ch);
    } else {
      out += "\\x";
      out += hex[ch >> 4];
      out += hex[ch & 15];
    }
  }
  return out;
}

namespace {

nlohmann::json parse_json(std::string_view text, const std::string& file, const char* what) {
  if (max_depth(text) > k_max_json_depth)
    throw Error(file,
                std::string(what) + " nests deeper than " + std::to_string(k_max_json_depth) + " levels");
  // nlohmann reads a NUL byte as the end of the input ("unexpected end of input"): say what it is.
  if (size_t nul = text.find('\0'); nul != std::string_view::npos)
    throw Error(
        file, std::string(what) + " has a NUL byte at " + line_and_column(text, nul) + " (not a text file?)");
  try {
    nlohmann::json result;
    UniqueKeys sax(result, file, what);
    nlohmann::json::sax_parse(text.begin(), text.end(), &sax);
    return result;
  } catch (const nlohmann::json::exception& e) {
    std::string msg = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: ..." -> after "] ".
    size_t cut = msg.find("] ");
    if (cut != std::string::npos) msg = msg.substr(cut + 2);
    throw Error(file, std::string(what) + " is not valid JSON (" + printable(msg, 200) + ")");
  }
}

}  // namespace

nlohmann::json parse_json_text(std::string_view text, const std::string& file, const char* what) {
  return parse_json(text, file, what);
}

nlohmann::json read_json_file(const std::string& path, uint64_t limit, const char* what,
                              const std::string& subject) {
  return parse_json_text(read_small_file(path, limit, subject), path, what);
}

std::string json_brief(const nlohmann::json& v) {
  std::string s = v.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

}  // namespace memplan::detail
