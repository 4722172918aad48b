// PyTorch's CUDA caching allocator replayed on sizes (caching_allocator.hpp). Blocks live in a
// vector and are linked to their neighbours within a segment (Block::prev / next in torch); each
// pool is a set of free blocks ordered by (size, address), as torch's BlockComparator orders them,
// so the first block not smaller than a request is torch's best fit. Nothing is allocated per
// request once the vectors have grown: reset() keeps them for the next replay. Addresses are a counter:
// only their order matters (ties between equal sizes go to the lower address, as in torch).

#include "core/memory/caching_allocator.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "core/base/checked.hpp"

namespace memplan {

uint64_t allocator_round_size(uint64_t bytes) {
  if (bytes < k_alloc_min_block) return k_alloc_min_block;
  return checked_mul(k_alloc_min_block, (bytes + k_alloc_min_block - 1) / k_alloc_min_block,
                     "allocator bytes");
}

uint64_t allocator_segment_size(uint64_t rounded) {
  if (rounded <= k_alloc_small_size) return k_alloc_small_buffer;
  if (rounded < k_alloc_min_large_alloc) return k_alloc_large_buffer;
  return checked_mul(k_alloc_round_large, (rounded + k_alloc_round_large - 1) / k_alloc_round_large,
                     "allocator bytes");
}

// Named, not anonymous: CachingAllocator::State holds these types (an anonymous namespace there
// draws -Wsubobject-linkage when the file is compiled inside a unity batch).
namespace allocator_detail {

constexpr int32_t k_none = -1;

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
};

// The free blocks of a pool in torch's order, (size, address), as buckets: the distinct sizes present,
// sorted, each with its blocks sorted by address, highest first (the best fit of a size is its last).
// A pool holds a few hundred blocks of a few dozen sizes: finding a size is a binary search over the
// sizes, and a bucket moves only its own blocks on an insert or an erase (one sorted vector of every
// block spent most of a replay moving them). Buckets emptied are kept for reuse, with their memory.
struct Slot {
  uint64_t addr;
  int32_t index;
};

class Pool {
 public:
  void clear() {
    for (const uint32_t id : ids_) {
      buckets_[id].clear();
      spare_.push_back(id);
    }
    sizes_.clear();
    ids_.clear();
  }
  bool empty() const { return sizes_.empty(); }
  uint64_t largest() const { return sizes_.empty() ? 0 : sizes_.back(); }

  // Best fit: removes the block of the smallest size of at least `size` bytes (the lowest address of
  // that size) and returns its index, or k_none.
  int32_t take(uint64_t size) {
    const size_t i = lower(size);
    if (i == sizes_.size()) return k_none;
    std::vector<Slot>& b = buckets_[ids_[i]];
    const int32_t index = b.back().index;
    b.pop_back();
    if (b.empty()) drop_size(i);
    return index;
  }

  void insert(const Key& k) {
    const size_t i = lower(k.size);
    if (i == sizes_.size() || sizes_[i] != k.size) {
      uint32_t id = 0;
      if (!spare_.empty()) {
        id = spare_.back();
        spare_.pop_back();
      } else {
        id = static_cast<uint32_t>(buckets_.size());
        buckets_.emplace_back();
      }
      sizes_.insert(sizes_.begin() + static_cast<std::ptrdiff_t>(i), k.size);
      ids_.insert(ids_.begin() + static_cast<std::ptrdiff_t>(i), id);
    }
    std::vector<Slot>& b = buckets_[ids_[i]];
    b.insert(after(b, k.addr), Slot{k.addr, k.index});
  }

  void erase(const Key& k) {
    const size_t i = lower(k.size);
    if (i == sizes_.size() || sizes_[i] != k.size) return;
    std::vector<Slot>& b = buckets_[ids_[i]];
    const auto at = after(b, k.addr);
    if (at == b.end() || at->addr != k.addr) return;
    b.erase(at);
    if (b.empty()) drop_size(i);
  }

