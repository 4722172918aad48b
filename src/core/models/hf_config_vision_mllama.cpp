// mllama (MllamaForConditionalGeneration, Llama 3.2 Vision): the image is cut into up to
// max_num_tiles tiles; a vision encoder of local layers then gated global layers reads every tile's
// patches plus a class token; a projector maps the concatenated layer outputs (vision_output_dim)
// to the text width; the language model is a llama decoder in which the layers listed in
// cross_attention_layers attend to the image instead of the text. Module facts from transformers'
// modeling_mllama.py (MllamaVisionModel, MllamaTextCrossAttention, MllamaCrossAttentionDecoderLayer).
#include <string>

#include <memplan/quantity.hpp>
#include "core/base/text.hpp"
#include "core/models/hf_config_vision.hpp"

namespace memplan::detail {

namespace {

const nlohmann::json& sub_object(ConfigReader& c, const char* key) {
  auto it = c.json().find(key);
  if (it == c.json().end() || !it->is_object())
    c.fail(key, "is missing or not an object (mllama keeps its parts there)");
  return *it;
}

}  // namespace

FamilyCount count_mllama(ConfigReader& c, const std::string& mt) {
  // The language model: a llama decoder (no biases, RMSNorm, SwiGLU) of num_hidden_layers layers.
  nlohmann::json text = sub_object(c, "text_config");
  if (!text.contains("tie_word_embeddings") && c.has("tie_word_embeddings"))
    text["tie_word_embeddings"] = c.json()["tie_word_embeddings"];
  ConfigReader tr(text, c.file() + ": text_config");
  FamilyCount r = count_gated_decoder(tr, "llama");
  read_attention_kinds(tr, "llama", r);
  r.attention_read = true;
  const TransformerArch& a = r.arch;
  const uint64_t h = a.hidden;
  const uint64_t hd = a.resolved_head_dim();

  auto cl = text.find("cross_attention_layers");
  if (cl == text.end() || !cl->is_array())
    tr.fail("cross_attention_layers", "is missing or not a list of layer indices");
  for (const nlohmann::json& i : *cl)
    if (!i.is_number_unsigned() || i.get<uint64_t>() >= a.layers)
      tr.fail("cross_attention_layers", "holds " + i.dump() + ", not a layer index below " + to_s(a.layers));
  const uint64_t X = cl->size();
  // A cross-attention layer has the self-attention layer's q/k/v/o and MLP, plus q_norm and k_norm
  // (RMSNorm over head_dim) and two tanh gates (cross_attn_attn_gate, cross_attn_mlp_gate), one
  // number each. The embedding table has 8 rows more than vocab_size (the image token and padding:
  // nn.Embedding(vocab_size + 8, hidden) in MllamaTextModel); the lm_head has vocab_size rows.
  const Count cross_extra = Count(2) * hd + 2;
  const Count language = r.total + Count(X) * cross_extra + Count(8) * h;

  // The vision encoder.
  const nlohmann::json& vj = sub_object(c, "vision_config");
  ConfigReader v(vj, c.file() + ": vision_config");
  const uint64_t d = v.need({"hidden_size"});
  const uint64_t I = v.need({"intermediate_size"});
  const uint64_t L = v.need({"num_hidden_layers"});
  const uint64_t G = v.need({"num_global_layers"});
  v.need({"attention_heads", "num_attention_heads"});
  const uint64_t C = v.need({"num_channels"});
  const uint64_t size = v.need({"image_size"});
  const uint64_t p = v.need({"patch_size"});
  const uint64_t tiles = v.need({"max_num_tiles"});
  const uint64_t out = v.need({"vision_output_dim"});
  if (p == 0 || size % p != 0)
    v.fail("image_size", to_s(size) + " is not a multiple of patch_size " + to_s(p));
  auto ar = vj.find("supported_aspect_ratios");
  if (ar == vj.end() || !ar->is_array() || ar->empty())
    v.fail("supported_aspect_ratios", "is missing or empty (its length sizes the tile embeddings)");
  const uint64_t ratios = ar->size();

  const uint64_t positions = (size / p) * (size / p) + 1;  // patches + the class token
  // patch_embedding: Conv2d without bias; class_embedding; gated_positional_embedding (gate,
  // embedding positions x d, tile_embedding (ratios + 1) x (tiles positions d)); pre- and
  // post-tile positional embeddings, each (ratios + 1) x (tiles d) and a gate; two LayerNorms.
  const Count patch = Count(C) * p * p * d;
  const Count gated_positions = Count(1) + Count(positions) * d + Count(ratios + 1) * tiles * positions * d;
  const Count tile_positions = Count(2) * (Count(ratios + 1) * tiles * d + 1);
  const Count embeddings = patch + d + gated_positions + tile_positions + Count(2) * (Count(2) * d);
  // An encoder layer: q, k, v, o without biases, fc1 and fc2 with biases, two LayerNorms; the
  // global layers add gate_attn and gate_ffn (one number each).
  const Count layer = Count(4) * d * d + Count(d) * I + I + Count(I) * d + d + Count(2) * (Count(2) * d);
  const Count tower = embeddings + Count(L) * layer + Count(G) * (layer + 2);
  // multi_modal_projector: Linear(vision_output_dim, text hidden) with a bias.
  const Count projector = Count(out) * h + h;

  r.total = language + tower + projector;
  r.arch.cross_attention_layers = X;
  // The training ledger's view (vision_activations.cpp): the tower frozen, the projector's input.
  VisionTower vt;
  vt.model_type = "mllama_vision_model";
  vt.layers = L;
  vt.used_layers = L;
  vt.hidden = d;
  vt.heads = v.need({"attention_heads", "num_attention_heads"});
  vt.intermediate = I;
  vt.tokens = positions;
  vt.activation = "gelu";
  vt.projector = "mllama";
  vt.projector_tokens = positions;
  vt.projector_width = out;
  vt.text_hidden = h;
  vt.tiles = tiles;
  r.vision = vt;
  r.image_tile_tokens = positions;
  r.max_image_tiles = tiles;
  r.image_tile_pixels = size;
  r.tensors = r.tensors + Count(X) * 4 + 13 + Count(L) * 12 + Count(G) * 14 + 2;
  r.image_tokens = 0;
  r.notes.push_back(mt + ": language model (text_config, " + to_s(a.layers) + " layers, " + to_s(X) +
                    " of them cross-attention: cross_attention_layers) " + group_thousands(language.v) +
                    " parameters, embedding vocab_size + 8 rows; vision encoder (vision_config: " + to_s(L) +
                    " layers + " + to_s(G) + " gated global layers, " + to_s(tiles) + " tiles of " +
                    to_s(positions) + " positions) " + group_thousands(tower.v) + "; projector " +
                    group_thousands(projector.v));
  r.notes.push_back(
      mt + ": an image adds one <|image|> token to the text; the " + to_s(X) +
      " cross-attention layers cache k and v of its features instead of the text's: " + to_s(tiles) +
      " tiles (max_num_tiles; transformers' processor pads every image to " + "that many) x " +
      to_s(positions) + " (patches + class token) = " + to_s(tiles * positions) +
      " tokens an image; the other " + to_s(a.layers - X) + " layers cache the text");

  r.parts.push_back(
      {"cross-attention extras", X, cross_extra.v, 0, 0,
       "added to the " + to_s(X) + " of the " + to_s(a.layers) +
           " layers above that attend to the image (k and v read the projected image features): "
           "q_norm and k_norm " +
           to_s(hd) + " wide, tanh gates on attention and MLP",
       "text_config: cross_attention_layers"});
  r.parts.push_back({"embedding rows beyond vocab_size", 8, h, 0, 0,
                     "nn.Embedding(vocab_size + 8, hidden_size): the <|image|> token and padding rows",
                     "text_config: vocab_size, hidden_size"});
  r.parts.push_back({"vision layer", L, layer.v, 0, 0,
                     "q, k, v, o " + to_s(d) + " wide without biases + fc1/fc2 " + to_s(I) +
                         " wide with biases + 2 LayerNorms",
                     "vision_config: num_hidden_layers, hidden_size, intermediate_size"});
  r.parts.push_back({"vision global layer", G, (layer + 2).v, 0, 0,
                     "as a vision layer + gate_attn and gate_ffn", "vision_config: num_global_layers"});
  r.parts.push_back({"vision embeddings", 1, embeddings.v, 0, 0,
                     "patch Conv2d " + to_s(C) + " x " + to_s(p) + " x " + to_s(p) +
                         " without bias, class token, gated position and tile embeddings (" + to_s(ratios) +
                         " aspect ratios + 1), pre/post LayerNorms",
                     "vision_config: image_size, patch_size, max_num_tiles, supported_aspect_ratios"});
  r.parts.push_back({"projector", 1, projector.v, 0, 0, to_s(out) + " -> " + to_s(h) + " with a bias",
                     "vision_config: vision_output_dim"});
  return r;
}

}  // namespace memplan::detail
