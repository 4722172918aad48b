#include "cli/vision_inputs.hpp"

#include <string>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/checked.hpp"

namespace memplan::cli {

void add_image_tokens(const PlanValues& v, EstimateRequest& r) {
  if (!v.images && !v.image_size) return;
  const uint64_t per_image = r.model.image_tokens;
  if (per_image == 0)
    throw Error(v.images ? Field::images : Field::image_size,
                "applies to vision-language models (a config.json with a vision_config); " + r.model.name +
                    " takes no images");
  if (!v.images) throw Error(Field::image_size, "needs --images N (how many images each sequence holds)");
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
  if (v.image_size)
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
