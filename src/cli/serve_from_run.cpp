// memplan serve --from / --from-command: the command line read (serve_from.cpp) runs as memplan's
// own command with the translated flags, the flags given beside --from after them (they replace
// the file's), and the output gets the "from" section: what each engine flag set.
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include <memplan/error.hpp>
#include "core/base/file_reader.hpp"
#include "core/base/json_text.hpp"
#include "core/base/terminal_text.hpp"

#include "cli/cli.hpp"
#include "cli/serve_args.hpp"
#include "cli/serve_from.hpp"
#include "cli/user_command.hpp"

namespace memplan::cli {

namespace {

struct GivenFlag {
  std::string flag;
  std::vector<std::string> values;  // empty for a switch
};

// The flags `sub` was given on the command line, as they were given, but --from/--from-command.
std::vector<GivenFlag> given_flags(const CLI::App& sub) {
  std::vector<GivenFlag> out;
  for (const CLI::Option* o : sub.get_options()) {
    if (o->count() == 0) continue;
    std::string flag;
    for (const std::string& n : o->get_lnames()) flag = "--" + n;
    if (flag.empty() || flag == "--from" || flag == "--from-command") continue;
    GivenFlag g{flag, {}};
    if (o->get_type_size_max() != 0)
      for (const std::string& v : o->results()) g.values.push_back(v);
    out.push_back(std::move(g));
  }
  return out;
}

// The flags that name the model: one given beside --from replaces the file's model.
bool is_model_source(const std::string& flag) {
  static const std::set<std::string> k_sources = {"--model",  "--config", "--safetensors", "--gguf",
                                                  "--params", "--layers", "--hidden",      "--plan"};
  return k_sources.count(flag) != 0;
}

}  // namespace

int run_serve_from(const CLI::App& sub, const ServeArgs& a, Io& io) {
  if (!a.from_file.empty() && !a.from_command.empty())
    throw Error("--from-command", "given with --from (expected one of them)");
  std::string text, label;
  if (!a.from_file.empty()) {
    text = read_small_file(a.from_file, command_limit::k_file, "--from");
    label = a.from_file;
  } else {
    if (a.from_command.size() > command_limit::k_file)
      throw Error("--from-command", "longer than 64 KiB (expected a command line)");
    text = a.from_command;
    label = "--from-command";
  }
  ServeFrom s = read_serve_command(text, label);
  const std::vector<GivenFlag> given = given_flags(sub);
  bool model_given = false;
  std::set<std::string> given_names;
  for (const GivenFlag& g : given) {
    given_names.insert(g.flag);
    model_given = model_given || is_model_source(g.flag);
  }
  std::vector<std::string> argv = {s.command};
  for (const MemplanFlag& m : s.flags) {
    const bool replaced = given_names.count(m.flag) || (model_given && is_model_source(m.flag));
    if (replaced) {
      for (const GivenFlag& g : given)
        if (g.flag == m.flag || (is_model_source(g.flag) && is_model_source(m.flag)))
          s.report.overridden.push_back(g.flag + (g.values.empty() ? "" : " " + g.values.back()) +
                                        " replaces " + m.flag + (m.value.empty() ? "" : " " + m.value));
      continue;
    }
    argv.push_back(m.flag);
    if (!m.value.empty()) argv.push_back(m.value);
  }
  const std::vector<std::string> translated = argv;
  // llama.cpp splits the layers over every visible GPU: one --gpu type given is one per device.
  const size_t devices = s.split_gpus > 1 ? s.split_gpus : s.visible_gpus;
  for (const GivenFlag& g : given) {
    for (const std::string& v : g.values.empty() ? std::vector<std::string>{""} : g.values) {
      argv.push_back(g.flag);
      if (g.values.empty()) continue;
      std::string value = v;
      if (g.flag == "--gpu" && s.engine == ServeEngine::llama_server && devices > 1 &&
          v.find(',') == std::string::npos) {
        for (size_t k = 1; k < devices; ++k) value += "," + v;
        s.report.notes.push_back("--gpu " + v + " on " + std::to_string(devices) + " devices: --gpu " +
                                 value);
      }
      argv.push_back(value);
    }
  }
  std::ostringstream out, err;
  const int rc = run(argv, out, err, io.tty);
  if (rc == k_bad_input) {
    std::string line = err.str();
    const std::string prefix = "memplan: error: ";
    if (line.rfind(prefix, 0) == 0) line = line.substr(prefix.size());
    while (!line.empty() && line.back() == '\n') line.pop_back();
    throw Error(label + " (run as memplan " + shell_join(translated) + ")", line);
  }
  io.err << err.str();
  const OutputOptions o = resolve_output_options(a.output, io);
  if (o.quiet || o.format == Format::csv) {
    io.out << out.str();
  } else if (o.format == Format::json) {
    nlohmann::json doc = nlohmann::json::parse(out.str());
    doc["from"] = from_json(s.report);
    nlohmann::json runs_as = nlohmann::json::array();
    for (const std::string& w : argv) runs_as.push_back(memplan::detail::printable(w, 1000));
    doc["from"]["runs_as"] = runs_as;
    io.out << doc.dump(2) << "\n";
  } else {
    std::string head = from_text(s.report);
    head.insert(head.size() - 1, "  runs as: memplan " + terminal_field(shell_join(argv), 4000) + "\n");
    io.out << head << out.str();
  }
  return rc;
}

}  // namespace memplan::cli
