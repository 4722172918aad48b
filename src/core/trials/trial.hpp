#pragma once
// One run of the user's command at one batch size, and what it came to: it ran, it ran out of
// memory, it failed some other way, it hit the timeout, or the user stopped it. Ladder and sweep
// are built from trials.

#include <chrono>
#include <cstdint>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "exec/process.hpp"

namespace memplan {

enum class TrialOutcome { ok, oom, failed, timed_out, interrupted };

// "ok", "oom", "failed", "timeout", "interrupted" (the JSON and table spelling).
const char* outcome_name(TrialOutcome outcome);

// Recognises an out-of-memory failure by a line of the command's output.
class OomMatcher {
 public:
  // The built-in patterns plus `extra`, ECMAScript regular expressions searched anywhere in a line
  // ("MemoryError", "RESOURCE_EXHAUSTED"); throws Error(Field::oom_pattern, ...) for a bad one.
  explicit OomMatcher(const std::vector<std::string>& extra = {});

  // True when `line` says the GPU ran out of memory.
  bool matches(std::string_view line) const;

  // "CUDA out of memory", "OutOfMemoryError", "CUBLAS_STATUS_ALLOC_FAILED" (plain text).
  static const std::vector<std::string>& builtin();

 private:
  std::vector<std::regex> m_extra;
};

// How every trial of one ladder or sweep is run.
struct TrialSettings {
  std::vector<std::string> command;            // argv; "{batch}" is replaced by the batch size
  std::chrono::milliseconds timeout{0};        // per trial; 0: none
  std::chrono::milliseconds kill_grace{3000};  // SIGTERM/SIGINT -> SIGKILL
  bool timeout_is_ok = false;  // a trial still running at the timeout without an OOM has "survived"
  OomMatcher oom;
};

struct Trial {
  uint64_t batch = 0;
  TrialOutcome outcome = TrialOutcome::ok;
  int exit_code = 0;  // 128 + signal when a signal ended it
  int signal = 0;
  double seconds = 0;
  bool timed_out = false;
  std::string oom_line;                  // the line that showed the OOM, when outcome is oom
  std::vector<std::string> stderr_tail;  // the last lines of its stderr

  bool oom() const { return outcome == TrialOutcome::oom; }
};

// Watches trials as they happen; the CLI prints from here, the core never prints.
class TrialObserver {
 public:
  virtual ~TrialObserver() = default;
  // Before the command starts, with the argv it will run.
  virtual void started(uint64_t batch, const std::vector<std::string>& argv) { (void)batch, (void)argv; }
  // Every line the command prints, as it prints it.
  virtual void line(uint64_t batch, Stream stream, std::string_view text) {
    (void)batch, (void)stream, (void)text;
  }
  // After it ended.
  virtual void finished(const Trial& trial) { (void)trial; }
};

// Runs settings.command at `batch` (also in the environment as MEMPLAN_BATCH) and classifies it:
// exit 0 is ok; a non-zero exit (or a timeout) with an OOM line on stderr or stdout is oom; any
// other non-zero exit is failed. `also` (may be empty) sees every line too.
Trial run_trial(ProcessRunner& runner, const TrialSettings& settings, uint64_t batch, TrialObserver* observer,
                const LineSink& also = {});

}  // namespace memplan
