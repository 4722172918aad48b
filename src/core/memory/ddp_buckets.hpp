#pragma once
// torch DDP's gradient buckets, as its Reducer allocates them (the allocator replay's tensors for
// DDP's buffers term; sharding_estimate.cpp counts their bytes).

#include <cstdint>
#include <vector>

namespace memplan {

// torch/nn/parallel/distributed.py (torch 2.x): bucket_cap_mb=25, and the first bucket capped at
// dist._DEFAULT_FIRST_BUCKET_BYTES = 1 MiB.
inline constexpr uint64_t k_ddp_first_bucket_bytes = 1ull << 20;
inline constexpr uint64_t k_ddp_bucket_cap_bytes = 25ull << 20;

// The buckets' bytes for gradients of `grad_bytes` each, in module order (one dtype): reducer.cpp's
// compute_bucket_assignment_by_size adds tensors to the open bucket and closes it once its size
// reaches the limit (1 MiB for the first, 25 MiB after), so a bucket is at least its limit except
// the last, and a tensor larger than the limit is a bucket of its own. In module order, as DDP
// assigns them (it hands the Reducer the list reversed: the order gradients become ready).
std::vector<uint64_t> ddp_bucket_bytes(const std::vector<uint64_t>& grad_bytes);

}  // namespace memplan
