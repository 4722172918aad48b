#include "core/base/json_text.hpp"

#include <set>

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

// The DOM parser, plus a check that no key repeats in the top-level object. Linear: nlohmann's
// callback mode rescans the parent object each time a child object closes (quadratic in the
// number of tensors of a safetensors header).
class UniqueTopKeys : public nlohmann::detail::json_sax_dom_parser<nlohmann::json> {
 public:
  using Base = nlohmann::detail::json_sax_dom_parser<nlohmann::json>;
  // Repeated keys throw, or with `repeated` are collected there.
  UniqueTopKeys(nlohmann::json& result, const std::string& file, const char* what,
                std::vector<std::string>* repeated = nullptr)
      : Base(result, true), m_file(file), m_what(what), m_repeated(repeated) {}

  bool start_object(std::size_t n) {
    ++m_depth;
    return Base::start_object(n);
  }
  bool end_object() {
    --m_depth;
    return Base::end_object();
  }
  bool start_array(std::size_t n) {
    ++m_depth;
    return Base::start_array(n);
  }
  bool end_array() {
    --m_depth;
    return Base::end_array();
  }
  bool key(std::string& k) {
    if (m_depth == 1 && !m_seen.insert(k).second) {
      if (!m_repeated)
        throw Error(m_file, std::string(m_what) + " has the key \"" + printable(k) + "\" twice");
      m_repeated->push_back(k);
    }
    return Base::key(k);
  }

 private:
  const std::string& m_file;
  const char* m_what;
  std::vector<std::string>* m_repeated;
  int m_depth = 0;
  std::set<std::string> m_seen;
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

// parse_json_text; repeated top-level keys throw with `unique_top_keys`, or go to `repeated`.
nlohmann::json parse_json(std::string_view text, const std::string& file, const char* what,
                          bool unique_top_keys, std::vector<std::string>* repeated) {
  if (max_depth(text) > k_max_json_depth)
    throw Error(file,
                std::string(what) + " nests deeper than " + std::to_string(k_max_json_depth) + " levels");
  // nlohmann reads a NUL byte as the end of the input ("unexpected end of input"): say what it is.
  if (size_t nul = text.find('\0'); nul != std::string_view::npos)
    throw Error(
        file, std::string(what) + " has a NUL byte at " + line_and_column(text, nul) + " (not a text file?)");
  try {
    if (!unique_top_keys && !repeated) return nlohmann::json::parse(text.begin(), text.end());
    nlohmann::json result;
    UniqueTopKeys sax(result, file, what, repeated);
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

nlohmann::json parse_json_text(std::string_view text, const std::string& file, const char* what,
                               bool unique_top_keys) {
  return parse_json(text, file, what, unique_top_keys, nullptr);
}

nlohmann::json parse_json_text(std::string_view text, const std::string& file, const char* what,
                               std::vector<std::string>& repeated) {
  return parse_json(text, file, what, false, &repeated);
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
