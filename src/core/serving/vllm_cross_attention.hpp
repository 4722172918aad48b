#pragma once
// vLLM's KV blocks for the cross-attention layers of Llama 3.2 Vision (mllama) in the V0 engine
// (vLLM 0.6.4.post1, the version vllm_budget.hpp follows). vLLM serves mllama as an
// encoder-decoder model:
//   - vllm/model_executor/models/mllama.py input_processor_for_mllama makes each request's encoder
//     prompt num_tiles x ((image_size // 14)^2 + 1) tokens, num_tiles counted per image from
//     get_optimal_tiled_canvas (no padding to max_num_tiles, unlike transformers' processor);
//   - vllm/core/block_manager.py can_allocate takes ceil(encoder tokens / block_size) blocks for
//     the request's cross-attention cache from the same pool as its decoder tokens' blocks;
//   - vllm/worker/cache_engine.py get_cache_block_size sizes a block over every layer of
//     text_config.num_hidden_layers (self- and cross-attention layers alike), so the pool's bytes
//     and block count are those of vllm_budget; what the images change is how many requests it
//     holds.
// The profile run's dummy encoder data is max_num_tiles tiles per image
// (get_max_mllama_image_tokens), the worst case used here when no image size is given.

#include <cstdint>
#include <optional>

#include <memplan/request.hpp>

namespace memplan {

struct VllmCrossAttention {
  uint64_t images = 0;           // images per request (the last group of <|image|> tokens)
  uint64_t tiles_per_image = 0;  // get_optimal_tiled_canvas's tiles (max_num_tiles without --image-size)
  uint64_t tokens_per_tile = 0;  // (image_size // 14)^2 + 1
  uint64_t encoder_tokens = 0;   // per request: images x tiles x tokens per tile
  uint64_t encoder_blocks = 0;   // ceil(encoder_tokens / block_size)
  uint64_t decoder_blocks = 0;   // ceil(max_model_len / block_size)
  uint64_t requests = 0;         // floor(GPU blocks / (decoder + encoder blocks)) at max_model_len
};

// The cross-attention blocks of a request of `r` (r.images, r.image_size) with this block size and
// max_model_len; nullopt for a model without cross-attention layers or a request without images.
std::optional<VllmCrossAttention> vllm_cross_attention(const EstimateRequest& r, uint64_t block_size,
                                                       uint64_t max_model_len, uint64_t gpu_blocks);

}  // namespace memplan
