// libFuzzer target: the command line (argument vectors split at NUL bytes, run in-process) on arbitrary bytes
// (build with -DMEMPLAN_FUZZ=ON, clang). Run: build-fuzz/fuzz/fuzz_command_line fuzz/corpus/command_line
#include "fuzz_entry_cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  memplan::fuzz::run_command_line(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
