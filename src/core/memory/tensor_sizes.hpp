#pragma once
// Bytes over tensors (tensor_sizes.cpp): a term's bytes in proportion to weights, or exactly at
// whole bytes per element, as the allocator replay (step_events.cpp) sizes its tensors.

#include <cstdint>
#include <vector>

namespace memplan {

// `total` bytes divided in proportion to `weights` (floor), the remainder on the largest.
std::vector<uint64_t> divide(uint64_t total, const std::vector<uint64_t>& weights);

// Bytes of tensors of `elements` each, for a term of `total` bytes that counts `count` elements
// plus at most `scalars` bytes of per-tensor scalars (Adam's step counters): when the rest is a
// whole number of bytes per element and the shapes name at most `count` elements, each tensor is
// its elements x that many bytes, as torch allocates it, and what the shapes do not name (BERT's
// token-type embeddings; the scalars) one more tensor, last. Otherwise (sub-byte or mixed formats)
// the bytes in proportion. A tensor a few bytes over its size would cost the replay a whole
// 2 MiB of rounding (a 16 MiB matrix in an 18 MiB segment).
struct Sized {
  std::vector<uint64_t> bytes;
  uint64_t per_element = 0;  // 0: in proportion
};
Sized sized(uint64_t total, const std::vector<uint64_t>& elements, uint64_t count, uint64_t scalars);

}  // namespace memplan
