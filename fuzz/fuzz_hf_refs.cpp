// libFuzzer target: the Hugging Face cache refs file reader and the org/name@revision parser
// (build with -DMEMPLAN_FUZZ=ON, clang). Run: build-fuzz/fuzz/fuzz_hf_refs fuzz/corpus/hf_refs
#include "fuzz_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  memplan::fuzz::run_hf_refs(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
