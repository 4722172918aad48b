#include <fcntl.h>
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.hpp"

namespace {

// A standard stream started closed (`memplan gpus >&-`) keeps its number taken by /dev/null opened
// read-only: a file memplan opens later cannot land on it, and writes to it still fail (EBADF), so
// the failure is reported instead of lost.
void hold_closed_standard_streams() {
  for (int fd = 0; fd <= 2; ++fd)
    if (fcntl(fd, F_GETFD) == -1) {
      const int held = open("/dev/null", O_RDONLY);
      if (held >= 0 && held != fd) close(held);  // numbers are taken lowest first: it lands on fd
    }
}

}  // namespace

int main(int argc, char** argv) {
  hold_closed_standard_streams();
  std::vector<std::string> args(argv + 1, argv + argc);
  return memplan::cli::run(args, std::cout, std::cerr, isatty(STDOUT_FILENO) != 0);
}
