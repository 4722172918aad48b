// libFuzzer target: the Hub client's response parsing: header lines (Content-Range, Content-Length), model
// information JSON (build with -DMEMPLAN_FUZZ=ON, clang). Run: build-fuzz/fuzz/fuzz_hub_response
// fuzz/corpus/hub_response
#include "fuzz_entry_net.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  memplan::fuzz::run_hub_response(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
