// The table of subcommands: one row per command, each implemented in its own cmd_<name>.cpp.
#include "cli/command.hpp"
#include "cli/commands_list.hpp"

namespace memplan::cli {

const std::vector<CommandSpec>& commands() {
  static const std::vector<CommandSpec> table = {
      // {"estimate", "...", add_estimate},   (one row per command; keep alphabetical within groups)
      {"ladder", "Run your training command, halving the batch on out-of-memory until one runs", add_ladder},
      {"sweep", "Measure throughput at several batch sizes and mark the bend", add_sweep},
  };
  return table;
}

bool runs_user_command(std::string_view name) { return name == "ladder" || name == "sweep"; }

}  // namespace memplan::cli
