// Vision-language config.json files: each part's parameters and the tokens of one image, against
// published counts.
#include <catch2/catch.hpp>

#include <string>

#include <memplan/error.hpp>
#include "core/models/hf_config.hpp"

using namespace memplan;

namespace {
const std::string k_vision_dir = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/";
}

TEST_CASE("LLaVA-1.5-7B: language model + CLIP ViT-L/14-336 + projector", "[hf_config][vision]") {
  // sum(p.numel()) of LlavaForConditionalGeneration(llava-hf/llava-1.5-7b-hf) = 7,063,427,072
  // (printed in two public GitHub files). Its parts, from the modules: Llama-2-7B with a
  // 32,064-row vocabulary (6,738,415,616 + 2 x 64 x 4096), CLIP ViT-L/14 at 336 px and the
  // 1024 -> 4096 -> 4096 projector.
  HfConfig c = read_hf_config_detail(k_vision_dir + "llava-1.5-7b-hf.json");
  CHECK(c.model.parameters == 7063427072ull);
  CHECK(c.model.arch->hidden == 4096);  // the language model's architecture drives activations and KV
  CHECK(c.model.arch->layers == 32);
  // (336 / 14)^2 = 576 image tokens (vision_feature_select_strategy "default" drops the class token).
  CHECK(c.model.image_tokens == 576);
  CHECK(c.family.find("llava") != std::string::npos);
}

TEST_CASE("a llava config with an unknown vision tower is refused by name", "[hf_config][vision]") {
  try {
    parse_hf_config_detail(
        R"({"model_type": "llava", "vision_config": {"model_type": "siglip_vision_model"}})", "config.json");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(
        std::string(e.what()) ==
        "config.json: vision_config: model_type \"siglip_vision_model\" is not a vision tower memplan counts "
        "(clip_vision_model)");
  }
}

TEST_CASE("Gemma 3 4B: gemma3_text + SigLIP so400m/14 at 896 px + projector", "[hf_config][vision]") {
  // 4,300,079,472 = keras-hub medgemma_4b "params" (Gemma 3 4B's architecture with its 262,208-row
  // vocabulary; keras-hub's gemma3_4b, 4,299,915,632, is 64 x 2560 smaller: a 262,144-row table).
  // The text_config names few keys: Gemma3TextConfig's defaults (8 heads, 4 kv heads, head_dim 256,
  // vocabulary 262,208) fill the rest, as transformers does.
  HfConfig c = read_hf_config_detail(k_vision_dir + "gemma-3-4b-it.json");
  CHECK(c.model.parameters == 4300079472ull);
  CHECK(c.model.image_tokens == 256);  // mm_tokens_per_image
  CHECK(c.model.arch->hidden == 2560);
}

TEST_CASE("Gemma 3 4B: the sliding window read from text_config", "[hf_config][vision][attention]") {
  // Gemma 3 (technical report): five local layers of a 1,024-token window per global layer. In
  // transformers, layer i is full when (i + 1) % 6 == 0: of 34 layers, 5 full and 29 sliding.
  const ModelSpec m = read_hf_config(k_vision_dir + "gemma-3-4b-it.json");
  CHECK(m.arch->window_layers == 29);
  CHECK(m.arch->attention_window == 1024);
}

TEST_CASE("a llava config's text_config sliding window is read", "[hf_config][vision][attention]") {
  // A Mistral-7B-v0.1 language model (sliding_window 4096, every layer: MistralAttention) inside
  // llava: its 32 layers hold at most 4,096 tokens each.
  const ModelSpec m = parse_hf_config_detail(R"({"model_type": "llava",
      "text_config": {"model_type": "mistral", "vocab_size": 32064, "hidden_size": 4096,
        "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
        "num_key_value_heads": 8, "sliding_window": 4096},
      "vision_config": {"hidden_size": 1024, "image_size": 336, "intermediate_size": 4096,
        "model_type": "clip_vision_model", "num_attention_heads": 16, "num_hidden_layers": 24,
        "patch_size": 14, "projection_dim": 768}})",
                                             "config.json")
                          .model;
  CHECK(m.arch->window_layers == 32);
  CHECK(m.arch->attention_window == 4096);
}
