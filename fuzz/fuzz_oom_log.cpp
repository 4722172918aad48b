// libFuzzer target: the why-oom log reader (parse_oom_messages) and what why-oom prints of each message
// (build with -DMEMPLAN_FUZZ=ON, clang). Run: build-fuzz/fuzz/fuzz_oom_log fuzz/corpus/oom_log
#include "fuzz_entry_cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  memplan::fuzz::run_oom_log(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
