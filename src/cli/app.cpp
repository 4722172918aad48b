#include "cli/cli.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>

#include <memplan/error.hpp>

#include "cli/command.hpp"
#include "cli/help_layout.hpp"
#include "cli/options.hpp"
#include "cli/plan_options.hpp"
#include "core/base/did_you_mean.hpp"
#include "core/base/terminal_text.hpp"

namespace memplan::cli {
namespace {

constexpr const char* k_version = "memplan 0.1.0";

// Messages become one line safe for a terminal: "memplan: error: <message>" (a raw 0xFF or an
// escape sequence the user typed is echoed as \xFF, \x1B).
std::string one_line(const std::string& message) {
  std::string s = terminal_text(message);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// The long flags ("--format") command `spec` takes: its --help's list, every plan flag of its
// scope registered (the command line registers only those it names: see PlanArgs).
std::vector<std::string> every_flag(const CommandSpec& spec) {
  const PlanArgs all(nullptr);
  CLI::App app;
  CLI::App* sub = app.add_subcommand(spec.name);
  Runner runner;
  spec.add(*sub, runner);
  std::vector<std::string> flags = long_flags(*sub);
  if (std::find(flags.begin(), flags.end(), "--help") == flags.end()) flags.emplace_back("--help");
  return flags;
}

// The long names of the options `sub` takes (the whole list of its command).
std::vector<std::string> option_names(const CLI::App& sub) {
  for (const CommandSpec& spec : commands())
    if (sub.get_name() == spec.name) return every_flag(spec);
  std::vector<std::string> names = {"--help"};
  for (const std::string& n : long_flags(sub)) names.push_back(n);
  return names;
}

// The flags the arguments name ("--zero", "--seq" of "--seq=2048") until "--".
std::vector<std::string> named_flags(const std::vector<std::string>& args) {
  std::vector<std::string> flags;
  for (const std::string& a : args) {
    if (a == "--") break;
    if (a.size() >= 3 && a.compare(0, 2, "--") == 0) flags.push_back(a.substr(0, a.find('=')));
  }
  return flags;
}

// The engine's own flag a command takes where it refuses a planning flag: vLLM's max_model_len is
// the context --seq gives a PyTorch step, max_num_seqs its concurrent sequences; llama.cpp's -c and
// --cache-type-k/-v (cmd_serve.cpp, cmd_gguf_fit.cpp).
struct Instead {
  const char* command;
  const char* flag;
  const char* instead;
};
constexpr Instead k_instead[] = {
    {"serve", "--seq", "--max-model-len"},
    {"serve", "--batch", "--max-num-seqs"},
    {"gguf-fit", "--seq", "--ctx-size"},
    {"gguf-fit", "--kv-format", "--cache-type-k and --cache-type-v"},
};

// "--zero: an option of estimate, fit, ..., not of serve" for the first flag the arguments name
// that `sub` does not take and other commands do (a training flag given to serve); else "".
std::string other_commands_hint(const CLI::App& sub, const std::vector<std::string>& args) {
  const std::vector<std::string> own = option_names(sub);
  for (const std::string& flag : named_flags(args)) {
    if (std::find(own.begin(), own.end(), flag) != own.end()) continue;
    std::vector<std::string> takers;
    for (const CommandSpec& spec : commands()) {
      if (sub.get_name() == spec.name) continue;
      const std::vector<std::string> flags = every_flag(spec);
      if (std::find(flags.begin(), flags.end(), flag) != flags.end()) takers.emplace_back(spec.name);
    }
    if (takers.empty()) continue;
    std::string list;
    for (size_t i = 0; i < takers.size(); ++i)
      list += (i ? (i + 1 == takers.size() ? " and " : ", ") : "") + takers[i];
    std::string hint = flag + ": an option of " + list + ", not of " + sub.get_name();
    for (const Instead& i : k_instead)
      if (sub.get_name() == i.command && flag == i.flag) hint += std::string("; it takes ") + i.instead;
    return hint;
  }
  return "";
}

// "; did you mean \"--params\"?" for the first argument that looks like an option `sub` does not
// have (`--parms`, `--parms=7e9`) and is close to one it has; else "".
std::string suggest_option(const CLI::App& sub, const std::vector<std::string>& args) {
  const std::vector<std::string> names = option_names(sub);
  for (const std::string& name : named_flags(args)) {
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    const std::string hint = did_you_mean(name, names);
    if (!hint.empty()) return hint;
  }
  return "";
}

std::vector<std::string> command_names() {
  std::vector<std::string> names;
  for (const CommandSpec& c : commands()) names.emplace_back(c.name);
  return names;
}

}  // namespace

void add_output_options(CLI::App& sub, RawOutputOptions& raw) {
  sub.add_option("--format", raw.format, "Output format: table, json, markdown or csv");
  sub.add_option("--units", raw.units, "Size units: gib (binary, default) or gb (decimal)");
  sub.add_flag("--explain", raw.explain, "Show the arithmetic behind every number");
  sub.add_flag("-q,--quiet", raw.quiet, "Print only the essential result");
}

OutputOptions resolve_output_options(const RawOutputOptions& raw, const Io& io) {
  OutputOptions o;
  if (raw.format == "table")
    o.format = Format::table;
  else if (raw.format == "json")
    o.format = Format::json;
  else if (raw.format == "markdown" || raw.format == "md")
    o.format = Format::markdown;
  else if (raw.format == "csv")
    o.format = Format::csv;
  else
    throw Error("--format", "\"" + raw.format + "\" is not a format (expected table, json, markdown or csv" +
                                did_you_mean(raw.format, {"table", "json", "markdown", "csv"}) + ")");
  o.units = parse_units("--units", raw.units);
  o.explain = raw.explain;
  o.quiet = raw.quiet;
  const char* no_color = std::getenv("NO_COLOR");
  o.color = io.tty && !(no_color && *no_color);
  return o;
}

namespace {

// Parses and runs one command; writes its result to `out` and errors to `err`.
int run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool out_is_tty) {
  CLI::App app{"memplan: will this fit? Memory and precision planning for training and inference."};
  app.name("memplan");
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", k_version);
  app.failure_message([](const CLI::App*, const CLI::Error& e) { return std::string(e.what()); });

  // ladder and sweep: what follows the first "--" is the user's command, not for CLI11 (which
  // would mix it with the command's own options and the estimate flags before it).
  std::vector<std::string> own_args = args;
  std::optional<std::vector<std::string>> user_command;
  if (!args.empty() && runs_user_command(args[0])) {
    const auto dashes = std::find(args.begin() + 1, args.end(), std::string("--"));
    if (dashes != args.end()) {
      user_command.emplace(dashes + 1, args.end());
      own_args.assign(args.begin(), dashes);
    }
  } else if (!args.empty()) {
    // Elsewhere "--" only marks the end of options, and no other command has a value that starts
    // with "--": dropped, so `cast -- -1 -2` reads as `cast -1 -2` (CLI11 2.1 refuses values after
    // "--" in a subcommand).
    const auto dashes = std::find(own_args.begin() + 1, own_args.end(), std::string("--"));
    if (dashes != own_args.end()) own_args.erase(dashes);
  }

  // Only the commands named on the command line are built (with their options): building every
  // command cost more than the estimate itself. Without a command name (`memplan --help`, a bare
  // `memplan`), every command is listed, with no options. A command whose name appears nowhere in
  // the arguments cannot be the one CLI11 picks.
  auto named = [&](const CommandSpec& spec) {
    return std::find(own_args.begin(), own_args.end(), spec.name) != own_args.end();
  };
  const bool any_named = std::any_of(commands().begin(), commands().end(), named);
  const PlanArgs plan_args(own_args);  // the plan flags not named are not registered either
  std::vector<Runner> runners(commands().size());
  std::vector<CLI::App*> subs(commands().size(), nullptr);  // by index in commands()
  for (size_t i = 0; i < commands().size(); ++i) {
    const CommandSpec& spec = commands()[i];
    if (any_named && !named(spec)) continue;
    subs[i] = app.add_subcommand(spec.name, spec.summary);
    if (!any_named) continue;
    spec.add(*subs[i], runners[i]);
    if (subs[i]->get_option_no_throw("--plan")) lay_out_help(*subs[i]);  // a planning command
  }

  // CLI11 wants argv order reversed in a vector.
  std::vector<std::string> reversed(own_args.rbegin(), own_args.rend());
  try {
    if (!args.empty() && (args[0].empty() || args[0][0] != '-')) {
      const auto names = command_names();
      bool known = false;
      for (const auto& n : names) known = known || n == args[0];
      if (!known) {
        std::string line = "\"" + args[0] + "\" is not a command (expected one of: ";
        for (size_t i = 0; i < names.size(); ++i) line += (i ? ", " : "") + names[i];
        err << "memplan: error: " << one_line(line + did_you_mean(args[0], names) + ")") << "\n";
        return k_bad_input;
      }
    }
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    const CLI::App* target = &app;
    for (CLI::App* s : subs)
      if (s && s->parsed()) target = s;
    out << target->help();
    return k_ok;
  } catch (const CLI::CallForVersion&) {
    out << k_version << "\n";
    return k_ok;
  } catch (const CLI::ExtrasError& e) {
    // The commands that take the flag, else the flag it is close to ("; did you mean" less "; ").
    std::string hint;
    for (CLI::App* s : subs)
      if (s && s->parsed()) {
        hint = other_commands_hint(*s, own_args);
        if (hint.empty()) hint = suggest_option(*s, own_args);
        if (hint.rfind("; ", 0) == 0) hint = hint.substr(2);
      }
    if (hint.empty()) {
      hint = suggest_option(app, own_args);
      if (!hint.empty()) hint = hint.substr(2);
    }
    err << "memplan: error: " << one_line(e.what() + (hint.empty() ? "" : " (" + hint + ")")) << "\n";
    return k_bad_input;
  } catch (const CLI::ParseError& e) {
    err << "memplan: error: " << one_line(e.what()) << "\n";
    return k_bad_input;
  } catch (const std::exception&) {
    // CLI11 reads a value given to a switch (--batchnorm=maybe) with std::stoll and lets its
    // std::invalid_argument through: name the argument instead.
    for (const std::string& arg : own_args) {
      const size_t eq = arg.find('=');
      if (arg.rfind("--", 0) != 0 || eq == std::string::npos) continue;
      const std::string value = arg.substr(eq + 1);
      if (value == "true" || value == "false") continue;
      err << "memplan: error: "
          << one_line(arg.substr(0, eq) + ": \"" + value +
                      "\" is not valid (a switch: expected it alone, or =true / =false)")
          << "\n";
      return k_bad_input;
    }
    err << "memplan: error: the command line could not be read\n";
    return k_bad_input;
  }

  for (size_t i = 0; i < subs.size(); ++i) {
    if (!subs[i] || !subs[i]->parsed()) continue;
    std::ostringstream buffer;
    Io io{buffer, err, out_is_tty, user_command};
    try {
      int code = runners[i](io);
      out << buffer.str();
      return code;
    } catch (const Error& e) {
      err << "memplan: error: " << one_line(error_text(e)) << "\n";
      return k_bad_input;
    } catch (const std::exception& e) {
      err << "memplan: error: " << one_line(e.what()) << "\n";
      return k_bad_input;
    }
  }
  out << app.help();
  return k_ok;
}

}  // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool out_is_tty) {
  const int code = run_command(args, out, err, out_is_tty);
  return check_written(code, out, err);
}

int check_written(int code, std::ostream& out, std::ostream& err) {
  errno = 0;
  if (!out.flush()) {
    const int why = errno;
    err << "memplan: error: cannot write the result to standard output"
        << (why != 0 ? std::string(": ") + std::strerror(why) : std::string()) << "\n";
    code = k_bad_input;
  }
  if (!err.flush()) code = k_bad_input;  // the notes or the error line were lost: not a success
  return code;
}

}  // namespace memplan::cli
