// libFuzzer target: the gguf parser on arbitrary bytes (build with -DMEMPLAN_FUZZ=ON, clang).
// Run: build-fuzz/fuzz/fuzz_gguf fuzz/corpus/gguf
#include "fuzz_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  memplan::fuzz::run_gguf(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
