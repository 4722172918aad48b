#pragma once
// The caching allocator replay as it was first written (a sorted vector per pool, a fresh state per
// replay): the reference the fast one (src/core/memory/caching_allocator.cpp) must equal, stat for
// stat, on random sequences and on the events of real plans (test_caching_allocator_reference.cpp).

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "core/base/checked.hpp"
#include "core/memory/caching_allocator.hpp"

namespace memplan::reference {

inline constexpr int32_t k_none = -1;

struct Block {
  uint64_t addr = 0;
  uint64_t size = 0;
  int32_t prev = k_none;
  int32_t next = k_none;
  bool small = false;
  bool allocated = false;
  bool expandable = false;
};

struct Key {
  uint64_t size;
  uint64_t addr;
  int32_t index;
  bool operator<(const Key& o) const { return size != o.size ? size < o.size : addr < o.addr; }
};

// The free blocks of a pool, sorted by (size, address): a sorted vector (a few hundred entries at
// most; estimate() replays thousands of events, so this is faster than a node-based set).
class Pool {
 public:
  // The first block of at least `size` bytes (best fit), or keys_.size().
  size_t lower_bound(uint64_t size, uint64_t addr) const {
    size_t lo = 0;
    size_t hi = keys_.size();
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      const Key& k = keys_[mid];
      if (k.size < size || (k.size == size && k.addr < addr))
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }
  void insert(const Key& k) {
    keys_.insert(keys_.begin() + static_cast<std::ptrdiff_t>(lower_bound(k.size, k.addr)), k);
  }
  void erase(const Key& k) {
    const size_t i = lower_bound(k.size, k.addr);
    if (i < keys_.size() && keys_[i].addr == k.addr && keys_[i].size == k.size)
      keys_.erase(keys_.begin() + static_cast<std::ptrdiff_t>(i));
  }
  void erase_at(size_t i) { keys_.erase(keys_.begin() + static_cast<std::ptrdiff_t>(i)); }
  size_t size() const { return keys_.size(); }
  bool empty() const { return keys_.empty(); }
  const Key& operator[](size_t i) const { return keys_[i]; }
  const Key& back() const { return keys_.back(); }

 private:
  std::vector<Key> keys_;
};

struct ReferenceAllocator {
  explicit ReferenceAllocator(AllocatorConfig c = {}) { config = c; }
  AllocatorConfig config;
  AllocatorStats stats;
  std::vector<Block> blocks;
  std::vector<int32_t> unused;                  // indices of blocks merged away, for reuse
  std::array<Pool, 2> pools;                    // [0] large, [1] small: the free cached blocks
  std::array<int32_t, 2> tail{k_none, k_none};  // expandable: the last block of each pool's segment
  std::array<uint64_t, 2> tail_end{0, 0};       // expandable: the end of the mapped range
  std::vector<int32_t> live;                    // block index by allocation id (k_none: not live)
  uint64_t next_addr = 0;

  Pool& pool_of(const Block& b) { return pools[b.small ? 1 : 0]; }
  Key key(int32_t i) const { return {blocks[i].size, blocks[i].addr, i}; }

  int32_t new_block(const Block& b) {
    if (!unused.empty()) {
      const int32_t i = unused.back();
      unused.pop_back();
      blocks[i] = b;
      return i;
    }
    blocks.push_back(b);
    return static_cast<int32_t>(blocks.size() - 1);
  }

  void grow_reserved(uint64_t bytes, bool new_segment) {
    stats.reserved = checked_add(stats.reserved, bytes, "allocator bytes");
    stats.peak_reserved = std::max(stats.peak_reserved, stats.reserved);
    ++stats.cuda_mallocs;
    if (new_segment) {
      ++stats.segments;
      stats.peak_segments = std::max(stats.peak_segments, stats.segments);
    }
  }

  // release_cached_blocks: every wholly free (unsplit) cached segment goes back to CUDA.
  void release_cached() {
    for (Pool& pool : pools)
      for (size_t i = 0; i < pool.size();) {
        const int32_t index = pool[i].index;
        const Block& b = blocks[index];
        if (b.prev == k_none && b.next == k_none && !b.expandable) {
          stats.reserved -= b.size;
          --stats.segments;
          ++stats.releases;
          unused.push_back(index);
          pool.erase_at(i);
        } else {
          ++i;
        }
      }
  }

  bool fits(uint64_t bytes) const {
    return !config.capacity ||
           (stats.reserved <= config.capacity && bytes <= config.capacity - stats.reserved);
  }

