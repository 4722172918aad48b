// Vision-language models: the language model is counted by its own family (text_config), the
// vision tower and the projector here, each part named in the notes with the fields it came from.
// Module facts from transformers' modeling_llava.py and modeling_clip.py.
#include "core/models/hf_config_vision.hpp"

#include <iterator>
#include <string>

#include <memplan/quantity.hpp>
#include "core/base/text.hpp"
#include "core/models/hf_config_dense_families.hpp"
#include "core/models/parameter_count.hpp"

namespace memplan::detail {

namespace {

// LlamaConfig's defaults: what transformers gives a llava text_config that omits a field.
const std::pair<const char*, uint64_t> k_llama_defaults[] = {
    {"vocab_size", 32000},     {"hidden_size", 4096},       {"intermediate_size", 11008},
    {"num_hidden_layers", 32}, {"num_attention_heads", 32}, {"max_position_embeddings", 2048},
};

// CLIPVisionConfig's defaults.
const std::pair<const char*, uint64_t> k_clip_defaults[] = {
    {"hidden_size", 768}, {"intermediate_size", 3072}, {"num_hidden_layers", 12}, {"num_attention_heads", 12},
    {"num_channels", 3},  {"image_size", 224},         {"patch_size", 32},
};

// Gemma3TextConfig's and SiglipVisionConfig's defaults.
const std::pair<const char*, uint64_t> k_gemma3_text_defaults[] = {
    {"vocab_size", 262208},      {"hidden_size", 2304},
    {"intermediate_size", 9216}, {"num_hidden_layers", 26},
    {"num_attention_heads", 8},  {"num_key_value_heads", 4},
    {"head_dim", 256},           {"max_position_embeddings", 131072},
    {"sliding_window", 4096},
};
const std::pair<const char*, uint64_t> k_siglip_defaults[] = {
    {"hidden_size", 768}, {"intermediate_size", 3072}, {"num_hidden_layers", 12}, {"num_attention_heads", 12},
    {"num_channels", 3},  {"image_size", 224},         {"patch_size", 16},
};

// The sub-config `key` (an object; absent = {}), with `defaults` filled in for missing fields
// and a note naming each default used.
nlohmann::json sub_config(ConfigReader& c, const char* key, const std::pair<const char*, uint64_t>* defaults,
                          size_t n, const char* owner, std::vector<std::string>& notes) {
  nlohmann::json j = nlohmann::json::object();
  auto it = c.json().find(key);
  if (it != c.json().end() && !it->is_null()) {
    if (!it->is_object()) c.fail(key, "is not an object");
    j = *it;
  }
  std::string used;
  for (size_t i = 0; i < n; ++i)
    if (!j.contains(defaults[i].first) || j[defaults[i].first].is_null()) {
      j[defaults[i].first] = defaults[i].second;
      used += std::string(used.empty() ? "" : ", ") + defaults[i].first + " " + to_s(defaults[i].second);
    }
  if (!used.empty())
    notes.push_back(std::string(key) + " omits fields; " + owner + "'s defaults used: " + used);
  return j;
}

// CLIPVisionModel: patch embedding (a convolution without bias), class embedding, position
// embedding (patches + 1), pre- and post-LayerNorm, encoder layers of q/k/v/out with biases,
// two LayerNorms and a two-layer MLP with biases.
struct Tower {
  Count parameters;
  Count tensors;
  uint64_t patches = 0;
};

Tower clip_vision(ConfigReader& v) {
  const uint64_t h = v.need({"hidden_size"});
  const uint64_t I = v.need({"intermediate_size"});
  const uint64_t L = v.need({"num_hidden_layers"});
  v.need({"num_attention_heads"});
  const uint64_t C = v.need({"num_channels"});
  const uint64_t size = v.need({"image_size"});
  const uint64_t p = v.need({"patch_size"});
  if (size % p != 0) v.fail("image_size", to_s(size) + " is not a multiple of patch_size " + to_s(p));
  Tower t;
  t.patches = (size / p) * (size / p);
  const Count embeddings = Count(C) * p * p * h + h + (Count(t.patches) + 1) * h;
  const Count layer = Count(4) * (Count(h) * h + h) + Count(h) * I + I + Count(I) * h + h + Count(4) * h;
  t.parameters = embeddings + Count(2) * h + Count(L) * layer + Count(2) * h;
  t.tensors = Count(3) + 2 + Count(L) * 16 + 2;
  return t;
}

// SiglipVisionModel without its pooling head: patch embedding (a convolution with bias), position
// embedding (one per patch, no class token), encoder layers as CLIP's, post-LayerNorm.
Tower siglip_vision(ConfigReader& v) {
  if (v.flag_or({"vision_use_head"}, true))
    v.fail("vision_use_head",
           "true: the attention-pooling head is not counted by memplan (Gemma 3 sets false)");
  const uint64_t h = v.need({"hidden_size"});
  const uint64_t I = v.need({"intermediate_size"});
  const uint64_t L = v.need({"num_hidden_layers"});
  v.need({"num_attention_heads"});
  const uint64_t C = v.need({"num_channels"});
  const uint64_t size = v.need({"image_size"});
  const uint64_t p = v.need({"patch_size"});
  if (size % p != 0) v.fail("image_size", to_s(size) + " is not a multiple of patch_size " + to_s(p));
  Tower t;
  t.patches = (size / p) * (size / p);
  const Count embeddings = Count(C) * p * p * h + h + Count(t.patches) * h;
  const Count layer = Count(4) * (Count(h) * h + h) + Count(h) * I + I + Count(I) * h + h + Count(4) * h;
  t.parameters = embeddings + Count(L) * layer + Count(2) * h;
  t.tensors = Count(3) + Count(L) * 16 + 2;
  return t;
}

// What the training ledger needs of a CLIP or SigLIP tower (vision_activations.cpp): a ViT layer's
// sizes and activation, the tokens one image runs through each layer, and the projector after it.
// hidden_act must be the one the ledger's MLP follows.
VisionTower tower_for_ledger(ConfigReader& v, const char* type, const char* act, uint64_t tokens,
                             uint64_t used_layers, const char* projector, uint64_t projector_tokens,
                             uint64_t text_hidden) {
  const std::string hidden_act = v.text({"hidden_act"}).value_or(act);
  if (hidden_act != act)
    v.fail("hidden_act",
           "\"" + hidden_act + "\" is not the " + type + " activation memplan's ledger counts (" + act + ")");
  VisionTower t;
  t.model_type = type;
  t.layers = v.need({"num_hidden_layers"});
  t.used_layers = used_layers;
  t.hidden = v.need({"hidden_size"});
  t.heads = v.need({"num_attention_heads"});
  t.intermediate = v.need({"intermediate_size"});
  t.tokens = tokens;
  t.activation = act;
  t.projector = projector;
  t.projector_tokens = projector_tokens;
  t.text_hidden = text_hidden;
  return t;
}

// The inspect row of a tower the ledger counts: one layer's parameters, and what training keeps.
LayerKind vision_layer_kind(const VisionTower& t, const std::string& fields) {
  const Count h = t.hidden, I = t.intermediate;
  const Count layer = Count(4) * (h * h + h) + h * I + I + I * h + h + Count(4) * h;
  return {"vision layer",
          t.layers,
          layer.v,
          0,
          0,
          t.model_type + " encoder layer: q/k/v/out " + to_s(t.hidden) + " x " + to_s(t.hidden) +
              " with biases, MLP " + to_s(t.hidden) + " -> " + to_s(t.intermediate) + " (" + t.activation +
              "), two LayerNorms; in training each image runs " + to_s(t.tokens) + " tokens x " +
              to_s(t.hidden) + " through " + to_s(t.used_layers) + " layer(s) that reach the loss",
          fields};
}

}  // namespace

FamilyCount count_gemma3(ConfigReader& c, const std::string& mt) {
  std::vector<std::string> notes;
  nlohmann::json text = sub_config(c, "text_config", k_gemma3_text_defaults,
                                   std::size(k_gemma3_text_defaults), "Gemma3TextConfig", notes);
  ConfigReader tr(text, c.file() + ": text_config");
  FamilyCount r = count_gemma3_text(tr, "gemma3_text");
  read_attention_kinds(tr, "gemma3_text", r);  // sliding_window lives in text_config
  r.attention_read = true;
  r.notes.insert(r.notes.begin(), notes.begin(), notes.end());
  const Count language = r.total;

  std::vector<std::string> vnotes;
  nlohmann::json vision = sub_config(c, "vision_config", k_siglip_defaults, std::size(k_siglip_defaults),
                                     "SiglipVisionConfig", vnotes);
  const std::string vision_type = vision.value("model_type", std::string("siglip_vision_model"));
  if (vision_type != "siglip_vision_model")
    c.fail("vision_config",
           "model_type \"" + vision_type + "\" is not a vision tower memplan counts (siglip_vision_model)");
  ConfigReader vr(vision, c.file() + ": vision_config");
  const Tower tower = siglip_vision(vr);
  r.notes.insert(r.notes.end(), vnotes.begin(), vnotes.end());

  // Gemma3MultiModalProjector: an RMSNorm over the vision width, then one matrix to the text width.
  const uint64_t vh = vr.need({"hidden_size"});
  const Count projector = Count(vh) * r.arch.hidden + vh;
  r.image_tokens = c.count_or({"mm_tokens_per_image"}, 256);
  r.vision = tower_for_ledger(vr, "siglip_vision_model", "gelu_pytorch_tanh", tower.patches,
                              vr.need({"num_hidden_layers"}), "gemma3", r.image_tokens, r.arch.hidden);
  r.parts.push_back(vision_layer_kind(*r.vision,
                                      "vision_config: num_hidden_layers, hidden_size, "
                                      "intermediate_size, num_attention_heads, image_size, patch_size"));
  r.total = language + tower.parameters + projector;
  r.tensors = r.tensors + tower.tensors + 2;
  r.notes.push_back(mt + ": language model (gemma3_text, text_config) " + group_thousands(language.v) +
                    " parameters; vision tower (siglip_vision_model, vision_config) " +
                    group_thousands(tower.parameters.v) +
                    "; projector (mm_soft_emb_norm, mm_input_projection) " + group_thousands(projector.v));
  r.notes.push_back(mt + ": one image = " + to_s(r.image_tokens) +
                    " language-model tokens (mm_tokens_per_image; " + to_s(tower.patches) +
                    " patches pooled); the processor resizes every image to image_size");
  return r;
}

FamilyCount count_llava(ConfigReader& c, const std::string& mt) {
  std::vector<std::string> notes;
  // The language model.
  nlohmann::json text =
      sub_config(c, "text_config", k_llama_defaults, std::size(k_llama_defaults), "LlamaConfig", notes);
  const std::string text_type = text.value("model_type", std::string("llama"));
  if (text_type != "llama" && text_type != "mistral" && text_type != "qwen2")
    c.fail("text_config",
           "model_type \"" + text_type +
               "\" is not a language model memplan counts inside llava (llama, mistral, qwen2)");
  if (!text.contains("tie_word_embeddings") && c.has("tie_word_embeddings"))
    text["tie_word_embeddings"] = c.json()["tie_word_embeddings"];
  ConfigReader tr(text, c.file() + ": text_config");
  FamilyCount r = count_gated_decoder(tr, text_type);
  read_attention_kinds(tr, text_type, r);  // a mistral text_config's sliding_window, qwen2's rules
  r.attention_read = true;
  r.notes.insert(r.notes.begin(), notes.begin(), notes.end());
  const Count language = r.total;

  // The vision tower.
  std::vector<std::string> vnotes;
  nlohmann::json vision =
      sub_config(c, "vision_config", k_clip_defaults, std::size(k_clip_defaults), "CLIPVisionConfig", vnotes);
  const std::string vision_type = vision.value("model_type", std::string("clip_vision_model"));
  if (vision_type != "clip_vision_model")
    c.fail("vision_config",
           "model_type \"" + vision_type + "\" is not a vision tower memplan counts (clip_vision_model)");
  ConfigReader vr(vision, c.file() + ": vision_config");
  const Tower tower = clip_vision(vr);
  r.notes.insert(r.notes.end(), vnotes.begin(), vnotes.end());

  // The projector: linear_1 (vision hidden -> text hidden), GELU, linear_2 (text -> text), with biases.
  const uint64_t vh = vr.need({"hidden_size"});
  const uint64_t th = r.arch.hidden;
  const bool bias = c.flag_or({"multimodal_projector_bias"}, true);
  const Count projector = Count(vh) * th + (bias ? th : 0) + Count(th) * th + (bias ? th : 0);

  // Image tokens: one per patch; the "full" strategy keeps the class token too.
  const std::string strategy = c.text({"vision_feature_select_strategy"}).value_or("default");
  if (strategy != "default" && strategy != "full")
    c.fail("vision_feature_select_strategy", "\"" + strategy + "\" is not default or full");
  r.image_tokens = tower.patches + (strategy == "full" ? 1 : 0);
  // vision_feature_layer: the hidden state the projector reads (hidden_states[0] is the embeddings,
  // so -2 is the output of the last layer but one); the layers after it do not reach the loss.
  const uint64_t L = vr.need({"num_hidden_layers"});
  uint64_t used = L - 1;
  if (auto it = c.json().find("vision_feature_layer"); it != c.json().end() && !it->is_null()) {
    if (!it->is_number_integer())
      c.fail("vision_feature_layer", "is not one whole number (several feature layers are not counted)");
    const int64_t f = it->get<int64_t>();
    if (f == 0 || f > int64_t(L) || f < -int64_t(L))
      c.fail("vision_feature_layer",
             std::to_string(f) + " is not a layer output of the " + to_s(L) + "-layer tower");
    used = f > 0 ? uint64_t(f) : uint64_t(int64_t(L) + 1 + f);
  }
  r.vision = tower_for_ledger(vr, "clip_vision_model", "quick_gelu", tower.patches + 1, used, "llava_mlp",
                              r.image_tokens, th);
  r.parts.push_back(vision_layer_kind(*r.vision,
                                      "vision_config: num_hidden_layers, hidden_size, "
                                      "intermediate_size, num_attention_heads, image_size, "
                                      "patch_size; vision_feature_layer"));

  r.total = language + tower.parameters + projector;
  r.tensors = r.tensors + tower.tensors + (bias ? 4 : 2);
  r.notes.push_back(mt + ": language model (" + text_type + ", text_config) " + group_thousands(language.v) +
                    " parameters; vision tower (clip_vision_model, vision_config) " +
                    group_thousands(tower.parameters.v) + "; projector (linear_1, linear_2) " +
                    group_thousands(projector.v));
  r.notes.push_back(mt + ": one image = " + to_s(r.image_tokens) +
                    " language-model tokens (image_size / patch_size = " +
                    to_s(vr.need({"image_size"}) / vr.need({"patch_size"})) + " patches a side, squared" +
                    (strategy == "full" ? ", plus the class token" : "") +
                    "); the processor resizes every image to image_size");
  return r;
}

}  // namespace memplan::detail
