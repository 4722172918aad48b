// The caching allocator simulator against cases derived by hand from the rules of
// c10/cuda/CUDACachingAllocator.cpp (v1.10.0 and v2.x, DeviceCachingAllocator): the constants
// kMinBlockSize, kSmallSize, kSmallBuffer, kLargeBuffer, kMinLargeAlloc, kRoundLarge and the
// functions round_size, get_allocation_size, get_free_block, should_split, free_block /
// try_merge_blocks, release_cached_blocks, and the expandable-segments note.

#include <catch2/catch.hpp>

#include "core/memory/caching_allocator.hpp"

using namespace memplan;

namespace {
constexpr uint64_t MiB = 1ull << 20;
}

TEST_CASE("allocator: round_size and get_allocation_size", "[allocator]") {
  CHECK(allocator_round_size(1) == 512);  // kMinBlockSize
  CHECK(allocator_round_size(512) == 512);
  CHECK(allocator_round_size(513) == 1024);                  // multiples of 512
  CHECK(allocator_segment_size(1 * MiB) == 2 * MiB);         // <= kSmallSize: kSmallBuffer
  CHECK(allocator_segment_size(1 * MiB + 512) == 20 * MiB);  // < kMinLargeAlloc: kLargeBuffer
  CHECK(allocator_segment_size(10 * MiB) == 10 * MiB);       // >= kMinLargeAlloc: rounded to 2 MiB
  CHECK(allocator_segment_size(11 * MiB) == 12 * MiB);
}

TEST_CASE("allocator: small requests share a 2 MiB segment", "[allocator]") {
  CachingAllocator a;
  REQUIRE(a.malloc(1, 1000));  // 1024 B from a new 2 MiB segment, the rest split off (>= 512 B)
  REQUIRE(a.malloc(2, 4096));  // from the remainder
  CHECK(a.stats().reserved == 2 * MiB);
  CHECK(a.stats().allocated == 1024 + 4096);
  CHECK(a.stats().segments == 1);
}

TEST_CASE("allocator: 1-10 MiB requests are packed in 20 MiB segments", "[allocator]") {
  CachingAllocator a;
  for (uint64_t id = 1; id <= 4; ++id) REQUIRE(a.malloc(id, 5 * MiB));
  // 20 MiB holds four 5 MiB blocks; the fourth takes the last 5 MiB whole (nothing left to split).
  CHECK(a.stats().reserved == 20 * MiB);
  REQUIRE(a.malloc(5, 5 * MiB));
  CHECK(a.stats().reserved == 40 * MiB);
  CHECK(a.stats().segments == 2);
}

TEST_CASE("allocator: a large block is split only when more than 1 MiB remains", "[allocator]") {
  CachingAllocator a;
  REQUIRE(a.malloc(1, 12 * MiB));  // its own 12 MiB segment
  a.free(1);
  REQUIRE(a.malloc(2, 11 * MiB + 100));  // rounds to 11 MiB + 512: 1 MiB - 512 would remain, kept
  CHECK(a.stats().allocated == 12 * MiB);
  CHECK(a.stats().reserved == 12 * MiB);
  a.free(2);
  REQUIRE(a.malloc(3, 10 * MiB));  // 2 MiB would remain (> kSmallSize): split
  CHECK(a.stats().allocated == 10 * MiB);
  REQUIRE(a.malloc(4, 2 * MiB));  // the 2 MiB remainder, large pool: fits it exactly
  CHECK(a.stats().reserved == 12 * MiB);
}

TEST_CASE("allocator: best fit takes the smallest cached block that is large enough", "[allocator]") {
  CachingAllocator a;
  REQUIRE(a.malloc(1, 30 * MiB));
  REQUIRE(a.malloc(2, 14 * MiB));
  a.free(1);
  a.free(2);
  REQUIRE(a.malloc(3, 13 * MiB));  // the 14 MiB block (1 MiB left: not split), not the 30 MiB one
  CHECK(a.stats().allocated == 14 * MiB);
  REQUIRE(a.malloc(4, 29 * MiB));  // the 30 MiB block is still whole
  CHECK(a.stats().reserved == 44 * MiB);
  CHECK(a.stats().segments == 2);
}

TEST_CASE("allocator: freed neighbours in a segment coalesce", "[allocator]") {
  CachingAllocator a;
  REQUIRE(a.malloc(1, 6 * MiB));  // [0,6) of a 20 MiB segment
  REQUIRE(a.malloc(2, 6 * MiB));  // [6,12)
  REQUIRE(a.malloc(3, 6 * MiB));  // [12,18), 2 MiB left
  a.free(1);
  a.free(2);  // [0,12) one free block
  CHECK(a.largest_free_block() == 12 * MiB);
  REQUIRE(a.malloc(4, 11 * MiB));  // fits only because the two merged
  CHECK(a.stats().reserved == 20 * MiB);
  a.free(3);
  a.free(4);
  CHECK(a.largest_free_block() == 20 * MiB);  // the whole segment again
}

TEST_CASE("allocator: fragmentation: free bytes that no request can use", "[allocator]") {
  // A 40 MiB activation freed, 20 MiB of optimizer state lands in its hole (split: 20 MiB remain),
  // a second 40 MiB block freed: 60 MiB are free but in two blocks of 20 and 40 MiB, so a 60 MiB
  // request needs a new segment.
  CachingAllocator a;
  REQUIRE(a.malloc(1, 40 * MiB));
  REQUIRE(a.malloc(2, 40 * MiB));
  a.free(1);
  REQUIRE(a.malloc(3, 20 * MiB));
  a.free(2);
  CHECK(a.stats().allocated == 20 * MiB);
  CHECK(a.largest_free_block() == 40 * MiB);
  REQUIRE(a.malloc(4, 60 * MiB));
  CHECK(a.stats().allocated == 80 * MiB);
  CHECK(a.stats().reserved == 140 * MiB);
  CHECK(a.stats().peak_reserved == 140 * MiB);
  CHECK(a.stats().segments == 3);
}

TEST_CASE("allocator: a capacity releases whole cached segments and retries", "[allocator]") {
  CachingAllocator a(AllocatorConfig{false, 100 * MiB});
  REQUIRE(a.malloc(1, 40 * MiB));
  a.free(1);
  REQUIRE(a.malloc(2, 80 * MiB));  // 40 + 80 > 100: the free 40 MiB segment is released first
  CHECK(a.stats().reserved == 80 * MiB);
  CHECK(a.stats().releases == 1);
  CHECK_FALSE(a.malloc(3, 30 * MiB));  // 80 + 30 > 100 and nothing cached: out of memory
}

TEST_CASE("allocator: expandable segments grow one segment by 20 MiB pages", "[allocator]") {
  CachingAllocator e(AllocatorConfig{true, 0});
  REQUIRE(e.malloc(1, 30 * MiB));  // 2 pages: 40 MiB mapped, 10 MiB free at the end
  CHECK(e.stats().reserved == 40 * MiB);
  e.free(1);
  REQUIRE(e.malloc(2, 50 * MiB));  // the free 40 MiB tail + 1 page
  CHECK(e.stats().reserved == 60 * MiB);
  CHECK(e.stats().segments == 1);
  // The same requests with one segment per cudaMalloc: 30 MiB cached, then a 50 MiB segment.
  CachingAllocator c;
  REQUIRE(c.malloc(1, 30 * MiB));
  c.free(1);
  REQUIRE(c.malloc(2, 50 * MiB));
  CHECK(c.stats().reserved == 80 * MiB);
}
