#pragma once
// The bitsandbytes release whose 4-bit layers run a QLoRA step (--bitsandbytes). What its matmul
// keeps for backward changed:
//   before 0.43.2  MatMul4Bit.forward kept its input A whenever A or the weight required grad
//                  (`ctx.tensors = (A, B)`); from 0.43.2 it keeps `(None, B)`, since the frozen
//                  4-bit weight needs no A ("fix QLoRA mem bug: delete useless buffered
//                  activation", bitsandbytes-foundation/bitsandbytes#1270, commit 9e753741,
//                  bitsandbytes/autograd/_functions.py)
// The default, 0.50.2, is the release bench/frameworks measured.

#include <cstdint>
#include <string>
#include <string_view>

namespace memplan {

struct BitsandbytesRelease {
  uint32_t major = 0;
  uint32_t minor = 50;
  uint32_t patch = 2;
  uint64_t value() const { return uint64_t{major} * 1000000 + uint64_t{minor} * 1000 + patch; }
  bool before(uint32_t ma, uint32_t mi, uint32_t pa) const {
    return value() < uint64_t{ma} * 1000000 + uint64_t{mi} * 1000 + pa;
  }
  // MatMul4Bit keeps its input A for backward (before 0.43.2).
  bool matmul_4bit_keeps_input() const { return before(0, 43, 2); }
  bool operator==(const BitsandbytesRelease& o) const { return value() == o.value(); }
};

// "0.41", "0.43.2", "0.45.0.dev0" (a missing patch is 0; anything after the patch is ignored);
// 4-bit layers exist from 0.39.0, so 0.39 to 9.999. Else an Error naming `subject`.
BitsandbytesRelease parse_bitsandbytes_release(std::string_view subject, std::string_view text);
std::string to_string(BitsandbytesRelease b);  // "0.43.2"

}  // namespace memplan
