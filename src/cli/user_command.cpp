#include "cli/user_command.hpp"

#include <cmath>
#include <csignal>
#include <cstring>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "exec/interrupt_state.hpp"

namespace memplan::cli {

void add_run_options(CLI::App& sub, RawRunOptions& raw) {
  sub.add_option("--oom-pattern", raw.oom_patterns,
                 "Also count output matching this regular expression as out of memory (repeatable)");
  sub.add_option("--timeout", raw.timeout, "Stop a try after this many seconds (30, 1.5, 2m)");
  sub.add_flag(
      "--timeout-is-ok", raw.timeout_is_ok,
      "A try still running at --timeout without an OOM counts as fitting (for commands that train on)");
  sub.add_option("--grace", raw.grace,
                 "Seconds between asking the command to stop and killing it (default 3)");
  sub.allow_extras();  // the estimate flags (--model gpt2 --seq 1024 --gpu local ...), see plan_args
}

std::chrono::milliseconds parse_seconds(std::string_view subject, std::string_view text) {
  double scale = 1;
  std::string_view number = text;
  if (!number.empty()) {
    const char last = number.back();
    if (last == 's' || last == 'm' || last == 'h') {
      scale = last == 's' ? 1 : last == 'm' ? 60 : 3600;
      number.remove_suffix(1);
    }
  }
  double seconds = 0;
  try {
    seconds = parse_real(subject, number) * scale;
  } catch (const Error&) {
    throw Error(std::string(subject),
                "\"" + std::string(text) + "\" is not a duration (expected seconds, e.g. 30, 1.5, 2m)");
  }
  if (!(seconds > 0) || seconds > 1e7)
    throw Error(std::string(subject),
                "\"" + std::string(text) + "\" must be more than 0 seconds and at most 1e7");
  return std::chrono::milliseconds(static_cast<int64_t>(std::ceil(seconds * 1000)));
}

TrialSettings resolve_run_options(const RawRunOptions& raw, const Io& io, const std::string& example) {
  if (!io.user_command || io.user_command->empty())
    throw Error("--", "expected the command to run after --, e.g. " + example);
  TrialSettings s{*io.user_command, std::chrono::milliseconds(0), std::chrono::milliseconds(3000),
                  raw.timeout_is_ok, OomMatcher(raw.oom_patterns)};
  if (!raw.timeout.empty()) s.timeout = parse_seconds("--timeout", raw.timeout);
  if (raw.timeout_is_ok && raw.timeout.empty()) throw Error("--timeout-is-ok", "needs --timeout");
  s.kill_grace = parse_seconds("--grace", raw.grace);
  return s;
}

std::vector<std::string> plan_args(const CLI::App& sub) {
  std::vector<std::string> args = sub.remaining();
  if (!args.empty() && (args[0].empty() || args[0][0] != '-'))
    throw Error("\"" + args[0] + "\"", "unexpected before -- (the command to run goes after --)");
  return args;
}

std::optional<Prediction> prediction_for(const std::vector<std::string>& args, const std::string& subject) {
  if (args.empty()) return std::nullopt;
  std::string why;
  std::optional<Prediction> p = predict(args, why);
  if (!p) throw Error(subject, why.empty() ? "the estimator could not answer" : why);
  return p;
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789-_=./:,+@%{}") == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

std::string interrupt_name() { return interrupt_signal() == SIGTERM ? "SIGTERM" : "Ctrl-C"; }

int interrupted_exit_code() { return interrupt_signal() == SIGTERM ? 128 + SIGTERM : k_interrupted; }

std::string describe_end(const Trial& t) {
  if (t.outcome == TrialOutcome::interrupted) return "stopped by " + interrupt_name();
  if (t.timed_out) return "stopped at the timeout";
  if (t.signal) {
#if defined(__EMSCRIPTEN__)
    const char* name = nullptr;  // no sigabbrev_np in emscripten's libc (and no processes to kill)
#else
    const char* name = sigabbrev_np(t.signal);
#endif
    return "killed by signal " + std::to_string(t.signal) + (name ? std::string(" (SIG") + name + ")" : "");
  }
  return "exit " + std::to_string(t.exit_code);
}

void PrintingObserver::started(uint64_t batch, const std::vector<std::string>& argv) {
  if (m_note && !m_quiet)
    m_err << "memplan: note: the command has no {batch}; it gets the batch size only as $MEMPLAN_BATCH\n";
  m_note = false;
  if (!m_quiet) m_err << "memplan: batch " << batch << ": running " << shell_join(argv) << "\n" << std::flush;
}

void PrintingObserver::line(uint64_t batch, Stream stream, std::string_view text) {
  (void)stream;
  if (!m_quiet) m_err << "[batch " << batch << "] " << text << "\n" << std::flush;
}

void PrintingObserver::finished(const Trial& t) {
  if (m_quiet) return;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f s", t.seconds);
  const char* what = t.outcome == TrialOutcome::ok          ? "ran"
                     : t.outcome == TrialOutcome::oom       ? "out of memory"
                     : t.outcome == TrialOutcome::failed    ? "failed, not out of memory"
                     : t.outcome == TrialOutcome::timed_out ? "timed out"
                                                            : "interrupted";
  m_err << "memplan: batch " << t.batch << ": " << what << " (" << describe_end(t) << ", " << seconds << ")\n"
        << std::flush;
}

void report_failure(std::ostream& err, const Trial& t, const TrialSettings& settings) {
  err << "memplan: batch " << t.batch << ": ";
  if (t.outcome == TrialOutcome::timed_out) {
    err << "still running after the " << std::chrono::duration<double>(settings.timeout).count()
        << " s timeout, so it was stopped (with --timeout-is-ok a try that outlives the timeout counts as "
           "fitting)\n";
  } else {
    err << "the command failed (" << describe_end(t) << ") and it was not out of memory";
    if (t.signal == SIGKILL)
      err << " (SIGKILL can be the kernel's out-of-memory killer: host memory, not the GPU)";
    err << "\n";
  }
  if (!t.stderr_tail.empty()) {
    err << "memplan: the last lines of its stderr:\n";
    for (const std::string& l : t.stderr_tail) err << "  | " << l << "\n";
  }
}

}  // namespace memplan::cli
