// libFuzzer target: a presets file (--presets) on arbitrary bytes (build with -DMEMPLAN_FUZZ=ON, clang).
// Run: build-fuzz/fuzz/fuzz_presets fuzz/corpus/presets
#include "fuzz_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  memplan::fuzz::run_presets(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
