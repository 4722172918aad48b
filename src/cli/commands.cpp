// The table of subcommands: one row per command, each implemented in its own cmd_<name>.cpp.
#include "cli/command.hpp"
#include "cli/commands_list.hpp"

namespace memplan::cli {

const std::vector<CommandSpec>& commands() {
  static const std::vector<CommandSpec> table = {
      // {"estimate", "...", add_estimate},   (one row per command; keep alphabetical within groups)
      {"dtype", "Number formats: bits, range, precision (as torch.finfo reports them)", add_dtype},
      {"cast", "What each format stores for a value: exact rounding, bits, error", add_cast},
      {"scale", "The loss scale that keeps gradients in range of fp16 (bf16 needs none)", add_scale},
  };
  return table;
}

}  // namespace memplan::cli
