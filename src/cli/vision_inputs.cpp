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

}  // namespace

void add_image_tokens(const PlanValues& v, EstimateRequest& r) {
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
  }
  if (per_image == 0 && r.model.arch && r.model.arch->model_type == "mllama")
    throw Error(
        v.images ? Field::images : Field::image_size,
        "is not counted for mllama (Llama 3.2 Vision): its images join no tokens to the text but are "
        "read by the cross-attention layers, whose cache of image features memplan does not model yet");
  if (per_image == 0)
    throw Error(v.images ? Field::images : Field::image_size,
                "applies to vision-language models (a config.json with a vision_config); " + r.model.name +
                    " takes no images");
  if (!v.images) throw Error(Field::image_size, "needs --images N (how many images each sequence holds)");
  if (v.image_size && r.model.arch && r.model.arch->model_type == "llama4")
    throw Error(
        Field::image_size,
        "is not counted for llama4: its processor cuts an image into up to 16 tiles plus a global one, "
        "which memplan does not model; give --images alone (one tile, " +
            std::to_string(per_image) + " tokens, per image)");
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
