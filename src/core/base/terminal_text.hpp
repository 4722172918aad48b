#pragma once
// Text safe for one line of a terminal: what an error line echoes of the user's input.

#include <string>
#include <string_view>

namespace memplan {

// `text` on one line: newlines and carriage returns as spaces, other control codes (ESC, NUL,
// DEL, C1) and bytes that are not valid UTF-8 (a raw 0xFF) as \xHH; valid UTF-8 ("é") is kept.
// Example: "a\xFFb\x1B[31m" -> "a\\xFFb\\x1B[31m".
std::string terminal_text(std::string_view text);

// A field read from the user's input (a buffer name, a breakdown key, a GPU id) as every report
// prints it (issue 32): terminal_text of it, and when it is longer than `max_bytes`, its first
// `max_bytes` bytes then "... (N bytes)". Example: terminal_field(200 x "a", 8) ->
// "aaaaaaaa... (200 bytes)".
std::string terminal_field(std::string_view text, size_t max_bytes = 120);

}  // namespace memplan
