#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return memplan::cli::run(args, std::cout, std::cerr, isatty(STDOUT_FILENO) != 0);
}
