#include "command_options.hpp"

#include "cli/command.hpp"
#include "cli/plan_options.hpp"

namespace memplan::python {

std::vector<std::pair<std::string, bool>> command_options(const std::string& command) {
  std::vector<std::pair<std::string, bool>> flags;
  for (const cli::CommandSpec& spec : cli::commands()) {
    if (command != spec.name) continue;
    const cli::PlanArgs all(nullptr);
    CLI::App app;
    CLI::App* sub = app.add_subcommand(spec.name);
    cli::Runner runner;
    spec.add(*sub, runner);
    for (const CLI::Option* o : sub->get_options())
      if (!o->get_lnames().empty()) flags.emplace_back(o->get_lnames().front(), o->get_expected_max() != 0);
  }
  return flags;
}

std::vector<std::string> command_names() {
  std::vector<std::string> names;
  for (const cli::CommandSpec& spec : cli::commands()) names.emplace_back(spec.name);
  return names;
}

}  // namespace memplan::python