  // alloc_block: a new segment of get_allocation_size(size); on failure release the cache, retry.
  int32_t new_segment(uint64_t size, bool small) {
    const uint64_t bytes = allocator_segment_size(size);
    if (!fits(bytes)) release_cached();
    if (!fits(bytes)) return k_none;
    Block b;
    b.addr = next_addr;
    b.size = bytes;
    b.small = small;
    // Addresses only order blocks of equal size: a counter that wraps (absurd sizes in a search) is
    // harmless where a checked one would throw.
    next_addr += bytes + k_alloc_round_large;
    grow_reserved(bytes, true);
    return new_block(b);
  }

  // expandable_segments: map pages at the end of the pool's one segment until its free tail
  // holds `size` (the tail block, if free, grows; else a new block follows it).
  int32_t expand(uint64_t size, bool small) {
    const int p = small ? 1 : 0;
    const uint64_t page = small ? k_alloc_small_buffer : k_alloc_large_buffer;
    int32_t t = tail[p];
    const bool tail_free = t != k_none && !blocks[t].allocated;
    const uint64_t have = tail_free ? blocks[t].size : 0;
    const uint64_t pages = (size - have + page - 1) / page;
    const uint64_t bytes = checked_mul(pages, page, "allocator bytes");
    if (!fits(bytes)) return k_none;
    if (t == k_none) {
      tail_end[p] = next_addr;
      next_addr += 1ull << 50;  // the reserved address space (wraps harmlessly, as above)
    }
    grow_reserved(bytes, t == k_none);
    if (tail_free) {
      pools[p].erase(key(t));
      blocks[t].size += bytes;
    } else {
      Block b;
      b.addr = tail_end[p];
      b.size = bytes;
      b.small = small;
      b.expandable = true;
      b.prev = t;
      const int32_t i = new_block(b);
      if (t != k_none) blocks[t].next = i;
      tail[p] = t = i;
    }
    tail_end[p] += bytes;
    return t;
  }

  bool should_split(const Block& b, uint64_t size) const {
    const uint64_t remaining = b.size - size;
    if (b.small || b.expandable) return remaining >= k_alloc_min_block;
    return remaining > k_alloc_small_size;
  }

  bool malloc(uint64_t id, uint64_t bytes) {
    const uint64_t size = allocator_round_size(bytes);
    const bool small = size <= k_alloc_small_size;
    Pool& pool = pools[small ? 1 : 0];
    int32_t i = k_none;
    const size_t at = pool.lower_bound(size, 0);
    if (at < pool.size()) {
      i = pool[at].index;
      pool.erase_at(at);
    } else {
      i = config.expandable_segments ? expand(size, small) : new_segment(size, small);
      if (i == k_none) return false;
    }
    if (should_split(blocks[i], size)) {
      Block rest = blocks[i];
      rest.addr += size;
      rest.size -= size;
      rest.prev = i;
      const int32_t r = new_block(rest);  // may reallocate blocks: index again below
      blocks[i].size = size;
      blocks[i].next = r;
      if (blocks[r].next != k_none) blocks[blocks[r].next].prev = r;
      const int p = small ? 1 : 0;
      if (tail[p] == i) tail[p] = r;
      pools[p].insert(key(r));
    }
    blocks[i].allocated = true;
    stats.allocated = checked_add(stats.allocated, blocks[i].size, "allocator bytes");
    stats.peak_allocated = std::max(stats.peak_allocated, stats.allocated);
    if (id >= live.size()) live.resize(std::max<size_t>(id + 1, live.size() * 2), k_none);
    live[id] = i;
    return true;
  }

  // try_merge_blocks: `src` (free, cached) is absorbed into `dst`, its neighbour.
  void merge(int32_t dst, int32_t src) {
    Block& d = blocks[dst];
    Block& s = blocks[src];
    pool_of(s).erase(key(src));
    if (d.prev == src) {
      d.addr = s.addr;
      d.prev = s.prev;
      if (d.prev != k_none) blocks[d.prev].next = dst;
    } else {
      d.next = s.next;
      if (d.next != k_none) blocks[d.next].prev = dst;
    }
    d.size += s.size;
    const int p = d.small ? 1 : 0;
    if (tail[p] == src) tail[p] = dst;
    unused.push_back(src);
  }

  void free(uint64_t id) {
    if (id >= live.size() || live[id] == k_none) return;
    const int32_t i = live[id];
    live[id] = k_none;
    blocks[i].allocated = false;
    stats.allocated -= blocks[i].size;
    const int32_t prev = blocks[i].prev;
    const int32_t next = blocks[i].next;
    if (prev != k_none && !blocks[prev].allocated) merge(i, prev);
    if (next != k_none && !blocks[next].allocated) merge(i, next);
    pool_of(blocks[i]).insert(key(i));
  }

  uint64_t largest_free_block() const {
    uint64_t best = 0;
    for (const auto& pool : pools)
      if (!pool.empty()) best = std::max(best, pool.back().size);
    return best;
  }
};

}  // namespace memplan::reference
