// torch DDP's gradient buckets (ddp_buckets.hpp), grouped by hand as reducer.cpp's
// compute_bucket_assignment_by_size does: a bucket closes once its bytes reach the limit, 1 MiB for
// the first (dist._DEFAULT_FIRST_BUCKET_BYTES) and bucket_cap_mb = 25 MiB after.
#include <catch2/catch.hpp>

#include "core/memory/ddp_buckets.hpp"

using namespace memplan;

TEST_CASE("issue 27: DDP's buckets close at 1 MiB, then at 25 MiB", "[ddp_buckets][issue27]") {
  const uint64_t kib = 1024, mib = 1024 * kib;
  // 512 KiB + 768 KiB = 1.25 MiB >= 1 MiB: the first bucket. 30 MiB alone >= 25 MiB. 10 + 10 = 20 MiB
  // < 25, + 10 = 30 MiB: the third. The 1 KiB left over is the last bucket.
  const std::vector<uint64_t> grads = {512 * kib, 768 * kib, 30 * mib, 10 * mib, 10 * mib, 10 * mib, 1 * kib};
  const std::vector<uint64_t> expected = {1280 * kib, 30 * mib, 30 * mib, 1 * kib};
  CHECK(ddp_bucket_bytes(grads) == expected);
  // Every gradient lands in a bucket: the buckets are a second copy of them all.
  uint64_t sum = 0;
  for (uint64_t b : ddp_bucket_bytes(grads)) sum += b;
  CHECK(sum == 512 * kib + 768 * kib + 60 * mib + 1 * kib);
  CHECK(ddp_bucket_bytes({}).empty());
}
