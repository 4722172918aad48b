#pragma once
// For the commands that run the user's training command (ladder, sweep): runs them in-process
// against tests/data/fake_trainer.sh, a stand-in trainer with a known throughput curve and OOM edge.

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli_harness.hpp"

namespace memplan::test {

inline const std::string k_fake_trainer = MEMPLAN_TEST_DATA_DIR "/fake_trainer.sh";

// memplan COMMAND OPTIONS -- /bin/sh fake_trainer.sh {batch} TRAINER_ARGS
inline CliResult run_with_trainer(const std::string& command, const std::vector<std::string>& options,
                                  const std::vector<std::string>& trainer_args) {
  std::vector<std::string> args = {command};
  args.insert(args.end(), options.begin(), options.end());
  args.insert(args.end(), {"--", "/bin/sh", k_fake_trainer, "{batch}"});
  args.insert(args.end(), trainer_args.begin(), trainer_args.end());
  return run_cli(args);
}

// Bad input: checks one line on stderr, exit 2 and nothing on stdout; returns the stderr line.
inline std::string bad_input(const std::vector<std::string>& args) {
  const CliResult r = run_cli(args);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(line_count(r.err) == 1);
  return r.err;
}

}  // namespace memplan::test
