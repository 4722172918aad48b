#pragma once
// What ladder and sweep share: the options for running the user's command, the estimate flags
// before "--" (plan args), and printing trials as they run (on stderr, so stdout stays the result).

#include <chrono>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/trials/trial.hpp"

#include "cli/command.hpp"
#include "cli/prediction.hpp"

namespace memplan::cli {

// Exit code when the user stopped the run with Ctrl-C (128 + SIGINT, the shell's habit).
constexpr int k_interrupted = 130;

// How memplan was stopped while it ran the user's command: "Ctrl-C" (SIGINT, and a fake runner's
// interrupt) or "SIGTERM".
std::string interrupt_name();

// The exit code after an interrupt: 128 + the signal, as a shell reports it (130 Ctrl-C, 143 SIGTERM).
int interrupted_exit_code();

struct RawRunOptions {
  std::vector<std::string> oom_patterns;
  std::string timeout;  // seconds; empty: none
  bool timeout_is_ok = false;
  std::string grace = "3";  // seconds between SIGTERM/SIGINT and SIGKILL
};

// Adds --oom-pattern, --timeout, --timeout-is-ok, --grace, and lets unknown options through as
// plan args (the estimate flags).
void add_run_options(CLI::App& sub, RawRunOptions& raw);

// The trial settings: the command after "--" (an Error naming `example` when there is none).
TrialSettings resolve_run_options(const RawRunOptions& raw, const Io& io, const std::string& example);

// The estimate flags given before "--" (CLI11's leftovers); an Error for a stray word, which
// usually means a missing "--".
std::vector<std::string> plan_args(const CLI::App& sub);

// The prediction for `args`, or nullopt when there are none; an Error naming `subject` when the
// estimator cannot answer.
std::optional<Prediction> prediction_for(const std::vector<std::string>& args, const std::string& subject);

// Seconds as "30", "1.5", "30s", "2m", "1h"; more than zero.
std::chrono::milliseconds parse_seconds(std::string_view subject, std::string_view text);

// argv as one line a user could paste into a shell: {"echo", "a b"} -> "echo 'a b'".
std::string shell_join(const std::vector<std::string>& argv);

// "exit 1", "killed by signal 9", "stopped at the timeout".
std::string describe_end(const Trial& trial);

// Prints on `err` while trials run (unless quiet): "memplan: batch 64: running ...", each output
// line as "[batch 64] line", and one line per finished trial; first a note when the command has
// no {batch} (it then gets the batch only as $MEMPLAN_BATCH).
class PrintingObserver : public TrialObserver {
 public:
  PrintingObserver(std::ostream& err, bool quiet, bool note_no_batch)
      : m_err(err), m_quiet(quiet), m_note(note_no_batch) {}
  void started(uint64_t batch, const std::vector<std::string>& argv) override;
  void line(uint64_t batch, Stream stream, std::string_view text) override;
  void finished(const Trial& trial) override;

 private:
  std::ostream& m_err;
  bool m_quiet;
  bool m_note;
};

// The failure that stopped a ladder or sweep (exit 4): what happened and the stderr tail, on `err`.
void report_failure(std::ostream& err, const Trial& trial, const TrialSettings& settings);

}  // namespace memplan::cli
