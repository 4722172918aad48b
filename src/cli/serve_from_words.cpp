#include "cli/serve_from_words.hpp"

#include <cctype>

#include <memplan/error.hpp>
#include "core/base/terminal_text.hpp"

namespace memplan::cli {

namespace {

constexpr size_t k_expanded_bytes = 1u << 20;  // all words together, after $NAME expansions

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// NAME=value with a shell variable name before the '='.
bool split_assignment(const std::string& w, std::string& name, std::string& value) {
  const size_t eq = w.find('=');
  if (eq == 0 || eq == std::string::npos || !is_name_start(w[0])) return false;
  for (size_t i = 1; i < eq; ++i)
    if (!is_name_char(w[i])) return false;
  name = w.substr(0, eq);
  value = w.substr(eq + 1);
  return true;
}

class WordSplitter {
 public:
  WordSplitter(std::string_view text, const std::string& path) : t_(text), path_(path) {}

  std::vector<ShellCommand> run() {
    while (more()) step();
    end_command();
    return std::move(out_);
  }

 private:
  char peek(size_t k = 0) const { return i_ + k < t_.size() ? t_[i_ + k] : '\0'; }
  bool more() const { return i_ < t_.size(); }
  void advance() {
    if (t_[i_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++i_;
  }
  [[noreturn]] void fail(uint64_t line, uint64_t col, const std::string& message) const {
    throw Error(path_ + ":" + std::to_string(line) + ":" + std::to_string(col), message);
  }
  void start_word() {
    if (in_word_) return;
    in_word_ = true;
    word_ = CommandWord{"", line_, col_, ""};
  }
  void add(char c) {
    start_word();
    if (word_.text.size() >= command_limit::k_word_bytes)
      fail(word_.line, word_.column,
           "a word longer than " + std::to_string(command_limit::k_word_bytes) +
               " bytes (expected a command line)");
    if (++bytes_ > k_expanded_bytes)
      fail(line_, col_, "expands to more than 1 MiB (expected a command line)");
    word_.text += c;
  }
  void end_word();
  void end_command();
  void step();
  void single_quoted();
  void double_quoted();
  void expand(bool quoted);
  void redirection();

  std::string_view t_;
  const std::string& path_;
  size_t i_ = 0;
  uint64_t line_ = 1, col_ = 1;
  bool in_word_ = false, skip_next_ = false;
  CommandWord word_;
  size_t words_ = 0, bytes_ = 0;
  std::map<std::string, std::string> env_;  // exported or assigned alone on a line
  ShellCommand cur_;                        // env: its own prefix assignments
  std::vector<ShellCommand> out_;
};

void WordSplitter::end_word() {
  if (!in_word_) return;
  in_word_ = false;
  if (skip_next_) {  // a redirection's file
    skip_next_ = false;
    return;
  }
  if (++words_ > command_limit::k_words)
    fail(word_.line, word_.column,
         "more than " + std::to_string(command_limit::k_words) + " words (expected a command line)");
  std::string name, value;
  if (cur_.words.empty() && split_assignment(word_.text, name, value)) {
    cur_.env[name] = value;
    return;
  }
  cur_.words.push_back(std::move(word_));
}

void WordSplitter::end_command() {
  end_word();
  skip_next_ = false;
  ShellCommand c = std::move(cur_);
  cur_ = ShellCommand{};
  if (c.words.empty()) {  // NAME=value alone: a shell variable for the lines below
    for (auto& [k, v] : c.env) env_[k] = v;
    return;
  }
  if (c.words[0].text == "export") {
    std::string name, value;
    for (size_t k = 1; k < c.words.size(); ++k)
      if (split_assignment(c.words[k].text, name, value)) env_[name] = value;
    return;
  }
  std::map<std::string, std::string> env = env_;
  for (auto& [k, v] : c.env) env[k] = v;
  c.env = std::move(env);
  out_.push_back(std::move(c));
}

void WordSplitter::single_quoted() {
  start_word();
  const uint64_t l = line_, c = col_;
  advance();
  while (more() && peek() != '\'') {
    add(peek());
    advance();
  }
  if (!more()) fail(l, c, "a ' quote is not closed");
  advance();
}

void WordSplitter::double_quoted() {
  start_word();
  const uint64_t l = line_, c = col_;
  advance();
  while (more() && peek() != '"') {
    const char ch = peek();
    if (ch == '\\' &&
        (peek(1) == '$' || peek(1) == '`' || peek(1) == '"' || peek(1) == '\\' || peek(1) == '\n')) {
      advance();
      if (peek() != '\n') add(peek());
      advance();
    } else if (ch == '$') {
      expand(true);
    } else if (ch == '`') {
      fail(line_, col_, "command substitution `...` is not run (expected the values written out)");
    } else {
      add(ch);
      advance();
    }
  }
  if (!more()) fail(l, c, "a \" quote is not closed");
  advance();
}

void WordSplitter::expand(bool quoted) {
  const uint64_t l = line_, c = col_;
  advance();  // '$'
  std::string name, fallback;
  bool has_fallback = false;
  if (peek() == '(') fail(l, c, "command substitution $(...) is not run (expected the values written out)");
  if (peek() == '{') {
    advance();
    while (more() && is_name_char(peek()) && name.size() < 256) {
      name += peek();
      advance();
    }
    if (peek() == ':' && peek(1) == '-') advance();
    if (peek() == '-') {
      advance();
      has_fallback = true;
      while (more() && peek() != '}' && fallback.size() < command_limit::k_word_bytes) {
        fallback += peek();
        advance();
      }
    }
    if (peek() != '}' || name.empty() || !is_name_start(name[0]))
      fail(l, c, "a ${...} that is not ${NAME} or ${NAME:-default} (expected the values written out)");
    advance();
  } else if (is_name_start(peek())) {
    while (more() && is_name_char(peek()) && name.size() < 256) {
      name += peek();
      advance();
    }
  } else if (std::isdigit(static_cast<unsigned char>(peek())) || peek() == '@' || peek() == '*' ||
             peek() == '#') {
    fail(l, c, "$1, $@: a script's arguments are not known here (expected the values written out)");
  } else {
    add('$');
    return;
  }
  std::string value;
  bool found = true;
  if (auto it = cur_.env.find(name); it != cur_.env.end())
    value = it->second;
  else if (auto g = env_.find(name); g != env_.end())
    value = g->second;
  else if (has_fallback)
    value = fallback;
  else
    found = false;
  if (!found) {       // a secret ($HF_TOKEN) or a script's input: an error only where memplan reads the word
    if (!in_word_) {  // the word starts at the '$'
      in_word_ = true;
      word_ = CommandWord{"", l, c, ""};
    }
    add('$');
    for (const char ch : name) add(ch);
    if (word_.unset.empty()) word_.unset = name;
    return;
  }
  for (const char ch : value) {
    if (!quoted && (ch == ' ' || ch == '\t' || ch == '\n')) {
      end_word();
      continue;
    }
    add(ch);
  }
}

void WordSplitter::redirection() {
  // "2>": the descriptor's number is no word.
  bool digits = in_word_ && !word_.text.empty();
  for (const char ch : word_.text) digits = digits && std::isdigit(static_cast<unsigned char>(ch));
  if (digits)
    in_word_ = false;
  else
    end_word();
  advance();
  while (peek() == '>' || peek() == '<') advance();
  if (peek() == '&') {  // 2>&1: onto another descriptor, no file
    advance();
    while (std::isdigit(static_cast<unsigned char>(peek())) || peek() == '-') advance();
    return;
  }
  skip_next_ = true;
}

void WordSplitter::step() {
  const char c = peek();
  if (c == '\0') fail(line_, col_, "holds a NUL byte (expected a command line)");
  if (c == '\\') {
    advance();
    if (peek() == '\r' && peek(1) == '\n') advance();
    if (peek() == '\n' || !more()) {  // a line continuation
      if (more()) advance();
      return;
    }
    add(peek());
    advance();
    return;
  }
  if (c == '\'') return single_quoted();
  if (c == '"') return double_quoted();
  if (c == '$') return expand(false);
  if (c == '`') fail(line_, col_, "command substitution `...` is not run (expected the values written out)");
  if (c == '#' && !in_word_) {
    while (more() && peek() != '\n') advance();
    return;
  }
  if (c == '>' || c == '<') return redirection();
  if (c == '(' || c == ')')
    fail(line_, col_, "a subshell or function ( ) is not read (expected a command line)");
  if (c == ' ' || c == '\t' || c == '\r') {
    end_word();
  } else if (c == '\n' || c == ';' || c == '&' || c == '|') {
    end_command();  // &&, ||, a pipe, a background &: the next word starts another command
  } else {
    add(c);
  }
  advance();
}

}  // namespace

std::vector<ShellCommand> split_commands(std::string_view text, const std::string& path) {
  return WordSplitter(text, path).run();
}

std::string word_where(const std::string& path, const CommandWord& w) {
  return path + ":" + std::to_string(w.line) + ":" + std::to_string(w.column) + ": \"" +
         terminal_field(w.text) + "\"";
}

}  // namespace memplan::cli
