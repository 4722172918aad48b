// vLLM V0's cross-attention blocks for mllama (see vllm_cross_attention.hpp for the engine code).
#include "core/serving/vllm_cross_attention.hpp"

#include <algorithm>

#include <memplan/error.hpp>
#include "core/base/checked.hpp"

namespace memplan {
namespace {

// transformers' get_optimal_tiled_canvas for a square S x S image: the k x k canvas with
// k = min(ceil(S / tile), floor(sqrt(max tiles))).
uint64_t square_tiles(uint64_t size, uint64_t tile, uint64_t max_tiles) {
  uint64_t k = 1;
  while ((k + 1) * (k + 1) <= max_tiles) ++k;
  const uint64_t need = std::max<uint64_t>(1, ceil_div(size, tile));
  const uint64_t side = std::min(need, k);
  return side * side;
}

}  // namespace

std::optional<VllmCrossAttention> vllm_cross_attention(const EstimateRequest& r, uint64_t block_size,
                                                       uint64_t max_model_len, uint64_t gpu_blocks) {
  const ModelSpec& m = r.model;
  if (!m.arch || !m.arch->cross_attention_layers || !r.images) return std::nullopt;
  if (m.image_tile_pixels == 0 || m.max_image_tiles == 0 || m.image_tile_pixels % 14 != 0)
    throw Error(Field::images,
                "vLLM's mllama needs the tile size (vision_config.image_size, a multiple of 14)");
  VllmCrossAttention c;
  c.images = r.images;
  c.tiles_per_image =
      r.image_size ? square_tiles(r.image_size, m.image_tile_pixels, m.max_image_tiles) : m.max_image_tiles;
  const uint64_t side = m.image_tile_pixels / 14;
  c.tokens_per_tile = side * side + 1;
  c.encoder_tokens = checked_mul(checked_mul(c.images, c.tiles_per_image, "encoder tokens"),
                                 c.tokens_per_tile, "encoder tokens");
  c.encoder_blocks = ceil_div(c.encoder_tokens, block_size);
  c.decoder_blocks = ceil_div(max_model_len, block_size);
  c.requests = gpu_blocks / (c.decoder_blocks + c.encoder_blocks);
  return c;
}

}  // namespace memplan
