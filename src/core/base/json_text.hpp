#pragma once
// Internal: parsing JSON that came from a file, with a nesting limit (a fuzzer's "[[[[..." must
// not exhaust the stack) and errors that name the file.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace memplan::detail {

// Deepest nesting accepted; real config and safetensors headers are 2-4 deep.
constexpr int k_max_json_depth = 64;

// Parses `text` as JSON, or Error("<file>", "<what> is not valid JSON (...)"). With
// `unique_top_keys`, a key repeated in the top-level object is an error too (nlohmann would keep
// the last one silently; safetensors forbids duplicate tensor names).
nlohmann::json parse_json_text(std::string_view text, const std::string& file, const char* what,
                               bool unique_top_keys = false);

// A short rendering of a JSON value for messages: 7, "x", [1,2], {...}.
std::string json_brief(const nlohmann::json& v);

}  // namespace memplan::detail
