// libFuzzer target: the diff input reader (an estimate or fit --format json output)
// (build with -DMEMPLAN_FUZZ=ON, clang). Run: build-fuzz/fuzz/fuzz_diff_input fuzz/corpus/diff_input
#include "fuzz_entry_cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  memplan::fuzz::run_diff_input(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
