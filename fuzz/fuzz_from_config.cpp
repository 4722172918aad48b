// libFuzzer target: the --from training configuration readers (YAML through yaml-cpp, JSON; every framework)
// on arbitrary bytes (build with -DMEMPLAN_FUZZ=ON, clang). Run: build-fuzz/fuzz/fuzz_from_config
// fuzz/corpus/from_config
#include "fuzz_entry_cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  memplan::fuzz::run_from_config(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
