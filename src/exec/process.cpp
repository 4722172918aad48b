// The real ProcessRunner: fork + execvpe in a process group of its own, output through pipes read
// with poll, a timeout that escalates SIGTERM -> SIGKILL, and Ctrl-C forwarded to the child.
#include "exec/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>

#include <memplan/error.hpp>

#include "exec/interrupt_state.hpp"
#include "exec/line_splitter.hpp"

extern char** environ;

namespace memplan {
namespace {

using Clock = std::chrono::steady_clock;

// Closes a descriptor once.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) close(fd);
    fd = -1;
  }
};

struct Pipe {
  Fd read_end, write_end;
  Pipe() {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
      throw Error("memplan", std::string("cannot create a pipe: ") + std::strerror(errno));
    read_end.fd = p[0];
    write_end.fd = p[1];
  }
};

// The environment for the child: memplan's own, with `extra` replacing or adding entries.
std::vector<std::string> child_environment(const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    bool replaced = false;
    for (const auto& [name, value] : extra)
      replaced = replaced || (entry.size() > name.size() && entry.substr(0, name.size()) == name &&
                              entry[name.size()] == '=');
    if (!replaced) env.emplace_back(entry);
  }
  for (const auto& [name, value] : extra) env.push_back(name + "=" + value);
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int millis_until(Clock::time_point now, Clock::time_point then) {
  if (then <= now) return 0;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(then - now).count() + 1;
  return ms > 1000 ? 1000 : static_cast<int>(ms);
}

class SystemRunner final : public ProcessRunner {
 public:
  ProcessResult run(const ProcessRequest& request, const LineSink& sink) override;
};

