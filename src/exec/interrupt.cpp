// InterruptScope: while memplan runs the user's command, SIGINT and SIGTERM mark an interrupt
// (a count and a self-pipe that wakes the runner's poll) instead of killing memplan.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include <memplan/error.hpp>
#include "exec/process.hpp"

#include "exec/interrupt_state.hpp"

namespace memplan {
namespace {

// Interrupt state shared with the signal handler: a count and a self-pipe that wakes poll().
volatile sig_atomic_t g_interrupts = 0;
volatile sig_atomic_t g_signal = 0;  // the first signal of the last scope: SIGINT or SIGTERM
int g_wake[2] = {-1, -1};
bool g_scope_active = false;
struct sigaction g_old_int, g_old_term;

extern "C" void on_interrupt(int signal) {
  const int saved = errno;
  if (g_interrupts < 1000) g_interrupts = g_interrupts + 1;
  if (g_signal == 0) g_signal = signal;
  if (g_wake[1] >= 0) {
    const char c = 1;
    const ssize_t r = write(g_wake[1], &c, 1);
    (void)r;
  }
  errno = saved;
}

}  // namespace

int interrupt_count() { return static_cast<int>(g_interrupts); }

int interrupt_wake_fd() { return g_wake[0]; }

int interrupt_signal() { return static_cast<int>(g_signal); }

InterruptScope::InterruptScope() {
  if (g_scope_active) throw Error("memplan", "interrupt scopes do not nest");
  g_scope_active = true;
  g_interrupts = 0;
  g_signal = 0;
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

}  // namespace memplan
