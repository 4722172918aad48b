#pragma once
// The work of the fuzz targets that go through the command-line layer (the plan reader and the
// command line itself), shared with the unit test that replays their corpora. Anything escaping,
// and any broken promise of the error contract, is a bug: it aborts (a finding).

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <memplan/error.hpp>
#include <memplan/estimate.hpp>

#include "cli/cli.hpp"
#include "cli/plan_options.hpp"

namespace memplan::fuzz {

// A plan file's text, as --plan reads it: the keys and values through the option table's rules,
// the request resolved against the built-in presets, then estimated.
inline bool run_plan(std::string_view in) {
  try {
    cli::RawPlan raw;
    raw.given = cli::plan_file_values(in, "fuzz/plan.json");
    // Keys that read other files or probe a GPU are kept out: the fuzzer would read the disk.
    for (const char* key : {"config", "safetensors", "gguf", "presets"}) raw.given.erase(key);
    const auto gpu = raw.given.find("gpu");
    if (gpu != raw.given.end() &&
        (gpu->second.find("local") != std::string::npos || gpu->second.find("cuda") != std::string::npos))
      raw.given.erase(gpu);
    const cli::Plan plan = cli::resolve_plan(raw);
    estimate(plan.request);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// The arguments a fuzz input stands for: split at NUL bytes ("estimate\0--params\07e9").
inline std::vector<std::string> arguments_of(std::string_view in) {
  std::vector<std::string> args;
  size_t start = 0;
  for (size_t i = 0; i <= in.size(); ++i)
    if (i == in.size() || in[i] == '\0') {
      args.emplace_back(in.substr(start, i - start));
      start = i + 1;
    }
  if (args.size() > 64) args.resize(64);
  return args;
}

// True for arguments the fuzzer must not run: commands that start processes (ladder, sweep
// run the user's command; probe and --gpu local load NVML) or read files a fuzzer could name.
inline bool unsafe_arguments(const std::vector<std::string>& args) {
  for (const std::string& a : args)
    for (const char* word : {"ladder", "sweep", "probe", "local", "cuda", "--config", "--safetensors",
                             "--gguf", "--plan", "--presets", "--values", "inspect"})
      if (a.find(word) != std::string::npos) return true;
  return false;
}

// One command line run in-process through cli::run, its output to strings. The contract checked:
// exit 2 means one line on stderr starting "memplan: error: " and nothing on stdout; any exit
// code is one of memplan's; nothing escapes.
inline bool run_command_line(std::string_view in) {
  const std::vector<std::string> args = arguments_of(in);
  if (unsafe_arguments(args)) return false;
  std::ostringstream out, err;
  const int code = cli::run(args, out, err, false);
  const std::string e = err.str();
  if (code == 2) {
    size_t lines = 0;
    for (char c : e) lines += c == '\n';
    if (lines != 1 || e.rfind("memplan: error: ", 0) != 0 || !out.str().empty()) std::abort();
    for (char c : e)  // the line is safe for a terminal: no control byte but its newline
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f) std::abort();
  } else if (code != 0 && code != 1) {
    std::abort();
  }
  return code == 0;
}

}  // namespace memplan::fuzz
