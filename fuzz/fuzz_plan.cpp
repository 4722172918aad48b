// libFuzzer target: the plan reader (--plan) on arbitrary bytes (build with -DMEMPLAN_FUZZ=ON, clang).
// Run: build-fuzz/fuzz/fuzz_plan fuzz/corpus/plan
#include "fuzz_entry_cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  memplan::fuzz::run_plan(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
