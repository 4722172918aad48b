#pragma once
// V1's KV-cache layout: how vLLM 0.10.1 cuts the KV memory into blocks when some layers attend to
// a sliding window (the hybrid KV-cache manager), and the figures it logs from them. From
// vllm/v1/core/kv_cache_utils.py (get_kv_cache_config, _get_kv_cache_config_uniform_type,
// _get_kv_cache_config_uniform_page_size, get_num_blocks, get_max_concurrency_for_kv_cache_config,
// check_enough_kv_cache_memory) and vllm/v1/kv_cache_interface.py (FullAttentionSpec,
// SlidingWindowSpec.max_memory_usage_bytes):
//
//  - page = block_size x 2 (k, v) x KV heads per GPU x head_dim x bytes: one block of one layer,
//    the same for full and window layers of the models here (Gemma 2/3, gpt-oss, Cohere 2).
//  - One kind of layer (every layer full, or every layer windowed as Mistral v0.1): one group,
//    num_blocks = floor(floor(KV memory / page) / layers); "GPU KV cache size" = num_blocks x
//    block_size.
//  - Both kinds: layers are grouped by kind into groups of `group_size` = the fewer layers of
//    either kind (13 and 13 for Gemma 2 2B; Gemma 3 1B's 4 full and 22 window layers give 1 + 6
//    groups of 4, the last window group padded with 2 empty layers). Each of the group_size
//    memory pools is shared by one layer of every group, so num_blocks = floor(floor(KV memory /
//    page) / group_size) and every group draws its blocks from them; "GPU KV cache size" =
//    floor(num_blocks / groups) x block_size (the tokens if every group held the same number).
//    (Later releases size the groups differently when the counts are close: vLLM PR 29303.)
//  - A request of L tokens needs ceil(L / block_size) blocks in a full group and
//    ceil(min(window - 1 + max_num_batched_tokens, L) / block_size) + 1 in a window group (the
//    window's tokens plus one chunked-prefill step, +1 as the window need not start at a block
//    boundary). "Maximum concurrency" = num_blocks / (the blocks of one request in all groups).
//  - vLLM refuses to start when the per-layer bytes of one max_model_len request (full layers
//    ceil(L / block_size) pages each, window layers the bounded count) exceed the KV memory.
// V0 and V1 with the hybrid manager off give every layer a full-length block table.
#include <cstdint>

namespace memplan {

// The layers of one GPU as V1's KV-cache manager groups them.
struct VllmKvShape {
  uint64_t full_layers = 0;    // full attention (or every layer when the manager is off)
  uint64_t window_layers = 0;  // sliding window of `window` tokens
  uint64_t window = 0;
  uint64_t page_bytes = 0;  // one block of one layer
  uint64_t block_size = 16;
  uint64_t max_num_batched_tokens = 0;
};

struct VllmKvGroups {
  uint64_t group_size = 0;  // layers per group
  uint64_t full_groups = 0;
  uint64_t window_groups = 0;
  uint64_t padding_layers = 0;             // empty layers that fill the last window/full group
  uint64_t num_blocks = 0;                 // vLLM's KVCacheConfig.num_blocks
  uint64_t block_bytes = 0;                // page x group_size: the memory behind one of those blocks
  uint64_t logged_tokens = 0;              // "GPU KV cache size: N tokens"
  uint64_t full_blocks_per_request = 0;    // at max_model_len, in one full group
  uint64_t window_blocks_per_request = 0;  // at max_model_len, in one window group
  uint64_t blocks_per_request = 0;         // all groups
  double max_concurrency = 0.0;            // "Maximum concurrency for L tokens per request"
  uint64_t needed_bytes = 0;               // one max_model_len request, every layer (the start check)
};

// The groups and blocks of `shape` with `kv_bytes` of KV memory (0 when nothing is left) for
// requests of `max_model_len` tokens.
VllmKvGroups vllm_kv_groups(const VllmKvShape& shape, uint64_t kv_bytes, uint64_t max_model_len);

// The bytes vLLM's start check needs for one request of `len` tokens (every layer's pages).
uint64_t vllm_kv_request_bytes(const VllmKvShape& shape, uint64_t len);

// The longest max_model_len whose request passes the start check within `kv_bytes`; `cap` when
// every length does (only window layers).
uint64_t vllm_kv_longest_len(const VllmKvShape& shape, uint64_t kv_bytes, uint64_t cap);

}  // namespace memplan
