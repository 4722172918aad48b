// libFuzzer target: the hf_config parser on arbitrary bytes (build with -DMEMPLAN_FUZZ=ON, clang).
// Run: build-fuzz/fuzz/fuzz_hf_config fuzz/corpus/hf_config
#include "fuzz_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  memplan::fuzz::run_hf_config(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
