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
#include "cli/diff_input.hpp"
#include "cli/from_config.hpp"
#include "cli/options.hpp"
#include "cli/plan_options.hpp"
#include "cli/render_oom.hpp"
#include "cli/serve_from.hpp"
#include "core/diagnose/oom_message.hpp"
#include "core/diagnose/plan_diff.hpp"

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

// No control byte (ESC, NUL, DEL, a newline) in a printed field: input reaches the terminal escaped.
inline void check_printable(const std::string& s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) std::abort();
}

// A why-oom log: every message read, what its numbers mean, and each line why-oom prints of it
// (title, table rows, findings), which must hold no control byte of the input.
inline bool run_oom_log(std::string_view in) {
  try {
    size_t omitted = 0;
    const std::vector<OomMessage> msgs = parse_oom_messages(in, &omitted);
    if (msgs.size() > k_max_oom_messages) std::abort();
    for (const OomMessage& m : msgs) {
      read_pytorch_oom(m);
      check_printable(cli::oom_title(m));
      for (const cli::OomFact& f : cli::oom_facts(m, Units::gib)) {
        check_printable(f.label);
        check_printable(f.value);
        check_printable(f.meaning);
      }
      for (bool plan : {false, true})
        for (const std::string& f : cli::oom_findings(m, Units::gib, plan)) check_printable(f);
      cli::oom_finding_codes(m);
    }
    return !msgs.empty();
  } catch (const Error&) {
    return false;
  }
}

// A diff input (an estimate or fit --format json output; a plan file is recognised, not resolved:
// fuzz_plan drives those), then compared with itself: nothing changes, nothing became a no-fit.
inline bool run_diff_input(std::string_view in) {
  try {
    const cli::DiffInput d = cli::parse_diff_input(in, "fuzz/diff.json", "OLD", false);
    const PlanDiff diff = diff_plans(d.side, d.side);
    if (diff.any_became_no_fit() || diff.total.changed() || diff.required.changed()) std::abort();
    for (const BytesChange& t : diff.terms)
      if (t.changed()) std::abort();
    return d.kind != "plan";
  } catch (const Error&) {
    return false;
  }
}

// A --from training configuration (YAML or JSON: DeepSpeed, Axolotl, LLaMA-Factory, torchtune,
// accelerate, TrainingArguments): read into plan values, then its report as JSON (which must dump:
// valid UTF-8) and as text (no control byte but newlines). A DeepSpeed path it names is read only
// when it is a regular file (read_small_file), bounded.
inline bool run_from_config(std::string_view in) {
  try {
    const cli::FromReport r = cli::read_from_text(in, "fuzz/config");
    (void)cli::from_json(r).dump();
    for (char c : cli::from_text(r))
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f) std::abort();
    for (const auto& [key, value] : r.values)
      if (!cli::option_for_key(key)) std::abort();  // only plan options
    return true;
  } catch (const Error&) {
    return false;
  }
}

// A pasted serving command line (serve --from): the shell words, the engine, the memplan flags and
// the report. Each memplan flag starts "--"; the report dumps as JSON and prints without control bytes.
inline bool run_serve_command(std::string_view in) {
  try {
    const cli::ServeFrom s = cli::read_serve_command(in, "fuzz/cmd.sh");
    if (s.command != "serve" && s.command != "gguf-fit") std::abort();
    for (const cli::MemplanFlag& f : s.flags)
      if (f.flag.rfind("--", 0) != 0) std::abort();
    (void)cli::from_json(s.report).dump();
    for (char c : cli::from_text(s.report))
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f) std::abort();
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace memplan::fuzz
