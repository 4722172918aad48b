// memplan._core: the command line run in-process. run(args) takes the arguments after the program
// name and returns (exit code, standard output, standard error) as memplan would have written
// them; options(command) lists the long flags a command takes and commands() the commands, so that
// python/memplan/_commands.py can turn keyword arguments into flags and name an unknown one.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli/cli.hpp"
#include "command_options.hpp"

namespace {

std::tuple<int, std::string, std::string> run_memplan(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  int code = 0;
  {
    pybind11::gil_scoped_release unlocked;  // a plan touches no Python object
    code = memplan::cli::run(args, out, err, false);
  }
  return {code, out.str(), err.str()};
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "memplan's command line, run in-process";
  m.def("run", &run_memplan, pybind11::arg("args"),
        "Runs memplan with args (without the program name); returns (exit code, stdout, stderr).");
  m.def("options", &memplan::python::command_options, pybind11::arg("command"),
        "The long flags of a command (without the dashes), each with whether it takes a value.");
  m.def("commands", &memplan::python::command_names, "The command names.");
}
