// Qwen2-VL / Qwen2.5-VL, Llama 3.2 Vision (mllama) and Llama 4 (llama4) config.json files counted
// against the checkpoints' published parameter counts (the Hub's safetensors metadata) and their
// model.safetensors.index.json total_size. Sources: tests/data/hf_configs/SOURCES.md.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include <memplan/error.hpp>
#include "core/memory/kv_cache.hpp"
#include "core/models/hf_config.hpp"

using namespace memplan;

namespace {
const std::string k_vlm_dir = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/";

const LayerKind* layer_kind_of(const ModelSpec& m, const std::string& name) {
  auto it = std::find_if(m.layer_kinds.begin(), m.layer_kinds.end(),
                         [&](const LayerKind& k) { return k.kind == name; });
  return it == m.layer_kinds.end() ? nullptr : &*it;
}

std::string vlm_error_of(const std::string& json) {
  try {
    parse_hf_config_detail(json, "config.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("Qwen2-VL-7B-Instruct: Qwen2-7B + vision tower + merger with a LayerNorm ln_q",
          "[hf_config][vision][qwen2_vl]") {
  // 8,291,375,616 = the Hub's safetensors parameter count (BF16) of Qwen/Qwen2-VL-7B-Instruct;
  // the checkpoint's model.safetensors.index.json total_size is 16,582,751,232 = 2 B x that.
  HfConfig c = read_hf_config_detail(k_vlm_dir + "Qwen2-VL-7B-Instruct.json");
  const ModelSpec& m = c.model;
  CHECK(m.parameters == 8291375616ull);
  CHECK(m.parameters * 2 == 16582751232ull);
  CHECK(m.weight_format == "bf16");
  // The language model drives activations and the KV cache: Qwen2-7B's 28 layers, 4 kv heads.
  CHECK(m.arch->hidden == 3584);
  CHECK(m.arch->layers == 28);
  CHECK(m.arch->resolved_kv_heads() == 4);
  CHECK(m.arch->window_layers == 0);  // use_sliding_window false: sliding_window 32768 is inert
  // Dynamic resolution: a token per 28 x 28 pixels (patch 14 x merge 2).
  CHECK(m.image_token_pixels == 28);
  REQUIRE(layer_kind_of(m, "vision block"));
  CHECK(layer_kind_of(m, "vision block")->layers == 32);
  REQUIRE(layer_kind_of(m, "vision merger"));
}

TEST_CASE("Qwen2.5-VL-7B-Instruct: RMSNorm tower, gated MLP, ln_q without a bias",
          "[hf_config][vision][qwen2_vl]") {
  // 8,292,166,656 parameters: the Hub's safetensors count of Qwen/Qwen2.5-VL-7B-Instruct; its
  // index's total_size 16,584,333,312 B (the Qwen-Image text encoder, the same checkpoint) = 2 x.
  HfConfig c = read_hf_config_detail(k_vlm_dir + "Qwen2.5-VL-7B-Instruct.json");
  const ModelSpec& m = c.model;
  CHECK(m.parameters == 8292166656ull);
  CHECK(m.parameters * 2 == 16584333312ull);
  CHECK(m.image_token_pixels == 28);
  // The two mergers have the same matrices; Qwen2-VL's ln_q is a LayerNorm (weight and bias),
  // Qwen2.5-VL's an RMSNorm: exactly the embed width, 1,280, apart.
  HfConfig q2 = read_hf_config_detail(k_vlm_dir + "Qwen2-VL-7B-Instruct.json");
  REQUIRE(layer_kind_of(m, "vision merger"));
  REQUIRE(layer_kind_of(q2.model, "vision merger"));
  CHECK(layer_kind_of(q2.model, "vision merger")->parameters -
            layer_kind_of(m, "vision merger")->parameters ==
        1280);
}

TEST_CASE("Qwen2-VL configs without what they need are refused by field", "[hf_config][vision][qwen2_vl]") {
  const std::string text = R"("vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944,
      "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4)";
  CHECK(vlm_error_of(R"({"model_type": "qwen2_vl", )" + text + "}") ==
        "config.json: vision_config: is missing (a qwen2_vl config describes its vision tower there)");
  CHECK(vlm_error_of(R"({"model_type": "qwen2_5_vl", )" + text +
                     R"(, "vision_config": {"depth": 32, "hidden_size": 1280, "num_heads": 16,
                      "intermediate_size": 3420, "out_hidden_size": 2048}})") ==
        "config.json: vision_config: out_hidden_size: 2048 is not the language model's hidden_size 3584 (the "
        "merger's output is the language model's input)");
}

TEST_CASE("Llama-3.2-11B-Vision: cross-attention layers, gated global vision layers, tiles",
          "[hf_config][vision][mllama]") {
  // 10,670,220,835 = the Hub's safetensors parameter count (BF16) of
  // meta-llama/Llama-3.2-11B-Vision-Instruct (odd: the tanh gates are one number each).
  HfConfig c = read_hf_config_detail(k_vlm_dir + "Llama-3.2-11B-Vision-Instruct.json");
  const ModelSpec& m = c.model;
  CHECK(m.parameters == 10670220835ull);
  CHECK(m.arch->layers == 40);
  CHECK(m.arch->hidden == 4096);
  REQUIRE(layer_kind_of(m, "cross-attention extras"));
  CHECK(layer_kind_of(m, "cross-attention extras")->layers == 8);
  REQUIRE(layer_kind_of(m, "vision global layer"));
  CHECK(layer_kind_of(m, "vision global layer")->layers == 8);
  CHECK(m.image_tokens == 0);  // images reach the text through cross-attention, not as tokens
  // The cache per layer kind: 32 self-attention layers over the text, 8 cross-attention layers
  // (cross_attention_layers) over the image's max_num_tiles 4 x ((560 / 14)^2 + 1) = 6,404 tokens.
  CHECK(m.arch->cross_attention_layers == 8);
  CHECK(m.max_image_tiles == 4);
  CHECK(m.image_tile_tokens == 1601);
  REQUIRE(layer_kind_of(m, "cross attention"));
  CHECK(layer_kind_of(m, "cross attention")->layers == 8);
  CHECK(layer_kind_of(m, "cross attention")->kv_elements_per_token == 2 * 8 * 128);
  REQUIRE(layer_kind_of(m, "full attention"));
  CHECK(layer_kind_of(m, "full attention")->layers == 32);
  TransformerArch a = *m.arch;
  a.cross_attention_tokens = 2 * 6404;  // two images
  InferenceOptions o;
  o.seq = 1000;
  // (32 x 1,000 + 8 x 12,808) x 2 x 8 x 128 x 2 B
  CHECK(inference_memory(a, o).bytes == (32ull * 1000 + 8ull * 12808) * 4096);
}

TEST_CASE("Llama 4 Scout and Maverick: MoE language model + vision encoder + projector",
          "[hf_config][vision][llama4]") {
  // The Hub's safetensors parameter counts (BF16): Llama-4-Scout-17B-16E(-Instruct) 108,641,793,536,
  // Llama-4-Maverick-17B-128E(-Instruct) 401,583,781,376. Both exceed their text backbones by the
  // same vision encoder and projector; "17B active" (Meta's model cards).
  const ModelSpec scout = read_hf_config(k_vlm_dir + "Llama-4-Scout-17B-16E.json");
  CHECK(scout.parameters == 108641793536ull);
  CHECK(scout.active_parameters == 17172894720ull);
  CHECK(scout.active_parameters / 1000000000 == 17);
  CHECK(scout.image_tile_tokens == 144);   // (336 / 14)^2 = 576 patches, pixel shuffle 0.5 x 0.5
  CHECK(scout.image_tokens == 147);        // one tile + <|image_start|>, <|image|>, <|image_end|>
  CHECK(scout.arch->window_layers == 36);  // no_rope_layers: 36 chunked, 12 global
  const ModelSpec maverick = read_hf_config(k_vlm_dir + "Llama-4-Maverick-17B-128E.json");
  CHECK(maverick.parameters == 401583781376ull);
  CHECK(maverick.active_parameters / 1000000000 == 17);
  CHECK(maverick.arch->dense_layers == 24);  // interleave_moe_layer_step 2
  REQUIRE(layer_kind_of(maverick, "vision layer"));
  CHECK(layer_kind_of(maverick, "vision layer")->layers == 34);
  CHECK(vlm_error_of(R"({"model_type": "llama4", "text_config": {"model_type": "llama4_text", "vocab_size": 8,
      "hidden_size": 8, "intermediate_size": 8, "intermediate_size_mlp": 16, "num_hidden_layers": 1,
      "num_attention_heads": 1, "num_local_experts": 1, "num_experts_per_tok": 1},
      "vision_config": {"model_type": "siglip_vision_model"}})") ==
        "config.json: vision_config: model_type: \"siglip_vision_model\" is not a vision encoder memplan "
        "counts "
        "(llama4_vision_model)");
}

TEST_CASE("Qwen2.5-VL in transformers' newer layout: the language model in text_config",
          "[hf_config][vision][qwen2_vl]") {
  // transformers >= 4.53 saves Qwen2.5-VL with a text_config; the same 7B model, the same count.
  const ModelSpec m = parse_hf_config_detail(R"({"model_type": "qwen2_5_vl", "tie_word_embeddings": false,
      "text_config": {"model_type": "qwen2_5_vl_text", "vocab_size": 152064, "hidden_size": 3584,
        "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28,
        "num_key_value_heads": 4, "sliding_window": 32768, "use_sliding_window": false},
      "vision_config": {"depth": 32, "hidden_size": 1280, "intermediate_size": 3420, "num_heads": 16,
        "in_channels": 3, "out_hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2,
        "temporal_patch_size": 2}})",
                                             "config.json")
                          .model;
  CHECK(m.parameters == 8292166656ull);
  CHECK(m.arch->window_layers == 0);
}
