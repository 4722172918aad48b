// The yardstick of scripts/bench-cli.sh: the smallest C++ program that starts, writes a line
// through iostream and exits, built by the same compiler and flags as memplan (and, like it,
// linked dynamically to libstdc++).
#include <iostream>

int main() {
  std::cout << "hello, world\n";
  return 0;
}