  // Whether `o` holds free blocks of the same sizes in the same order, calling pair(index here,
  // index in o) for the blocks at the same place (which bucket object holds a size is not compared).
  template <class Pair>
  bool same_blocks(const Pool& o, Pair pair) const {
    if (sizes_ != o.sizes_) return false;
    for (size_t i = 0; i < ids_.size(); ++i) {
      const std::vector<Slot>& a = buckets_[ids_[i]];
      const std::vector<Slot>& b = o.buckets_[o.ids_[i]];
      if (a.size() != b.size()) return false;
      for (size_t k = 0; k < a.size(); ++k)
        if (a[k].addr != b[k].addr || !pair(a[k].index, b[k].index)) return false;
    }
    return true;
  }

  // Removes every key for which `drop(key)` is true, visiting them in (size, address) order.
  template <class Drop>
  void remove_if(Drop drop) {
    for (size_t i = 0; i < sizes_.size();) {
      std::vector<Slot>& b = buckets_[ids_[i]];
      // Lowest address first (from the back); the kept slots move up to the end, in their order.
      size_t w = b.size();
      for (size_t r = b.size(); r-- > 0;)
        if (!drop(Key{sizes_[i], b[r].addr, b[r].index})) b[--w] = b[r];
      b.erase(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(w));
      if (b.empty())
        drop_size(i);
      else
        ++i;
    }
  }

 private:
  // The first size not below `size`, or sizes_.size().
  size_t lower(uint64_t size) const {
    return static_cast<size_t>(std::lower_bound(sizes_.begin(), sizes_.end(), size) - sizes_.begin());
  }
  // The first slot of `b` whose address is below `addr` (b is sorted by address, highest first).
  static std::vector<Slot>::iterator after(std::vector<Slot>& b, uint64_t addr) {
    return std::lower_bound(b.begin(), b.end(), addr, [](const Slot& s, uint64_t a) { return s.addr > a; });
  }
  void drop_size(size_t i) {
    spare_.push_back(ids_[i]);
    sizes_.erase(sizes_.begin() + static_cast<std::ptrdiff_t>(i));
    ids_.erase(ids_.begin() + static_cast<std::ptrdiff_t>(i));
  }

  std::vector<uint64_t> sizes_;             // the distinct sizes of the free blocks, ascending
  std::vector<uint32_t> ids_;               // the bucket of each, in buckets_
  std::vector<std::vector<Slot>> buckets_;  // every bucket ever made
  std::vector<uint32_t> spare_;             // buckets not in use (empty, memory kept)
};

}  // namespace allocator_detail

struct CachingAllocator::State {
  using Block = allocator_detail::Block;
  using Key = allocator_detail::Key;
  using Pool = allocator_detail::Pool;
  static constexpr int32_t k_none = allocator_detail::k_none;

  AllocatorConfig config;
  AllocatorStats stats;
  std::vector<Block> blocks;
  std::vector<int32_t> unused;                  // indices of blocks merged away, for reuse
  std::array<Pool, 2> pools;                    // [0] large, [1] small: the free cached blocks
  std::array<int32_t, 2> tail{k_none, k_none};  // expandable: the last block of each pool's segment
  std::array<uint64_t, 2> tail_end{0, 0};       // expandable: the end of the mapped range
  std::vector<int32_t> live;                    // block index by allocation id (k_none: not live)
  uint64_t next_addr = 0;
  mutable std::vector<int32_t> pair_scratch;  // same_as's pairing (kept: nothing allocated once grown)

  // Forgets every block, keeping the vectors' memory.
  void reset(AllocatorConfig c) {
    config = c;
    stats = {};
    blocks.clear();
    unused.clear();
    for (Pool& p : pools) p.clear();
    tail = {k_none, k_none};
    tail_end = {0, 0};
    live.clear();
    next_addr = 0;
  }

