// The table of subcommands: one row per command, each implemented in its own cmd_<name>.cpp.
#include "cli/command.hpp"
#include "cli/commands_list.hpp"

namespace memplan::cli {

const std::vector<CommandSpec>& commands() {
  static const std::vector<CommandSpec> table = {
      // {"estimate", "...", add_estimate},   (one row per command; keep alphabetical within groups)
      {"probe", "Read the real GPUs of this machine through NVML (name, memory, compute capability, MIG)", add_probe},
  };
  return table;
}

}  // namespace memplan::cli
