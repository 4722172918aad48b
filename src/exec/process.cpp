// The real ProcessRunner: fork + execvpe in a process group of its own, output through pipes read
// with poll, a timeout that escalates SIGTERM -> SIGKILL, and Ctrl-C forwarded to the child.
#include <memplan/process.hpp>

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

#include "exec/line_splitter.hpp"

extern char** environ;

namespace memplan {
namespace {

using Clock = std::chrono::steady_clock;

// Interrupt state shared with the signal handler: a count and a self-pipe that wakes poll().
volatile sig_atomic_t g_interrupts = 0;
int g_wake[2] = {-1, -1};
bool g_scope_active = false;
struct sigaction g_old_int, g_old_term;

extern "C" void on_interrupt(int) {
  const int saved = errno;
  if (g_interrupts < 1000) g_interrupts = g_interrupts + 1;
  if (g_wake[1] >= 0) {
    const char c = 1;
    const ssize_t r = write(g_wake[1], &c, 1);
    (void)r;
  }
  errno = saved;
}

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
    if (pipe2(p, O_CLOEXEC) != 0) throw Error("memplan", std::string("cannot create a pipe: ") + std::strerror(errno));
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
  if (request.argv.empty() || request.argv[0].empty()) throw Error("command", "nothing to run (expected -- COMMAND ARGS...)");
  if (g_interrupts > 0) {
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
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
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

  const std::optional<Clock::time_point> deadline =
      request.timeout.count() > 0 ? std::optional<Clock::time_point>(start + request.timeout) : std::nullopt;
  std::optional<Clock::time_point> kill_at;
  bool exited = false;
  Clock::time_point exit_time = start;
  Clock::time_point drain_until = start;
  sig_atomic_t seen_interrupts = 0;
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
    if (g_wake[0] >= 0) pfds[n++] = pollfd{g_wake[0], POLLIN, 0};

    Clock::time_point now = Clock::now();
    int wait_ms = (open_stream[0] || open_stream[1]) ? 50 : 5;
    if (exited) wait_ms = std::min(wait_ms, millis_until(now, drain_until));
    if (!exited && deadline && !kill_at && !result.timed_out) wait_ms = std::min(wait_ms, millis_until(now, *deadline));
    if (!exited && kill_at) wait_ms = std::min(wait_ms, millis_until(now, *kill_at));
    const int ready = poll(pfds, n, wait_ms);
    if (ready < 0 && errno != EINTR) throw Error("memplan", std::string("poll failed: ") + std::strerror(errno));

    for (nfds_t i = 0; ready > 0 && i < n; ++i) {
      if (pfds[i].revents == 0) continue;
      if (stream_of[i] < 0) {  // the wake pipe
        while (read(g_wake[0], buffer, sizeof buffer) > 0) {}
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
    if (g_interrupts != seen_interrupts) {
      const bool first = seen_interrupts == 0;
      seen_interrupts = g_interrupts;
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
    if (!exited && deadline && !kill_at && !result.timed_out && now >= *deadline) {
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
      if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) {
        exited = true;
        exit_time = now;
        killpg(pid, SIGKILL);  // what it left behind in its group; the zombie still holds the group id
        drain_until = now + std::chrono::seconds(1);
      }
    }
    if (exited && ((!open_stream[0] && !open_stream[1]) || now >= drain_until)) break;
  }

  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
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

InterruptScope::InterruptScope() {
  if (g_scope_active) throw Error("memplan", "interrupt scopes do not nest");
  g_scope_active = true;
  g_interrupts = 0;
  if (pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0) g_wake[0] = g_wake[1] = -1;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

InterruptScope::~InterruptScope() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  for (int& fd : g_wake) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
  g_interrupts = 0;
  g_scope_active = false;
}

bool InterruptScope::requested() { return g_interrupts > 0; }

void InterruptScope::request() {
  if (g_scope_active) on_interrupt(SIGINT);
}

void check_runnable(const std::string& program) {
  if (program.empty()) throw Error("command", "nothing to run (expected -- COMMAND ARGS...)");
  auto runnable = [](const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
  };
  auto refuse = [&](int e) { throw Error(program, std::string("cannot run it: ") + std::strerror(e)); };
  if (program.find('/') != std::string::npos) {
    struct stat st;
    if (stat(program.c_str(), &st) != 0) refuse(errno);
    if (!S_ISREG(st.st_mode)) refuse(EACCES);
    if (access(program.c_str(), X_OK) != 0) refuse(errno);
    return;
  }
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t from = 0;
  while (from <= dirs.size()) {
    size_t colon = dirs.find(':', from);
    if (colon == std::string::npos) colon = dirs.size();
    const std::string dir = colon == from ? "." : dirs.substr(from, colon - from);
    if (runnable(dir + "/" + program)) return;
    from = colon + 1;
  }
  refuse(ENOENT);
}

std::vector<std::string> substitute_batch(const std::vector<std::string>& argv, uint64_t batch) {
  static const std::string k_marker = "{batch}";
  const std::string value = std::to_string(batch);
  std::vector<std::string> out;
  out.reserve(argv.size());
  for (std::string arg : argv) {
    for (size_t at = arg.find(k_marker); at != std::string::npos; at = arg.find(k_marker, at + value.size()))
      arg.replace(at, k_marker.size(), value);
    out.push_back(std::move(arg));
  }
  return out;
}

bool mentions_batch(const std::vector<std::string>& argv) {
  for (const std::string& a : argv)
    if (a.find("{batch}") != std::string::npos) return true;
  return false;
}

}  // namespace memplan
