// The vision tower in the training ledger (vision_activations.cpp) against one CLIP-style and one
// SigLIP-style encoder layer measured with saved_tensors_hooks (tests/data/vit_cpu_saved.json, from
// bench/accuracy/vit_saved.py: transformers' CLIPEncoderLayer / SiglipEncoderLayer written out,
// eager attention, torch 1.13 on the CPU, every weight trained, 2 images a batch). The CPU keeps
// LayerNorm's mean and rstd in the input's dtype (bf16 in the bf16 cases), CUDA and the ledger in
// fp32; with that read from the measurement, one layer must match to the byte.

#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/memory/vision_activations.hpp"

using namespace memplan;
using nlohmann::json;

namespace {

VisionTower tower(const json& c, uint64_t layers) {
  VisionTower t;
  const bool clip = c.at("activation") == "quick_gelu";
  t.model_type = clip ? "clip_vision_model" : "siglip_vision_model";
  t.layers = layers;
  t.used_layers = layers;
  t.hidden = c.at("hidden");
  t.heads = c.at("heads");
  t.intermediate = c.at("intermediate");
  t.tokens = c.at("seq");
  t.activation = c.at("activation").get<std::string>();
  t.projector = clip ? "llava_mlp" : "gemma3";
  t.projector_tokens = clip ? t.tokens - 1 : t.tokens / 4;
  t.text_hidden = 256;
  return t;
}

ActivationOptions cpu_options(const json& c) {
  ActivationOptions o;
  const bool bf16 = c.at("dtype") == "bfloat16";
  o.act_cost = bf16 ? ElementCost{2, 1} : ElementCost{4, 1};
  o.act_format = bf16 ? "bf16" : "fp32";
  o.attention = Attention::eager;
  o.runtime = Runtime::cpu_torch113;
  return o;
}

}  // namespace

TEST_CASE("vision tower: one trained layer equals the measured saved tensors", "[activations][vision]") {
  std::ifstream in(std::string(MEMPLAN_TEST_DATA_DIR) + "/vit_cpu_saved.json");
  REQUIRE(in.good());
  const json doc = json::parse(in);
  size_t cases = 0;
  for (const json& c : doc.at("cases")) {
    INFO(c.at("case").get<std::string>());
    const uint64_t images = c.at("batch");
    const VisionActivations v = vision_activations(tower(c, 4), images, true, true, cpu_options(c));
    const uint64_t stats = c.at("layernorm_stats_bytes_cpu");
    const bool bf16 = c.at("dtype") == "bfloat16";
    const uint64_t measured = c.at("saved_bytes_cpu").get<uint64_t>() + (bf16 ? stats : 0);
    CHECK(images * v.layer_bytes_per_image == measured);
    ++cases;
  }
  CHECK(cases == 4);
}

TEST_CASE("vision tower: the quick_gelu layer by hand (CLIP ViT-L/14-336, bf16, sdpa on CUDA)",
          "[activations][vision]") {
  // One LLaVA-1.5 tower layer over 577 tokens (576 patches + the class token), hidden 1024, 16
  // heads, MLP 4096, bf16: LayerNorm input, mean and rstd (fp32), output; q, k, v, the attention
  // output and sdpa's fp32 log-sum-exp (16 x 577); the second LayerNorm's three; fc1's output,
  // sigmoid(1.702 x) and their product.
  VisionTower t;
  t.model_type = "clip_vision_model";
  t.layers = 24;
  t.used_layers = 23;
  t.hidden = 1024;
  t.heads = 16;
  t.intermediate = 4096;
  t.tokens = 577;
  t.activation = "quick_gelu";
  t.projector = "llava_mlp";
  t.projector_tokens = 576;
  t.text_hidden = 4096;
  ActivationOptions o;
  o.act_cost = {2, 1};
  o.act_format = "bf16";
  const uint64_t sh = 577ull * 1024 * 2, stats = 577ull * 2 * 4;
  const uint64_t layer = 2 * (sh + stats + sh) + 4 * sh + 16ull * 577 * 4 + 3ull * 577 * 4096 * 2;
  const VisionActivations trained = vision_activations(t, 2, true, true, o);
  CHECK(trained.layer_bytes_per_image == layer);
  const uint64_t projector = 576ull * 1024 * 2 + 2 * 576ull * 4096 * 2;  // linear_1 input, GELU in and out
  CHECK(trained.projector_bytes_per_image == projector);
  CHECK(trained.tower_bytes_per_image == 23 * layer + sh + stats);  // + pre_layrnorm
  CHECK(trained.bytes_per_sample == 2 * (trained.tower_bytes_per_image + projector));

  const VisionActivations frozen = vision_activations(t, 2, false, true, o);
  CHECK(frozen.tower_bytes_per_image == 0);
  CHECK(frozen.bytes_per_sample == 2 * projector);
  // its largest working set: the MLP's (input, LayerNorm output, three 577 x 4096 tensors)
  CHECK(frozen.transient_bytes_per_image == 2 * sh + 3ull * 577 * 4096 * 2);
  const VisionActivations lora = vision_activations(t, 2, false, false, o);
  CHECK(lora.bytes_per_sample == 0);
}
