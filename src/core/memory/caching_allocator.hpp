#pragma once
// PyTorch's CUDA caching allocator, replayed: what torch.cuda.max_memory_reserved() reports for a
// sequence of tensor allocations and frees. Pure: no device, no printing.
//
// The rules are those of c10/cuda/CUDACachingAllocator.cpp (DeviceCachingAllocator), the same in
// v1.10.0 and v2.x with the default PYTORCH_CUDA_ALLOC_CONF:
//   round_size            every request is rounded up to a multiple of kMinBlockSize = 512 B
//   get_pool              <= kSmallSize (1 MiB): the small pool, else the large pool
//   get_allocation_size   a new segment (cudaMalloc) is kSmallBuffer = 2 MiB for a small request,
//                         kLargeBuffer = 20 MiB for one below kMinLargeAlloc = 10 MiB, else the
//                         request rounded up to kRoundLarge = 2 MiB
//   get_free_block        best fit: the smallest cached free block of the pool that is large
//                         enough (blocks ordered by size, then address)
//   should_split          a small block is split when >= kMinBlockSize remains, a large one when
//                         more than kSmallSize remains (else the request keeps the whole block)
//   free_block            a freed block merges with its free neighbours in the same segment
//                         (try_merge_blocks) and returns to its pool; segments are never released
//   release_cached_blocks only when cudaMalloc fails (a capacity is given): every cached segment
//                         that is wholly free is released, and the allocation retried
// expandable_segments:True (torch >= 2.1, opt-in): one segment per pool that grows by pages
// (2 MiB small, 20 MiB large) at its end; blocks split whenever >= kMinBlockSize remains.
// Single stream, no CUDA graphs, max_split_size unset (its default: no limit).

#include <cstdint>
#include <memory>

namespace memplan {

inline constexpr uint64_t k_alloc_min_block = 512;                // kMinBlockSize
inline constexpr uint64_t k_alloc_small_size = 1ull << 20;        // kSmallSize
inline constexpr uint64_t k_alloc_small_buffer = 2ull << 20;      // kSmallBuffer
inline constexpr uint64_t k_alloc_large_buffer = 20ull << 20;     // kLargeBuffer
inline constexpr uint64_t k_alloc_min_large_alloc = 10ull << 20;  // kMinLargeAlloc
inline constexpr uint64_t k_alloc_round_large = 2ull << 20;       // kRoundLarge

struct AllocatorConfig {
  bool expandable_segments = false;
  uint64_t capacity = 0;  // bytes cudaMalloc can hand out; 0: unlimited
};

struct AllocatorStats {
  uint64_t allocated = 0;       // bytes in blocks handed out (rounded sizes), now
  uint64_t reserved = 0;        // bytes of segments held, now
  uint64_t peak_allocated = 0;  // max_memory_allocated
  uint64_t peak_reserved = 0;   // max_memory_reserved
  uint64_t segments = 0;        // segments now (cudaMalloc'd and not released)
  uint64_t peak_segments = 0;
  uint64_t cuda_mallocs = 0;  // segments created (or pages mapped, expandable)
  uint64_t releases = 0;      // segments released to satisfy a capacity
};

// Rounded size of a request (round_size) and the segment a miss allocates (get_allocation_size).
uint64_t allocator_round_size(uint64_t bytes);
uint64_t allocator_segment_size(uint64_t rounded);

class CachingAllocator {
 public:
  explicit CachingAllocator(AllocatorConfig config = {});
  ~CachingAllocator();
  CachingAllocator(CachingAllocator&&) noexcept;
  CachingAllocator& operator=(CachingAllocator&&) noexcept;

  // Allocates `bytes` under the caller's handle `id` (unique among live allocations; small
  // numbers: the allocator indexes a table by it). False when
  // a capacity is set and cannot be met even after releasing the cache (an out-of-memory error).
  bool malloc(uint64_t id, uint64_t bytes);
  // Frees the allocation `id`; unknown ids are ignored.
  void free(uint64_t id);
  // Bytes of the largest free cached block (what fragmentation leaves usable).
  uint64_t largest_free_block() const;
  const AllocatorStats& stats() const;
  // Forgets every block and statistic, as a new allocator with `config`, keeping the memory its
  // tables hold (a replay reuses one allocator: nothing to allocate once they have grown).
  void reset(AllocatorConfig config);
  // Becomes a copy of `other` (every block, pool, table and statistic), reusing this one's memory.
  void copy_from(const CachingAllocator& other);
  // Whether the two would answer every later sequence of requests alike, taking the same blocks and
  // moving allocated, reserved and segments alike: the same configuration, those three statistics,
  // address counter and expandable ends, and blocks that pair up one to one (by the live id that
  // holds them, by their place in the free pools) with the same addresses, sizes, flags, neighbours
  // and tails; which index a block has is not compared (no request reads it). The peaks and counters
  // (peak_*, cuda_mallocs, releases) are not compared: they only record the path so far.
  bool same_state(const CachingAllocator& other) const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace memplan
