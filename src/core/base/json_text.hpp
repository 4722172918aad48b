#pragma once
// Internal: parsing JSON that came from a file, with a nesting limit (a fuzzer's "[[[[..." must
// not exhaust the stack) and errors that name the file.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace memplan::detail {

// Deepest nesting accepted; real config and safetensors headers are 2-4 deep.
constexpr int k_max_json_depth = 64;

// Parses `text` as JSON, or Error("<file>", "<what> is not valid JSON (parse error at line L,
// column C: ...)"); deeper than k_max_json_depth, holding a NUL byte, or an object with a key twice
// (at any depth: nlohmann would keep the last one silently) is an Error too. Linear in the text.
nlohmann::json parse_json_text(std::string_view text, const std::string& file, const char* what);

// Reads a JSON file through the one file reader (regular file, at most `limit` bytes; see
// file_reader.hpp for `subject`) and parses it with the rules of parse_json_text.
nlohmann::json read_json_file(const std::string& path, uint64_t limit, const char* what,
                              const std::string& subject = "");

// `text` safe to print on one line of a terminal: bytes outside printable ASCII as \xHH, cut
// after `max_chars` with "...".
std::string printable(std::string_view text, size_t max_chars = 200);

// A short rendering of a JSON value for messages: 7, "x", [1,2], {...}.
std::string json_brief(const nlohmann::json& v);

}  // namespace memplan::detail
