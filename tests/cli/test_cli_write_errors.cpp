// Write failures are failures (issue 13 item 3): a result that cannot be written is exit 2 with one
// line on stderr, never exit 0 with nothing written.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <streambuf>

#include "cli_harness.hpp"

using memplan::test::line_count;

namespace {

// A stream buffer that refuses every byte, as a full disk does.
class FullBuffer : public std::streambuf {
 protected:
  int_type overflow(int_type) override { return traits_type::eof(); }
  std::streamsize xsputn(const char*, std::streamsize) override { return 0; }
};

struct Shell {
  int code = -1;
  std::string err;
};

// Runs `memplan <args> <redirections>` through /bin/sh; stderr goes to a file read back.
// `err_file` differs per test case: CTest runs them in parallel.
// The file lies in the temporary directory, so a run from the source tree leaves nothing there.
Shell run_binary(const std::string& args_and_redirections, const std::string& err_name) {
  const std::string err_file = (std::filesystem::temp_directory_path() / ("memplan_" + err_name)).string();
  const std::string cmd = std::string("'") + MEMPLAN_BINARY + "' " + args_and_redirections + " 2>" + err_file;
  const int status = std::system(cmd.c_str());
  Shell s;
  s.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_file);
  std::ostringstream text;
  text << in.rdbuf();
  s.err = text.str();
  std::filesystem::remove(err_file);
  return s;
}

}  // namespace

TEST_CASE("write failure: a result stdout refuses is exit 2 with one stderr line (in-process)",
          "[cli][errors]") {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"gpus"},
                                               {"estimate", "--params", "7e9", "--format", "json"},
                                               {"--version"},
                                               {"estimate", "--help"}}) {
    INFO(args[0]);
    FullBuffer full;
    std::ostream out(&full);
    std::ostringstream err;
    const int code = memplan::cli::run(args, out, err);
    CHECK(code == 2);
    CHECK(line_count(err.str()) == 1);
    CHECK(err.str().rfind("memplan: error: cannot write the result to standard output", 0) == 0);
  }
}

TEST_CASE("write failure: stderr that refuses the error line still gives exit 2", "[cli][errors]") {
  FullBuffer full;
  std::ostream err(&full);
  std::ostringstream out;
  CHECK(memplan::cli::run({"estimate", "--params", "7x9"}, out, err) == 2);
  CHECK(out.str().empty());
}

TEST_CASE("write failure: memplan gpus > /dev/full is exit 2 (the binary)", "[cli][errors]") {
  if (!std::ifstream("/dev/full")) return;  // not Linux
  for (const std::string args : {"gpus", "estimate --params 7e9 --format json"}) {
    INFO(args);
    Shell s = run_binary(args + " >/dev/full", "write_errors_full.txt");
    CHECK(s.code == 2);
    CHECK(s.err.rfind("memplan: error: cannot write the result to standard output", 0) == 0);
    CHECK(line_count(s.err) == 1);
  }
}

TEST_CASE("write failure: memplan gpus >&- (stdout closed) is exit 2 (the binary)", "[cli][errors]") {
  Shell s = run_binary("gpus >&-", "write_errors_closed.txt");
  CHECK(s.code == 2);
  CHECK(s.err.rfind("memplan: error: cannot write the result to standard output", 0) == 0);
  CHECK(line_count(s.err) == 1);
  // With nothing to write, a closed stdout loses nothing.
  s = run_binary("gpus --help >/dev/null", "write_errors_closed.txt");
  CHECK(s.code == 0);
}

TEST_CASE("write failure: stderr closed or full with an error to report is still exit 2 (the binary)",
          "[cli][errors]") {
  const std::string cmd = std::string("'") + MEMPLAN_BINARY + "' estimate --params 7x9 2>&-";
  const int status = std::system(cmd.c_str());
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  const std::string full = std::string("'") + MEMPLAN_BINARY + "' estimate --params 7x9 2>/dev/full";
  const int status_full = std::system(full.c_str());
  CHECK(WEXITSTATUS(status_full) == 2);
}
