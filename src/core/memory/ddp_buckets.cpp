#include "core/memory/ddp_buckets.hpp"

#include "core/base/checked.hpp"

namespace memplan {

std::vector<uint64_t> ddp_bucket_bytes(const std::vector<uint64_t>& grad_bytes) {
  std::vector<uint64_t> out;
  uint64_t open = 0;
  uint64_t limit = k_ddp_first_bucket_bytes;
  for (const uint64_t b : grad_bytes) {
    if (!b) continue;
    open = checked_add(open, b, "bucket bytes");
    if (open >= limit) {  // reducer.cpp: `if (bucket.size >= bucket_size_limit)` closes it
      out.push_back(open);
      open = 0;
      limit = k_ddp_bucket_cap_bytes;
    }
  }
  if (open) out.push_back(open);
  return out;
}

}  // namespace memplan