  // Whether `o` is this state with its blocks renumbered (same_state). No request reads a block's
  // index: pools order blocks by (size, address), neighbours, tails and live ids name blocks, and a new
  // block takes any reusable index. The blocks are paired by the live id that holds them and by their
  // place in the pools (every block not merged away is one or the other: a freed block goes to its pool,
  // a taken one to its id, and the pairs must cover them all); paired blocks must agree in address,
  // size and flags, and their neighbours and the tails must be paired. The pairing then carries every
  // later request to the same blocks, sizes, addresses and statistics. The statistics' peaks and
  // counters are not compared: no request reads them.
  bool same_as(const State& o) const {
    const AllocatorStats& a = stats;
    const AllocatorStats& b = o.stats;
    if (config.expandable_segments != o.config.expandable_segments || config.capacity != o.config.capacity ||
        a.allocated != b.allocated || a.reserved != b.reserved || a.segments != b.segments ||
        next_addr != o.next_addr || tail_end != o.tail_end)
      return false;
    const size_t blocks_here = blocks.size() - unused.size();
    if (blocks_here != o.blocks.size() - o.unused.size()) return false;
    pair_scratch.assign(blocks.size(), k_none);
    o.pair_scratch.assign(o.blocks.size(), k_none);
    size_t pairs = 0;
    auto pair = [&](int32_t x, int32_t y) {
      if (x == k_none || y == k_none) return x == y;
      if (pair_scratch[x] != k_none || o.pair_scratch[y] != k_none)
        return pair_scratch[x] == y && o.pair_scratch[y] == x;
      pair_scratch[x] = y;
      o.pair_scratch[y] = x;
      ++pairs;
      return true;
    };
    const size_t n = std::max(live.size(), o.live.size());
    for (size_t id = 0; id < n; ++id)
      if (!pair(id < live.size() ? live[id] : k_none, id < o.live.size() ? o.live[id] : k_none)) return false;
    for (size_t p = 0; p < pools.size(); ++p)
      if (!pools[p].same_blocks(o.pools[p], pair)) return false;
    if (pairs != blocks_here) return false;
    auto paired = [&](int32_t x, int32_t y) { return x == k_none ? y == k_none : pair_scratch[x] == y; };
    for (size_t p = 0; p < tail.size(); ++p)
      if (!paired(tail[p], o.tail[p])) return false;
    for (size_t i = 0; i < blocks.size(); ++i) {
      const int32_t j = pair_scratch[i];
      if (j == k_none) continue;
      const Block& x = blocks[i];
      const Block& y = o.blocks[j];
      if (x.addr != y.addr || x.size != y.size || x.small != y.small || x.allocated != y.allocated ||
          x.expandable != y.expandable || !paired(x.prev, y.prev) || !paired(x.next, y.next))
        return false;
    }
    return true;
  }

  // This state made a copy of `o` (its scratch table left as it is).
  void copy(const State& o) {
    config = o.config;
    stats = o.stats;
    blocks = o.blocks;
    unused = o.unused;
    pools = o.pools;
    tail = o.tail;
    tail_end = o.tail_end;
    live = o.live;
    next_addr = o.next_addr;
  }

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
      pool.remove_if([&](const Key& k) {
        const Block& b = blocks[k.index];
        if (b.prev != k_none || b.next != k_none || b.expandable) return false;
        stats.reserved -= b.size;
        --stats.segments;
        ++stats.releases;
        unused.push_back(k.index);
        return true;
      });
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
    int32_t i = pool.take(size);
    if (i == k_none) {
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
};

CachingAllocator::CachingAllocator(AllocatorConfig config) : s_(std::make_unique<State>()) {
  s_->config = config;
}
CachingAllocator::~CachingAllocator() = default;
CachingAllocator::CachingAllocator(CachingAllocator&&) noexcept = default;
CachingAllocator& CachingAllocator::operator=(CachingAllocator&&) noexcept = default;

bool CachingAllocator::malloc(uint64_t id, uint64_t bytes) { return s_->malloc(id, bytes); }
void CachingAllocator::free(uint64_t id) { s_->free(id); }
const AllocatorStats& CachingAllocator::stats() const { return s_->stats; }

uint64_t CachingAllocator::largest_free_block() const {
  return std::max(s_->pools[0].largest(), s_->pools[1].largest());
}

void CachingAllocator::reset(AllocatorConfig config) { s_->reset(config); }

void CachingAllocator::copy_from(const CachingAllocator& other) { s_->copy(*other.s_); }

bool CachingAllocator::same_state(const CachingAllocator& other) const { return s_->same_as(*other.s_); }

}  // namespace memplan
