// V1's KV-cache groups, blocks and logged figures (see vllm_kv_groups.hpp for the engine code).
#include "core/serving/vllm_kv_groups.hpp"

#include <algorithm>

#include <memplan/error.hpp>
#include "core/base/checked.hpp"

namespace memplan {
namespace {

uint64_t mul_kv(uint64_t a, uint64_t b) { return checked_mul(a, b, "KV cache bytes"); }

// Blocks one window layer holds for a request of `len` tokens (SlidingWindowSpec).
uint64_t window_blocks(const VllmKvShape& s, uint64_t len) {
  const uint64_t tokens = std::min(s.window - 1 + s.max_num_batched_tokens, len);
  return ceil_div(tokens, s.block_size) + 1;
}

}  // namespace

uint64_t vllm_kv_request_bytes(const VllmKvShape& s, uint64_t len) {
  const uint64_t full = mul_kv(s.full_layers, ceil_div(len, s.block_size));
  const uint64_t window = s.window_layers ? mul_kv(s.window_layers, window_blocks(s, len)) : 0;
  return mul_kv(checked_add(full, window, "KV cache blocks"), s.page_bytes);
}

VllmKvGroups vllm_kv_groups(const VllmKvShape& s, uint64_t kv_bytes, uint64_t max_model_len) {
  if (s.page_bytes == 0 || s.block_size == 0 || s.full_layers + s.window_layers == 0)
    throw Error("kv_cache", "a KV-cache layout needs layers and a page size");
  if (s.window_layers && s.window == 0) throw Error("kv_cache", "window layers need a window");
  VllmKvGroups g;
  const uint64_t layers = s.full_layers + s.window_layers;
  const bool hybrid = s.full_layers && s.window_layers;
  g.group_size = hybrid ? std::min(s.full_layers, s.window_layers) : layers;
  g.full_groups = ceil_div(s.full_layers, g.group_size);
  g.window_groups = ceil_div(s.window_layers, g.group_size);
  g.padding_layers = (g.full_groups + g.window_groups) * g.group_size - layers;
  g.block_bytes = mul_kv(s.page_bytes, g.group_size);
  g.num_blocks = kv_bytes / s.page_bytes / g.group_size;
  g.logged_tokens = mul_kv(g.num_blocks / (g.full_groups + g.window_groups), s.block_size);
  g.full_blocks_per_request = g.full_groups ? ceil_div(max_model_len, s.block_size) : 0;
  g.window_blocks_per_request = g.window_groups ? window_blocks(s, max_model_len) : 0;
  g.blocks_per_request = checked_add(mul_kv(g.full_groups, g.full_blocks_per_request),
                                     mul_kv(g.window_groups, g.window_blocks_per_request), "KV cache blocks");
  g.max_concurrency = static_cast<double>(g.num_blocks) / static_cast<double>(g.blocks_per_request);
  g.needed_bytes = vllm_kv_request_bytes(s, max_model_len);
  return g;
}

uint64_t vllm_kv_longest_len(const VllmKvShape& s, uint64_t kv_bytes, uint64_t cap) {
  if (vllm_kv_request_bytes(s, 1) > kv_bytes) return 0;
  if (s.full_layers == 0) return cap;
  // Full layers grow without bound: the answer is below (KV memory / full layers' pages + 1) blocks.
  uint64_t lo = 1, hi = (kv_bytes / mul_kv(s.full_layers, s.page_bytes) + 1) * s.block_size;
  while (lo < hi) {  // the largest len with request_bytes(len) <= kv_bytes
    const uint64_t mid = lo + (hi - lo + 1) / 2;
    if (vllm_kv_request_bytes(s, mid) <= kv_bytes)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

}  // namespace memplan
