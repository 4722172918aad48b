#include "cli/vision_inputs.hpp"

#include <algorithm>
#include <string>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/checked.hpp"

namespace memplan::cli {

namespace {

// Qwen2VLImageProcessor's smart_resize for an S x S image, in tokens: each side to the nearest
// multiple of f = patch_size x merge_size (ties to even, as Python's round), at least f; an image
// above the processor's default max_pixels (12,845,056 = 3,584^2) or below its min_pixels
// (3,136 = 56^2) is scaled to that bound. One token per f x f square.
uint64_t dynamic_image_tokens(uint64_t size, uint64_t f, std::string& how) {
  constexpr uint64_t max_side = 3584, min_side = 56;
  uint64_t q = size / f;
  const uint64_t rem = size % f;
  if (rem * 2 > f || (rem * 2 == f && q % 2 == 1)) ++q;
  uint64_t side = std::max<uint64_t>(q, 1) * f;
  how = std::to_string(size) + " px rounded to " + std::to_string(side) + " px";
  if (side > max_side) {
    side = max_side / f * f;
    how += ", above max_pixels 3,584^2: scaled to " + std::to_string(side);
  } else if (side < min_side) {
    side = (min_side + f - 1) / f * f;
    how += ", below min_pixels 56^2: scaled to " + std::to_string(side);
  }
  return (side / f) * (side / f);
}

// The side of the square canvas of tiles get_optimal_tiled_canvas (mllama) and get_best_fit
// (Llama 4) choose for an S x S image: the smallest k x k canvas of tiles with k x tile >= S (the
// least upscaling; among equal scales the smallest area), at most the largest square that fits in
// max_tiles; a larger image is scaled down onto that one.
uint64_t canvas_side(uint64_t size, const ModelSpec& m) {
  uint64_t k = 1;
  while ((k + 1) * (k + 1) <= m.max_image_tiles) ++k;
  const uint64_t need = (size + m.image_tile_pixels - 1) / m.image_tile_pixels;
  return std::max<uint64_t>(1, std::min(need, k));
}

// Llama 4: Llama4Processor._prompt_split_image writes an image of k x k > 1 tiles as
// <|image_start|>, each tile's tokens followed by a separator (tile_x / tile_y), <|image|>, the
// global tile's tokens, <|image_end|>; one tile: no tile tokens, only the global ones.
uint64_t tiled_image_tokens(uint64_t size, const ModelSpec& m, std::string& how) {
  const uint64_t k = canvas_side(size, m), tiles = k * k, t = m.image_tile_tokens;
  const uint64_t tokens = 3 + t + (tiles > 1 ? tiles * (t + 1) : 0);
  how = "--image-size " + std::to_string(size) + ": " + std::to_string(k) + " x " + std::to_string(k) +
        " tiles of " + std::to_string(m.image_tile_pixels) + " px (get_best_fit, at most " +
        std::to_string(m.max_image_tiles) + " tiles)" +
        (tiles > 1 ? " x (" + std::to_string(t) + " tokens + a separator) + the global tile's "
                   : ", the global tile's ") +
        std::to_string(t) + " + 3 image tokens = " + std::to_string(tokens) + " tokens an image";
  return tokens;
}

// mllama (Llama 3.2 Vision): each image adds one <|image|> token to the text, and its features
// fill the cross-attention layers' KV cache: MllamaImageProcessor cuts it into tiles of
// image_tile_pixels and pads every image to max_image_tiles tiles (pack_images), so the cache holds
// max_image_tiles x image_tile_tokens per image whatever its size. For a square S x S image
// get_optimal_tiled_canvas fills a k x k canvas, k = min(ceil(S / tile), floor(sqrt(max tiles))).
void add_cross_attention_images(const PlanValues& v, EstimateRequest& r) {
  if (!v.images) throw Error(Field::image_size, "needs --images N (how many images each sequence holds)");
  const ModelSpec& m = r.model;
  const uint64_t images = *v.images;
  const uint64_t per_image = checked_mul(m.max_image_tiles, m.image_tile_tokens, "image tokens");
  r.images = images;
  r.image_size = v.image_size.value_or(0);
  r.model.arch->cross_attention_tokens = checked_mul(images, per_image, "image tokens");
  const uint64_t text = r.seq;
  r.seq = checked_add(r.seq, images, "sequence length");
  r.model.notes.push_back(
      "--images " + std::to_string(images) + ": " + std::to_string(images) + " <|image|> token(s) + " +
      std::to_string(text) + " text tokens = " + group_thousands(r.seq) +
      " tokens in the self-attention layers; the " + std::to_string(m.arch->cross_attention_layers) +
      " cross-attention layers cache " + std::to_string(images) + " x " + std::to_string(m.max_image_tiles) +
      " tiles x " + std::to_string(m.image_tile_tokens) + " = " +
      group_thousands(r.model.arch->cross_attention_tokens) + " image tokens each");
  if (v.image_size) {
    const uint64_t side = canvas_side(*v.image_size, m);
    r.model.notes.push_back(
        "--image-size " + std::to_string(*v.image_size) + ": the image fills " + std::to_string(side * side) +
        " of its " + std::to_string(m.max_image_tiles) + " tiles of " + std::to_string(m.image_tile_pixels) +
        " px (get_optimal_tiled_canvas)" +
        (side * side < m.max_image_tiles ? "; transformers pads the rest with zeros and caches them too"
                                         : ""));
  }
}

}  // namespace

void add_image_tokens(const PlanValues& v, EstimateRequest& r) {
  if (v.train_vision && !v.images)
    throw Error(Field::train_vision, "needs --images N (the images whose vision tower trains)");
  if (!v.images && !v.image_size) return;
  uint64_t per_image = r.model.image_tokens;
  std::string dynamic;
  if (const uint64_t f = r.model.image_token_pixels) {
    if (!v.image_size)
      throw Error(Field::image_size, "must be given for " + r.model.name +
                                         ": it turns an image into one token per " + std::to_string(f) +
                                         " x " + std::to_string(f) +
                                         " pixels, so its tokens follow the image's size");
    per_image = dynamic_image_tokens(*v.image_size, f, dynamic);
    dynamic = "--image-size " + std::to_string(*v.image_size) + ": each side " + dynamic +
              " (a multiple of " + std::to_string(f) + "), one token per " + std::to_string(f) + " x " +
              std::to_string(f) + " = " + std::to_string(per_image) +
              " tokens an image (the processor's smart_resize, default min/max pixels)";
    // Qwen2-VL's tower runs merge x merge patches for each of those tokens.
    if (r.model.vision && r.model.vision->merge) {
      VisionTower& t = *r.model.vision;
      t.projector_tokens = per_image;
      t.tokens = checked_mul(per_image, checked_mul(t.merge, t.merge, "patches"), "patches");
    }
  }
  if (per_image == 0 && r.model.image_tile_tokens && r.model.arch && r.model.arch->cross_attention_layers) {
    add_cross_attention_images(v, r);
    return;
  }
  if (per_image == 0)
    throw Error(v.images ? Field::images : Field::image_size,
                "applies to vision-language models (a config.json with a vision_config); " + r.model.name +
                    " takes no images");
  if (!v.images) throw Error(Field::image_size, "needs --images N (how many images each sequence holds)");
  if (v.image_size && r.model.image_tile_tokens) {
    per_image = tiled_image_tokens(*v.image_size, r.model, dynamic);
    if (r.model.vision && r.model.vision->tiles) {  // Llama 4: the tiles and the global one
      const uint64_t k = canvas_side(*v.image_size, r.model);
      r.model.vision->tiles = k * k > 1 ? k * k + 1 : 1;
    }
  }
  const uint64_t images = *v.images;
  r.images = images;
  r.image_size = v.image_size.value_or(0);
  const uint64_t tokens = checked_mul(images, per_image, "image tokens");
  const uint64_t text = r.seq;
  r.seq = checked_add(r.seq, tokens, "sequence length");
  r.model.notes.push_back("--images " + std::to_string(images) + ": " + std::to_string(images) + " x " +
                          std::to_string(per_image) + " image tokens + " + std::to_string(text) +
                          " text tokens = a sequence of " + group_thousands(r.seq) +
                          " for activations and the KV cache");
  if (!dynamic.empty())
    r.model.notes.push_back(dynamic);
  else if (v.image_size)
    r.model.notes.push_back("--image-size " + std::to_string(*v.image_size) +
                            ": this model's processor resizes every image to its own size, so an image is " +
                            std::to_string(per_image) + " tokens at any size");
}

void echo_image_inputs(const PlanValues& v, const EstimateRequest& r, nlohmann::json& inputs) {
  if (!r.images) return;
  inputs["seq"] = v.seq ? nlohmann::json(*v.seq) : nlohmann::json();
  inputs["images"] = r.images;
  inputs["image_size"] = r.image_size ? nlohmann::json(r.image_size) : nlohmann::json();
}

}  // namespace memplan::cli
