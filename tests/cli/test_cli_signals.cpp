// SIGTERM while memplan runs the user's command is reported as SIGTERM, not Ctrl-C (issue 13
// item 9), with the shell's exit code 128 + 15. The binary runs a command that sends SIGTERM to
// its parent (memplan) and then waits to be stopped.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

TEST_CASE("ladder: SIGTERM is reported as SIGTERM with exit 143", "[cli][ladder][signals]") {
  // In the temporary directory: a run from the source tree leaves nothing there.
  const std::string err_file =
      (std::filesystem::temp_directory_path() / "memplan_signals_stderr.txt").string();
  const std::string cmd = std::string("'") + MEMPLAN_BINARY +
                          "' ladder --start 2 -- /bin/sh -c 'kill -TERM $PPID; sleep 10' 2>" + err_file +
                          " >/dev/null";
  const int status = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  std::ifstream in(err_file);
  std::ostringstream text;
  text << in.rdbuf();
  const std::string err = text.str();
  std::filesystem::remove(err_file);
  INFO(err);
  CHECK(WEXITSTATUS(status) == 143);
  CHECK(err.find("(stopped by SIGTERM,") != std::string::npos);
  CHECK(err.find("memplan: interrupted by SIGTERM\n") != std::string::npos);
  CHECK(err.find("Ctrl-C") == std::string::npos);
}
