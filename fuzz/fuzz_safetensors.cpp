// libFuzzer target: the safetensors parser on arbitrary bytes (build with -DMEMPLAN_FUZZ=ON, clang).
// Run: build-fuzz/fuzz/fuzz_safetensors fuzz/corpus/safetensors
#include "fuzz_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  memplan::fuzz::run_safetensors(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
