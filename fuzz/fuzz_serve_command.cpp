// libFuzzer target: a pasted serving command line (serve --from): shell words, engine, flags on arbitrary
// bytes (build with -DMEMPLAN_FUZZ=ON, clang). Run: build-fuzz/fuzz/fuzz_serve_command
// fuzz/corpus/serve_command
#include "fuzz_entry_cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  memplan::fuzz::run_serve_command(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
