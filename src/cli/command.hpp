#pragma once
// How a subcommand plugs into the CLI: it adds its options to a CLI11 subcommand and sets the
// function that runs it. The table of commands is in commands.cpp.

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include <memplan/quantity.hpp>

namespace memplan::cli {

// Exit codes.
enum ExitCode : int { k_ok = 0, k_no_fit = 1, k_bad_input = 2, k_no_device = 3, k_command_failed = 4 };

enum class Format { table, json, markdown, csv };

// How to show a result, apart from what to compute (bloaty's OutputOptions).
struct OutputOptions {
  Format format = Format::table;
  Units units = Units::gib;
  bool explain = false;
  bool quiet = false;
  bool color = false;  // a terminal and NO_COLOR unset
};

// Where a command writes: `out` is a buffer that reaches stdout only on success.
struct Io {
  std::ostream& out;
  std::ostream& err;
  bool tty = false;
  // For commands that run the user's command (runs_user_command): the argv after the first "--",
  // kept away from CLI11; nullopt when there was no "--".
  std::optional<std::vector<std::string>> user_command = std::nullopt;
};

using Runner = std::function<int(Io&)>;

struct CommandSpec {
  const char* name;
  const char* summary;
  // Adds the command's options to `sub` and sets `run`.
  void (*add)(CLI::App& sub, Runner& run);
};

// Adds --format/--units/--explain/--quiet to `sub`; values are checked and stored in `opts`
// before the command runs (see resolve_output_options).
struct RawOutputOptions {
  std::string format = "table";
  std::string units = "gib";
  bool explain = false;
  bool quiet = false;
};
void add_output_options(CLI::App& sub, RawOutputOptions& raw);
OutputOptions resolve_output_options(const RawOutputOptions& raw, const Io& io);

// The table of subcommands (commands.cpp).
const std::vector<CommandSpec>& commands();

// True for the commands (ladder, sweep) whose arguments after the first "--" are a command to run.
bool runs_user_command(std::string_view name);

}  // namespace memplan::cli