ProcessResult SystemRunner::run(const ProcessRequest& request, const LineSink& sink) {
  ProcessResult result;
  if (request.argv.empty() || request.argv[0].empty())
    throw Error("command", "nothing to run (expected -- COMMAND ARGS...)");
  if (interrupt_count() > 0) {
    result.interrupted = true;
    return result;
  }

  std::vector<std::string> argv_strings = request.argv;
  std::vector<std::string> env_strings = child_environment(request.extra_env);
  std::vector<char*> argv = c_strings(argv_strings);
  std::vector<char*> envp = c_strings(env_strings);

  Pipe out, err, exec_status;
  Fd devnull(open("/dev/null", O_RDONLY | O_CLOEXEC));
  const Clock::time_point start = Clock::now();
  const pid_t pid = fork();
  if (pid < 0) throw Error(request.argv[0], std::string("cannot start: ") + std::strerror(errno));
  if (pid == 0) {
    // The child: its own process group, default signal handling, the pipes as stdout/stderr.
    setpgid(0, 0);
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGINT, &dfl, nullptr);
    sigaction(SIGTERM, &dfl, nullptr);
    sigaction(SIGPIPE, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (devnull.fd >= 0) dup2(devnull.fd, STDIN_FILENO);
    dup2(out.write_end.fd, STDOUT_FILENO);
    dup2(err.write_end.fd, STDERR_FILENO);
    execvpe(argv[0], argv.data(), envp.data());
    const int e = errno;
    const ssize_t w = write(exec_status.write_end.fd, &e, sizeof e);
    (void)w;
    _exit(127);
  }

  setpgid(pid, pid);  // also here, so killpg works even before the child ran setpgid
  out.write_end.reset();
  err.write_end.reset();
  exec_status.write_end.reset();
  devnull.reset();

  // exec_status closes on a successful exec (O_CLOEXEC) or carries errno.
  int exec_errno = 0;
  ssize_t got;
  do got = read(exec_status.read_end.fd, &exec_errno, sizeof exec_errno);
  while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    throw Error(request.argv[0], std::string("cannot run it: ") + std::strerror(exec_errno));
  }

  fcntl(out.read_end.fd, F_SETFL, O_NONBLOCK);
  fcntl(err.read_end.fd, F_SETFL, O_NONBLOCK);

  std::deque<std::string> tail;
  auto deliver = [&](Stream s, std::string_view line) {
    if (s == Stream::err && request.tail_lines > 0) {
      tail.emplace_back(line);
      if (tail.size() > request.tail_lines) tail.pop_front();
    }
    if (sink) sink(s, line);
  };
  LineSplitter splitters[2] = {LineSplitter(Stream::out), LineSplitter(Stream::err)};
  int fds[2] = {out.read_end.fd, err.read_end.fd};
  bool open_stream[2] = {true, true};

  // A flag and a time point, not std::optional: g++ 12 -O2 warns maybe-uninitialized on *deadline.
  const bool has_deadline = request.timeout.count() > 0;
  const Clock::time_point deadline = start + request.timeout;
  std::optional<Clock::time_point> kill_at;
  bool exited = false;
  Clock::time_point exit_time = start;
  Clock::time_point drain_until = start;
  int seen_interrupts = 0;
  char buffer[65536];

  while (true) {
    pollfd pfds[3];
    nfds_t n = 0;
    int stream_of[3] = {-1, -1, -1};
    for (int s = 0; s < 2; ++s)
      if (open_stream[s]) {
        stream_of[n] = s;
        pfds[n++] = pollfd{fds[s], POLLIN, 0};
      }
    if (interrupt_wake_fd() >= 0) pfds[n++] = pollfd{interrupt_wake_fd(), POLLIN, 0};

    Clock::time_point now = Clock::now();
    int wait_ms = (open_stream[0] || open_stream[1]) ? 50 : 5;
    if (exited) wait_ms = std::min(wait_ms, millis_until(now, drain_until));
    if (!exited && has_deadline && !kill_at && !result.timed_out)
      wait_ms = std::min(wait_ms, millis_until(now, deadline));
    if (!exited && kill_at) wait_ms = std::min(wait_ms, millis_until(now, *kill_at));
    const int ready = poll(pfds, n, wait_ms);
    if (ready < 0 && errno != EINTR)
      throw Error("memplan", std::string("poll failed: ") + std::strerror(errno));

    for (nfds_t i = 0; ready > 0 && i < n; ++i) {
      if (pfds[i].revents == 0) continue;
      if (stream_of[i] < 0) {  // the wake pipe
        while (read(interrupt_wake_fd(), buffer, sizeof buffer) > 0) {
        }
        continue;
      }
      const int s = stream_of[i];
      while (true) {
        const ssize_t r = read(fds[s], buffer, sizeof buffer);
        if (r > 0) {
          splitters[s].feed(std::string_view(buffer, static_cast<size_t>(r)), deliver);
          continue;
        }
        if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
          splitters[s].finish(deliver);
          open_stream[s] = false;
        }
        if (r < 0 && errno == EINTR) continue;
        break;
      }
    }

    now = Clock::now();
    if (interrupt_count() != seen_interrupts) {
      const bool first = seen_interrupts == 0;
      seen_interrupts = interrupt_count();
      result.interrupted = true;
      if (!exited) {
        if (first && !kill_at) {
          killpg(pid, SIGINT);
          kill_at = now + request.kill_grace;
        } else {
          killpg(pid, SIGKILL);  // pressed again: no more waiting
        }
      }
    }
    if (!exited && has_deadline && !kill_at && !result.timed_out && now >= deadline) {
      result.timed_out = true;
      killpg(pid, SIGTERM);
      kill_at = now + request.kill_grace;
    }
    if (!exited && kill_at && now >= *kill_at) {
      killpg(pid, SIGKILL);
      kill_at = now + std::chrono::hours(1);
    }
    if (!exited) {
      siginfo_t info;
      std::memset(&info, 0, sizeof info);
      if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == pid) {
        exited = true;
        exit_time = now;
        killpg(pid, SIGKILL);  // what it left behind in its group; the zombie still holds the group id
        drain_until = now + std::chrono::seconds(1);
      }
    }
    if (exited && ((!open_stream[0] && !open_stream[1]) || now >= drain_until)) break;
  }

  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  for (int s = 0; s < 2; ++s)
    if (open_stream[s]) splitters[s].finish(deliver);
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    result.exit_code = 128 + result.signal;
  }
  result.seconds = std::chrono::duration<double>(exit_time - start).count();
  result.stderr_tail.assign(tail.begin(), tail.end());
  return result;
}

}  // namespace

std::unique_ptr<ProcessRunner> make_system_runner() { return std::make_unique<SystemRunner>(); }

}  // namespace memplan
