// libFuzzer target: scale --values on arbitrary bytes (build with -DMEMPLAN_FUZZ=ON, clang).
// Run: build-fuzz/fuzz/fuzz_gradient_values fuzz/corpus/gradient_values
#include "fuzz_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  memplan::fuzz::run_gradient_values(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
