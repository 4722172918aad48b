#pragma once
// Running the user's own command (ladder, sweep): the outside world behind a small interface,
// with a real implementation (fork/exec, pipes read with poll, timeouts, Ctrl-C) and fakes in tests.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memplan {

// Which of the child's streams a line came from.
enum class Stream { out, err };

// Receives the child's output one line at a time (without the line break; "\r" also ends a line,
// so progress bars arrive as lines). Called on the thread that called run().
using LineSink = std::function<void(Stream stream, std::string_view line)>;

// One run of one command: argv as given (no shell), never through a shell.
struct ProcessRequest {
  std::vector<std::string> argv;                               // argv[0] is looked up in PATH
  std::vector<std::pair<std::string, std::string>> extra_env;  // added to memplan's environment
  std::chrono::milliseconds timeout{0};                        // 0: no limit
  std::chrono::milliseconds kill_grace{3000};  // after SIGTERM (timeout) or SIGINT (Ctrl-C), then SIGKILL
  size_t tail_lines = 20;                      // how many of the last stderr lines to keep
};

// What happened to it.
struct ProcessResult {
  int exit_code = 0;         // the exit status, or 128 + signal when a signal ended it (shell habit)
  int signal = 0;            // the signal that ended it, 0 when it exited
  bool timed_out = false;    // stopped by memplan because ProcessRequest::timeout passed
  bool interrupted = false;  // stopped (or never started) because the user pressed Ctrl-C
  double seconds = 0;        // wall time from start to exit
  std::vector<std::string> stderr_tail;  // the last ProcessRequest::tail_lines lines of stderr
};

// Runs commands. The real one forks; tests substitute a fake.
class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // Runs `request` to completion, streaming its output to `sink` (may be empty). Throws
  // memplan::Error when the command cannot be started at all (not found, not executable).
  virtual ProcessResult run(const ProcessRequest& request, const LineSink& sink) = 0;
};

// The real runner: fork + execvp in a process group of its own, stdin from /dev/null, stdout and
// stderr through pipes read with poll. On timeout the group gets SIGTERM, then SIGKILL after
// kill_grace; on Ctrl-C (see InterruptScope) SIGINT, then SIGKILL. When the command exits, anything
// it left running in its group is killed, so the next try starts with the GPU free.
std::unique_ptr<ProcessRunner> make_system_runner();

// While alive, SIGINT and SIGTERM to memplan do not kill it: they mark an interrupt that the system
// runner turns into stopping the child; a second Ctrl-C kills the child at once. Runs started
// after an interrupt do not start (interrupted = true). Restores the previous handlers on exit.
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
};

// Throws the Error the runner would give when `program` (argv[0]) cannot be run: not found in
// PATH, or not an executable file. Lets a ladder fail as bad input before anything runs.
void check_runnable(const std::string& program);

// "{batch}" replaced by `batch` in every argument: {"train.py", "--bs={batch}"} -> "--bs=64".
std::vector<std::string> substitute_batch(const std::vector<std::string>& argv, uint64_t batch);

// True when some argument contains "{batch}".
bool mentions_batch(const std::vector<std::string>& argv);

}  // namespace memplan
