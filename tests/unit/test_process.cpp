#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>

#include <memplan/error.hpp>
#include "exec/process.hpp"

using namespace memplan;

namespace {

struct Captured {
  std::vector<std::string> out, err;
  LineSink sink() {
    return [this](Stream s, std::string_view line) { (s == Stream::out ? out : err).emplace_back(line); };
  }
};

ProcessRequest sh(const std::string& script, int timeout_ms = 0, int grace_ms = 200) {
  ProcessRequest r;
  r.argv = {"/bin/sh", "-c", script};
  r.timeout = std::chrono::milliseconds(timeout_ms);
  r.kill_grace = std::chrono::milliseconds(grace_ms);
  return r;
}

double elapsed_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("the real runner reports exit codes and signals", "[process]") {
  auto runner = make_system_runner();
  CHECK(runner->run(sh("exit 0"), {}).exit_code == 0);
  const ProcessResult three = runner->run(sh("exit 3"), {});
  CHECK(three.exit_code == 3);
  CHECK(three.signal == 0);
  CHECK_FALSE(three.timed_out);
  const ProcessResult killed = runner->run(sh("kill -SEGV $$"), {});
  CHECK(killed.signal == SIGSEGV);
  CHECK(killed.exit_code == 128 + SIGSEGV);
}

TEST_CASE("the real runner streams lines from both streams and keeps the stderr tail", "[process]") {
  auto runner = make_system_runner();
  Captured c;
  const ProcessResult r = runner->run(
      sh("printf 'a\\nb\\r\\nc\\rd'; i=1; while [ $i -le 25 ]; do echo e$i >&2; i=$((i+1)); done"), c.sink());
  CHECK(c.out == std::vector<std::string>{"a", "b", "c", "d"});  // \n, \r\n, \r and end of stream
  REQUIRE(c.err.size() == 25);
  REQUIRE(r.stderr_tail.size() == 20);
  CHECK(r.stderr_tail.front() == "e6");
  CHECK(r.stderr_tail.back() == "e25");
}

TEST_CASE("the real runner passes MEMPLAN_BATCH, runs argv without a shell and gives stdin as /dev/null",
          "[process]") {
  auto runner = make_system_runner();
  Captured c;
  ProcessRequest r;
  r.argv = {"/bin/sh", "-c", "echo \"$MEMPLAN_BATCH [$1]\"; cat", "sh", "a  b;$(x)"};
  r.extra_env = {{"MEMPLAN_BATCH", "64"}};
  CHECK(runner->run(r, c.sink()).exit_code == 0);
  CHECK(c.out == std::vector<std::string>{"64 [a  b;$(x)]"});
}

TEST_CASE("a command that cannot start is an Error", "[process]") {
  auto runner = make_system_runner();
  ProcessRequest r;
  r.argv = {"/nonexistent/train.sh", "8"};
  CHECK_THROWS_WITH(runner->run(r, {}), "/nonexistent/train.sh: cannot run it: No such file or directory");
}

TEST_CASE("a timeout stops the command, with SIGKILL when it ignores SIGTERM", "[process]") {
  auto runner = make_system_runner();
  auto t0 = std::chrono::steady_clock::now();
  const ProcessResult polite = runner->run(sh("sleep 5", 100), {});
  CHECK(polite.timed_out);
  CHECK(polite.signal == SIGTERM);
  CHECK(elapsed_since(t0) < 1.0);

  t0 = std::chrono::steady_clock::now();
  const ProcessResult stubborn = runner->run(sh("trap '' TERM INT; sleep 5", 100, 100), {});
  CHECK(stubborn.timed_out);
  CHECK(stubborn.signal == SIGKILL);
  CHECK(elapsed_since(t0) < 1.0);
  CHECK(stubborn.seconds >= 0.2);
}

TEST_CASE("what the command leaves running in its group is stopped when it exits", "[process]") {
  auto runner = make_system_runner();
  const auto t0 = std::chrono::steady_clock::now();
  Captured c;
  const ProcessResult r = runner->run(sh("sleep 5 & echo started"), c.sink());
  CHECK(r.exit_code == 0);
  CHECK(c.out == std::vector<std::string>{"started"});
  CHECK(elapsed_since(t0) < 1.0);  // the background sleep held stdout open; it was killed
}

TEST_CASE("Ctrl-C stops the child and runs that start afterwards", "[process]") {
  auto runner = make_system_runner();
  InterruptScope scope;
  const auto t0 = std::chrono::steady_clock::now();
  LineSink sink = [](Stream, std::string_view line) {
    if (line == "ready") std::raise(SIGINT);  // as if the user pressed Ctrl-C now
  };
  const ProcessResult r = runner->run(sh("trap '' INT; echo ready; sleep 5", 0, 150), sink);
  CHECK(r.interrupted);
  CHECK(r.signal == SIGKILL);  // it ignored SIGINT, so it was killed after the grace
  CHECK(elapsed_since(t0) < 1.0);
  const ProcessResult next = runner->run(sh("exit 0"), {});
  CHECK(next.interrupted);
  CHECK(next.seconds == 0);
}

TEST_CASE("substitute_batch replaces every {batch}", "[process]") {
  CHECK(substitute_batch({"train.py", "--bs={batch}", "--accum={batch}{batch}"}, 64) ==
        std::vector<std::string>{"train.py", "--bs=64", "--accum=6464"});
  CHECK(mentions_batch({"a", "x{batch}"}));
  CHECK_FALSE(mentions_batch({"a", "{Batch}"}));
}
