// The table of subcommands: one row per command, each implemented in its own cmd_<name>.cpp.
#include "cli/command.hpp"
#include "cli/commands_list.hpp"

namespace memplan::cli {

const std::vector<CommandSpec>& commands() {
  static const std::vector<CommandSpec> table = {
      // {"estimate", "...", add_estimate},   (one row per command; keep alphabetical within groups)
      {"inspect", "What memplan reads from model files: tensors by dtype, parameters, architecture", add_inspect},
  };
  return table;
}

}  // namespace memplan::cli
