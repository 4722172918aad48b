#pragma once
// A pasted shell command line (`vllm serve ...`, a launch script) split into commands and words
// as a POSIX shell would: quotes, backslash escapes and line continuations, comments, NAME=value
// assignments (exported or before a command), $NAME / ${NAME} / ${NAME:-default} from those
// assignments (one the file does not set stays as written, marked unset). Nothing is run: $(...) and
// backquotes are refused; redirections and what follows a pipe are dropped. Bounded: at most k_words words of
// at most k_word_bytes each.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace memplan::cli {

namespace command_limit {
inline constexpr uint64_t k_file = 64u << 10;  // a launch command is under a kilobyte; a script a few
inline constexpr size_t k_words = 4096;
inline constexpr size_t k_word_bytes = 4096;
}  // namespace command_limit

struct CommandWord {
  std::string text;
  uint64_t line = 0, column = 0;  // 1-based, of the word's first character
  std::string unset;              // the first $NAME in it that the file does not set ("" when none)
};

struct ShellCommand {
  std::map<std::string, std::string> env;  // the assignments in force: earlier exports and its own prefix
  std::vector<CommandWord> words;          // the command and its arguments, prefix assignments removed
};

// The commands of `text` in order. Errors are memplan::Error naming "path:line:column".
std::vector<ShellCommand> split_commands(std::string_view text, const std::string& path);

// "path:line:column: "word"" for errors about one word.
std::string word_where(const std::string& path, const CommandWord& w);

}  // namespace memplan::cli
