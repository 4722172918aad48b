// llama4 (Llama4ForConditionalGeneration: Llama 4 Scout and Maverick): the llama4_text MoE language
// model in text_config (hf_config_moe.cpp counts it), a vision encoder over image_size tiles, its
// pixel-shuffle adapter, and a projector to the text width. Module facts from transformers'
// modeling_llama4.py (Llama4VisionModel, Llama4UnfoldConvolution, Llama4VisionPixelShuffleMLP,
// Llama4VisionMLP2, Llama4MultiModalProjector).
#include <cmath>
#include <string>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/text.hpp"
#include "core/models/hf_config_vision.hpp"

namespace memplan::detail {

namespace {}  // namespace

FamilyCount count_llama4(ConfigReader& c, const std::string& mt) {
  auto tit = c.json().find("text_config");
  if (tit == c.json().end() || !tit->is_object())
    c.fail("text_config", "is missing or not an object (llama4 keeps its language model there)");
  nlohmann::json text = *tit;
  if (!text.contains("tie_word_embeddings") && c.has("tie_word_embeddings"))
    text["tie_word_embeddings"] = c.json()["tie_word_embeddings"];
  ConfigReader tr(text, c.file() + ": text_config");
  FamilyCount r = count_llama4_text(tr, "llama4_text");
  read_attention_kinds(tr, "llama4_text", r);  // attention_chunk_size, no_rope_layers
  r.attention_read = true;
  const Count language = r.total;
  const Count language_active = r.active;
  const uint64_t th = r.arch.hidden;

  auto vit = c.json().find("vision_config");
  if (vit == c.json().end() || !vit->is_object())
    c.fail("vision_config", "is missing or not an object (llama4 keeps its vision encoder there)");
  const nlohmann::json& vj = *vit;
  ConfigReader v(vj, c.file() + ": vision_config");
  const std::string vt = v.text({"model_type"}).value_or("llama4_vision_model");
  if (vt != "llama4_vision_model")
    v.fail("model_type", "\"" + vt + "\" is not a vision encoder memplan counts (llama4_vision_model)");
  const uint64_t d = v.need({"hidden_size"});
  const uint64_t I = v.need({"intermediate_size"});
  const uint64_t L = v.need({"num_hidden_layers"});
  v.need({"num_attention_heads"});
  const uint64_t C = v.need({"num_channels"});
  const uint64_t size = v.need({"image_size"});
  const uint64_t p = v.need({"patch_size"});
  const uint64_t pin = v.need({"projector_input_dim"});
  const uint64_t pout = v.need({"projector_output_dim"});
  const uint64_t out = v.need({"vision_output_dim"});
  const double ratio = v.real({"pixel_shuffle_ratio"}).value_or(0.0);
  if (p == 0 || size % p != 0)
    v.fail("image_size", to_s(size) + " is not a multiple of patch_size " + to_s(p));
  if (!(ratio > 0) || ratio > 1) v.fail("pixel_shuffle_ratio", "is missing or not in (0, 1]");
  const uint64_t patches = (size / p) * (size / p);

  // Llama4UnfoldConvolution: one Linear (C p p -> d) without bias; class_embedding d;
  // positional_embedding_vlm (patches + 1) x d; layernorm_pre and layernorm_post (LayerNorm).
  const Count embeddings = Count(C) * p * p * d + d + Count(patches + 1) * d + Count(2) * (Count(2) * d);
  // An encoder layer: q, k, v, o with biases, fc1 and fc2 with biases, two LayerNorms.
  const Count layer =
      Count(4) * (Count(d) * d + d) + Count(d) * I + I + Count(I) * d + d + Count(2) * (Count(2) * d);
  // vision_adapter (Llama4VisionPixelShuffleMLP -> Llama4VisionMLP2): fc1 intermediate_size ->
  // projector_input_dim and fc2 projector_output_dim -> projector_output_dim, no biases.
  const Count adapter = Count(I) * pin + Count(pout) * pout;
  const Count tower = embeddings + Count(L) * layer + adapter;
  // Llama4MultiModalProjector: linear_1 vision_output_dim -> text hidden_size, bias=False in the
  // module whatever multi_modal_projector_bias says.
  const Count projector = Count(out) * th;

  r.total = language + tower + projector;
  r.active = language_active;  // per text token, as Meta's "17B active"; the encoder runs per image
  r.tensors = r.tensors + 7 + Count(L) * 16 + 2 + 1;
  // One tile of image_size x image_size pixels: its patches, pixel-shuffled by ratio on each side.
  const double tokens = std::floor(static_cast<double>(patches) * ratio * ratio + 0.5);
  // Llama4Processor._prompt_split_image writes an image as <|image_start|>, the tiles' tokens each
  // followed by a tile separator (only when there is more than one tile), <|image|>, the global
  // tile's tokens and <|image_end|>: one tile = tokens + 3. Llama4ImageProcessorFast cuts an image
  // into at most max_patches tiles, 16 in the processor's preprocessor_config.json (not in config.json).
  r.image_tile_tokens = static_cast<uint64_t>(tokens);
  // The training ledger's view (vision_activations.cpp): the tower frozen, the projector's input.
  VisionTower t;
  t.model_type = "llama4_vision_model";
  t.layers = L;
  t.used_layers = L;  // vision_feature_layer -1: the last layer's output
  t.hidden = d;
  t.heads = v.need({"num_attention_heads"});
  t.intermediate = I;
  t.tokens = patches + 1;
  t.activation = "gelu";
  t.projector = "llama4";
  t.projector_tokens = r.image_tile_tokens;
  t.projector_width = out;
  t.text_hidden = th;
  t.tiles = 1;
  r.vision = t;
  r.image_tokens = r.image_tile_tokens + 3;
  r.max_image_tiles = 16;
  r.image_tile_pixels = size;
  r.notes.push_back(mt + ": language model (llama4_text, text_config) " + group_thousands(language.v) +
                    " parameters (" + group_thousands(language_active.v) +
                    " active); vision encoder (vision_config) " + group_thousands(tower.v) + "; projector " +
                    group_thousands(projector.v) +
                    "; active parameters are the language model's per token (the vision "
                    "encoder and projector run once per image tile)");
  r.notes.push_back(
      mt + ": one image tile = " + to_s(r.image_tile_tokens) + " language-model tokens ((image_size " +
      to_s(size) + " / patch_size " + to_s(p) + ")^2 = " + to_s(patches) +
      " patches x pixel_shuffle_ratio^2); an image of one tile is " + to_s(r.image_tokens) +
      " tokens with <|image_start|>, <|image|> and <|image_end|>; a larger one (" +
      field_ref(Field::image_size) + ") is cut into up to 16 tiles (the processor's max_patches) " +
      "plus a global one, each tile with a separator token");

  r.parts.push_back({"vision layer", L, layer.v, 0, 0,
                     "q, k, v, o " + to_s(d) + " wide with biases + fc1/fc2 " + to_s(I) +
                         " wide with biases + 2 LayerNorms",
                     "vision_config: num_hidden_layers, hidden_size, intermediate_size"});
  r.parts.push_back({"vision embeddings", 1, embeddings.v, 0, 0,
                     "patch Linear " + to_s(C * p * p) + " -> " + to_s(d) + " without bias, class token, " +
                         to_s(patches + 1) + " positions, pre/post LayerNorms",
                     "vision_config: num_channels, patch_size, image_size"});
  r.parts.push_back({"vision adapter", 1, adapter.v, 0, 0,
                     "pixel shuffle, fc1 " + to_s(I) + " -> " + to_s(pin) + ", fc2 " + to_s(pout) + " -> " +
                         to_s(pout) + ", no biases",
                     "vision_config: projector_input_dim, projector_output_dim, pixel_shuffle_ratio"});
  r.parts.push_back({"projector", 1, projector.v, 0, 0, to_s(out) + " -> " + to_s(th) + " without bias",
                     "vision_config: vision_output_dim"});
  return r;
}

}  // namespace memplan::detail
